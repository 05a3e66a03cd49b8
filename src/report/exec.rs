//! The final table of an `exec` run: the tool, its version and argv, then one row per score
//! metric (not the monitor rows): its mean over the measured invocations, their spread, the
//! smallest and largest, and the unit.

use crate::record::RunRecord;

/// The table (empty before the first measured invocation).
pub fn table(record: &RunRecord) -> String {
    let rows: Vec<&crate::record::Metric> = record
        .metrics
        .iter()
        .filter(|m| !crate::record::monitors::is_monitor(&m.name))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    if let Some(d) = &record.exec {
        s.push_str(&format!(
            "\n{} {}: {}\n",
            d.tool,
            d.version,
            quoted(&d.argv)
        ));
    }
    // A metric's key names its params too (fio's `fio.read_iops[job=r]`).
    let width = rows.iter().map(|m| m.key().len()).max().unwrap_or(6).max(6);
    s.push_str(&format!(
        "{:<width$} {:>14} {:>8} {:>14} {:>14}  {}\n",
        "metric", "mean", "±sd %", "min", "max", "unit"
    ));
    for m in rows {
        let sd = crate::stats::stddev_pct(
            crate::stats::stddev(&m.samples),
            crate::stats::mean(&m.samples),
        )
        .map_or("-".to_string(), |p| format!("{p:.2}"));
        let min = m.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = m.samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        s.push_str(&format!(
            "{:<width$} {:>14} {:>8} {:>14} {:>14}  {} ({} sample{}, {})\n",
            m.key(),
            number(m.value),
            sd,
            number(min),
            number(max),
            m.unit,
            m.samples.len(),
            if m.samples.len() == 1 { "" } else { "s" },
            match m.direction {
                crate::record::Direction::HigherIsBetter => "higher is better",
                crate::record::Direction::LowerIsBetter => "lower is better",
            }
        ));
    }
    s
}

/// The words as a shell would need them typed: a word with anything but letters, digits and
/// `-_./=:,+@%{}` in single quotes.
pub fn quoted(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn number(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v.abs() >= 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Direction, Kind, Metric};

    #[test]
    fn one_row_per_score_metric() {
        let mut r = RunRecord::new(Kind::Exec, Default::default(), &());
        assert_eq!(table(&r), "");
        r.metrics = vec![
            Metric::new(
                "stress-ng.get.ops_per_sec",
                &[],
                "t",
                "ops/s",
                Direction::HigherIsBetter,
                10_000.0,
                vec![9_000.0, 11_000.0],
            ),
            Metric::new(
                "time.user_time",
                &[],
                "t",
                "s",
                Direction::LowerIsBetter,
                1.0,
                vec![],
            ),
        ];
        r.metrics.push(Metric::new(
            "fio.read_iops",
            &[("job", "r".to_string())],
            "t",
            "IOPS",
            Direction::HigherIsBetter,
            5.0,
            vec![5.0],
        ));
        let t = table(&r);
        assert!(t.contains("stress-ng.get.ops_per_sec"), "{t}");
        assert!(t.contains("fio.read_iops[job=r]"), "{t}");
        assert!(t.contains("10000.0") && t.contains("9000.0") && t.contains("11000.0"));
        assert!(!t.contains("time.user_time"), "{t}");
    }

    #[test]
    fn words_are_quoted_as_a_shell_needs_them() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            quoted(&w(&["sh", "-c", "echo it's 1", "{dir}/x"])),
            r"sh -c 'echo it'\''s 1' {dir}/x"
        );
        assert_eq!(quoted(&w(&["a", ""])), "a ''");
    }
}
