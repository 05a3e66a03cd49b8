//! The domain of every number patchbench keeps: what a value of each metric, a sample, a
//! test result and a count parameter may be. One place, called by the importers (which add
//! the file and line) and by the store before every write; the store's schema repeats the
//! metric rules as CHECK constraints (`crate::store::schema`), and a test in `crate::store::runs`
//! keeps the two in step.
//!
//! The rules:
//! - every number is finite (JSON cannot hold `inf` or `NaN`: they would be written as `null`
//!   and make the whole run unreadable);
//! - scores, rates and times that cannot be zero in a real measurement are > 0: UnixBench
//!   scores and index, AIM7 jobs/min, jobs/min/task and real time, will-it-scale ops per
//!   task ([`POSITIVE_METRICS`]); AIM7's JTI lies in −100..=100 (AIM prints it negative when
//!   the tasks' completion times vary by more than their mean); everything else is ≥ 0;
//! - the counts in a metric's parameters (`tasks`, `copies`, `load`) are whole numbers from 1
//!   to [`MAX_COUNT`], the most processes Linux lets exist at once;
//! - the typed details of a kind (AIM7, will-it-scale and model points) hold finite numbers
//!   (what they say is within-run detail; the metrics carry the comparable values).

use crate::record::aim7::Aim7Point;
use crate::record::model::ModelPoint;
use crate::record::will_it_scale::ScalePoint;
use crate::record::{IndexScore, Metric, PassResult, RunRecord, TestResult};

/// Metrics whose value must be > 0.
pub const POSITIVE_METRICS: &[&str] = &[
    "unixbench.score",
    "unixbench.index",
    "aim7.jobs-per-min",
    "aim7.jobs-per-min-per-task",
    "aim7.real",
    "will-it-scale.per_process_ops",
    "will-it-scale.per_thread_ops",
];

/// AIM7's Job Timing Index: (1 − cov) × 100, as AIM prints it.
pub const JTI_METRIC: &str = "aim7.jti";
pub const JTI_RANGE: (f64, f64) = (-100.0, 100.0);

/// Metric parameters that count processes or threads.
pub const COUNT_PARAMS: &[&str] = &["tasks", "copies", "load"];

/// The largest count a parameter may hold: PID_MAX_LIMIT on 64-bit Linux (2^22), the most
/// processes and threads that can exist at once.
pub const MAX_COUNT: u64 = 4_194_304;

/// What values a metric admits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Domain {
    Positive,
    NonNegative,
    Range(f64, f64),
}

impl Domain {
    /// The domain of the metric called `name`.
    pub fn of(name: &str) -> Domain {
        if POSITIVE_METRICS.contains(&name) {
            Domain::Positive
        } else if name == JTI_METRIC {
            Domain::Range(JTI_RANGE.0, JTI_RANGE.1)
        } else {
            Domain::NonNegative
        }
    }

    pub fn admits(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Domain::Positive => v > 0.0,
                Domain::NonNegative => v >= 0.0,
                Domain::Range(lo, hi) => (lo..=hi).contains(&v),
            }
    }

    /// What the domain asks for, as a message says it.
    pub fn describe(self) -> String {
        match self {
            Domain::Positive => "must be a finite number > 0".to_string(),
            Domain::NonNegative => "must be a finite number ≥ 0".to_string(),
            Domain::Range(lo, hi) => format!("must be a finite number from {lo} to {hi}"),
        }
    }
}

/// Checks one number against a domain; the error names `what` and the value.
pub fn check(what: &str, v: f64, domain: Domain) -> Result<(), String> {
    if domain.admits(v) {
        Ok(())
    } else {
        Err(format!("{what} is {}, but {}", shown(v), domain.describe()))
    }
}

/// A number as a message shows it (`inf`, `NaN`, `-5`, `0`).
fn shown(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else {
        format!("{v}")
    }
}

/// Parses a count (`tasks`, `copies`, `load`): a whole number from 1 to [`MAX_COUNT`].
pub fn parse_count(what: &str, s: &str) -> Result<u64, String> {
    let t = s.trim();
    let whole = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match t.parse::<u64>() {
        Ok(n) if whole && (1..=MAX_COUNT).contains(&n) => Ok(n),
        _ if whole => Err(format!(
            "{what} is {t}, but must be a whole number from 1 to {MAX_COUNT}"
        )),
        _ => Err(format!(
            "{what} is {t:?}, not a whole number (from 1 to {MAX_COUNT})"
        )),
    }
}

impl Metric {
    /// Checks the value, every sample and the count parameters against the metric's domain.
    pub fn validate(&self) -> Result<(), String> {
        let key = self.key();
        check(
            &format!("{key}: the value"),
            self.value,
            Domain::of(&self.name),
        )?;
        let sample_domain = match Domain::of(&self.name) {
            // A kept pass may measure 0 (UnixBench counts it in the divisor only).
            Domain::Positive => Domain::NonNegative,
            d => d,
        };
        for (i, s) in self.samples.iter().enumerate() {
            check(&format!("{key}: sample {}", i + 1), *s, sample_domain)?;
        }
        for p in COUNT_PARAMS {
            if let Some(v) = self.params.get(*p) {
                parse_count(&format!("{key}: parameter {p}"), v)?;
            }
        }
        Ok(())
    }
}

fn non_negative(what: &str, v: f64) -> Result<(), String> {
    check(what, v, Domain::NonNegative)
}

fn copies(what: &str, n: u32) -> Result<(), String> {
    parse_count(what, &n.to_string()).map(|_| ())
}

impl TestResult {
    /// Checks every number of a UnixBench test result.
    pub fn validate(&self) -> Result<(), String> {
        let what = |f: &str| format!("test {} ({} cop.): {f}", self.test, self.copies);
        copies(&what("copies"), self.copies)?;
        non_negative(&what("score"), self.score)?;
        non_negative(&what("time"), self.time)?;
        non_negative(&what("duration"), self.duration)?;
        if let Some(b) = self.baseline {
            check(&what("baseline"), b, Domain::Positive)?;
        }
        if let Some(i) = self.index {
            non_negative(&what("index"), i)?;
        }
        if let Some(p) = self.precision_pct {
            non_negative(&what("precision"), p)?;
        }
        if let Some(o) = self.overlap {
            non_negative(&what("overlap span"), o.span_seconds)?;
            check(&what("overlap"), o.overlap, Domain::Range(0.0, 1.0))?;
        }
        if let Some(r) = self.shared_rate {
            non_negative(&what("shared rate"), r)?;
        }
        for p in &self.passes {
            p.validate(&what(&format!("pass {}", p.pass)))?;
        }
        Ok(())
    }
}

impl PassResult {
    fn validate(&self, what: &str) -> Result<(), String> {
        non_negative(&format!("{what} count"), self.count)?;
        non_negative(&format!("{what} time"), self.time)?;
        non_negative(&format!("{what} rate"), self.rate)?;
        if let Some(span) = self.span_seconds {
            non_negative(&format!("{what} span"), span)?;
        }
        if let Some(o) = self.overlap {
            check(&format!("{what} overlap"), o, Domain::Range(0.0, 1.0))?;
        }
        if let Some(s) = self.shared_window {
            for (f, v) in [("seconds", s.seconds), ("count", s.count), ("rate", s.rate)] {
                non_negative(&format!("{what} shared window {f}"), v)?;
            }
        }
        for c in &self.copies {
            let w = format!("{what} copy {}", c.copy);
            for (f, v) in [
                ("count", c.count),
                ("seconds", c.seconds),
                ("wall seconds", c.wall_seconds),
                ("rate", c.rate),
            ] {
                non_negative(&format!("{w} {f}"), v)?;
            }
            if let Some(window) = &c.window {
                all_finite(&format!("{w} window"), window)?;
            }
        }
        Ok(())
    }
}

impl IndexScore {
    /// Checks an index score.
    pub fn validate(&self) -> Result<(), String> {
        let what = format!("{} index at {} cop.", self.category, self.copies);
        copies(&format!("{what}: copies"), self.copies)?;
        non_negative(&format!("{what}: score"), self.score)
    }
}

/// Checks that every number of `values` (named `what`) is finite.
fn all_finite<'a>(what: &str, values: impl IntoIterator<Item = &'a f64>) -> Result<(), String> {
    for v in values {
        if !v.is_finite() {
            return Err(format!("{what} holds {}, not a finite number", shown(*v)));
        }
    }
    Ok(())
}

impl Aim7Point {
    /// Checks that every number of an AIM7 load point is finite.
    pub fn validate(&self) -> Result<(), String> {
        let what = format!("point {} at load {}", self.test, self.load);
        for r in &self.runs {
            let f = &r.figures;
            all_finite(
                &format!("{what} run {}", r.run),
                [
                    f.jobs_per_min,
                    f.jobs_per_min_per_task,
                    f.real,
                    f.cpu,
                    r.park_seconds,
                ]
                .iter()
                .chain(&r.completion_seconds),
            )?;
        }
        Ok(())
    }
}

impl ScalePoint {
    /// Checks that every number of a will-it-scale point is finite.
    pub fn validate(&self) -> Result<(), String> {
        let what = format!("point {} at {} {}", self.test, self.tasks, self.mode);
        all_finite(
            &what,
            [
                self.ops_per_sec,
                self.ops_per_sec_per_task,
                self.measured_seconds,
            ]
            .iter()
            .chain(&self.idle_percent)
            .chain(&self.measured_idle_percent)
            .chain(&self.samples)
            .chain(&self.warmup_samples)
            .chain(self.counters_per_op.iter().flat_map(|c| c.values())),
        )
    }
}

impl ModelPoint {
    /// Checks that every number of a model point is finite.
    pub fn validate(&self) -> Result<(), String> {
        all_finite(
            &format!("point {} at {} {}", self.variant, self.tasks, self.mode),
            self.ops_per_sec_per_task
                .iter()
                .chain(&self.reads_per_sec)
                .chain(&self.writes_per_sec),
        )
    }
}

impl RunRecord {
    /// Checks every number of the record; the error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        for (i, m) in self.metrics.iter().enumerate() {
            m.validate().map_err(|e| format!("metrics[{i}] {e}"))?;
        }
        for (i, t) in self.tests.iter().enumerate() {
            t.validate().map_err(|e| format!("tests[{i}] {e}"))?;
        }
        for (i, x) in self.indexes.iter().enumerate() {
            x.validate().map_err(|e| format!("indexes[{i}] {e}"))?;
        }
        let points = |kind: &str, i: usize, e: String| format!("{kind}.points[{i}] {e}");
        for (i, p) in self.aim7.iter().flat_map(|d| d.points.iter()).enumerate() {
            p.validate().map_err(|e| points("aim7", i, e))?;
        }
        for (i, p) in self
            .will_it_scale
            .iter()
            .flat_map(|d| d.points.iter())
            .enumerate()
        {
            p.validate().map_err(|e| points("will_it_scale", i, e))?;
        }
        for (i, p) in self.model.iter().flat_map(|d| d.points.iter()).enumerate() {
            p.validate().map_err(|e| points("model", i, e))?;
        }
        if let Some(d) = &self.exec {
            d.validate().map_err(|e| format!("exec {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Direction;

    fn metric(name: &str, value: f64, p: &[(&str, &str)]) -> Metric {
        let params: Vec<(&str, String)> = p.iter().map(|(k, v)| (*k, v.to_string())).collect();
        Metric::new(
            name,
            &params,
            "",
            "",
            Direction::HigherIsBetter,
            value,
            Vec::new(),
        )
    }

    #[test]
    fn scores_must_be_finite_and_positive() {
        for bad in [0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let e = metric("unixbench.score", bad, &[]).validate().unwrap_err();
            assert!(e.contains("> 0"), "{e}");
        }
        assert!(metric("unixbench.score", 1e-3, &[]).validate().is_ok());
        assert!(metric("aim7.cpu", 0.0, &[]).validate().is_ok());
        assert!(metric("aim7.cpu", -0.5, &[]).validate().is_err());
        assert!(metric("aim7.jti", -50.0, &[]).validate().is_ok());
        assert!(metric("aim7.jti", 101.0, &[]).validate().is_err());
        assert!(metric("model.isize.violations", f64::NAN, &[])
            .validate()
            .is_err());
    }

    #[test]
    fn counts_are_whole_and_in_range() {
        for bad in [
            "0",
            "1.5",
            "-3",
            "inf",
            "",
            "4194305",
            "123456789012345678901234567890",
        ] {
            let m = metric("unixbench.score", 1.0, &[("copies", bad)]);
            assert!(m.validate().is_err(), "{bad}");
        }
        assert!(metric("aim7.real", 1.0, &[("load", "4194304")])
            .validate()
            .is_ok());
        assert_eq!(parse_count("tasks", " 64 "), Ok(64));
        let e = parse_count("tasks", "1.5").unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
    }

    #[test]
    fn samples_may_be_zero_but_not_negative() {
        let mut m = metric("unixbench.score", 5.0, &[]);
        m.samples = vec![0.0, 3.0];
        assert!(m.validate().is_ok());
        m.samples = vec![-1.0];
        assert!(m.validate().unwrap_err().contains("sample 1"));
    }

    #[test]
    fn overlaps_lie_in_zero_to_one_and_windows_are_finite() {
        let mut r: TestResult = serde_json::from_value(serde_json::json!({
            "test": "pipe", "name": "Pipe Throughput", "unit": "lps", "timebase": 1,
            "copies": 2, "baseline": 12440.0, "duration": 2.0, "score": 10.0, "time": 2.0,
            "samples": 1, "index": null,
            "overlap": {"span_seconds": 2.5, "overlap": 0.8},
            "passes": [{"pass": 1, "count": 20.0, "time": 2.0, "rate": 10.0, "kept": true,
                        "span_seconds": 2.5, "overlap": 0.8,
                        "copies": [{"copy": 1, "count": 10.0, "seconds": 2.0,
                                    "wall_seconds": 2.0, "rate": 5.0, "window": [0.0, 2.0]}]}]
        }))
        .unwrap();
        assert_eq!(r.validate(), Ok(()));
        r.passes[0].overlap = Some(1.5);
        assert!(r.validate().unwrap_err().contains("pass 1 overlap"));
        r.passes[0].overlap = Some(0.8);
        r.overlap = Some(crate::record::Overlap {
            span_seconds: -1.0,
            overlap: 0.8,
        });
        assert!(r.validate().unwrap_err().contains("overlap span"));
        r.overlap = None;
        r.passes[0].copies[0].window = Some([0.0, f64::NAN]);
        assert!(r.validate().unwrap_err().contains("window"));
    }
}
