//! `patchbench compare`: base vs patched, per metric: runs, means, spreads, the interval of
//! the change, p and q, a label, and what the comparison could have detected.
//!
//! Each side is a set of runs. Metrics are matched by key (name + params); each run gives one
//! value per metric ([`model`]: runs are the unit, samples inside a run are within-run
//! spread only). [`verdict`] labels the rows with the table correction; [`shape`] spots rows
//! whose runs are bimodal or drift; [`plan`] gives the minimum detectable effect and the runs
//! needed; [`comparability`] lists what differs between the sides (the whole fingerprint
//! side by side, and the noise-check warnings each side ran with), by [`meaning`]'s one rule
//! of which differences and warnings say something; [`curves`] gathers the
//! will-it-scale and AIM7 points a chart draws; [`paired`] pairs the runs of a campaign by
//! (box, round) when the sides are its two sides, so the verdicts rest on the per-round
//! ratios. The formats in `crate::report::compare` only print what is computed here.
//!
//! UnixBench index rows: a full index (all 12 index tests) and a partial one never share a
//! row; partial indexes of different test sets neither. The full System Benchmarks Index
//! Score is the primary row of a UnixBench comparison; the test rows explain it.

pub mod absent_shares;
pub mod comparability;
pub mod curves;
pub mod estimate;
pub mod floors;
pub use floors::COUNT_FLOOR;
pub mod meaning;
pub mod model;
pub mod paired;
pub mod plan;
pub mod shape;
pub mod verdict;

use crate::record::{metric_key, Direction, Metric, RunRecord, SharedStr};
use crate::stats;
use model::{NoiseProfile, RunValue, Spread};
use plan::Sensitivity;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use verdict::{Borrowed, Judgement, RowInput, Rule, Settings};

/// One side of a comparison: what the user named, its runs (each with an id or file name),
/// how many incomplete runs were left out, and a noise profile for it if one was found.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub runs: Vec<(String, RunRecord)>,
    pub left_out_incomplete: usize,
    pub profile: Option<NoiseProfile>,
}

impl Side {
    pub fn new(name: impl Into<String>, runs: Vec<(String, RunRecord)>) -> Side {
        Side {
            name: name.into(),
            runs,
            left_out_incomplete: 0,
            profile: None,
        }
    }
}

/// Summary of one side of one metric over its runs.
#[derive(Debug, Clone, Serialize)]
pub struct SideStats {
    /// Runs.
    pub n: usize,
    /// Arithmetic mean of the run values (the LKP robot's and the posted tables' figure).
    pub mean: f64,
    /// Geometric mean of the run values (what the interval is about); None with a zero.
    pub geomean: Option<f64>,
    /// Between-run spread: sample stddev of the run values as % of the mean (None below 2).
    pub stddev_pct: Option<f64>,
    /// Population stddev as % of the mean (LKP's `± N%`).
    pub pop_stddev_pct: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// One value per run, in the order of the side's runs.
    pub values: Vec<f64>,
    /// The runs' ids (shared with the run's other rows).
    pub runs: Vec<SharedStr>,
    /// Within-run spread of this side (sd of ln(sample) in %, RMS over runs).
    pub within_pct: Option<f64>,
    /// Mean samples per run.
    pub samples_per_run: Option<f64>,
}

impl SideStats {
    fn of(runs: &[RunValue]) -> Option<SideStats> {
        let values: Vec<f64> = runs.iter().map(|r| r.value).collect();
        let mean = stats::mean(&values)?;
        let spread = model::spread(&[runs]);
        Some(SideStats {
            n: values.len(),
            mean,
            geomean: stats::geomean(&values),
            stddev_pct: stats::stddev_pct(stats::stddev(&values), Some(mean)),
            pop_stddev_pct: stats::stddev_pct(stats::pop_stddev(&values), Some(mean)),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            runs: runs.iter().map(|r| r.run.clone()).collect(),
            values,
            within_pct: spread.within_pct,
            samples_per_run: spread.samples_per_run,
        })
    }
}

/// One metric compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub title: String,
    pub unit: String,
    pub direction: Direction,
    /// The primary row of its table (the full UnixBench Index Score).
    pub primary: bool,
    pub base: Option<SideStats>,
    pub patched: Option<SideStats>,
    /// 100 × (mean patched − mean base) / mean base: the posted tables' `cmp`, LKP's
    /// `%change`. The interval is of the ratio of geometric means, which differs slightly.
    pub change_pct: Option<f64>,
    pub spread: Spread,
    #[serde(flatten)]
    pub judgement: Judgement,
    pub sensitivity: Option<Sensitivity>,
    /// Paired design: the pairs, the robust estimate, which interval is narrower, drift and
    /// order checks, and every round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<paired::PairedRow>,
}

impl Row {
    /// A row title that says which instance it is: the title plus the params it lacks.
    pub fn display_name(&self) -> String {
        let extra: Vec<String> = self
            .params
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "test" | "partial"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let title = if self.title.is_empty() {
            &self.name
        } else {
            &self.title
        };
        if extra.is_empty() {
            title.clone()
        } else {
            format!("{title} [{}]", extra.join(","))
        }
    }
}

/// How many false flags the table could hold at its level.
#[derive(Debug, Clone, Serialize)]
pub struct Family {
    /// Rows with a p-value (the family the correction runs over).
    pub rows: usize,
    /// Rows labelled improved or regressed.
    pub flagged: usize,
    pub alpha: f64,
    /// Upper bound of the expected number of false flags among them (α × flagged, by BH).
    pub expected_false: f64,
    /// For the lkp rule: its exact A/A rate at the sides' run counts.
    pub lkp: Option<LkpRate>,
    /// Rows with too few events to judge (`floors`): listed, not judged.
    #[serde(default)]
    pub too_few: usize,
}

/// The LKP rule's false-alarm rate with identical sides (noise well above 1 %).
#[derive(Debug, Clone, Serialize)]
pub struct LkpRate {
    pub n_base: usize,
    pub n_new: usize,
    pub per_row: f64,
    /// Chance that a table of this many independent rows shows at least one flag.
    pub per_table: f64,
}

/// The whole comparison, as every format prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub base: String,
    pub patched: String,
    pub base_runs: Vec<String>,
    pub patched_runs: Vec<String>,
    pub settings: Settings,
    /// What differs between the sides besides the kernel, one line each ("not comparable").
    pub warnings: Vec<String>,
    /// The noise-check warnings each side's runs were measured with (base, then patched).
    pub noise: Vec<comparability::SideNoise>,
    /// Every fingerprint and settings attribute, side by side.
    pub fingerprint: Vec<comparability::Attribute>,
    /// will-it-scale and AIM7 curves of the sides' runs (empty for other kinds).
    pub curves: Vec<curves::Curve>,
    /// Notes about how the verdicts were reached (runs left out, profiles used, one run a side).
    pub notes: Vec<String>,
    pub family: Family,
    /// The second table's family (the monitor rows), corrected on its own.
    pub why_family: Family,
    /// The monitor rows that vary, changed ones first by the size of their change
    /// ([`why_table`]).
    pub why: Vec<Row>,
    /// The campaign behind a paired comparison (null: unpaired).
    pub design: Option<paired::Design>,
    pub rows: Vec<Row>,
}

impl Comparison {
    /// Rows the gate fails at `pct`: Holm-adjusted p < α and the whole interval beyond −pct
    /// (in the metric's bad direction).
    pub fn regressions_beyond(&self, pct: f64) -> Vec<&Row> {
        let alpha = self.settings.alpha();
        self.rows
            .iter()
            .filter(|r| {
                r.judgement
                    .estimate
                    .as_ref()
                    .is_some_and(|e| verdict::gate_fails(e, r.direction, pct, alpha))
            })
            .collect()
    }

    /// Score rows with failed runs (a value of 0), with what failed: reported, never gated.
    pub fn failed_runs(&self) -> Vec<(&Row, &verdict::Failed)> {
        self.rows
            .iter()
            .flat_map(|r| r.judgement.failed.iter().map(move |f| (r, f)))
            .collect()
    }

    /// The noise-check warning lines of the sides (none when no run warned).
    pub fn noise_lines(&self) -> Vec<&str> {
        self.noise
            .iter()
            .filter_map(|n| n.line.as_deref())
            .collect()
    }

    /// Names of the primary rows.
    pub fn primary_rows(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.primary)
            .map(Row::display_name)
            .collect()
    }
}

/// One row's values, before it is judged.
struct Pending<'a> {
    key: String,
    first: &'a Metric,
    title: String,
    params: Cow<'a, BTreeMap<String, String>>,
    base: Vec<RunValue>,
    new: Vec<RunValue>,
}

impl Pending<'_> {
    /// The largest run value of either side.
    fn largest(&self) -> f64 {
        self.base
            .iter()
            .chain(&self.new)
            .map(|v| v.value)
            .fold(0.0, f64::max)
    }

    /// The mean of every run value of both sides.
    fn mean(&self) -> f64 {
        let all: Vec<f64> = self.base.iter().chain(&self.new).map(|v| v.value).collect();
        stats::mean(&all).unwrap_or(0.0)
    }
}

/// How each row is judged: a score, a monitor row with its resolution, or a monitor row
/// below its family's floor (`floors`); a per-operation row follows its count row's floor and
/// resolution.
fn row_kinds(pending: &[Pending], sides: [&Side; 2]) -> Vec<verdict::RowKind> {
    use verdict::RowKind;
    let by_key: HashMap<&str, &Pending> = pending.iter().map(|r| (r.key.as_str(), r)).collect();
    let own = |r: &Pending| -> RowKind {
        if let Some(reason) = floors::too_few(&r.first.name, &r.first.unit, r.largest()) {
            return RowKind::TooFew { reason };
        }
        RowKind::Monitor {
            resolution: coarsest_resolution(r, sides),
        }
    };
    pending
        .iter()
        .map(|r| {
            if !crate::record::monitors::is_monitor(&r.first.name) {
                return RowKind::Score;
            }
            let count = floors::count_of(&r.first.name)
                .and_then(|c| by_key.get(metric_key(c, &r.params).as_str()));
            match (count, own(r)) {
                (Some(c), RowKind::Monitor { .. }) => match own(c) {
                    RowKind::TooFew { reason } => RowKind::TooFew {
                        reason: floors::too_few_per_op(&reason),
                    },
                    RowKind::Monitor { resolution } => RowKind::Monitor {
                        resolution: floors::per_op_resolution(resolution, r.mean(), c.mean()),
                    },
                    RowKind::Score => RowKind::Score,
                },
                (_, kind) => kind,
            }
        })
        .collect()
}

/// A monitor row's resolution: the coarsest of its runs' (the shortest window's).
fn coarsest_resolution(r: &Pending, sides: [&Side; 2]) -> f64 {
    // Finding a run's window scans its metrics: only for the rows whose resolution needs it.
    if !floors::needs_window(&r.first.name) {
        return floors::resolution(&r.first.name, &r.first.unit, floors::Window::default());
    }
    let window = |side: &Side, run: &str| -> floors::Window {
        let Some((_, rec)) = side.runs.iter().find(|(id, _)| id == run) else {
            return floors::Window::default();
        };
        floors::Window {
            wall_s: rec
                .metrics
                .iter()
                .find(|m| m.name == "time.elapsed_time" && m.params == *r.params)
                .map(|m| m.value),
            cpus: rec.system.cpus,
        }
    };
    [(sides[0], &r.base), (sides[1], &r.new)]
        .iter()
        .flat_map(|(side, values)| values.iter().map(move |v| window(side, &v.run)))
        .map(|w| floors::resolution(&r.first.name, &r.first.unit, w))
        .fold(0.0, f64::max)
}

/// A run as a comparison keeps it: its monitor units without their counters' values, which
/// its metrics repeat (a full-width run's 2,400 counters cost a comparison of 100 runs a side
/// 50 MB); what says which monitors ran inside the window stays.
pub fn lean(mut r: RunRecord) -> RunRecord {
    for u in r.monitors.iter_mut() {
        u.sample.keep_only_window_evidence();
    }
    r
}

/// Compares two sides metric by metric. A value that is not finite or is negative is an error
/// naming the metric and the run.
pub fn compare(base: &Side, patched: &Side, settings: &Settings) -> anyhow::Result<Comparison> {
    let filled = absent_shares::fill(base, patched);
    let (base, patched) = match &filled {
        Some((b, p)) => (b, p),
        None => (base, patched),
    };
    let detected = paired::detect(base, patched);
    let index = match &detected {
        paired::Detected::Paired(p) => Some(&p.1),
        _ => None,
    };
    let orders = time_order(base, patched);
    let mut b = metrics_by_key(base, &orders[0]);
    let mut p = metrics_by_key(patched, &orders[1]);
    let mut keys: Vec<&String> = b.order.iter().collect();
    keys.extend(p.order.iter().filter(|k| !b.map.contains_key(*k)));
    let mut pending = Vec::new();
    for key in keys {
        // Taken out of the maps as the row is made, so they shrink as `pending` grows.
        let bm = b.map.remove(key).unwrap_or_default();
        let pm = p.map.remove(key).unwrap_or_default();
        let Some(first) = bm.first().or(pm.first()) else {
            continue;
        };
        pending.push(Pending {
            key: key.clone(),
            first: first.metric,
            title: first.title().to_string(),
            // Borrowed from the run's metric; a copy only for a UnixBench index's variant.
            params: match &first.variant {
                Some(v) => Cow::Owned(v.1.clone()),
                None => Cow::Borrowed(&*first.metric.params),
            },
            base: model::run_values(&base.name, key, &as_tuples(&bm))?,
            new: model::run_values(&patched.name, key, &as_tuples(&pm))?,
        });
    }
    drop((b, p));
    let borrowed = |side: &Side, key: &str| -> Option<Borrowed> {
        let e = side.profile.as_ref()?.metrics.get(key)?;
        Some(Borrowed { sd: e.sd, df: e.df })
    };
    let names = (short_name(base, "base"), short_name(patched, "patched"));
    let pairs: Vec<Option<paired::RowPairs>> = pending
        .iter()
        .map(|r| index.map(|i| i.row(&r.base, &r.new)))
        .collect();
    let kinds = row_kinds(&pending, [base, patched]);
    let inputs: Vec<RowInput> = pending
        .iter()
        .zip(&pairs)
        .zip(kinds)
        .map(|((r, pairs), kind)| RowInput {
            base: &r.base,
            new: &r.new,
            direction: r.first.direction,
            base_profile: borrowed(base, &r.key),
            new_profile: borrowed(patched, &r.key),
            names: (&names.0, &names.1),
            cause: shape::known_cause(
                r.params.get("test").map(String::as_str),
                r.params.get("copies").map(String::as_str),
            ),
            // Monitor rows are judged unpaired (`verdict::RowKind::Monitor`).
            pairs: pairs.as_ref().filter(|_| kind == verdict::RowKind::Score),
            kind,
        })
        .collect();
    // Two families, each with its own table correction: the scores, and the monitor rows
    // (the second table, "what changed with it"), so hundreds of counters neither drown the
    // scores' q-values nor borrow from them.
    let is_why: Vec<bool> = inputs
        .iter()
        .map(|r| r.kind != verdict::RowKind::Score)
        .collect();
    let judgements = judge_families(&inputs, &is_why, settings);
    let mut rows = Vec::new();
    for ((r, input), judgement) in pending.iter().zip(&inputs).zip(judgements) {
        let (bs, ps) = (SideStats::of(&r.base), SideStats::of(&r.new));
        let change_pct = match (&bs, &ps) {
            (Some(x), Some(y)) if x.mean != 0.0 => Some(100.0 * (y.mean - x.mean) / x.mean.abs()),
            _ => None,
        };
        let spread = model::spread(&[&r.base, &r.new]);
        // Display only (the label is judged above): not in the calibration loops.
        let paired_row = input.pairs.filter(|_| settings.details).map(|p| {
            let (est, unpaired) = match &judgement.estimate {
                Some(e) if e.method == estimate::Method::Paired => {
                    (Some(e), judgement.unpaired.as_ref())
                }
                e => (None, e.as_ref()),
            };
            paired::paired_row(p, est, unpaired, settings.confidence, settings.band())
        });
        let sensitivity = match (&paired_row, settings.details && !is_why[rows.len()]) {
            (_, false) => None,
            (Some(pr), true) if pr_is_paired(&judgement) => pr.sd_pct.map(|sd| {
                plan::paired_sensitivity(
                    pr.pairs,
                    pr.boxes,
                    sd / 100.0,
                    settings.noise_pct,
                    settings.alpha(),
                    &settings.plan_pct,
                )
            }),
            _ => row_sensitivity(&spread, input, &judgement, settings),
        };
        rows.push(Row {
            key: r.key.clone(),
            name: r.first.name.to_string(),
            primary: r.first.name == "unixbench.index" && !r.params.contains_key("partial"),
            params: r.params.clone().into_owned(),
            title: r.title.clone(),
            unit: r.first.unit.to_string(),
            direction: r.first.direction,
            base: bs,
            patched: ps,
            change_pct,
            spread,
            judgement,
            sensitivity,
            paired: paired_row,
        });
    }
    let (mut why, mut scores) = (Vec::new(), Vec::new());
    for (r, w) in rows.into_iter().zip(&is_why) {
        if *w {
            why.push(r);
        } else {
            scores.push(r);
        }
    }
    let rows = scores;
    let why = why_table(why);
    let family = family(&rows, base, patched, settings);
    let why_family = family_of(&why, settings);
    // What a reader sees beside the labels; not in the calibration loops (the fingerprint
    // serialises every run's system: a fifth of a calibration's time).
    let (fingerprint, noise, curves) = if settings.details {
        (
            comparability::fingerprint(base, patched),
            vec![comparability::noise(base), comparability::noise(patched)],
            curves::of(&[
                (base.name.as_str(), base.runs.as_slice()),
                (patched.name.as_str(), patched.runs.as_slice()),
            ]),
        )
    } else {
        Default::default()
    };
    Ok(Comparison {
        base: base.name.clone(),
        patched: patched.name.clone(),
        base_runs: base.runs.iter().map(|r| r.0.clone()).collect(),
        patched_runs: patched.runs.iter().map(|r| r.0.clone()).collect(),
        settings: settings.clone(),
        warnings: comparability::differences_in(&fingerprint, base, patched),
        noise,
        fingerprint,
        curves,
        notes: {
            let mut n = notes(base, patched, &rows, &detected);
            n.extend(cpu_share_note(&why));
            n
        },
        family,
        why_family,
        why,
        design: match detected {
            paired::Detected::Paired(p) => Some(p.0),
            _ => None,
        },
        rows,
    })
}

/// Judges the rows of each family (scores: `is_why` false; monitors: true) with its own
/// table correction, and returns the judgements in the rows' order.
fn judge_families(inputs: &[RowInput], is_why: &[bool], s: &Settings) -> Vec<Judgement> {
    let mut out: Vec<Option<Judgement>> = vec![None; inputs.len()];
    for family in [false, true] {
        let idx: Vec<usize> = (0..inputs.len()).filter(|&i| is_why[i] == family).collect();
        let subset: Vec<RowInput> = idx.iter().map(|&i| inputs[i].clone()).collect();
        for (i, j) in idx.into_iter().zip(verdict::judge_table(&subset, s)) {
            out[i] = Some(j);
        }
    }
    out.into_iter().flatten().collect()
}

/// The second table's rows: those on both sides (runs without monitors, of `--no-monitors`
/// or an earlier build, compare as before) whose values vary at all (a counter that is the
/// same in every run, such as an interrupt line that never fired, says nothing), the changed
/// ones first, each group by the size of its change, and the rows with too few events to
/// judge (`floors`, verdict `too few`) last: they are listed, not judged.
pub fn why_table(rows: Vec<Row>) -> Vec<Row> {
    let mut rows: Vec<Row> = rows
        .into_iter()
        .filter(|r| r.base.is_some() && r.patched.is_some())
        .filter(|r| {
            let vals = r
                .base
                .iter()
                .chain(&r.patched)
                .flat_map(|s| s.values.iter());
            let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
            lo < hi
        })
        .collect();
    let size = |r: &Row| -> f64 {
        r.judgement
            .estimate
            .as_ref()
            .map(|e| (e.point_pct / 100.0).ln_1p().abs())
            .filter(|v| v.is_finite())
            .unwrap_or(f64::INFINITY)
    };
    let group = |r: &Row| match r.judgement.verdict {
        v if v.is_flag() => 0,
        verdict::Verdict::TooFew => 2,
        _ => 1,
    };
    rows.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then(size(b).total_cmp(&size(a)))
            .then(a.key.cmp(&b.key))
    });
    rows
}

/// A family without the lkp rule's table rate (the second table's).
fn family_of(rows: &[Row], s: &Settings) -> Family {
    let flagged = rows
        .iter()
        .filter(|r| r.judgement.verdict.is_flag())
        .count();
    Family {
        rows: rows
            .iter()
            .filter(|r| r.judgement.estimate.is_some())
            .count(),
        flagged,
        alpha: s.alpha(),
        expected_false: s.alpha() * flagged as f64,
        lkp: None,
        too_few: rows
            .iter()
            .filter(|r| r.judgement.verdict == verdict::Verdict::TooFew)
            .count(),
    }
}

/// The warning when the workload's CPU time per wall second changed between the sides: the
/// score per CPU-second then says something else than the score (a change that makes tasks
/// wait looks cheaper per CPU-second).
fn cpu_share_note(why: &[Row]) -> Vec<String> {
    why.iter()
        .filter(|r| r.name == "time.percent_of_cpu_this_job_got" && r.judgement.verdict.is_flag())
        .map(|r| {
            let m = |s: &Option<SideStats>| s.as_ref().map_or(f64::NAN, |s| s.mean);
            format!(
                "{}: the workload's CPU time per wall second differs between the sides                  ({:.0} % vs {:.0} % of a CPU); its score per CPU-second is not the same                  question as its score (waiting, blocking or throttling moves the two apart)",
                r.display_name(),
                m(&r.base),
                m(&r.patched)
            )
        })
        .collect()
}

/// True when the row's verdict rests on the paired estimate.
fn pr_is_paired(j: &Judgement) -> bool {
    j.estimate
        .as_ref()
        .is_some_and(|e| e.method == estimate::Method::Paired)
}

/// The side's name for messages: as given, or its role when the name is a long list of files.
fn short_name(side: &Side, role: &str) -> String {
    if side.name.chars().count() > 24 {
        role.to_string()
    } else {
        side.name.clone()
    }
}

/// The spread a row's sensitivity rests on: its own runs, else a noise profile.
fn row_sensitivity(
    spread: &Spread,
    input: &RowInput,
    judgement: &Judgement,
    s: &Settings,
) -> Option<Sensitivity> {
    let (nb, nn) = (input.base.len(), input.new.len());
    if nb == 0 || nn == 0 {
        return None;
    }
    let (sd, df, from) = match (spread.between_pct, input.base_profile.or(input.new_profile)) {
        (Some(b), _) if spread.between_df >= 2.0 || input.base_profile.is_none() => {
            (b / 100.0, spread.between_df, "runs")
        }
        (_, Some(p)) => (p.sd, p.df, "noise profile"),
        (Some(b), None) => (b / 100.0, spread.between_df, "runs"),
        (None, None) => return None,
    };
    let df = judgement
        .estimate
        .as_ref()
        .map(|e| e.df)
        .filter(|d| d.is_finite() && *d >= 1.0)
        .unwrap_or(df.max(1.0));
    Some(plan::sensitivity(
        nb,
        nn,
        sd,
        df,
        from,
        s.noise_pct,
        s.alpha(),
        &s.plan_pct,
    ))
}

fn family(rows: &[Row], base: &Side, patched: &Side, s: &Settings) -> Family {
    let with_p = rows
        .iter()
        .filter(|r| r.judgement.estimate.is_some())
        .count();
    let flagged = rows
        .iter()
        .filter(|r| r.judgement.verdict.is_flag())
        .count();
    let lkp = (s.rule == Rule::Lkp)
        .then(|| {
            let (nb, nn) = (base.runs.len(), patched.runs.len());
            let per_row = stats::lkp_aa_rate(nb, nn)?;
            let m = rows
                .iter()
                .filter(|r| r.base.is_some() && r.patched.is_some())
                .count();
            Some(LkpRate {
                n_base: nb,
                n_new: nn,
                per_row,
                per_table: 1.0 - (1.0 - per_row).powi(m as i32),
            })
        })
        .flatten();
    Family {
        rows: with_p,
        flagged,
        alpha: s.alpha(),
        expected_false: s.alpha() * flagged as f64,
        lkp,
        too_few: 0,
    }
}

/// A run's identity across sides: its UUID, else the name it was given by (run id or file).
fn run_identity((name, r): &(String, RunRecord)) -> String {
    r.uuid.clone().unwrap_or_else(|| name.clone())
}

/// The note when the sides share runs: all of them (`compare base base`: every difference is
/// zero by construction), or some.
fn shared_runs_note(base: &Side, patched: &Side) -> Option<String> {
    let b: std::collections::BTreeSet<String> = base.runs.iter().map(run_identity).collect();
    let p: std::collections::BTreeSet<String> = patched.runs.iter().map(run_identity).collect();
    let shared: Vec<&str> = base
        .runs
        .iter()
        .filter(|r| p.contains(&run_identity(r)))
        .map(|(name, _)| name.as_str())
        .collect();
    if b == p {
        Some(format!(
            "the two sides are the same runs ({}): every difference is zero by construction \
             and says nothing about a change; compare two different sets of runs",
            shared.join(", ")
        ))
    } else if !shared.is_empty() {
        Some(format!(
            "{} run{} on both sides ({}): the sides are not independent, as the intervals and \
             verdicts assume",
            shared.len(),
            if shared.len() == 1 { " is" } else { "s are" },
            shared.join(", ")
        ))
    } else {
        None
    }
}

fn notes(base: &Side, patched: &Side, rows: &[Row], detected: &paired::Detected) -> Vec<String> {
    let mut out: Vec<String> = shared_runs_note(base, patched).into_iter().collect();
    match detected {
        paired::Detected::Paired(p) => out.push(design_note(&p.0, rows)),
        paired::Detected::NotPaired(why) => out.push(why.clone()),
        paired::Detected::NotCampaign => {}
    }
    for side in [base, patched] {
        if side.left_out_incomplete > 0 {
            out.push(format!(
                "left out {} incomplete run{} of {} (--include-incomplete keeps them)",
                side.left_out_incomplete,
                if side.left_out_incomplete == 1 {
                    ""
                } else {
                    "s"
                },
                side.name
            ));
        }
        if let Some(p) = &side.profile {
            if rows.iter().any(|r| {
                r.judgement
                    .estimate
                    .as_ref()
                    .is_some_and(|e| e.borrowed.contains(&side.name))
            }) {
                out.push(format!(
                    "{} has fewer than {} runs: its between-run spread is taken from the noise \
                     profile of {}",
                    side.name,
                    verdict::PROFILE_BELOW,
                    p.description
                ));
            }
        }
    }
    if base.runs.len() == 1
        && patched.runs.len() == 1
        && base.profile.is_none()
        && patched.profile.is_none()
    {
        out.push(
            "one run per side: no verdict. The spread inside a run (passes) is shown for \
             information only: passes share the run's boot, placement and caches, so they say \
             nothing about how much a second run would differ. Repeat each side at least 2 \
             times (3 or more to see the spread)"
                .to_string(),
        );
    }
    out
}

/// The line that says the design is paired, and on what.
fn design_note(d: &paired::Design, rows: &[Row]) -> String {
    let boxes = match d.boxes.as_slice() {
        [one] if one.is_empty() => "one machine".to_string(),
        [one] => format!("box {one}"),
        many => format!(
            "{} boxes ({}), each box a block: pairs are within box and round",
            many.len(),
            many.join(", ")
        ),
    };
    let mut s = format!(
        "paired design: campaign {}, {} vs {}, {} pair{} of {} block{} on {boxes}; the \
         verdicts use the paired estimate (per-round log ratio, t over the pairs), the \
         unpaired one is shown beside it",
        d.campaign,
        d.sides[1],
        d.sides[0],
        d.pairs,
        if d.pairs == 1 { "" } else { "s" },
        d.blocks,
        if d.blocks == 1 { "" } else { "s" },
    );
    if !d.unpartnered.is_empty() {
        let lone: Vec<String> = d
            .unpartnered
            .iter()
            .map(|u| {
                format!(
                    "run {} ({} round {}{})",
                    u.run,
                    u.side,
                    u.round,
                    paired::box_suffix(&u.r#box)
                )
            })
            .collect();
        s += &format!(
            "; {} run{} without a partner (its other side failed or is missing) left out of \
             the pairs: {}",
            lone.len(),
            if lone.len() == 1 { "" } else { "s" },
            lone.join(", ")
        );
    }
    let fallback = rows
        .iter()
        .filter(|r| r.paired.is_some() && !pr_is_paired(&r.judgement))
        .filter(|r| r.judgement.estimate.is_some())
        .count();
    if fallback > 0 {
        s += &format!(
            "; {fallback} row{} with too few pairs fall{} back to the unpaired estimate",
            if fallback == 1 { "" } else { "s" },
            if fallback == 1 { "s" } else { "" }
        );
    }
    s
}

/// Each run's position in time among both sides' runs (by start time, then as given).
fn time_order(base: &Side, patched: &Side) -> [Vec<usize>; 2] {
    let parse = |s: &str| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .ok()
            .map(|t| t.unix_timestamp_nanos())
    };
    let mut all: Vec<(Option<i128>, usize, usize)> = Vec::new();
    for (si, side) in [base, patched].iter().enumerate() {
        for (ri, (_, run)) in side.runs.iter().enumerate() {
            all.push((parse(&run.started_at), si, ri));
        }
    }
    if all.iter().any(|a| a.0.is_none()) {
        all.iter_mut().for_each(|a| a.0 = None);
    }
    all.sort_by_key(|a| a.0);
    let mut out = [vec![0; base.runs.len()], vec![0; patched.runs.len()]];
    for (pos, (_, si, ri)) in all.iter().enumerate() {
        out[*si][*ri] = pos;
    }
    out
}

fn as_tuples<'a>(v: &'a [Entry<'a>]) -> Vec<(SharedStr, usize, &'a Metric)> {
    v.iter()
        .map(|e| (e.run.clone(), e.order, e.metric))
        .collect()
}

/// One run's metric of a row: 40 bytes, as a comparison of 100 full-width runs a side holds
/// 800,000 of them.
struct Entry<'a> {
    run: SharedStr,
    order: usize,
    metric: &'a Metric,
    /// A partial UnixBench index's own title and params (else the metric's own).
    variant: Option<Box<(String, BTreeMap<String, String>)>>,
}

impl Entry<'_> {
    fn title(&self) -> &str {
        self.variant.as_ref().map_or(&self.metric.title, |v| &v.0)
    }
}

struct ByKey<'a> {
    order: Vec<String>,
    /// Hashed: keys share long prefixes (`proc-vmstat.…[copies=1,test=…]`), which a tree
    /// compares byte by byte at every level.
    map: HashMap<String, Vec<Entry<'a>>>,
}

fn metrics_by_key<'a>(side: &'a Side, orders: &[usize]) -> ByKey<'a> {
    let mut out = ByKey {
        order: Vec::new(),
        map: HashMap::new(),
    };
    for ((id, run), &order) in side.runs.iter().zip(orders) {
        let id = SharedStr::from(id.as_str());
        for m in &run.metrics {
            let (params, title) = index_variant(run, m);
            let key = metric_key(&m.name, &params);
            let variant = match (params, title) {
                (Cow::Borrowed(_), Cow::Borrowed(_)) => None,
                (p, t) => Some(Box::new((t.into_owned(), p.into_owned()))),
            };
            let entry = match out.map.get_mut(&key) {
                Some(e) => e,
                None => {
                    out.order.push(key.clone());
                    out.map.entry(key).or_default()
                }
            };
            entry.push(Entry {
                run: id.clone(),
                order,
                metric: m,
                variant,
            });
        }
    }
    out
}

/// A UnixBench index metric keeps its key when the index is full; a partial one gets a
/// `partial` param naming its tests, so full and partial indexes never share a row.
fn index_variant<'a>(
    run: &RunRecord,
    m: &'a Metric,
) -> (Cow<'a, BTreeMap<String, String>>, Cow<'a, str>) {
    if m.name != "unixbench.index" {
        return (Cow::Borrowed(&m.params), Cow::Borrowed(&m.title));
    }
    let mut params = m.params.to_map();
    let copies: u32 = m
        .params
        .get("copies")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let tests: Vec<&str> = run
        .tests
        .iter()
        .filter(|t| t.copies == copies && t.baseline.is_some())
        .map(|t| t.test.as_str())
        .collect();
    let recorded = run
        .indexes
        .iter()
        .find(|i| i.copies == copies && i.category == crate::unixbench::catalog::SYSTEM_CATEGORY)
        .map(|i| i.full);
    let full = recorded.unwrap_or_else(|| {
        tests.is_empty()
            || crate::unixbench::catalog::INDEX
                .iter()
                .all(|id| tests.contains(id))
    });
    if full {
        return (Cow::Owned(params), Cow::Borrowed(&m.title));
    }
    let mut ids: Vec<&str> = tests;
    ids.sort_unstable();
    params.insert("partial".to_string(), ids.join("+"));
    (
        Cow::Owned(params),
        Cow::Owned(format!("{} (partial: {})", m.title, ids.join(", "))),
    )
}
