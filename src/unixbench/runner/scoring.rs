//! UnixBench's arithmetic (unixbench.md §3.5 and §3.6): combining copies into a pass, passes
//! into a score (drop the lowest third by raw count, geometric mean of the kept rates), and
//! scores into index values per category. Also what UnixBench does not compute: how far the
//! copies' timed windows overlapped, and what they wrote on stderr.

use crate::record::{CopySample, IndexScore, Overlap, PassResult, StderrSample, TestResult};
use crate::unixbench::catalog::{self, Category, TestSpec, TESTS};

/// Below this overlap of the copies' windows a test's result carries a warning.
pub const MIN_OVERLAP: f64 = 0.95;

/// The rate of a pass or copy: `count / (time / timebase)`, or `count` itself when the
/// timebase is 0 (already a rate) or the time is not positive.
pub fn rate(count: f64, time: f64, timebase: u32) -> f64 {
    if timebase > 0 && time > 0.0 {
        count / (time / timebase as f64)
    } else {
        count
    }
}

/// The span of a set of windows (first start to last end) and their overlap: the time all of
/// them were open together, over the span (1 when they coincide, 0 when some two are apart).
pub fn span_and_overlap(windows: &[[f64; 2]]) -> Option<(f64, f64)> {
    let first = windows.iter().map(|w| w[0]).reduce(f64::min)?;
    let last = windows.iter().map(|w| w[1]).reduce(f64::max)?;
    let latest_start = windows.iter().map(|w| w[0]).reduce(f64::max)?;
    let earliest_end = windows.iter().map(|w| w[1]).reduce(f64::min)?;
    let span = last - first;
    let overlap = if span > 0.0 {
        ((earliest_end - latest_start) / span).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some((span, overlap))
}

/// Combines the copies of one pass: counts are summed, times averaged (§3.5 step 4); and the
/// span and overlap of their windows, when every copy reported one.
pub fn combine_copies(pass: u32, copies: Vec<CopySample>, timebase: u32) -> PassResult {
    let count: f64 = copies.iter().map(|c| c.count).sum();
    let time = if copies.is_empty() {
        0.0
    } else {
        copies.iter().map(|c| c.seconds).sum::<f64>() / copies.len() as f64
    };
    let windows: Option<Vec<[f64; 2]>> = copies.iter().map(|c| c.window).collect();
    let so = windows.as_deref().and_then(span_and_overlap);
    PassResult {
        pass,
        count,
        time,
        rate: rate(count, time, timebase),
        kept: true,
        span_seconds: so.map(|(s, _)| s),
        overlap: so.map(|(_, o)| o),
        shared_window: None,
        noise: None,
        copies,
    }
}

/// The longest span and lowest overlap over a test's passes, if the passes have them.
fn overlap_of(passes: &[PassResult]) -> Option<Overlap> {
    let spans: Vec<f64> = passes.iter().filter_map(|p| p.span_seconds).collect();
    let overlaps: Vec<f64> = passes.iter().filter_map(|p| p.overlap).collect();
    Some(Overlap {
        span_seconds: spans.into_iter().reduce(f64::max)?,
        overlap: overlaps.into_iter().reduce(f64::min)?,
    })
}

/// The geometric mean of the kept passes' shared-window rates, when every kept pass has one.
fn shared_rate_of(passes: &[PassResult]) -> Option<f64> {
    let kept: Vec<f64> = passes
        .iter()
        .filter(|p| p.kept)
        .map(|p| p.shared_window.map(|s| s.rate))
        .collect::<Option<Vec<f64>>>()?;
    if kept.is_empty() || kept.iter().any(|r| *r <= 0.0) {
        return None;
    }
    Some((kept.iter().map(|r| r.ln()).sum::<f64>() / kept.len() as f64).exp())
}

/// The shortest common-stop window of the kept passes.
fn shared_seconds(passes: &[PassResult]) -> Option<f64> {
    passes
        .iter()
        .filter(|p| p.kept)
        .filter_map(|p| p.shared_window.map(|s| s.seconds))
        .reduce(f64::min)
}

/// What the copies of a test wrote on stderr, with `text` the first copy's output.
pub fn stderr_sample(passes: &[PassResult], text: Option<String>) -> Option<StderrSample> {
    let copies = passes.iter().flat_map(|p| &p.copies);
    let bytes: u64 = copies.clone().map(|c| c.stderr_bytes).sum();
    let writers = copies.filter(|c| c.stderr_bytes > 0).count() as u32;
    (bytes > 0).then(|| StderrSample {
        bytes,
        copies: writers,
        text: text.unwrap_or_default(),
    })
}

/// The warnings a result carries: copies whose windows overlapped less than [`MIN_OVERLAP`],
/// and output on stderr.
pub fn warnings(result: &TestResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = result.overlap {
        if result.copies > 1 && o.overlap < MIN_OVERLAP {
            let shared = match (result.shared_rate, shared_seconds(&result.passes)) {
                (Some(rate), Some(secs)) => format!(
                    "; counted until one common stop, {secs:.2} s after the release, while all \
                     {} copies ran, the throughput was {rate:.1} {} (JSON `shared_rate`), \
                     against the summed {:.1}",
                    result.copies, result.unit, result.score
                ),
                _ => String::new(),
            };
            out.push(format!(
                "the {} copies' timed windows overlapped only {:.1}% (span {:.2} s): the \
                 summed rate counts work that did not run at the same time, so it overstates \
                 the throughput{shared}",
                result.copies,
                o.overlap * 100.0,
                o.span_seconds
            ));
        }
    }
    if let Some(e) = &result.stderr {
        out.push(format!(
            "{} cop{} wrote {} bytes on stderr, where UnixBench's Run would have stopped the \
             whole run; the score is kept and the output recorded (JSON `stderr`)",
            e.copies,
            if e.copies == 1 { "y" } else { "ies" },
            e.bytes
        ));
    }
    out
}

/// Combines passes into a test result (§3.5 step 5): passes are ranked by raw summed count,
/// the lowest `floor(n/3)` are dropped, the score is the geometric mean of the kept rates (a
/// rate of 0 adds nothing to the log-sum but counts in the divisor), the time is the mean of
/// the kept times.
pub fn combine_passes(
    spec: &TestSpec,
    copies: u32,
    duration: f64,
    mut passes: Vec<PassResult>,
) -> TestResult {
    let drop = passes.len() / 3;
    let mut order: Vec<usize> = (0..passes.len()).collect();
    // Stable sort by count: among equal counts the earlier pass is dropped first.
    order.sort_by(|&a, &b| passes[a].count.total_cmp(&passes[b].count));
    for &i in order.iter().take(drop) {
        passes[i].kept = false;
    }
    let kept: Vec<&PassResult> = passes.iter().filter(|p| p.kept).collect();
    let n = kept.len();
    let (score, time) = if n == 0 {
        (0.0, 0.0)
    } else {
        let log_sum: f64 = kept
            .iter()
            .filter(|p| p.rate > 0.0)
            .map(|p| p.rate.ln())
            .sum();
        let time = kept.iter().map(|p| p.time).sum::<f64>() / n as f64;
        ((log_sum / n as f64).exp(), time)
    };
    let index = spec.baseline.map(|b| 10.0 * score / b);
    let overlap = overlap_of(&passes);
    let shared_rate = shared_rate_of(&passes);
    TestResult {
        test: spec.id.to_string(),
        name: spec.name.to_string(),
        unit: spec.unit.to_string(),
        timebase: spec.timebase,
        copies,
        baseline: spec.baseline,
        duration,
        passes,
        score,
        time,
        samples: n,
        index,
        precision_pct: None,
        precision_capped: None,
        divisor: Some(spec.time_source),
        overlap,
        shared_rate,
        stderr: None,
        warnings: Vec::new(),
    }
}

/// The category of a result, by its test id (results of unknown tests count as System).
pub fn category_of(result: &TestResult) -> Category {
    catalog::find(&result.test).map_or(Category::System, |t| t.category)
}

/// The index of one category for the results at one copy count (§3.6): 10 × the geometric
/// mean of result/baseline; ratios ≤ 1e-6 are left out of the log-sum but still counted.
/// "Full" when every test of the category with a baseline has a result. Returns None when no
/// result of the category has a baseline.
pub fn index_score(results: &[&TestResult], copies: u32, category: Category) -> Option<IndexScore> {
    let indexed: Vec<&&TestResult> = results
        .iter()
        .filter(|r| r.copies == copies && r.baseline.is_some() && category_of(r) == category)
        .collect();
    if indexed.is_empty() {
        return None;
    }
    let mut log_sum = 0.0;
    for r in &indexed {
        let ratio = r.score / r.baseline.unwrap_or(1.0);
        if ratio > 0.000001 {
            log_sum += ratio.ln();
        }
    }
    let n = indexed.len();
    let full = TESTS
        .iter()
        .filter(|t| t.baseline.is_some() && t.category == category)
        .all(|t| indexed.iter().any(|r| r.test == t.id));
    Some(IndexScore {
        copies,
        category: category.name().to_string(),
        score: 10.0 * (log_sum / n as f64).exp(),
        full,
        tests: n,
    })
}

/// The index of every category that has one, at one copy count, in report order.
pub fn index_scores(results: &[&TestResult], copies: u32) -> Vec<IndexScore> {
    catalog::INDEX_CATEGORIES
        .iter()
        .filter_map(|&c| index_score(results, copies, c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unixbench::catalog::find;

    fn copy(count: f64, seconds: f64) -> CopySample {
        CopySample {
            copy: 0,
            count,
            seconds,
            wall_seconds: seconds,
            rate: count / seconds,
            window: None,
            stderr_bytes: 0,
        }
    }

    #[test]
    fn copies_sum_counts_and_average_times() {
        let p = combine_copies(1, vec![copy(100.0, 10.0), copy(300.0, 12.0)], 1);
        assert_eq!(p.count, 400.0);
        assert_eq!(p.time, 11.0);
        assert!((p.rate - 400.0 / 11.0).abs() < 1e-9);
        // Per-minute tests divide by time/60.
        let p = combine_copies(1, vec![copy(30.0, 60.5)], 60);
        assert!((p.rate - 30.0 / (60.5 / 60.0)).abs() < 1e-9);
        // Timebase 0: the count is already a rate.
        let p = combine_copies(1, vec![copy(5000.0, 9.6), copy(5100.0, 9.8)], 0);
        assert_eq!(p.rate, 10100.0);
    }

    #[test]
    fn ten_passes_drop_the_three_lowest_counts_and_take_the_geometric_mean() {
        let spec = find("pipe").unwrap();
        // Counts 1..=10 over 10 s each: rates 0.1 .. 1.0; passes with counts 1, 2, 3 dropped.
        let passes: Vec<PassResult> = (1..=10)
            .map(|i| combine_copies(i, vec![copy(i as f64, 10.0)], 1))
            .collect();
        let r = combine_passes(spec, 1, 10.0, passes);
        assert_eq!(r.samples, 7);
        let kept: Vec<u32> = r.passes.iter().filter(|p| p.kept).map(|p| p.pass).collect();
        assert_eq!(kept, [4, 5, 6, 7, 8, 9, 10]);
        // Hand computed: (0.4·0.5·0.6·0.7·0.8·0.9·1.0)^(1/7) = 0.06048^(1/7) = 0.66980…
        let expected = (0.4f64 * 0.5 * 0.6 * 0.7 * 0.8 * 0.9 * 1.0).powf(1.0 / 7.0);
        assert!((r.score - expected).abs() < 1e-12);
        assert!((r.score - 0.66980).abs() < 1e-5);
        assert_eq!(r.time, 10.0);
        assert!((r.index.unwrap() - 10.0 * expected / 12440.0).abs() < 1e-12);
    }

    #[test]
    fn three_passes_drop_one_and_one_pass_drops_none() {
        let spec = find("spawn").unwrap();
        let passes = vec![
            combine_copies(1, vec![copy(3000.0, 30.0)], 1),
            combine_copies(2, vec![copy(2700.0, 30.0)], 1),
            combine_copies(3, vec![copy(3300.0, 30.0)], 1),
        ];
        let r = combine_passes(spec, 1, 30.0, passes);
        assert_eq!(r.samples, 2);
        assert!(!r.passes[1].kept);
        assert!((r.score - (100.0f64 * 110.0).sqrt()).abs() < 1e-9);
        let r = combine_passes(
            spec,
            1,
            30.0,
            vec![combine_copies(1, vec![copy(3000.0, 30.0)], 1)],
        );
        assert_eq!(r.samples, 1);
        assert!((r.score - 100.0).abs() < 1e-9);
    }

    fn result(id: &str, score: f64) -> TestResult {
        let spec = find(id).unwrap();
        let mut r = combine_passes(
            spec,
            1,
            1.0,
            vec![combine_copies(1, vec![copy(score, 0.0)], 0)],
        );
        r.score = score;
        r.index = spec.baseline.map(|b| 10.0 * score / b);
        r
    }

    /// The canonical index section of unixbench.md §7.1 (deepin-community/kernel PR #913).
    #[test]
    fn index_matches_the_published_sample_report() {
        let sample = [
            ("dhry2reg", 45448570.8, 3894.5),
            ("whetstone-double", 5024.7, 913.6),
            ("execl", 4475.4, 1040.8),
            ("fstime", 658585.0, 1663.1),
            ("fsbuffer", 177570.0, 1072.9),
            ("fsdisk", 1951349.0, 3364.4),
            ("pipe", 1660768.6, 1335.0),
            ("context1", 137573.5, 343.9),
            ("spawn", 8817.5, 699.8),
            ("shell1", 12539.0, 2957.3),
            ("shell8", 5006.0, 8343.4),
            ("syscall", 1452805.5, 968.5),
        ];
        let results: Vec<TestResult> = sample.iter().map(|(id, s, _)| result(id, *s)).collect();
        // The report's scores are rounded to 0.1, so an index recomputed from them may differ
        // from the printed one in the last digit (shell8: 10 × 5006.0 / 6 = 8343.33, printed
        // 8343.4 from the unrounded score).
        for (r, (_, _, idx)) in results.iter().zip(sample.iter()) {
            assert!((r.index.unwrap() - idx).abs() <= 0.1 + 1e-9, "{}", r.test);
        }
        let refs: Vec<&TestResult> = results.iter().collect();
        let idx = index_score(&refs, 1, Category::System).unwrap();
        assert_eq!(format!("{:.1}", idx.score), "1534.7");
        assert!(idx.full);
        assert_eq!(idx.tests, 12);
        let partial = index_score(&refs[..3], 1, Category::System).unwrap();
        assert!(!partial.full);
        assert!(index_score(&refs, 2, Category::System).is_none());
        assert!(index_score(&refs, 1, Category::Misc).is_none());
    }

    #[test]
    fn span_and_overlap_of_windows() {
        // Hand computed: span 0..3 = 3 s; all three open together from 1.0 to 2.0: 1/3.
        let (span, overlap) = span_and_overlap(&[[0.0, 2.0], [0.5, 2.5], [1.0, 3.0]]).unwrap();
        assert!((span - 3.0).abs() < 1e-12 && (overlap - 1.0 / 3.0).abs() < 1e-12);
        // Two that never meet overlap 0; one window overlaps itself fully.
        assert_eq!(
            span_and_overlap(&[[0.0, 1.0], [2.0, 3.0]]),
            Some((3.0, 0.0))
        );
        assert_eq!(span_and_overlap(&[[5.0, 7.0]]), Some((2.0, 1.0)));
        assert_eq!(span_and_overlap(&[]), None);
    }

    #[test]
    fn a_pass_of_staggered_copies_warns_and_keeps_unixbenchs_score() {
        let spec = find("pipe").unwrap();
        let staggered = |i: u32, start: f64| CopySample {
            copy: i,
            window: Some([start, start + 2.0]),
            ..copy(1000.0, 2.0)
        };
        let pass = combine_copies(1, vec![staggered(1, 0.0), staggered(2, 1.0)], 1);
        assert_eq!(
            (pass.span_seconds, pass.overlap),
            (Some(3.0), Some(1.0 / 3.0))
        );
        // UnixBench's score: the summed count over the mean time.
        assert_eq!(pass.rate, 2000.0 / 2.0);
        let mut r = combine_passes(spec, 2, 2.0, vec![pass.clone()]);
        assert_eq!(r.divisor, Some(crate::record::TimeSource::Wall));
        assert_eq!(r.overlap.unwrap().overlap, 1.0 / 3.0);
        r.warnings = warnings(&r);
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("overlapped only 33.3% (span 3.00 s)"));
        assert!(!r.warnings[0].contains("common stop"));
        // With the copies' counts at a common stop, the warning gives that throughput too,
        // and the test its geometric mean over the kept passes.
        let shared = |rate: f64| crate::record::SharedWindow {
            seconds: 1.95,
            count: rate * 1.95,
            rate,
        };
        let mut passes = vec![pass.clone(), pass.clone(), pass];
        for (p, rate) in passes.iter_mut().zip([600.0, 800.0, 100.0]) {
            p.shared_window = Some(shared(rate));
        }
        passes[2].count = 1.0; // dropped as the lowest third
        let r = combine_passes(spec, 2, 2.0, passes);
        let gm = (600.0f64 * 800.0).sqrt();
        assert!((r.shared_rate.unwrap() - gm).abs() < 1e-9);
        let w = warnings(&r);
        assert!(
            w[0].contains("counted until one common stop, 1.95 s after the release")
                && w[0].contains(&format!("throughput was {gm:.1} lps"))
                && w[0].contains("against the summed 1000.0"),
            "{}",
            w[0]
        );
        // The same windows at one copy are not a warning (one copy always overlaps itself).
        let one = combine_passes(
            spec,
            1,
            2.0,
            vec![combine_copies(1, vec![staggered(1, 0.0)], 1)],
        );
        assert!(warnings(&one).is_empty());
    }

    #[test]
    fn grep_and_sysexec_make_a_non_index_benchmarks_index() {
        let grep = result("grep", 2.0); // ratio 2
        let sysexec = result("sysexec", 50.0); // ratio 2
        let hanoi = result("hanoi", 1e6); // no baseline
        let refs = [&grep, &sysexec, &hanoi];
        let idx = index_score(&refs, 1, Category::Misc).unwrap();
        assert_eq!(idx.category, "Non-Index Benchmarks");
        assert!(idx.full && idx.tests == 2);
        assert!((idx.score - 20.0).abs() < 1e-9);
        assert!(index_score(&refs, 1, Category::System).is_none());
        assert!(!index_score(&refs[..1], 1, Category::Misc).unwrap().full);
    }

    #[test]
    fn zero_ratio_counts_in_the_divisor_only() {
        let a = result("pipe", 12440.0); // ratio 1
        let b = result("syscall", 0.0); // ratio 0: left out of the log-sum
        let idx = index_score(&[&a, &b], 1, Category::System).unwrap();
        assert!((idx.score - 10.0).abs() < 1e-12);
    }
}
