//! What `campaign status` and `campaign report` print: a campaign's progress (rounds and steps
//! done, failed, running and by whom, ETA), the `--until` decision, the primary metric's paired
//! estimate so far, the failed steps with their reasons and console lines, and (for the
//! report) the comparison of the two sides followed by the primary metric round by round.

use crate::campaign::primary;
use crate::clock::human_secs;
use crate::compare::Comparison;
use crate::record::campaign::spec::Schedule;
use crate::record::campaign::state::{Campaign, Owner, Step, StepState};
use crate::record::RunRecord;
use crate::stats::paired::PairedT;
use serde::Serialize;
use std::fmt::Write as _;

/// One campaign as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct StatusView {
    pub campaign: Campaign,
    pub steps_total: usize,
    pub steps_done: usize,
    pub steps_failed: usize,
    pub steps_running: usize,
    /// Rounds whose two steps are both done.
    pub rounds_complete: usize,
    /// Seconds left (mean step time x steps left), when known.
    pub eta_s: Option<f64>,
    /// The metric followed and its paired estimate so far.
    pub primary: Option<String>,
    pub estimate: Option<PairedT>,
    /// For `--until`: Stein's interval of the primary metric (what the rule promises).
    pub until: Option<primary::UntilInterval>,
    /// For `--until`: the rounds the spread of the complete rounds so far needs.
    pub firming: Option<primary::Firming>,
    /// With several boxes: the share of the primary metric's spread that is between boxes.
    pub between_boxes: Option<crate::stats::blocked::BetweenShare>,
    /// The running steps whose owner lives (or is elsewhere): (round, side, owner).
    pub running: Vec<(u32, String, String)>,
    /// The running steps whose owner is a process of this host that is gone (killed or
    /// crashed): (round, side, owner as a message names it).
    pub stalled: Vec<(u32, String, String)>,
    /// The done steps whose run is no longer in the store (removed with `rm`): (round, side).
    pub lost: Vec<(u32, String)>,
    /// The failed steps (and those whose last attempt failed, now retried).
    pub failures: Vec<Step>,
    /// The primary metric round by round: (box, round, base first?, base, patched).
    pub rounds: Vec<RoundRow>,
    /// The distinct warnings the stored steps carry (TCG, unfit for a duet).
    pub warnings: Vec<String>,
    /// A lab campaign's boxes (a place no box has taken yet is `#N`), each one's progress.
    pub boxes: Vec<BoxProgress>,
    /// ` --store WHERE` for the commands the status suggests (empty for the default store).
    #[serde(skip)]
    pub store_hint: String,
}

/// One box of a lab campaign.
#[derive(Debug, Clone, Serialize)]
pub struct BoxProgress {
    pub r#box: String,
    pub rounds_complete: usize,
    pub rounds_planned: usize,
    pub done: usize,
    pub failed: usize,
    pub running: usize,
    pub planned: usize,
}

/// The primary metric in one round.
#[derive(Debug, Clone, Serialize)]
pub struct RoundRow {
    pub r#box: String,
    pub round: u32,
    /// Which side ran first.
    pub first: Option<String>,
    pub base: Option<f64>,
    pub patched: Option<f64>,
}

impl StatusView {
    /// `store_hint` is ` --store WHERE` for the commands the view suggests (`Location::hint`).
    pub fn of(
        campaign: Campaign,
        steps: Vec<Step>,
        runs: &[RunRecord],
        store_hint: String,
    ) -> StatusView {
        let count = |st: StepState| steps.iter().filter(|s| s.state == st).count();
        let eta_s = crate::record::campaign::state::eta_s(&steps);
        let primary_key = primary::primary_key(&campaign.spec, runs);
        let estimate = primary_key
            .as_ref()
            .and_then(|k| PairedT::of(&primary::log_ratios(runs, k), campaign.spec.confidence));
        let until = match campaign.spec.schedule {
            Schedule::Until { .. } => campaign
                .decision
                .as_ref()
                .and_then(|d| primary::until_interval(&campaign.spec, runs, d.pilot_rounds)),
            Schedule::Rounds { .. } => None,
        };
        let firming = primary::firming(&campaign.spec, runs);
        let between_boxes = primary_key
            .as_deref()
            .and_then(|k| primary::between_box_share(runs, k));
        let mut rounds: Vec<RoundRow> = Vec::new();
        for s in &steps {
            let at = match rounds
                .iter()
                .position(|r| r.round == s.round && r.r#box == s.r#box)
            {
                Some(i) => i,
                None => {
                    rounds.push(RoundRow {
                        r#box: s.r#box.clone(),
                        round: s.round,
                        first: None,
                        base: None,
                        patched: None,
                    });
                    rounds.len() - 1
                }
            };
            if s.slot == 0 {
                rounds[at].first = Some(s.side.clone());
            }
            let run = runs
                .iter()
                .find(|r| r.uuid.is_some() && r.uuid == s.run_uuid && s.state == StepState::Done);
            let v = run.and_then(|r| primary::value(r, primary_key.as_deref()?));
            match s.side.as_str() {
                "base" => rounds[at].base = v,
                "patched" => rounds[at].patched = v,
                _ => {}
            }
        }
        let rounds_complete = rounds
            .iter()
            .filter(|r| r.base.is_some() && r.patched.is_some())
            .count();
        let boxes = if campaign.spec.lab.is_some() {
            box_progress(&steps, &rounds)
        } else {
            Vec::new()
        };
        // (round, side, owner, gone): an owner of this host whose process is gone is dead.
        let running: Vec<(u32, String, String, bool)> = steps
            .iter()
            .filter(|s| s.state == StepState::Running)
            .map(|s| {
                let owner = s.owner.clone().unwrap_or_default();
                let dead = Owner::parse(&owner).is_some_and(|o| o.is_dead_here());
                (s.round, side_on_box(s), owner, dead)
            })
            .collect();
        StatusView {
            steps_total: steps.len(),
            steps_done: count(StepState::Done),
            steps_failed: count(StepState::Failed),
            steps_running: count(StepState::Running),
            rounds_complete,
            eta_s,
            primary: primary_key,
            estimate,
            until,
            firming,
            between_boxes,
            running: running
                .iter()
                .filter(|(_, _, _, dead)| !dead)
                .map(|(r, side, owner, _)| (*r, side.clone(), owner.clone()))
                .collect(),
            stalled: running
                .iter()
                .filter(|(_, _, _, dead)| *dead)
                .map(|(r, side, owner, _)| (*r, side.clone(), Owner::describe(owner)))
                .collect(),
            lost: steps
                .iter()
                .filter(|s| {
                    s.state == StepState::Done
                        && !runs
                            .iter()
                            .any(|r| r.uuid.is_some() && r.uuid == s.run_uuid)
                })
                .map(|s| (s.round, side_on_box(s)))
                .collect(),
            failures: steps
                .iter()
                .filter(|s| s.error.is_some())
                .cloned()
                .collect(),
            rounds,
            warnings: runs
                .iter()
                .flat_map(crate::record::campaign::run_warnings)
                .fold(Vec::new(), |mut all, w| {
                    if !all.contains(&w) {
                        all.push(w);
                    }
                    all
                }),
            boxes,
            store_hint,
            campaign,
        }
    }
}

/// `SIDE`, or `SIDE on box BOX` in a lab.
fn side_on_box(s: &Step) -> String {
    if s.r#box.is_empty() {
        s.side.clone()
    } else {
        format!("{} on box {}", s.side, s.r#box)
    }
}

/// Each box's steps and complete rounds, by box name.
fn box_progress(steps: &[Step], rounds: &[RoundRow]) -> Vec<BoxProgress> {
    let mut names: Vec<&str> = steps.iter().map(|s| s.r#box.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let of = |st: StepState| {
                steps
                    .iter()
                    .filter(|s| s.r#box == name && s.state == st)
                    .count()
            };
            let mine = rounds.iter().filter(|r| r.r#box == name);
            BoxProgress {
                r#box: name.to_string(),
                rounds_complete: mine
                    .clone()
                    .filter(|r| r.base.is_some() && r.patched.is_some())
                    .count(),
                rounds_planned: mine.count(),
                done: of(StepState::Done),
                failed: of(StepState::Failed),
                running: of(StepState::Running),
                planned: of(StepState::Planned),
            }
        })
        .collect()
}

fn clean(s: &str) -> String {
    crate::safe_text::field(s)
}

/// `status` as text: one block per campaign.
pub fn status_text(views: &[StatusView]) -> String {
    if views.is_empty() {
        return "no campaigns in this store (start one with `patchbench campaign start`)\n"
            .to_string();
    }
    let mut out = String::new();
    for v in views {
        status_block(&mut out, v);
        out.push('\n');
    }
    out
}

fn status_block(out: &mut String, v: &StatusView) {
    let c = &v.campaign;
    let _ = writeln!(
        out,
        "campaign {}: {}{}",
        clean(&c.name),
        c.state.as_str(),
        c.state_reason
            .as_deref()
            .map(|r| format!(" ({})", clean(r)))
            .unwrap_or_default()
    );
    let by_one_process = crate::campaign::run_by_one_process(&c.spec);
    for (round, side, owner) in &v.stalled {
        let then = if by_one_process {
            format!(
                "`patchbench campaign resume {}{}` runs it again",
                clean(&c.name),
                clean(&v.store_hint)
            )
        } else {
            "the step goes back to the queue when its lease runs out".to_string()
        };
        let _ = writeln!(
            out,
            "  stalled:   round {round} {side} was being run by {}, which is gone from this \
             host (killed or crashed); {then}",
            clean(owner)
        );
    }
    if !v.lost.is_empty() {
        let which: Vec<String> = v
            .lost
            .iter()
            .map(|(r, s)| format!("round {r} {s}"))
            .collect();
        let then = if by_one_process {
            format!(
                "; `patchbench campaign resume {}{}` runs them again",
                clean(&c.name),
                clean(&v.store_hint)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  lost:      {} done step(s) have no stored run any more (removed with `patchbench \
             rm`?): {}{then}",
            v.lost.len(),
            clean(&which.join(", "))
        );
    }
    if c.state.is_open() && by_one_process && v.running.is_empty() && v.stalled.is_empty() {
        let _ = writeln!(
            out,
            "  idle:      no process runs it now (interrupted?): `patchbench campaign resume \
             {}{}` continues it",
            clean(&c.name),
            clean(&v.store_hint)
        );
    }
    let _ = writeln!(
        out,
        "  workload:  patchbench {}",
        clean(&c.spec.workload.join(" "))
    );
    for side in &c.spec.sides {
        let kernel = side
            .kernel
            .as_ref()
            .map(|k| format!("{} ({})", k.release, k.image.display()))
            .unwrap_or_else(|| "running kernel".to_string());
        let words = if side.cmdline.is_empty() {
            String::new()
        } else {
            format!(" + {}", side.cmdline.join(" "))
        };
        let setup = side
            .setup
            .as_deref()
            .map(|s| format!("; setup: {s}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<9}  {}{}{}",
            format!("{}:", side.name),
            clean(&kernel),
            clean(&words),
            clean(&setup)
        );
        if let Some(b) = &side.build {
            let _ = writeln!(out, "             {}", clean(&b.build.line()));
        }
    }
    if let Some(b) = &c.spec.build {
        if b.config_diff.is_empty() {
            let _ = writeln!(
                out,
                "  config:    {}, the same .config on both sides (built from {})",
                clean(&b.config),
                clean(&b.tree.display().to_string())
            );
        } else {
            let _ = writeln!(
                out,
                "  config:    {}, but the patched side's differs (its Kconfig changed {} \
                 value(s)): {}",
                clean(&b.config),
                b.config_diff.len(),
                clean(&b.config_diff.join(", "))
            );
        }
    }
    let schedule = match &c.spec.schedule {
        Schedule::Rounds { rounds } => format!("{rounds} rounds"),
        Schedule::Until {
            pct,
            max_rounds,
            max_time_s,
        } => format!(
            "until ±{pct} % (pilot {}, at most {max_rounds}{})",
            c.decision
                .as_ref()
                .map(|d| format!("{} rounds", d.pilot_rounds))
                .unwrap_or_else(|| "3 rounds or more, from round 1's time".to_string()),
            max_time_s
                .map(|t| format!(", {}", human_secs(t)))
                .unwrap_or_default()
        ),
    };
    let _ = writeln!(
        out,
        "  schedule:  {schedule}, {} order (seed {}), {} executor",
        match c.spec.order {
            crate::record::campaign::spec::Order::Random => "random",
            crate::record::campaign::spec::Order::Abba => "ABBA",
        },
        c.spec.seed,
        c.spec.executor.as_str()
    );
    if let Some(d) = &c.decision {
        let _ = writeln!(
            out,
            "  decided:   {} rounds (the pilot's sd {:.2} % per round needs {}{}), ±{:.2} % expected",
            d.rounds,
            100.0 * d.pilot_sd,
            d.rounds_needed,
            d.bound
                .as_deref()
                .map(|b| format!("; bound by {b}"))
                .unwrap_or_default(),
            d.half_width_pct
        );
    }
    let _ = writeln!(
        out,
        "  progress:  {} of {} planned rounds complete{}; steps {} done, {} failed, {} running, {} planned{}",
        v.rounds_complete,
        if v.boxes.is_empty() {
            c.planned_rounds as usize
        } else {
            v.rounds.len()
        },
        if v.boxes.is_empty() {
            ""
        } else {
            " (over all boxes)"
        },
        v.steps_done,
        v.steps_failed,
        v.steps_running,
        v.steps_total - v.steps_done - v.steps_failed - v.steps_running,
        v.eta_s
            .filter(|_| c.state.is_open())
            .map(|s| format!("; about {} left", human_secs(s)))
            .unwrap_or_default()
    );
    if let Some(lab) = &c.spec.lab {
        let _ = writeln!(
            out,
            "  lab:       {} box{}{}, each running every round (a block: rounds pair within \
             their box)",
            lab.boxes,
            if lab.boxes == 1 { "" } else { "es" },
            if lab.tags.is_empty() {
                String::new()
            } else {
                format!(" tagged {}", clean(&lab.tags.join(", ")))
            }
        );
    }
    for b in &v.boxes {
        let name = if crate::record::campaign::plan::is_free_place(&b.r#box) {
            format!("{} (no box yet)", b.r#box)
        } else {
            clean(&b.r#box)
        };
        let _ = writeln!(
            out,
            "  box {name}: {} of {} rounds complete; steps {} done, {} failed, {} running, {} planned",
            b.rounds_complete, b.rounds_planned, b.done, b.failed, b.running, b.planned
        );
    }
    for w in &v.warnings {
        let _ = writeln!(out, "  warning:   {}", clean(w));
    }
    for (round, side, owner) in &v.running {
        let _ = writeln!(
            out,
            "  running:   round {round} {side} (by {})",
            clean(owner)
        );
    }
    match (&v.primary, &v.estimate) {
        (Some(key), Some(e)) => {
            let interval = e
                .interval_pct()
                .map(|(lo, hi)| {
                    format!(
                        "[{lo:+.2} %, {hi:+.2} %] at {:.0} % (±{:.2} %)",
                        100.0 * c.spec.confidence,
                        e.half_width_pct().unwrap_or(f64::NAN)
                    )
                })
                .unwrap_or_else(|| "no interval yet (needs 2 complete rounds)".to_string());
            let _ = writeln!(
                out,
                "  primary:   {} patched/base {:+.2} % {interval}, {} round{} paired",
                clean(key),
                e.change_pct(),
                e.n,
                if e.n == 1 { "" } else { "s" }
            );
        }
        (Some(key), None) => {
            let _ = writeln!(out, "  primary:   {} (no complete round yet)", clean(key));
        }
        _ => {}
    }
    if let Some(f) = &v.firming {
        let _ = writeln!(out, "  estimate:  {}", f.describe());
    }
    if let Some(u) = &v.until {
        let _ = writeln!(
            out,
            "  --until:   Stein's {:.0} % interval [{:+.2} %, {:+.2} %] (±{:.2} %, from the {}-round \
             pilot's spread over {} rounds): the interval the rule promises",
            100.0 * c.spec.confidence,
            u.lower_pct,
            u.upper_pct,
            u.half_width_pct,
            u.pilot_pairs,
            u.pairs
        );
    }
    if let Some(b) = &v.between_boxes {
        let _ = writeln!(
            out,
            "  boxes:     {:.0} % of the spread is between the {} boxes (sd {:.2} % between, \
             {:.2} % within; F={:.2}, p={:.3}); rounds are paired within each box",
            100.0 * b.share,
            b.boxes,
            100.0 * b.between_sd,
            100.0 * b.within_sd,
            b.f,
            b.p
        );
    }
    for f in &v.failures {
        let state = if f.state == StepState::Failed {
            "failed"
        } else {
            "failed once, retried"
        };
        let _ = writeln!(
            out,
            "  {state}: round {} {}: {}",
            f.round,
            f.side,
            clean(f.error.as_deref().unwrap_or(""))
        );
        if f.state == StepState::Failed {
            if let Some(console) = &f.console_tail {
                for l in console
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    let _ = writeln!(out, "    | {}", clean(l));
                }
            }
        }
    }
}

/// `status --format json`.
pub fn status_json(views: &[StatusView]) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&serde_json::json!({
        "schema": "patchbench.campaign-status/1",
        "campaigns": views,
    }))?;
    s.push('\n');
    Ok(s)
}

/// `campaign report`: the status, the comparison of the two sides, and the primary metric
/// round by round.
pub fn report_text(v: &StatusView, comparison: &Comparison) -> anyhow::Result<String> {
    let mut out = String::new();
    status_block(&mut out, v);
    out.push('\n');
    let fmt = if comparison
        .rows
        .iter()
        .any(|r| r.name.starts_with("unixbench."))
    {
        crate::report::compare::Format::Unixbench
    } else {
        crate::report::compare::Format::Lkp
    };
    if !crate::report::compare::shows_warnings(fmt) {
        for w in crate::report::compare::warning_lines(comparison) {
            let _ = writeln!(out, "{w}");
        }
    }
    out.push_str(&crate::report::comparison(comparison, fmt, false)?);
    out.push('\n');
    // The comparison names a partial index by its tests (`partial=...`); the run's metric
    // key does not.
    let keys: Vec<&str> = comparison
        .rows
        .iter()
        .filter(|r| {
            let mut params = r.params.clone();
            params.remove("partial");
            v.primary.as_deref() == Some(crate::record::metric_key(&r.name, &params).as_str())
        })
        .map(|r| r.key.as_str())
        .collect();
    out.push_str(&crate::report::campaign_rounds::render(comparison, &keys));
    Ok(out)
}
