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
//! - `bimodal` / `drifting`: the runs are not one cloud (see `shape`), so no average is judged;
//!   unless every run of one side lies beyond every run of the other by more than the modes
//!   or the drift move the values (`shape::apart_by` against `Shape::span`): no mix of them
//!   explains such a difference, so the row is judged as above, its note saying what was seen.
//!
//! The band is symmetric on the log scale: "beyond ±1 %" means a ratio above 1.01 or below
//! 1/1.01, so swapping the sides swaps the labels exactly. Every label can be checked from the
//! printed interval, q and band.
//!
//! Nothing is ever certain from the data: every interval and p come from the runs' spread and
//! n, or from an exact test whose p cannot go below what n allows.
//!
//! - Every run of each side identical (zero spread on both sides): the interval has no width
//!   (`exact`), and p is the exact rank-sum test's (`stats::rank_sum`; 0.1 at its smallest at
//!   3 v 3), or the exact sign test's for pairs (2^(1−pairs)); identical sides are
//!   `no change` only if the band is wider than 0.
//! - A score (a row that is not a monitor row) of 0 is a failed run: it is left out, the
//!   reason says "failed in k of n runs of SIDE", and the row is judged on the remaining runs,
//!   or gets no verdict when fewer than 2 remain on a side (and no noise profile stands in).
//! - A monitor row ([`RowKind::Monitor`]) is a count or share, where 0 is a value: it is
//!   judged by Welch's t on the raw run values (`stats::raw_welch`), each side's variance
//!   floored at its resolution (res²/12), the interval being that of the difference of the
//!   means relative to the base mean; a change no larger than the resolution is never
//!   flagged; a side with fewer than 2 values gets no verdict.
//! - A monitor row below its family's floor ([`RowKind::TooFew`], `super::floors`) is listed
//!   as "too few events here" (`too few`) and not judged.
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
//! q and Holm values. The paired row's p is the larger of the paired t's and the exact
//! sign-flip test's (`stats::sign_flip`), so it never goes below what the pairs allow whatever
//! the spread of their ratios (evenly spread ratios make the t flag 7 % of A/A tables at 3
//! pairs, and two clusters of them 20 %). With too few pairs (`stats::sign_flip::fewest_pairs`:
//! 6 at 90 %, 7 at 95 %, below which no paired p can reach α without assuming a distribution;
//! or fewer than boxes + 1) the unpaired one labels the row and the reason says so. The same labels, q-values and gate
//! follow. Drift of a paired row is a trend of its per-round ratio (shared drift cancels in
//! it); the bimodal check runs on each side's values relative to their box.

use super::estimate::{Estimate, Method};
use super::model::RunValue;
use super::paired::RowPairs;
use super::shape::{self, Shape};
use crate::record::Direction;
use crate::stats::blocked;
use crate::stats::multiplicity::{bh_q_values, holm_adjusted};
use crate::stats::raw_welch::{MeanDiff, RawSample};
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
    /// What a reader needs beside the labels: the minimum detectable effect and the plan, the
    /// fingerprint side by side with its warnings, the noise checks and the curves. Off in the
    /// calibration loops, which count labels only (thousands of tables of the same runs).
    #[serde(skip)]
    pub details: bool,
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
            details: true,
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
    /// A monitor row below its family's floor (`super::floors`): too few events to judge.
    TooFew,
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
            Verdict::TooFew => "too few",
        }
    }

    /// True for improved and regressed.
    pub fn is_flag(self) -> bool {
        matches!(self, Verdict::Improved | Verdict::Regressed)
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
    /// Score rows: runs whose value is 0 (the workload failed), left out of the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<Failed>,
    /// A row with a shape that was judged all the same: the factor by which every run of one
    /// side lies beyond every run of the other, more than the shape's span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apart: Option<f64>,
}

/// Runs of one side in which a score row's workload failed (its value is 0).
#[derive(Debug, Clone, Serialize)]
pub struct Failed {
    pub side: String,
    /// True for the patched side (the side a CI gate judges).
    pub patched: bool,
    pub runs: usize,
    pub of: usize,
}

impl Failed {
    /// "failed in 2 of 5 runs of patched".
    pub fn describe(&self) -> String {
        format!(
            "failed in {} of {} runs of {}",
            self.runs, self.of, self.side
        )
    }
}

/// What a row's values are, which decides how it is judged.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RowKind {
    /// A score: every value is positive; a 0 is a failed run.
    #[default]
    Score,
    /// A monitor row (a count, share or rate, where 0 is a value) with the resolution of its
    /// values (0: unknown, none applied).
    Monitor { resolution: f64 },
    /// A monitor row below its family's floor: listed, not judged.
    TooFew { reason: String },
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
    /// Score or monitor row (and its resolution), or too few events to judge.
    pub kind: RowKind,
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

/// A judgement with nothing decided yet.
fn undecided() -> Judgement {
    Judgement {
        verdict: Verdict::NoVerdict,
        reason: None,
        estimate: None,
        shape: None,
        unpaired: None,
        failed: Vec::new(),
        apart: None,
    }
}

/// The estimate and shape of a row, before the table correction; the verdict is provisional.
fn estimate_row(r: &RowInput, s: &Settings) -> Judgement {
    let mut j = undecided();
    let values = |side: &[RunValue]| side.iter().map(|v| v.value).collect::<Vec<f64>>();
    let (b, n) = (values(r.base), values(r.new));
    if b.is_empty() || n.is_empty() {
        j.reason = Some(format!(
            "only in {}",
            if b.is_empty() { r.names.1 } else { r.names.0 }
        ));
        return j;
    }
    match &r.kind {
        RowKind::TooFew { reason } => {
            j.verdict = Verdict::TooFew;
            j.reason = Some(reason.clone());
            return j;
        }
        RowKind::Monitor { resolution } => return monitor_row(r, &b, &n, *resolution, s),
        RowKind::Score if b.contains(&0.0) || n.contains(&0.0) => return failed_row(r, s),
        RowKind::Score => {}
    }
    score_row(r, &b, &n, s)
}

/// A score row with failed runs (value 0): judged on the remaining runs, the failures said.
fn failed_row(r: &RowInput, s: &Settings) -> Judgement {
    let ok = |side: &[RunValue]| -> Vec<RunValue> {
        side.iter().filter(|v| v.value > 0.0).cloned().collect()
    };
    let (kb, kn) = (ok(r.base), ok(r.new));
    let failed: Vec<Failed> = [
        (r.names.0, false, r.base, &kb),
        (r.names.1, true, r.new, &kn),
    ]
    .into_iter()
    .filter(|(_, _, all, kept)| all.len() > kept.len())
    .map(|(side, patched, all, kept)| Failed {
        side: side.to_string(),
        patched,
        runs: all.len() - kept.len(),
        of: all.len(),
    })
    .collect();
    let said: Vec<String> = failed.iter().map(Failed::describe).collect();
    let said = said.join(" and ");
    if kb.is_empty() || kn.is_empty() {
        let mut j = undecided();
        j.reason = Some(format!(
            "{said}: a failed run is not a measurement, so no verdict; check the runs"
        ));
        j.failed = failed;
        return j;
    }
    let pairs = r.pairs.map(|p| p.without_failed(r.base, r.new));
    let inner = RowInput {
        base: &kb,
        new: &kn,
        pairs: pairs.as_ref(),
        ..r.clone()
    };
    let mut j = estimate_row(&inner, s);
    let tail = match (&j.estimate, &j.reason) {
        (Some(_), Some(why)) => format!("judged on the remaining runs; {why}"),
        (Some(_), None) => "judged on the remaining runs".to_string(),
        (None, Some(why)) => format!("too few runs remain for a verdict ({why})"),
        (None, None) => "too few runs remain for a verdict".to_string(),
    };
    j.reason = Some(format!("{said}, left out: {tail}"));
    j.failed = failed;
    j
}

/// True when every value is the same.
fn constant(v: &[f64]) -> bool {
    v.iter().all(|x| *x == v[0])
}

/// The relative change (in %) of a difference of means over the base mean; a count cannot
/// fall below −100 %, and a rise from a base mean of 0 is infinite.
fn relative_pct(diff: f64, base_mean: f64) -> f64 {
    if base_mean > 0.0 {
        (100.0 * diff / base_mean).max(-100.0)
    } else if diff > 0.0 {
        f64::INFINITY
    } else if diff < 0.0 {
        -100.0
    } else {
        0.0
    }
}

/// The estimate of two sides whose runs are each identical: no width, p from the exact
/// rank-sum test (`exact_p`).
fn exact_estimate(b: &[f64], n: &[f64], exact_p: f64, s: &Settings) -> Estimate {
    let change = relative_pct(n[0] - b[0], b[0]);
    Estimate {
        method: Method::Exact,
        lower_pct: change,
        point_pct: change,
        upper_pct: change,
        confidence: s.confidence,
        p: exact_p,
        q: exact_p,
        holm: exact_p,
        df: f64::INFINITY,
        exact: true,
        borrowed: Vec::new(),
    }
}

/// A monitor row: Welch on raw values with the resolution's floor, or exact when every run
/// of each side is identical.
fn monitor_row(r: &RowInput, b: &[f64], n: &[f64], res: f64, s: &Settings) -> Judgement {
    let mut j = undecided();
    if b.len() < MIN_RUNS || n.len() < MIN_RUNS {
        j.reason = Some(format!(
            "in {} run{} of {} and {} of {}: at least {MIN_RUNS} runs a side are needed",
            b.len(),
            if b.len() == 1 { "" } else { "s" },
            r.names.0,
            n.len(),
            r.names.1
        ));
        return j;
    }
    if constant(b) && constant(n) {
        j.estimate = Some(exact_estimate(b, n, stats::rank_sum::p_two_sided(b, n), s));
        j.reason = Some("every run identical: the counts are exact".into());
        return j;
    }
    let (Some(sb), Some(sn)) = (RawSample::of(b, res), RawSample::of(n, res)) else {
        return j;
    };
    let Some(d) = MeanDiff::welch(&sb, &sn) else {
        return j;
    };
    let (lo, hi) = d.interval(s.confidence);
    j.estimate = Some(Estimate {
        method: Method::Counts,
        lower_pct: relative_pct(lo, sb.mean),
        point_pct: relative_pct(d.diff, sb.mean),
        upper_pct: relative_pct(hi, sb.mean),
        confidence: s.confidence,
        p: d.p,
        q: d.p,
        holm: d.p,
        df: d.df,
        exact: false,
        borrowed: Vec::new(),
    });
    // The shape checks work on the log scale: only for rows without zeros.
    if !b.contains(&0.0) && !n.contains(&0.0) {
        j.shape = unpaired_shape(r, b, n, s);
    }
    j
}

/// A score row with every run measured (no 0): Welch on ln(run value), paired when pairs
/// allow.
fn score_row(r: &RowInput, b: &[f64], n: &[f64], s: &Settings) -> Judgement {
    let mut j = undecided();
    let (Some(mut lb), Some(mut ln)) = (LogSample::of(b), LogSample::of(n)) else {
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
    let unpaired = unpaired_ratio(r, &lb, &ln, b, n);
    let min_pairs = stats::sign_flip::fewest_pairs(s.alpha());
    // The paired estimate, and the exact sign-flip test's p below which its p never goes
    // (what the pairs allow whatever the spread of their ratios).
    let (paired, sign_flip_p) = match r.pairs.filter(|p| p.pairs.len() >= min_pairs) {
        Some(p) => {
            let d = p.d();
            let ratios: Vec<f64> = d.iter().map(|(_, x)| *x).collect();
            (
                blocked::paired(&d).map(|x| (x, p)),
                Some(stats::sign_flip::p_two_sided(&ratios)),
            )
        }
        None => (None, None),
    };
    // Zero spread everywhere: no width, and p from an exact test, never 0.
    let exact_p = |method: Method| match (method, r.pairs) {
        (Method::Paired, Some(p)) if p.pairs.iter().all(|q| q.d() == 0.0) => 1.0,
        (Method::Paired, Some(p)) => 2f64.powi(1 - p.pairs.len() as i32).min(1.0),
        _ => stats::rank_sum::p_two_sided(b, n),
    };
    let make = |w: &LogRatio, method: Method, borrowed: Vec<String>| {
        let ci = w.interval(s.confidence);
        let exact = w.se == 0.0;
        let p = match (exact, method, sign_flip_p) {
            (true, ..) => exact_p(method),
            (false, Method::Paired, Some(floor)) => w.p.max(floor),
            _ => w.p,
        };
        Estimate {
            method: if exact && method != Method::Paired {
                Method::Exact
            } else {
                method
            },
            lower_pct: 100.0 * ci.lower,
            point_pct: 100.0 * ci.point,
            upper_pct: 100.0 * ci.upper,
            confidence: s.confidence,
            p,
            q: p,
            holm: p,
            df: w.df,
            exact,
            borrowed,
        }
    };
    match (&paired, &unpaired) {
        (Some((w, p)), u) => {
            j.estimate = Some(make(w, Method::Paired, Vec::new()));
            j.unpaired = u.as_ref().map(|(w, m)| make(w, *m, borrowed.clone()));
            if let Some(floor) =
                sign_flip_p.filter(|f| w.se > 0.0 && w.p < s.alpha() && *f >= s.alpha())
            {
                j.reason = Some(format!(
                    "the paired t's p ({}) is below what {} pairs allow whatever the spread of \
                     their ratios: p is the exact sign-flip test's ({:.3})",
                    if w.p < 0.001 {
                        "<0.001".to_string()
                    } else {
                        format!("{:.3}", w.p)
                    },
                    p.pairs.len(),
                    floor
                ));
            }
        }
        (None, Some((w, m))) => {
            j.estimate = Some(make(w, *m, borrowed.clone()));
            if let Some(p) = r.pairs {
                let boxes = p.pair_boxes();
                j.reason = Some(if p.pairs.len() < min_pairs {
                    format!(
                        "{} pair{}: a paired verdict needs {min_pairs} at {:.0} % (below that no \
                         test of the per-round ratios holds its false-alarm rate whatever their \
                         spread); the unpaired one decides",
                        p.pairs.len(),
                        if p.pairs.len() == 1 { "" } else { "s" },
                        100.0 * s.confidence,
                    )
                } else {
                    format!(
                        "{} pairs{}: the paired estimate needs {} (one more than the boxes); \
                         the unpaired one decides",
                        p.pairs.len(),
                        if boxes > 1 {
                            format!(" on {boxes} boxes")
                        } else {
                            String::new()
                        },
                        boxes.max(1) + 1
                    )
                });
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
    if j.reason.is_none() && j.estimate.as_ref().is_some_and(|e| e.exact) {
        j.reason = Some(
            "every run identical on each side: the interval has no width; p is an exact \
             test's"
                .into(),
        );
    }
    if let Some((_, p)) = paired {
        for (name, v, boxes) in [
            (r.names.0, b, &p.base_boxes),
            (r.names.1, n, &p.patched_boxes),
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
    j.shape = unpaired_shape(r, b, n, s);
    j
}

/// The shape of an unpaired row: bimodal on a side or together, else drifting in time.
fn unpaired_shape(r: &RowInput, b: &[f64], n: &[f64], s: &Settings) -> Option<Shape> {
    let both = format!("{} and {}", r.names.0, r.names.1);
    let sides = [
        (r.names.0, shape::bimodal(b)),
        (r.names.1, shape::bimodal(n)),
        (both.as_str(), shape::bimodal_together(b, n)),
    ];
    for (name, split) in sides {
        if let Some((low, low_runs, high, high_runs)) = split {
            return Some(Shape::Bimodal {
                side: name.to_string(),
                low,
                low_runs,
                high,
                high_runs,
                cause: r.cause.clone(),
            });
        }
    }
    let timed: Vec<(usize, usize, f64)> = r
        .base
        .iter()
        .map(|v| (v.order, 0, v.value))
        .chain(r.new.iter().map(|v| (v.order, 1, v.value)))
        .collect();
    shape::drift(&timed, s.band())
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
    if let Some(shape) = &j.shape {
        // Sides apart by more than the modes or the drift move the values differ whatever
        // the shape: the row is judged, and its note says what was seen.
        let values = |v: &[RunValue]| -> Vec<f64> { v.iter().map(|x| x.value).collect() };
        let apart = shape::apart_by(&values(r.base), &values(r.new));
        if apart.is_none_or(|f| f <= shape.span()) {
            j.verdict = match shape {
                Shape::Bimodal { .. } => Verdict::Bimodal,
                Shape::Drift { .. } => Verdict::Drifting,
            };
            return;
        }
        j.apart = apart;
    }
    let alpha = s.alpha();
    let resolved = beyond_resolution(r);
    j.verdict = match e.side_of(s.band()) {
        Some(1) if e.q < alpha && resolved => by_direction(true, r.direction),
        Some(-1) if e.q < alpha && resolved => by_direction(false, r.direction),
        Some(0) => Verdict::NoChange,
        _ => Verdict::Inconclusive,
    };
}

/// False for a monitor row whose means differ by no more than its resolution: a change
/// smaller than one step of the counter is never flagged.
fn beyond_resolution(r: &RowInput) -> bool {
    let RowKind::Monitor { resolution } = r.kind else {
        return true;
    };
    let mean = |v: &[RunValue]| v.iter().map(|x| x.value).sum::<f64>() / v.len().max(1) as f64;
    (mean(r.new) - mean(r.base)).abs() > resolution
}

fn label_lkp(j: &mut Judgement, r: &RowInput, s: &Settings) {
    // A score's failed runs (0) are left out here too.
    let measured = |v: &RunValue| r.kind != RowKind::Score || v.value > 0.0;
    let (b, n): (Vec<f64>, Vec<f64>) = (
        r.base
            .iter()
            .filter(|v| measured(v))
            .map(|v| v.value)
            .collect(),
        r.new
            .iter()
            .filter(|v| measured(v))
            .map(|v| v.value)
            .collect(),
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
/// ±`pct` in the metric's bad direction. A row whose runs failed has an estimate only from
/// its remaining runs, so a failure is never a regression here (the command reports it).
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
            kind: RowKind::Score,
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
    fn a_bimodal_side_is_judged_only_when_the_sides_lie_beyond_its_modes() {
        let s = Settings::default();
        // A timer-interrupt count: 303 in most runs, 265 in an episode of the host's.
        let base = [
            303.0, 301.0, 266.0, 305.0, 264.0, 302.0, 304.0, 300.0, 306.0, 303.0,
        ];
        let same = [
            302.0, 265.0, 304.0, 301.0, 303.0, 263.0, 305.0, 300.0, 302.0, 304.0,
        ];
        let j = one(&base, &same, &s);
        assert_eq!(j.verdict, Verdict::Bimodal, "{j:?}");
        assert!(j.apart.is_none());
        // Doubled: every patched run beyond every base run by far more than the modes (×1.14).
        let doubled: Vec<f64> = same.iter().map(|v| 2.0 * v).collect();
        let j = one(&base, &doubled, &s);
        assert!(matches!(j.shape, Some(Shape::Bimodal { .. })), "{j:?}");
        assert_eq!(j.verdict, Verdict::Improved, "{j:?}");
        assert!(j.apart.is_some_and(|f| f > 1.7), "{j:?}");
        // Apart, but by less than the modes: a mix of them could make it, so not judged.
        let j = one(&base, &[352.0, 349.0, 351.0, 312.0, 310.0, 350.0], &s);
        assert_eq!(j.verdict, Verdict::Bimodal, "{j:?}");
    }

    #[test]
    fn a_failed_run_is_left_out_never_a_certain_drop() {
        let s = Settings::default();
        // Every run of a side failed: reported, no verdict, nothing for the gate.
        let j = one(&[1000.0, 1010.0, 990.0], &[0.0, 0.0, 0.0], &s);
        assert_eq!(j.verdict, Verdict::NoVerdict);
        assert!(j.estimate.is_none());
        let why = j.reason.unwrap();
        assert!(why.contains("failed in 3 of 3 runs of patched"), "{why}");
        assert_eq!(
            (j.failed[0].side.as_str(), j.failed[0].runs),
            ("patched", 3)
        );
        // One failed run of three: judged on the two that remain, which say nothing changed.
        let j = one(&[1000.0, 1010.0, 990.0], &[1000.0, 0.0, 1001.0], &s);
        assert!(!j.verdict.is_flag(), "{j:?}");
        let why = j.reason.unwrap();
        assert!(
            why.contains("failed in 1 of 3 runs of patched, left out: judged on the remaining"),
            "{why}"
        );
        let e = j.estimate.unwrap();
        assert!(!e.exact && e.point_pct.abs() < 1.0, "{e:?}");
        // Too few remain: no verdict, said.
        let j = one(&[0.0, 0.0, 5.0], &[5.0, 6.0], &s);
        assert_eq!(j.verdict, Verdict::NoVerdict);
        assert!(j.reason.unwrap().contains("too few runs remain"));
    }

    #[test]
    fn zero_spread_is_exact_never_certain() {
        let s = Settings::default();
        // Two different constants: no width, p of the exact rank test (1/3 at 2 v 2).
        let j = one(&[5.0, 5.0], &[6.0, 6.0], &s);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        let e = j.estimate.unwrap();
        assert!(e.exact && e.lower_pct == e.upper_pct, "{e:?}");
        assert!((e.p - 1.0 / 3.0).abs() < 1e-12, "{e:?}");
        assert!(!gate_fails(&e, Direction::LowerIsBetter, 1.0, 0.05));
        assert!(j.reason.unwrap().contains("every run identical"));
        // 3 v 3: p = 0.1 at its smallest, still not flagged.
        let j = one(&[5.0; 3], &[6.0; 3], &s);
        assert_eq!(j.estimate.unwrap().p, 0.1);
        assert!(!j.verdict.is_flag());
        // Identical sides: no change only with a band.
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

    fn monitor(b: &[f64], n: &[f64], kind: RowKind) -> Judgement {
        let (b, n) = (from_values(b, 0), from_values(n, b.len()));
        let row = RowInput {
            base: &b,
            new: &n,
            direction: Direction::LowerIsBetter,
            base_profile: None,
            new_profile: None,
            names: ("base", "patched"),
            cause: None,
            pairs: None,
            kind,
        };
        judge_table(&[row], &Settings::default()).remove(0)
    }

    #[test]
    fn monitor_zeros_are_counts_judged_by_their_spread() {
        let count = || RowKind::Monitor { resolution: 1.0 };
        // The rows: sporadic counts, not flagged.
        for (b, n) in [
            (&[60.0, 0.0, 120.0][..], &[0.0, 284000.0, 400.0][..]),
            (&[188.0, 0.0, 376.0], &[215.0, 431.0, 1.0]),
            (&[0.0, 0.0, 0.0], &[0.0, 0.0, 5000.0]),
        ] {
            let j = monitor(b, n, count());
            let e = j.estimate.as_ref().unwrap();
            assert!(!j.verdict.is_flag() && !e.exact && e.p > 0.1, "{j:?}");
            assert_eq!(e.method, Method::Counts);
        }
        // A steady rise from zero is found, with an interval from the runs.
        let j = monitor(&[0.0, 0.0, 0.0], &[500.0, 520.0, 490.0], count());
        assert_eq!(j.verdict, Verdict::Regressed);
        let e = j.estimate.unwrap();
        assert!(
            e.p > 0.0 && e.p < 0.01 && e.lower_pct.is_infinite(),
            "{e:?}"
        );
        // A steady counter doubling.
        let j = monitor(&[1000.0, 1020.0, 990.0], &[2000.0, 2030.0, 1985.0], count());
        assert_eq!(j.verdict, Verdict::Regressed);
        assert!((j.estimate.unwrap().point_pct - 100.0).abs() < 2.0);
    }

    #[test]
    fn quantized_rows_respect_their_resolution() {
        // vmstat.cpu.* moving by one tick: never flagged.
        let tick = RowKind::Monitor { resolution: 0.5 };
        let j = monitor(&[10.0, 10.0, 10.0, 10.0, 10.0], &[10.5; 5], tick.clone());
        let e = j.estimate.as_ref().unwrap();
        assert!(!j.verdict.is_flag() && e.exact, "{j:?}");
        assert!(j.reason.unwrap().contains("the counts are exact"));
        let j = monitor(
            &[10.0, 10.5, 10.0, 10.0, 10.0],
            &[10.5, 11.0, 10.5, 10.5, 10.5],
            tick,
        );
        assert!(!j.verdict.is_flag(), "{j:?}");
        // Exact counts at 5 v 5 are judged by the rank test (p = 2/252).
        let j = monitor(
            &[120.0; 5],
            &[240.0; 5],
            RowKind::Monitor { resolution: 1.0 },
        );
        assert!((j.estimate.unwrap().p - 2.0 / 252.0).abs() < 1e-12);
        // A side with one value gets no verdict.
        let j = monitor(
            &[500.0],
            &[600.0, 610.0],
            RowKind::Monitor { resolution: 1.0 },
        );
        assert_eq!(j.verdict, Verdict::NoVerdict);
        assert!(j.reason.unwrap().contains("at least 2 runs a side"));
    }

    #[test]
    fn rows_below_their_floor_are_too_few_and_left_out_of_the_correction() {
        let reason = "too few events here".to_string();
        let j = monitor(
            &[0.0, 1.0, 0.0],
            &[40.0, 50.0, 45.0],
            RowKind::TooFew { reason },
        );
        assert_eq!(j.verdict, Verdict::TooFew);
        assert!(j.estimate.is_none() && j.reason.unwrap().contains("too few events"));
        assert_eq!(Verdict::TooFew.as_str(), "too few");
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
            kind: RowKind::Score,
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
            kind: RowKind::Score,
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
