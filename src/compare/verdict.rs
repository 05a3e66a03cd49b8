//! The labels of a comparison, shared by every output format, and the CI gate.
//!
//! Default rule (`welch`), per row, with α = (1 − confidence) / 2 (0.05 at the default 90 %):
//! the statistics are Welch's t on ln(run value) (`stats::welch`); the printed interval is the
//! two-sided (1 − 2α) interval, i.e. the pair of one-sided (1 − α) bounds, of the ratio of
//! geometric means; p is two-sided; q is the Benjamini–Hochberg q-value over all rows of the
//! comparison that have a p.
//!
//! - `improved` / `regressed`: q < α and the whole interval beyond the noise band on one side
//!   (a one-sided test at α that the change exceeds the band, after the table correction);
//! - `no change`: the whole interval inside the band (an equivalence test at α, TOST);
//! - `inconclusive`: anything else; the interval says what is left open;
//! - `no verdict`: fewer than 2 runs on a side and no noise profile for it;
//! - `bimodal` / `drifting`: the runs are not one cloud (see `shape`), so no average is judged.
//!
//! The band is symmetric on the log scale: "beyond ±1 %" means a ratio above 1.01 or below
//! 1/1.01, so swapping the sides swaps the labels exactly. Every label can be checked from the
//! printed interval, q and band.
//!
//! Edge cases: a drop to zero (some or all runs of a side at 0 where the other side has none)
//! is a certain change down, a rise from zero a certain change up (p = 0, interval = the change
//! of the means); zero spread on both sides is a certain change of the difference of the
//! means; identical sides are `no change` only if the band is wider than 0.
//!
//! `lkp` reproduces the 0-day robot (comparison.md §3) for comparison with its reports: ≥ 3
//! runs a side, each median outside the other side's range after trimming, ratio of medians
//! beyond 1 + band; otherwise `not flagged` (the robot does not claim "no change"). Its A/A
//! false-alarm rate is high (see `stats::lkp_aa_rate`), and the output prints it.
//!
//! The gate (`--fail-on-regression PCT`) uses Holm-adjusted p-values (family-wise error ≤ α
//! across the table, whatever the rule) and the same band logic at PCT.
//!
//! Paired design (the sides are the two sides of one campaign, `super::paired`): the estimate
//! that labels a row is the paired one (`stats::blocked::paired`: the mean per-round log
//! ratio, its spread pooled within boxes, pairs − boxes df), and the unpaired one (Welch on one
//! box; within boxes with several, `stats::blocked::unpaired`) is kept beside it with its own
//! q and Holm values. With too few pairs (fewer than boxes + 1, i.e. below 2 on one box) the
//! unpaired one labels the row and the reason says so. The same labels, q-values and gate
//! follow. Drift of a paired row is a trend of its per-round ratio (shared drift cancels in
//! it); the bimodal check runs on each side's values relative to their box.

use super::model::RunValue;
use super::paired::RowPairs;
use super::shape::{self, Shape};
use crate::record::Direction;
use crate::stats::blocked;
use crate::stats::multiplicity::{bh_q_values, holm_adjusted};
use crate::stats::welch::{LogRatio, LogSample};
use crate::stats::{self, Shift};
use serde::Serialize;

/// Fewest runs a side needs for a verdict from its own spread.
pub const MIN_RUNS: usize = 2;
/// A side with fewer runs than this borrows its spread from a noise profile, when one exists.
pub const PROFILE_BELOW: usize = 3;

/// Which rule labels the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Welch interval on log run values, BH q-values across the table, noise band (default).
    Welch,
    /// The LKP robot's: ≥3 runs a side, each median outside the other side's range, medians
    /// differing by more than the noise band.
    Lkp,
}

/// The knobs of a comparison; all are printed in JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub rule: Rule,
    /// Two-sided level of the printed interval (0.90: the one-sided bounds are at α = 0.05).
    pub confidence: f64,
    /// Half-width of the noise band in % (1): changes inside it do not matter.
    pub noise_pct: f64,
    /// Changes (in %) for which the plan says how many runs a side are needed (1 and 2).
    pub plan_pct: Vec<f64>,
    /// Compute the minimum detectable effect and the plan (off in the calibration loops).
    #[serde(skip)]
    pub sensitivity: bool,
    /// How many rows of the second table ("what changed with it": the monitor rows) the
    /// human formats show; None for all of them (`--why all`).
    #[serde(default)]
    pub why_rows: Option<usize>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rule: Rule::Welch,
            confidence: 0.90,
            noise_pct: 1.0,
            plan_pct: vec![1.0, 2.0],
            sensitivity: true,
            why_rows: Some(20),
        }
    }
}

impl Settings {
    /// The one-sided level α = (1 − confidence) / 2; also the threshold for q.
    pub fn alpha(&self) -> f64 {
        // Rounded so that 0.90 gives 0.05, not 0.04999999999999999.
        ((1.0 - self.confidence) / 2.0 * 1e12).round() / 1e12
    }

    /// The noise band on the log scale, ln(1 + noise).
    pub fn band(&self) -> f64 {
        (self.noise_pct / 100.0).ln_1p()
    }
}

/// The labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoChange,
    Inconclusive,
    /// Too few runs (or a metric on one side only): numbers only.
    NoVerdict,
    Bimodal,
    Drifting,
    /// `lkp` rule: the robot would not report this row.
    NotFlagged,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NoVerdict => "no verdict",
            Verdict::Bimodal => "bimodal",
            Verdict::Drifting => "drifting",
            Verdict::NotFlagged => "not flagged",
        }
    }

    /// True for improved and regressed.
    pub fn is_flag(self) -> bool {
        matches!(self, Verdict::Improved | Verdict::Regressed)
    }
}

/// How an estimate was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Welch's t on ln(run value) of the two sides (unpaired).
    Welch,
    /// Unpaired, within boxes: the sides compared inside each box, spread pooled.
    Blocked,
    /// Paired: the per-round log ratio, t over the pairs (boxes as blocks).
    #[serde(rename = "paired-t")]
    Paired,
    /// A drop to or rise from zero: certain.
    Zero,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Welch => "welch",
            Method::Blocked => "blocked",
            Method::Paired => "paired-t",
            Method::Zero => "zero",
        }
    }
}

/// The statistics of one row: interval of the relative change (in %), p, and the table's
/// adjusted values.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// What the interval and p come from.
    pub method: Method,
    pub lower_pct: f64,
    pub point_pct: f64,
    pub upper_pct: f64,
    /// Level of the interval (the settings' confidence).
    pub confidence: f64,
    /// Two-sided p of "no change" (by `method`).
    pub p: f64,
    /// Benjamini–Hochberg q over the comparison's rows.
    pub q: f64,
    /// Holm-adjusted p over the same rows (what the gate uses).
    pub holm: f64,
    /// Degrees of freedom: Welch–Satterthwaite's, pairs − boxes for a paired estimate
    /// (infinite when certain).
    pub df: f64,
    /// True for a certain change (a drop to or rise from zero, or zero spread).
    pub certain: bool,
    /// Sides whose spread came from a noise profile.
    pub borrowed: Vec<String>,
}

impl Estimate {
    fn log_bounds(&self) -> (f64, f64) {
        (
            (self.lower_pct / 100.0).ln_1p(),
            (self.upper_pct / 100.0).ln_1p(),
        )
    }

    /// Where the interval lies relative to ±band (log scale): 1 above, −1 below, 0 inside,
    /// None straddling a boundary.
    fn side_of(&self, band: f64) -> Option<i8> {
        let (lo, hi) = self.log_bounds();
        if lo > band {
            Some(1)
        } else if hi < -band {
            Some(-1)
        } else if lo > -band && hi < band {
            Some(0)
        } else {
            None
        }
    }
}

/// The label of one row with what it rests on.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Why there is no verdict, or what else the reader must know about the row.
    pub reason: Option<String>,
    pub estimate: Option<Estimate>,
    pub shape: Option<Shape>,
    /// Paired design: the unpaired estimate, beside the paired one that labels the row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpaired: Option<Estimate>,
}

/// A borrowed spread for a side: sd of ln(run value) and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Borrowed {
    pub sd: f64,
    pub df: f64,
}

/// What the rule needs to know about one row.
#[derive(Debug, Clone)]
pub struct RowInput<'a> {
    pub base: &'a [RunValue],
    pub new: &'a [RunValue],
    pub direction: Direction,
    /// Spread from a noise profile, for a side with fewer than [`PROFILE_BELOW`] runs.
    pub base_profile: Option<Borrowed>,
    pub new_profile: Option<Borrowed>,
    /// Names of the sides, for messages.
    pub names: (&'a str, &'a str),
    /// What causes a bimodal row, where known.
    pub cause: Option<String>,
    /// The pairs of a paired design (None: unpaired).
    pub pairs: Option<&'a RowPairs>,
}

/// Labels every row of one comparison: estimates per row, then q and Holm across the rows,
/// then the labels.
pub fn judge_table(rows: &[RowInput], s: &Settings) -> Vec<Judgement> {
    let mut out: Vec<Judgement> = rows.iter().map(|r| estimate_row(r, s)).collect();
    let with_p: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].estimate.is_some())
        .collect();
    let p: Vec<f64> = with_p
        .iter()
        .filter_map(|&i| out[i].estimate.as_ref().map(|e| e.p))
        .collect();
    let (q, holm) = (bh_q_values(&p), holm_adjusted(&p));
    for (k, &i) in with_p.iter().enumerate() {
        if let Some(e) = out[i].estimate.as_mut() {
            e.q = q[k];
            e.holm = holm[k];
        }
    }
    // The unpaired estimates beside paired ones get their own correction over the table.
    let with_u: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].unpaired.is_some())
        .collect();
    let pu: Vec<f64> = with_u
        .iter()
        .filter_map(|&i| out[i].unpaired.as_ref().map(|e| e.p))
        .collect();
    let (qu, holmu) = (bh_q_values(&pu), holm_adjusted(&pu));
    for (k, &i) in with_u.iter().enumerate() {
        if let Some(e) = out[i].unpaired.as_mut() {
            e.q = qu[k];
            e.holm = holmu[k];
        }
    }
    for (j, r) in out.iter_mut().zip(rows) {
        label(j, r, s);
    }
    out
}

/// The estimate and shape of a row, before the table correction; the verdict is provisional.
fn estimate_row(r: &RowInput, s: &Settings) -> Judgement {
    let mut j = Judgement {
        verdict: Verdict::NoVerdict,
        reason: None,
        estimate: None,
        shape: None,
        unpaired: None,
    };
    let values = |side: &[RunValue]| side.iter().map(|v| v.value).collect::<Vec<f64>>();
    let (b, n) = (values(r.base), values(r.new));
    if b.is_empty() || n.is_empty() {
        j.reason = Some(format!(
            "only in {}",
            if b.is_empty() { r.names.1 } else { r.names.0 }
        ));
        return j;
    }
    let zeros = |v: &[f64]| v.iter().filter(|x| **x == 0.0).count();
    let (zb, zn) = (zeros(&b), zeros(&n));
    if zb > 0 || zn > 0 {
        zero_row(&mut j, &b, &n, (zb, zn), r.names, s);
        return j;
    }
    let (Some(mut lb), Some(mut ln)) = (LogSample::of(&b), LogSample::of(&n)) else {
        return j;
    };
    let mut borrowed = Vec::new();
    for (sample, profile, name) in [
        (&mut lb, r.base_profile, r.names.0),
        (&mut ln, r.new_profile, r.names.1),
    ] {
        if sample.n < PROFILE_BELOW {
            if let Some(p) = profile.filter(|p| p.df > sample.var_df) {
                *sample = sample.with_variance(p.sd, p.df);
                borrowed.push(name.to_string());
            }
        }
    }
    let unpaired = unpaired_ratio(r, &lb, &ln, &b, &n);
    let paired = r
        .pairs
        .and_then(|p| blocked::paired(&p.d()).map(|x| (x, p)));
    let make = |w: &LogRatio, method: Method, borrowed: Vec<String>| {
        let ci = w.interval(s.confidence);
        Estimate {
            method,
            lower_pct: 100.0 * ci.lower,
            point_pct: 100.0 * ci.point,
            upper_pct: 100.0 * ci.upper,
            confidence: s.confidence,
            p: w.p,
            q: w.p,
            holm: w.p,
            df: w.df,
            certain: w.se == 0.0,
            borrowed,
        }
    };
    match (&paired, &unpaired) {
        (Some((w, _)), u) => {
            j.estimate = Some(make(w, Method::Paired, Vec::new()));
            j.unpaired = u.as_ref().map(|(w, m)| make(w, *m, borrowed.clone()));
        }
        (None, Some((w, m))) => {
            j.estimate = Some(make(w, *m, borrowed.clone()));
            if let Some(p) = r.pairs {
                j.reason = Some(format!(
                    "{} pair{}{}: the paired estimate needs {} (one more than the boxes); the \
                     unpaired one decides",
                    p.pairs.len(),
                    if p.pairs.len() == 1 { "" } else { "s" },
                    if p.pair_boxes() > 1 {
                        format!(" on {} boxes", p.pair_boxes())
                    } else {
                        String::new()
                    },
                    p.pair_boxes().max(1) + 1
                ));
            } else if !borrowed.is_empty() {
                j.reason = Some(format!(
                    "spread of {} from the noise profile",
                    borrowed.join(" and ")
                ));
            }
        }
        (None, None) => {
            j.reason = Some(format!(
                "{} run{} of {}, {} of {}: at least {MIN_RUNS} runs a side are needed (3 or \
                 more to see the spread)",
                b.len(),
                if b.len() == 1 { "" } else { "s" },
                r.names.0,
                n.len(),
                r.names.1
            ));
        }
    }
    if let Some((_, p)) = paired {
        for (name, v, boxes) in [
            (r.names.0, &b, &p.base_boxes),
            (r.names.1, &n, &p.patched_boxes),
        ] {
            if let Some((low, low_runs, high, high_runs)) =
                shape::bimodal(&relative_to_box(v, boxes))
            {
                j.shape = Some(Shape::Bimodal {
                    side: name.to_string(),
                    low,
                    low_runs,
                    high,
                    high_runs,
                    cause: r.cause.clone(),
                });
                return j;
            }
        }
        let points: Vec<(usize, f64, f64)> = p
            .pairs
            .iter()
            .map(|q| (q.r#box, f64::from(q.round), q.d()))
            .collect();
        j.shape = shape::ratio_drift(&points, s.band());
        return j;
    }
    let both = format!("{} and {}", r.names.0, r.names.1);
    let sides = [
        (r.names.0, shape::bimodal(&b)),
        (r.names.1, shape::bimodal(&n)),
        (both.as_str(), shape::bimodal_together(&b, &n)),
    ];
    for (name, split) in sides {
        if let Some((low, low_runs, high, high_runs)) = split {
            j.shape = Some(Shape::Bimodal {
                side: name.to_string(),
                low,
                low_runs,
                high,
                high_runs,
                cause: r.cause.clone(),
            });
            return j;
        }
    }
    let timed: Vec<(usize, usize, f64)> = r
        .base
        .iter()
        .map(|v| (v.order, 0, v.value))
        .chain(r.new.iter().map(|v| (v.order, 1, v.value)))
        .collect();
    j.shape = shape::drift(&timed, s.band());
    j
}

/// A row with zeros: a drop to zero is a certain change down, a rise from zero one up.
fn zero_row(
    j: &mut Judgement,
    b: &[f64],
    n: &[f64],
    (zb, zn): (usize, usize),
    names: (&str, &str),
    s: &Settings,
) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mb, mn) = (mean(b), mean(n));
    if zb == b.len() && zn == n.len() {
        // Both all zero: identical.
        j.estimate = Some(certain(0.0, s));
        j.reason = Some("zero on both sides".into());
        return;
    }
    if zb > 0 && zn > 0 {
        j.reason = Some(format!(
            "zero in {zb} of {} runs of {} and {zn} of {} runs of {}: the workload failed on \
             both sides; check the runs",
            b.len(),
            names.0,
            n.len(),
            names.1
        ));
        return;
    }
    let change = if mb == 0.0 {
        f64::INFINITY
    } else {
        100.0 * (mn - mb) / mb
    };
    j.estimate = Some(certain(change, s));
    j.reason = Some(if zn > 0 {
        format!("dropped to zero in {zn} of {} runs of {}", n.len(), names.1)
    } else {
        format!(
            "rose from zero ({zb} of {} runs of {} at zero)",
            b.len(),
            names.0
        )
    });
}

/// The unpaired estimate: Welch's, or within boxes when the runs come from several.
fn unpaired_ratio(
    r: &RowInput,
    lb: &LogSample,
    ln: &LogSample,
    b: &[f64],
    n: &[f64],
) -> Option<(LogRatio, Method)> {
    match r.pairs {
        Some(p) if p.run_boxes() > 1 => {
            let tag = |v: &[f64], boxes: &[usize]| -> Vec<(usize, f64)> {
                boxes.iter().zip(v).map(|(bx, x)| (*bx, x.ln())).collect()
            };
            blocked::unpaired(&tag(b, &p.base_boxes), &tag(n, &p.patched_boxes))
                .map(|w| (w, Method::Blocked))
        }
        _ => LogRatio::welch(lb, ln).map(|w| (w, Method::Welch)),
    }
}

/// Values divided by the geometric mean of their box (as they are with one box).
fn relative_to_box(values: &[f64], boxes: &[usize]) -> Vec<f64> {
    let distinct: std::collections::BTreeSet<&usize> = boxes.iter().collect();
    if distinct.len() < 2 || boxes.len() != values.len() {
        return values.to_vec();
    }
    let mut logs: std::collections::BTreeMap<usize, (f64, usize)> = Default::default();
    for (bx, v) in boxes.iter().zip(values) {
        let e = logs.entry(*bx).or_default();
        e.0 += v.ln();
        e.1 += 1;
    }
    boxes
        .iter()
        .zip(values)
        .map(|(bx, v)| {
            let (sum, k) = logs[bx];
            v / (sum / k as f64).exp()
        })
        .collect()
}

fn certain(change_pct: f64, s: &Settings) -> Estimate {
    Estimate {
        method: Method::Zero,
        lower_pct: change_pct,
        point_pct: change_pct,
        upper_pct: change_pct,
        confidence: s.confidence,
        p: if change_pct == 0.0 { 1.0 } else { 0.0 },
        q: 0.0,
        holm: 0.0,
        df: f64::INFINITY,
        certain: true,
        borrowed: Vec::new(),
    }
}

/// Up/down in the metric's terms.
fn by_direction(up: bool, direction: Direction) -> Verdict {
    if up == (direction == Direction::HigherIsBetter) {
        Verdict::Improved
    } else {
        Verdict::Regressed
    }
}

fn label(j: &mut Judgement, r: &RowInput, s: &Settings) {
    let Some(e) = &j.estimate else {
        return;
    };
    if s.rule == Rule::Lkp {
        return label_lkp(j, r, s);
    }
    match &j.shape {
        Some(Shape::Bimodal { .. }) => {
            j.verdict = Verdict::Bimodal;
            return;
        }
        Some(Shape::Drift { .. }) => {
            j.verdict = Verdict::Drifting;
            return;
        }
        None => {}
    }
    let alpha = s.alpha();
    j.verdict = match e.side_of(s.band()) {
        Some(1) if e.q < alpha => by_direction(true, r.direction),
        Some(-1) if e.q < alpha => by_direction(false, r.direction),
        Some(0) => Verdict::NoChange,
        _ => Verdict::Inconclusive,
    };
}

fn label_lkp(j: &mut Judgement, r: &RowInput, s: &Settings) {
    let (b, n): (Vec<f64>, Vec<f64>) = (
        r.base.iter().map(|v| v.value).collect(),
        r.new.iter().map(|v| v.value).collect(),
    );
    if b.len() < 3 || n.len() < 3 {
        j.verdict = Verdict::NoVerdict;
        j.reason = Some("the lkp rule needs 3 runs on each side".into());
        return;
    }
    j.verdict = match stats::lkp_shift(&b, &n, 1.0 + s.noise_pct / 100.0) {
        Some(Shift::Up) => by_direction(true, r.direction),
        Some(Shift::Down) => by_direction(false, r.direction),
        _ => Verdict::NotFlagged,
    };
}

/// True when the gate fails the row: Holm-adjusted p < α and the whole interval beyond
/// ±`pct` in the metric's bad direction (a drop to zero always is, when beyond `pct`).
pub fn gate_fails(e: &Estimate, direction: Direction, pct: f64, alpha: f64) -> bool {
    if e.holm >= alpha {
        return false;
    }
    let band = (pct / 100.0).ln_1p();
    matches!(
        (e.side_of(band), direction),
        (Some(-1), Direction::HigherIsBetter) | (Some(1), Direction::LowerIsBetter)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::from_values;

    fn one(b: &[f64], n: &[f64], s: &Settings) -> Judgement {
        let (b, n) = (from_values(b, 0), from_values(n, b.len()));
        let row = RowInput {
            base: &b,
            new: &n,
            direction: Direction::HigherIsBetter,
            base_profile: None,
            new_profile: None,
            names: ("base", "patched"),
            cause: None,
            pairs: None,
        };
        judge_table(&[row], s).remove(0)
    }

    #[test]
    fn labels_follow_the_printed_interval() {
        let s = Settings::default();
        // The example: 95 % bootstrap said [-5.0 %, -0.5 %]; Welch p = 0.17 → open.
        let j = one(&[1000.0, 1010.0, 990.0], &[975.0, 950.0, 995.0], &s);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        let e = j.estimate.unwrap();
        assert!(
            e.p > 0.1 && e.lower_pct < -1.0 && e.upper_pct > 0.0,
            "{e:?}"
        );
        // -4.3 % with a wide interval is not "no change".
        let j = one(&[1000.0, 1060.0, 940.0], &[900.0, 1010.0, 960.0], &s);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        // A clear 3 % drop with 0.3 % noise.
        let j = one(&[1000.0, 1003.0, 997.0], &[970.0, 973.0, 967.0], &s);
        assert_eq!(j.verdict, Verdict::Regressed);
        let e = j.estimate.unwrap();
        assert!(e.upper_pct < -1.0 && e.q < 0.05, "{e:?}");
        // Tight and centred: no change.
        let j = one(&[1000.0, 1001.0, 999.0], &[1000.5, 999.5, 1000.0], &s);
        assert_eq!(j.verdict, Verdict::NoChange);
    }

    #[test]
    fn edge_cases() {
        let s = Settings::default();
        let j = one(&[1000.0, 1010.0, 990.0], &[0.0, 0.0, 0.0], &s);
        assert_eq!(j.verdict, Verdict::Regressed);
        let e = j.estimate.as_ref().unwrap();
        assert_eq!((e.point_pct, e.certain), (-100.0, true));
        assert!(gate_fails(e, Direction::HigherIsBetter, 2.0, 0.05));
        assert!(j.reason.unwrap().contains("dropped to zero in 3 of 3"));
        // One broken run of three is a certain drop of the mean.
        let j = one(&[1000.0, 1010.0, 990.0], &[1000.0, 0.0, 1000.0], &s);
        assert_eq!(j.verdict, Verdict::Regressed);
        assert_eq!(one(&[0.0, 0.0], &[5.0, 6.0], &s).verdict, Verdict::Improved);
        // Zero spread, different means: certain; identical: no change only with a band.
        let j = one(&[5.0, 5.0], &[6.0, 6.0], &s);
        assert_eq!(j.verdict, Verdict::Improved);
        assert_eq!(one(&[5.0, 5.0], &[5.0, 5.0], &s).verdict, Verdict::NoChange);
        let no_band = Settings {
            noise_pct: 0.0,
            ..Settings::default()
        };
        assert_eq!(
            one(&[5.0, 5.0], &[5.0, 5.0], &no_band).verdict,
            Verdict::Inconclusive
        );
        // One run a side.
        let j = one(&[5.0], &[6.0], &s);
        assert_eq!(j.verdict, Verdict::NoVerdict);
        assert!(j.reason.unwrap().contains("at least 2 runs a side"));
    }

    #[test]
    fn a_noise_profile_stands_in_for_a_missing_spread() {
        let (b, n) = (from_values(&[1000.0], 0), from_values(&[950.0], 1));
        let profile = Some(Borrowed {
            sd: 0.005,
            df: 10.0,
        });
        let row = RowInput {
            base: &b,
            new: &n,
            direction: Direction::HigherIsBetter,
            base_profile: profile,
            new_profile: profile,
            names: ("base", "patched"),
            cause: None,
            pairs: None,
        };
        let j = judge_table(&[row], &Settings::default()).remove(0);
        assert_eq!(j.verdict, Verdict::Regressed);
        let e = j.estimate.unwrap();
        assert_eq!(e.borrowed, vec!["base", "patched"]);
        assert!(j.reason.unwrap().contains("noise profile"));
    }

    #[test]
    fn the_table_correction_applies_across_rows() {
        // p ≈ 0.02 alone is flagged; among 20 rows of nothing it is not (q = 0.4).
        let s = Settings::default();
        let b = from_values(&[1000.0, 1004.0, 996.0, 1002.0, 998.0], 0);
        let n = from_values(&[980.0, 984.0, 972.0, 990.0, 962.0], 5);
        let quiet = from_values(&[1000.0, 1003.0, 997.0, 1001.0, 999.0], 5);
        let row = |new| RowInput {
            base: &b,
            new,
            direction: Direction::HigherIsBetter,
            base_profile: None,
            new_profile: None,
            names: ("base", "patched"),
            cause: None,
            pairs: None,
        };
        let alone = judge_table(&[row(&n)], &s).remove(0);
        let mut rows = vec![row(&n)];
        rows.extend((0..19).map(|_| row(&quiet)));
        let among = judge_table(&rows, &s).remove(0);
        let (ea, em) = (alone.estimate.unwrap(), among.estimate.unwrap());
        assert_eq!(ea.p, em.p);
        assert!(em.q > ea.q && em.holm >= em.q, "{em:?}");
    }
}
