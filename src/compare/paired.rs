//! The paired design of a comparison: when both sides' runs were made by one campaign (each
//! side one side of it), the runs are paired by block, (box, round), and each metric gets the
//! per-block log ratio d = ln(patched / base).
//!
//! - [`detect`] says whether the sides form a paired design ([`Design`]: the campaign, its
//!   boxes and rounds, the pairs, and the runs left without a partner, such as a side whose
//!   step failed), or why not (a note: runs of two campaigns, runs of no campaign mixed in,
//!   two runs of one side in one block).
//! - [`Index::row`] pairs the run values of one metric ([`RowPairs`]); a run whose partner
//!   lacks the metric is left out of that row's pairs and counted.
//! - [`paired_row`] gives what a row shows besides its verdict ([`PairedRow`]): the robust
//!   estimate (Hodges–Lehmann with the signed-rank interval), which of the paired and unpaired
//!   intervals is narrower, drift over rounds of each side and of d, the round-order effect
//!   (d when base ran first against d when patched ran first), the share of the spread between
//!   boxes, and every round's figures.
//!
//! The verdict itself (paired t with boxes as blocks; unpaired as the fallback) is decided in
//! `super::verdict` with the rest of the table.

use super::estimate::Estimate;
use super::model::RunValue;
use super::Side;
use crate::stats::blocked::{self, BetweenShare};
use crate::stats::signed_rank::HodgesLehmann;
use crate::stats::trend;
use crate::stats::welch::{LogRatio, LogSample};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// p below which a drift or an order effect is worth a note (and the figure beyond the band).
pub const NOTE_P: f64 = 0.01;

/// Which side ran first in a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum First {
    Base,
    Patched,
    /// Both at once (a duet), or the slots do not say.
    Together,
}

impl First {
    pub fn as_str(self) -> &'static str {
        match self {
            First::Base => "base first",
            First::Patched => "patched first",
            First::Together => "together",
        }
    }
}

/// A run without a partner in its block.
#[derive(Debug, Clone, Serialize)]
pub struct Unpartnered {
    /// `base` or `patched` (the comparison's side).
    pub side: &'static str,
    pub run: String,
    pub r#box: String,
    pub round: u32,
}

/// The campaign behind a paired comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Design {
    pub campaign: String,
    /// The campaign's side names of the comparison's base and patched sides.
    pub sides: [String; 2],
    /// The boxes ("" is the single machine of a campaign without a lab).
    pub boxes: Vec<String>,
    /// Rounds with a run of either side (over all boxes: distinct (box, round) blocks).
    pub blocks: usize,
    /// Blocks with a run of each side.
    pub pairs: usize,
    /// Runs whose block has no run of the other side: left out of the pairs.
    pub unpartnered: Vec<Unpartnered>,
}

/// Where a run sits in the campaign.
#[derive(Debug, Clone, Copy)]
struct Place {
    r#box: usize,
    round: u32,
    slot: u32,
    /// Both sides of the round ran at once (a duet): no order.
    duet: bool,
}

/// The two runs of a block, as far as they are there, with where each sits.
type BlockCell<'a> = [Option<(&'a RunValue, Place)>; 2];

/// Where every run of the two sides sits.
#[derive(Debug, Clone, Default)]
pub struct Index {
    sides: [HashMap<String, Place>; 2],
    boxes: Vec<String>,
}

/// What the sides are.
#[derive(Debug, Clone)]
pub enum Detected {
    /// Not runs of a campaign: the comparison is unpaired, nothing to say.
    NotCampaign,
    /// Runs of a campaign that do not form pairs, and why (a note).
    NotPaired(String),
    Paired(Box<(Design, Index)>),
}

/// Whether `base` and `patched` are the two sides of one campaign.
pub fn detect(base: &Side, patched: &Side) -> Detected {
    let all = || base.runs.iter().chain(&patched.runs);
    let with = all().filter(|(_, r)| r.campaign.is_some()).count();
    if with == 0 {
        return Detected::NotCampaign;
    }
    let total = base.runs.len() + patched.runs.len();
    if with < total {
        return Detected::NotPaired(format!(
            "unpaired: {} of {total} runs were not made by a campaign step, so rounds cannot \
             pair them; compare the campaign's labels (NAME/base NAME/patched) alone for the \
             paired estimate",
            total - with
        ));
    }
    let campaigns: BTreeSet<&str> = all()
        .filter_map(|(_, r)| r.campaign.as_ref())
        .map(|s| s.campaign.as_str())
        .collect();
    if campaigns.len() > 1 {
        let names: Vec<&str> = campaigns.into_iter().collect();
        return Detected::NotPaired(format!(
            "unpaired: the runs come from campaigns {}; only runs of one campaign pair by round",
            names.join(", ")
        ));
    }
    let side_names = |s: &Side| -> BTreeSet<String> {
        s.runs
            .iter()
            .filter_map(|(_, r)| r.campaign.as_ref())
            .map(|c| c.side.clone())
            .collect()
    };
    let (bs, ps) = (side_names(base), side_names(patched));
    if bs.len() != 1 || ps.len() != 1 || bs == ps {
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join("+");
        return Detected::NotPaired(format!(
            "unpaired: base holds campaign side(s) {} and patched {}; a paired comparison needs \
             one side of the campaign on each",
            list(&bs),
            list(&ps)
        ));
    }
    let boxes: Vec<String> = all()
        .filter_map(|(_, r)| r.campaign.as_ref())
        .map(|s| s.r#box.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut index = Index {
        sides: Default::default(),
        boxes: boxes.clone(),
    };
    let mut blocks: BTreeMap<(usize, u32), [Option<String>; 2]> = BTreeMap::new();
    for (i, side) in [base, patched].iter().enumerate() {
        for (id, run) in &side.runs {
            let Some(step) = &run.campaign else { continue };
            let b = boxes.iter().position(|x| *x == step.r#box).unwrap_or(0);
            let cell = &mut blocks.entry((b, step.round)).or_default()[i];
            if let Some(other) = cell {
                return Detected::NotPaired(format!(
                    "unpaired: runs {other} and {id} of {} are both round {}{}; a round holds \
                     one run of each side",
                    if i == 0 { "base" } else { "patched" },
                    step.round,
                    box_suffix(&step.r#box)
                ));
            }
            *cell = Some(id.clone());
            index.sides[i].insert(
                id.clone(),
                Place {
                    r#box: b,
                    round: step.round,
                    slot: step.slot,
                    duet: step.duet,
                },
            );
        }
    }
    let mut unpartnered = Vec::new();
    let mut pairs = 0;
    for ((b, round), cell) in &blocks {
        match cell {
            [Some(_), Some(_)] => pairs += 1,
            [one, other] => {
                let (side, run) = match (one, other) {
                    (Some(r), None) => ("base", r),
                    (None, Some(r)) => ("patched", r),
                    _ => continue,
                };
                unpartnered.push(Unpartnered {
                    side,
                    run: run.clone(),
                    r#box: boxes[*b].clone(),
                    round: *round,
                });
            }
        }
    }
    let step = |s: &Side| s.runs.iter().find_map(|(_, r)| r.campaign.clone());
    let (Some(sb), Some(sp)) = (step(base), step(patched)) else {
        return Detected::NotCampaign;
    };
    Detected::Paired(Box::new((
        Design {
            campaign: sb.campaign.clone(),
            sides: [sb.side, sp.side],
            boxes,
            blocks: blocks.len(),
            pairs,
            unpartnered,
        },
        index,
    )))
}

/// ` on box NAME`, or nothing for the single machine.
pub fn box_suffix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" on box {name}")
    }
}

/// One pair of one metric.
#[derive(Debug, Clone)]
pub struct Pair {
    pub r#box: usize,
    pub round: u32,
    pub first: First,
    pub base: f64,
    pub patched: f64,
    pub base_run: String,
    pub patched_run: String,
}

impl Pair {
    /// ln(patched / base).
    pub fn d(&self) -> f64 {
        (self.patched / self.base).ln()
    }
}

/// The pairs of one metric, and the box of every run value (for the unpaired estimate).
#[derive(Debug, Clone, Default)]
pub struct RowPairs {
    /// In (box, round) order.
    pub pairs: Vec<Pair>,
    /// The box of each base and patched run value, in the order of the values.
    pub base_boxes: Vec<usize>,
    pub patched_boxes: Vec<usize>,
    /// Run values without a partner in this row: base, patched.
    pub left_out: [usize; 2],
    /// The boxes' names.
    pub box_names: Vec<String>,
}

impl RowPairs {
    /// Each pair's d, tagged with its box.
    pub fn d(&self) -> Vec<(usize, f64)> {
        self.pairs.iter().map(|p| (p.r#box, p.d())).collect()
    }

    /// The same without the pairs and values of failed runs (a score of 0); `base` and
    /// `patched` are the values the boxes were made from.
    pub fn without_failed(&self, base: &[RunValue], patched: &[RunValue]) -> RowPairs {
        let keep = |boxes: &[usize], values: &[RunValue]| -> Vec<usize> {
            if boxes.len() != values.len() {
                return boxes.to_vec();
            }
            boxes
                .iter()
                .zip(values)
                .filter(|(_, v)| v.value > 0.0)
                .map(|(b, _)| *b)
                .collect()
        };
        RowPairs {
            pairs: self
                .pairs
                .iter()
                .filter(|p| p.base > 0.0 && p.patched > 0.0)
                .cloned()
                .collect(),
            base_boxes: keep(&self.base_boxes, base),
            patched_boxes: keep(&self.patched_boxes, patched),
            left_out: self.left_out,
            box_names: self.box_names.clone(),
        }
    }

    /// Distinct boxes among the pairs.
    pub fn pair_boxes(&self) -> usize {
        self.pairs
            .iter()
            .map(|p| p.r#box)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Distinct boxes among every run value.
    pub fn run_boxes(&self) -> usize {
        self.base_boxes
            .iter()
            .chain(&self.patched_boxes)
            .collect::<BTreeSet<_>>()
            .len()
    }
}

impl Index {
    /// Pairs the run values of one metric.
    pub fn row(&self, base: &[RunValue], patched: &[RunValue]) -> RowPairs {
        let place = |side: usize, v: &RunValue| self.sides[side].get(v.run.as_str()).copied();
        let mut blocks: BTreeMap<(usize, u32), BlockCell> = BTreeMap::new();
        let mut out = RowPairs {
            box_names: self.boxes.clone(),
            ..RowPairs::default()
        };
        for (side, values) in [base, patched].iter().enumerate() {
            for v in *values {
                let Some(p) = place(side, v) else { continue };
                if side == 0 {
                    out.base_boxes.push(p.r#box);
                } else {
                    out.patched_boxes.push(p.r#box);
                }
                blocks.entry((p.r#box, p.round)).or_default()[side] = Some((v, p));
            }
        }
        for ((b, round), cell) in blocks {
            match cell {
                [Some((bv, bp)), Some((pv, pp))] => out.pairs.push(Pair {
                    r#box: b,
                    round,
                    first: match bp.slot.cmp(&pp.slot) {
                        _ if bp.duet || pp.duet => First::Together,
                        std::cmp::Ordering::Less => First::Base,
                        std::cmp::Ordering::Greater => First::Patched,
                        std::cmp::Ordering::Equal => First::Together,
                    },
                    base: bv.value,
                    patched: pv.value,
                    base_run: bv.run.to_string(),
                    patched_run: pv.run.to_string(),
                }),
                [Some(_), None] => out.left_out[0] += 1,
                [None, Some(_)] => out.left_out[1] += 1,
                [None, None] => {}
            }
        }
        out
    }
}

/// The robust estimate, in %.
#[derive(Debug, Clone, Serialize)]
pub struct Robust {
    /// The Hodges–Lehmann estimate of the change.
    pub point_pct: f64,
    /// The signed-rank interval (None: too few pairs for the asked level).
    pub lower_pct: Option<f64>,
    pub upper_pct: Option<f64>,
    /// The level it achieves (the distribution is discrete: at least the asked one).
    pub achieved: Option<f64>,
}

/// Which interval is narrower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Narrower {
    Paired,
    Unpaired,
    Same,
}

impl Narrower {
    pub fn as_str(self) -> &'static str {
        match self {
            Narrower::Paired => "paired",
            Narrower::Unpaired => "unpaired",
            Narrower::Same => "same",
        }
    }
}

/// A trend over rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    /// Fitted change per round, in %.
    pub per_round_pct: f64,
    /// Fitted change over the rounds (first to last), in %.
    pub total_pct: f64,
    pub p: f64,
    /// p < [`NOTE_P`] and the change over the rounds beyond the noise band.
    pub matters: bool,
}

/// Drift over rounds of each side's ln(value) and of d.
#[derive(Debug, Clone, Serialize)]
pub struct Drifts {
    pub base: Option<Drift>,
    pub patched: Option<Drift>,
    /// Of the per-round ratio: the change itself moving.
    pub ratio: Option<Drift>,
}

/// The round-order effect: d when patched ran first against d when base ran first.
#[derive(Debug, Clone, Serialize)]
pub struct OrderEffect {
    pub base_first: usize,
    pub patched_first: usize,
    /// Ratio (patched-first d over base-first d) as a change in %, with its interval.
    pub difference_pct: f64,
    pub lower_pct: f64,
    pub upper_pct: f64,
    pub p: f64,
    /// p < [`NOTE_P`] and the difference beyond the noise band.
    pub matters: bool,
}

/// One round of one row.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    pub r#box: String,
    pub round: u32,
    pub first: First,
    pub base: f64,
    pub patched: f64,
    /// patched / base − 1, in %.
    pub ratio_pct: f64,
    pub base_run: String,
    pub patched_run: String,
}

/// What a paired row shows besides its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct PairedRow {
    pub pairs: usize,
    /// Boxes among the pairs.
    pub boxes: usize,
    /// Run values without a partner in this row (left out of the pairs): base, patched.
    pub left_out: [usize; 2],
    /// sd of d (pooled within boxes), in %.
    pub sd_pct: Option<f64>,
    /// Hodges–Lehmann with the signed-rank interval, at the comparison's confidence.
    pub robust: Option<Robust>,
    /// Widths of the paired and unpaired intervals (upper − lower, in % points).
    pub paired_width_pct: Option<f64>,
    pub unpaired_width_pct: Option<f64>,
    /// Which is narrower (None unless both exist).
    pub narrower: Option<Narrower>,
    pub drift: Drifts,
    pub order: Option<OrderEffect>,
    /// With several boxes: how much of the spread of a run's value is its box.
    pub between_boxes: Option<BetweenShare>,
    pub rounds: Vec<Round>,
}

/// Width of an interval on the log scale (so it compares the same at every level).
fn log_width(e: &Estimate) -> Option<f64> {
    let (lo, hi) = ((e.lower_pct / 100.0).ln_1p(), (e.upper_pct / 100.0).ln_1p());
    (lo.is_finite() && hi.is_finite()).then_some(hi - lo)
}

/// The row's figures; `paired` and `unpaired` are the row's estimates when it has them.
pub fn paired_row(
    p: &RowPairs,
    paired: Option<&Estimate>,
    unpaired: Option<&Estimate>,
    confidence: f64,
    band: f64,
) -> PairedRow {
    let d: Vec<f64> = p.pairs.iter().map(Pair::d).collect();
    let finite = d.iter().all(|x| x.is_finite());
    let sd = blocked::paired(&p.d())
        .filter(|r| r.se.is_finite())
        .map(|r| r.se * (d.len() as f64).sqrt());
    let robust = HodgesLehmann::of(&d, confidence).map(|h| Robust {
        point_pct: h.change_pct(),
        lower_pct: h.interval_pct().map(|i| i.0),
        upper_pct: h.interval_pct().map(|i| i.1),
        achieved: h.achieved,
    });
    let (pw, uw) = (paired.and_then(log_width), unpaired.and_then(log_width));
    let narrower = match (pw, uw) {
        (Some(a), Some(b)) if (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) => Some(Narrower::Same),
        (Some(a), Some(b)) => Some(if a < b {
            Narrower::Paired
        } else {
            Narrower::Unpaired
        }),
        _ => None,
    };
    let pct_width = |e: Option<&Estimate>| e.map(|e| e.upper_pct - e.lower_pct);
    let trend_of = |y: &dyn Fn(&Pair) -> f64| -> Option<Drift> {
        if !finite {
            return None;
        }
        let pts: Vec<(usize, f64, f64)> = p
            .pairs
            .iter()
            .map(|q| (q.r#box, f64::from(q.round), y(q)))
            .collect();
        let t = trend::within_blocks(&pts)?;
        let total = t.slope * t.span;
        Some(Drift {
            per_round_pct: 100.0 * t.slope.exp_m1(),
            total_pct: 100.0 * total.exp_m1(),
            p: t.p,
            matters: t.p < NOTE_P && total.abs() > band,
        })
    };
    let drift = Drifts {
        base: trend_of(&|q| q.base.ln()),
        patched: trend_of(&|q| q.patched.ln()),
        ratio: trend_of(&|q| q.d()),
    };
    let order = if finite {
        order_effect(&p.pairs, confidence, band)
    } else {
        None
    };
    let between_boxes = (p.run_boxes() > 1)
        .then(|| {
            let groups = |vals: Vec<(usize, f64)>| -> Vec<Vec<f64>> {
                let mut g: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
                for (b, v) in vals {
                    if v > 0.0 && v.is_finite() {
                        g.entry(b).or_default().push(v.ln());
                    }
                }
                g.into_values().collect()
            };
            let sides = [
                groups(p.pairs.iter().map(|q| (q.r#box, q.base)).collect()),
                groups(p.pairs.iter().map(|q| (q.r#box, q.patched)).collect()),
            ];
            blocked::between_share(&sides)
        })
        .flatten();
    PairedRow {
        pairs: p.pairs.len(),
        boxes: p.pair_boxes(),
        left_out: p.left_out,
        sd_pct: sd.map(|s| 100.0 * s),
        robust,
        paired_width_pct: pct_width(paired),
        unpaired_width_pct: pct_width(unpaired),
        narrower,
        drift,
        order,
        between_boxes,
        rounds: p
            .pairs
            .iter()
            .map(|q| Round {
                r#box: p.box_names.get(q.r#box).cloned().unwrap_or_default(),
                round: q.round,
                first: q.first,
                base: q.base,
                patched: q.patched,
                ratio_pct: 100.0 * (q.patched / q.base - 1.0),
                base_run: q.base_run.clone(),
                patched_run: q.patched_run.clone(),
            })
            .collect(),
    }
}

/// d grouped by which side ran first, compared by Welch's t (at least 2 rounds each way).
fn order_effect(pairs: &[Pair], confidence: f64, band: f64) -> Option<OrderEffect> {
    let group =
        |f: First| -> Vec<f64> { pairs.iter().filter(|p| p.first == f).map(Pair::d).collect() };
    let (b, n) = (group(First::Base), group(First::Patched));
    let sample = |v: &[f64]| -> Option<LogSample> {
        if v.len() < 2 {
            return None;
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (v.len() - 1) as f64;
        Some(LogSample {
            n: v.len(),
            mean,
            var: Some(var),
            var_df: (v.len() - 1) as f64,
        })
    };
    let w = LogRatio::welch(&sample(&b)?, &sample(&n)?)?;
    let ci = w.interval(confidence);
    Some(OrderEffect {
        base_first: b.len(),
        patched_first: n.len(),
        difference_pct: 100.0 * ci.point,
        lower_pct: 100.0 * ci.lower,
        upper_pct: 100.0 * ci.upper,
        p: w.p,
        matters: w.p < NOTE_P && w.diff.abs() > band,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::from_values;
    use crate::record::campaign::StepInfo;
    use crate::record::{Kind, RunRecord};

    fn run(side: &str, round: u32, slot: u32, bx: &str) -> RunRecord {
        let mut r = RunRecord::new(
            Kind::Unixbench,
            Default::default(),
            &BTreeMap::<String, String>::new(),
        );
        r.campaign = Some(StepInfo {
            campaign: "c".into(),
            round,
            side: side.into(),
            slot,
            r#box: bx.into(),
            executor: "local".into(),
            attempt: 1,
            ..Default::default()
        });
        r
    }

    fn side(name: &str, runs: Vec<RunRecord>, first_id: usize) -> Side {
        Side::new(
            name,
            runs.into_iter()
                .enumerate()
                .map(|(i, r)| ((first_id + i).to_string(), r))
                .collect(),
        )
    }

    #[test]
    fn runs_pair_by_box_and_round_and_a_lone_run_is_counted() {
        let base = side(
            "c/base",
            vec![
                run("base", 1, 0, ""),
                run("base", 2, 1, ""),
                run("base", 3, 0, ""),
            ],
            1,
        );
        let patched = side(
            "c/patched",
            vec![run("patched", 1, 1, ""), run("patched", 2, 0, "")],
            4,
        );
        let Detected::Paired(paired) = detect(&base, &patched) else {
            panic!("not paired");
        };
        let (design, index) = *paired;
        assert_eq!((design.pairs, design.blocks), (2, 3));
        assert_eq!(design.unpartnered.len(), 1);
        assert_eq!(
            (design.unpartnered[0].side, design.unpartnered[0].round),
            ("base", 3)
        );
        // Run ids 1..3 and 4..5, as `from_values` numbers them.
        let (b, p) = (
            from_values(&[100.0, 110.0, 120.0], 0),
            from_values(&[105.0, 99.0], 3),
        );
        let rp = index.row(&b, &p);
        assert_eq!(rp.pairs.len(), 2);
        assert_eq!(rp.left_out, [1, 0]);
        assert_eq!(rp.pairs[0].first, First::Base);
        assert_eq!(rp.pairs[1].first, First::Patched);
        assert!((rp.pairs[1].d() - (99.0f64 / 110.0).ln()).abs() < 1e-15);
        // A duet's two guests ran at once: no order, whatever the slots say.
        let duet = |side: &str, slot: u32| {
            let mut r = run(side, 1, slot, "");
            if let Some(s) = r.campaign.as_mut() {
                s.duet = true;
            }
            r
        };
        let (b, p) = (
            side("b", vec![duet("base", 0)], 1),
            side("p", vec![duet("patched", 1)], 2),
        );
        let Detected::Paired(paired) = detect(&b, &p) else {
            panic!("not paired");
        };
        let rp = paired
            .1
            .row(&from_values(&[100.0], 0), &from_values(&[101.0], 1));
        assert_eq!(rp.pairs[0].first, First::Together);
    }

    #[test]
    fn what_is_not_a_paired_design_says_why() {
        let plain = Side::new(
            "a",
            vec![(
                "1".into(),
                RunRecord::new(
                    Kind::Unixbench,
                    Default::default(),
                    &BTreeMap::<String, String>::new(),
                ),
            )],
        );
        assert!(matches!(detect(&plain, &plain), Detected::NotCampaign));
        let base = side("x", vec![run("base", 1, 0, ""), run("base", 1, 1, "")], 1);
        let patched = side("y", vec![run("patched", 1, 0, "")], 3);
        match detect(&base, &patched) {
            Detected::NotPaired(why) => assert!(why.contains("both round 1"), "{why}"),
            other => panic!("{other:?}"),
        }
        let mixed = side(
            "x",
            vec![run("base", 1, 0, ""), run("patched", 2, 1, "")],
            1,
        );
        match detect(&mixed, &patched) {
            Detected::NotPaired(why) => assert!(why.contains("base+patched"), "{why}"),
            other => panic!("{other:?}"),
        }
        match detect(&base, &plain) {
            Detected::NotPaired(why) => assert!(why.contains("not made by a campaign"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_order_effect_and_a_drift_of_the_ratio_are_seen() {
        // Running second costs 4 %: d = +4 % when patched ran first... of base's run.
        let pairs: Vec<Pair> = (0..12u32)
            .map(|i| {
                let first = if i % 2 == 0 {
                    First::Base
                } else {
                    First::Patched
                };
                let wobble = 1.0 + 0.001 * f64::from(i % 3);
                let (base, patched) = match first {
                    First::Base => (1000.0 * wobble, 960.0),
                    _ => (960.0 * wobble, 1000.0),
                };
                Pair {
                    r#box: 0,
                    round: i + 1,
                    first,
                    base,
                    patched,
                    base_run: format!("{}", 2 * i),
                    patched_run: format!("{}", 2 * i + 1),
                }
            })
            .collect();
        let rp = RowPairs {
            pairs,
            ..RowPairs::default()
        };
        let row = paired_row(&rp, None, None, 0.9, 0.01f64.ln_1p());
        let o = row.order.unwrap();
        assert_eq!((o.base_first, o.patched_first), (6, 6));
        assert!(o.matters && o.difference_pct > 7.0, "{o:?}");
        assert!(!row.drift.ratio.unwrap().matters);
        assert_eq!(row.rounds.len(), 12);
        assert!(row.robust.unwrap().lower_pct.is_some());
    }
}
