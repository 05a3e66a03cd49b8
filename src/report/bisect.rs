//! A bisection as `bisect status` and `bisect report` show it: the answer (the first bad
//! commit with its subject, author, date and link, its change against its parent, the
//! revert's), the endpoints' change, and the whole path, every step's commit, verdict,
//! interval, midpoint and rounds; as text, Markdown (for a regression report), JSON (schema
//! `patchbench.bisect/1`) and a self-contained HTML page. Every string from the tree or the
//! store goes through `crate::safe_text` (text), is escaped for Markdown cells, or for HTML.

use crate::bisect::flow::confirmation_words;
use crate::bisect::git::Commit;
use crate::bisect::rule::{nothing_to_bisect, Verdict};
use crate::bisect::search::{Answer, Mark, Search};
use crate::bisect::state::{BisectSpec, Conclusion, PathState, PathStep, Role};
use crate::safe_text::field;
use serde::Serialize;

/// An interval of change in %.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    pub pct: f64,
    pub lower_pct: f64,
    pub upper_pct: f64,
    pub rounds: usize,
}

impl Change {
    fn of_logs(mean: f64, lower: f64, upper: f64, rounds: usize) -> Change {
        Change {
            pct: 100.0 * mean.exp_m1(),
            lower_pct: 100.0 * lower.exp_m1(),
            upper_pct: 100.0 * upper.exp_m1(),
            rounds,
        }
    }

    /// `-35.20 % [-38.10 %, -32.20 %]`.
    pub fn words(&self) -> String {
        format!(
            "{:+.2} % [{:+.2} %, {:+.2} %]",
            self.pct, self.lower_pct, self.upper_pct
        )
    }
}

/// One step of the path, as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub seq: u32,
    pub role: String,
    /// `endpoints`, `candidate 6/12`, `culprit vs parent`, `bad, culprit reverted`.
    pub what: String,
    pub commit: String,
    pub subject: String,
    /// The base side: `good`, the parent's hash, `bad − culprit`.
    pub base: String,
    pub state: String,
    /// good, bad, skipped, unsure, confirmed, not confirmed, partly, no change, change.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// The midpoint D/2 the step was judged against, in %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub midpoint_pct: Option<f64>,
    /// Where it lies between the endpoints (0 good, 1 bad).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<f64>,
    pub rounds: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    /// The build ids of base and patched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<String>,
}

/// The answer, as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerView {
    /// `commit`, `range`, `no-change` (the endpoints' interval inside the noise band),
    /// `inconclusive` (it holds 0 but reaches beyond the band), `unfinished`.
    pub kind: String,
    /// The first bad commit (kind commit), or the range's commits (oldest first).
    pub commits: Vec<Commit>,
    /// The culprit (or the range) against its parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against_parent: Option<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_says: Option<String>,
    /// The bad endpoint against itself with the culprit reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revert: Option<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revert_says: Option<String>,
}

/// A bisection, as every format shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BisectView {
    pub schema: &'static str,
    pub name: String,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_reason: Option<String>,
    pub tree: String,
    pub good_ref: String,
    pub bad_ref: String,
    pub good: Commit,
    pub bad: Commit,
    pub workload: Vec<String>,
    pub executor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    pub confidence: f64,
    /// Candidates between the endpoints (bad included).
    pub candidates: usize,
    /// Steps a plain bisection needs at most.
    pub plain_steps: usize,
    /// Candidates tested (skipped ones included), and how many were skipped.
    pub steps: usize,
    pub skipped: usize,
    /// Rounds of every campaign, in all.
    pub rounds: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerView>,
    pub path: Vec<StepView>,
    /// A line for the next thing to type.
    pub hint: String,
}

fn verdict_of(p: &PathStep) -> String {
    match (p.role, p.state) {
        (_, PathState::Building) => "building".into(),
        (_, PathState::Running) => "running".into(),
        (_, PathState::Skipped) => "skipped".into(),
        (_, PathState::Failed) => "failed".into(),
        (Role::Endpoints, _) => match p.endpoints {
            Some(e) if e.found() => "change".into(),
            _ => "no change".into(),
        },
        (Role::Step, _) => match &p.mark {
            Some(Mark::Good) => "good".into(),
            Some(Mark::Bad) => "bad".into(),
            _ => "skipped".into(),
        },
        (role, _) => match p.judgement.map(|j| j.verdict) {
            Some(Verdict::Bad) => "confirmed".into(),
            Some(Verdict::Good) => "not confirmed".into(),
            Some(Verdict::Unsure) => "partly".into(),
            None => confirmation_words(role, Verdict::Unsure).into(),
        },
    }
}

fn step_view(spec: &BisectSpec, p: &PathStep) -> StepView {
    let subject = match p.index {
        Some(i) if p.role != Role::Revert => spec.candidates[i].subject.clone(),
        _ => spec.bad.subject.clone(),
    };
    let short = |s: &str| s[..s.len().min(12)].to_string();
    let base = if p.base == spec.good.sha {
        "good".to_string()
    } else if p.role == Role::Revert {
        "bad - culprit".to_string()
    } else {
        short(&p.base)
    };
    let what = match (p.role, p.index) {
        (Role::Endpoints, _) => "endpoints".to_string(),
        (Role::Step, Some(i)) => format!("candidate {}/{}", i + 1, spec.candidates.len()),
        (Role::Parent, _) => "culprit vs parent".to_string(),
        (Role::Revert, _) => "bad vs revert".to_string(),
        _ => p.role.as_str().to_string(),
    };
    let (change, midpoint_pct, position) = match (p.endpoints, p.judgement) {
        (Some(e), _) => (
            Some(Change::of_logs(e.mean, e.lower, e.upper, e.rounds)),
            None,
            None,
        ),
        (None, Some(j)) => (
            Some(Change::of_logs(j.mean, j.lower, j.upper, j.rounds)),
            Some(100.0 * j.threshold.exp_m1()),
            Some(j.position),
        ),
        _ => (None, None, None),
    };
    StepView {
        seq: p.seq,
        role: p.role.as_str().to_string(),
        what,
        commit: short(&p.commit),
        subject,
        base,
        state: p.state.as_str().to_string(),
        verdict: verdict_of(p),
        change,
        midpoint_pct,
        position,
        rounds: p.planned_rounds,
        reason: p.reason.clone(),
        campaign: p.campaign.clone(),
        builds: p.builds.clone(),
    }
}

impl BisectView {
    /// The view of a bisection as stored (`hint`: the `--store` words of the commands shown).
    pub fn of(
        spec: &BisectSpec,
        state: &str,
        state_reason: Option<&str>,
        conclusion: Option<&Conclusion>,
        path: &[PathStep],
        hint: &str,
    ) -> BisectView {
        let views: Vec<StepView> = path.iter().map(|p| step_view(spec, p)).collect();
        let steps = path.iter().filter(|p| p.role == Role::Step).count();
        let skipped = path
            .iter()
            .filter(|p| p.role == Role::Step && p.state != PathState::Done)
            .count();
        let endpoints = path
            .iter()
            .find_map(|p| p.endpoints)
            .map(|e| Change::of_logs(e.mean, e.lower, e.upper, e.rounds));
        let confirmation = |role: Role| {
            path.iter().find(|p| p.role == role).map(|p| {
                (
                    p.judgement
                        .map(|j| Change::of_logs(j.mean, j.lower, j.upper, j.rounds)),
                    p.reason.clone(),
                )
            })
        };
        let answer = conclusion.map(|c| {
            let (kind, commits) = match c {
                Conclusion::NoChange => {
                    let inside = path
                        .iter()
                        .find_map(|p| p.endpoints)
                        .is_some_and(|e| e.no_change());
                    (
                        if inside { "no-change" } else { "inconclusive" },
                        Vec::new(),
                    )
                }
                Conclusion::Found(Answer::FirstBad(i)) => {
                    ("commit", vec![spec.candidates[*i].clone()])
                }
                Conclusion::Found(Answer::Range { first, last }) => {
                    ("range", spec.candidates[*first..=*last].to_vec())
                }
                Conclusion::Unfinished { first, last } => {
                    ("unfinished", spec.candidates[*first..=*last].to_vec())
                }
            };
            let parent = confirmation(Role::Parent);
            let revert = confirmation(Role::Revert);
            AnswerView {
                kind: kind.to_string(),
                commits,
                against_parent: parent.as_ref().and_then(|p| p.0),
                parent_says: parent.and_then(|p| p.1),
                revert: revert.as_ref().and_then(|p| p.0),
                revert_says: revert.and_then(|p| p.1),
            }
        });
        let name = &spec.name;
        let state = crate::bisect::flow::shown_state(state, state_reason);
        let hint_line = match state {
            "running" | "stopping" | crate::bisect::flow::INTERRUPTED => format!(
                "`patchbench bisect status {name}{hint}` follows it; `patchbench bisect resume \
                 {name}{hint}` continues it after an interruption"
            ),
            _ => format!(
                "`patchbench bisect report {name}{hint} --format markdown` for a regression report"
            ),
        };
        BisectView {
            schema: "patchbench.bisect/1",
            name: name.clone(),
            state: state.to_string(),
            state_reason: state_reason.map(str::to_string),
            tree: spec.tree.display().to_string(),
            good_ref: spec.good_ref.clone(),
            bad_ref: spec.bad_ref.clone(),
            good: spec.good.clone(),
            bad: spec.bad.clone(),
            workload: spec.template.workload.clone(),
            executor: spec.template.executor.as_str().to_string(),
            primary: path.iter().find_map(|p| p.primary.clone()),
            confidence: spec.settings.confidence,
            candidates: spec.candidates.len(),
            plain_steps: Search::plain_steps(spec.candidates.len()),
            steps,
            skipped,
            rounds: path.iter().map(|p| p.planned_rounds).sum(),
            endpoints,
            answer,
            path: views,
            hint: hint_line,
        }
    }

    /// The headline: what the bisection found (or where it is).
    pub fn headline(&self) -> String {
        let found = self.answer.as_ref().map(|a| match a.kind.as_str() {
            "commit" => format!(
                "first bad commit {} {:?}",
                a.commits[0].short(),
                field(&a.commits[0].subject)
            ),
            "range" => format!(
                "the first bad commit is one of {} commits (skipped ones hide it): {}..{}",
                a.commits.len(),
                a.commits[0].short(),
                a.commits[a.commits.len() - 1].short()
            ),
            "no-change" => format!(
                "no change between the endpoints ({}): nothing to bisect",
                nothing_to_bisect(true)
            ),
            "inconclusive" => format!(
                "inconclusive between the endpoints ({}): nothing bisected",
                nothing_to_bisect(false)
            ),
            _ => format!(
                "not finished: the change lies in {} commits {}..{}",
                a.commits.len(),
                a.commits[0].short(),
                a.commits[a.commits.len() - 1].short()
            ),
        });
        format!(
            "bisect {}: {}{}",
            self.name,
            self.state,
            found.map(|f| format!(": {f}")).unwrap_or_default()
        )
    }
}

fn change_cell(s: &StepView) -> String {
    s.change.map(|c| c.words()).unwrap_or_else(|| "-".into())
}

fn midpoint_cell(s: &StepView) -> String {
    s.midpoint_pct
        .map(|m| format!("{m:+.2} %"))
        .unwrap_or_else(|| "-".into())
}

/// The path as rows of cells: # | step | commit | subject | base | verdict | change | midpoint
/// | rounds | note.
fn rows(v: &BisectView) -> Vec<[String; 10]> {
    v.path
        .iter()
        .map(|s| {
            [
                s.seq.to_string(),
                s.what.clone(),
                s.commit.clone(),
                field(&crate::safe_text::cut(&s.subject, 50)),
                s.base.clone(),
                s.verdict.clone(),
                change_cell(s),
                midpoint_cell(s),
                s.rounds.to_string(),
                s.reason
                    .as_deref()
                    .filter(|_| s.state != "done" || s.role != "step")
                    .map(|r| field(&crate::safe_text::cut(r, 90)))
                    .unwrap_or_default(),
            ]
        })
        .collect()
}

const HEADER: [&str; 10] = [
    "#",
    "step",
    "commit",
    "subject",
    "base",
    "verdict",
    "change vs base [interval]",
    "midpoint",
    "rounds",
    "note",
];

fn answer_lines(v: &BisectView, out: &mut Vec<(String, String)>) {
    let Some(a) = &v.answer else { return };
    if a.kind == "commit" {
        let c = &a.commits[0];
        out.push(("commit".into(), format!("{} {}", c.sha, field(&c.subject))));
        out.push((
            "author".into(),
            format!("{}, {}", field(&c.author), field(&c.date)),
        ));
        if let Some(l) = &c.link {
            out.push(("link".into(), field(l)));
        }
    } else if a.kind == "range" || a.kind == "unfinished" {
        for c in &a.commits {
            out.push((
                "candidate".into(),
                format!("{} {}", c.short(), field(&c.subject)),
            ));
        }
    }
    if let Some(c) = a.against_parent {
        out.push((
            "vs parent".into(),
            format!(
                "{} in {} rounds{}",
                c.words(),
                c.rounds,
                a.parent_says
                    .as_deref()
                    .map(|s| format!("; {s}"))
                    .unwrap_or_default()
            ),
        ));
    } else if let Some(s) = &a.parent_says {
        out.push(("vs parent".into(), field(s)));
    }
    if let Some(c) = a.revert {
        out.push((
            "revert".into(),
            format!(
                "bad against bad with it reverted: {} in {} rounds{}",
                c.words(),
                c.rounds,
                a.revert_says
                    .as_deref()
                    .map(|s| format!("; {s}"))
                    .unwrap_or_default()
            ),
        ));
    } else if let Some(s) = &a.revert_says {
        out.push(("revert".into(), field(s)));
    }
}

fn facts(v: &BisectView) -> Vec<(String, String)> {
    let mut out = Vec::new();
    answer_lines(v, &mut out);
    if let Some(r) = &v.state_reason {
        out.push(("why".into(), field(r)));
    }
    out.push((
        "endpoints".into(),
        format!(
            "good {} ({}), bad {} ({}){}",
            v.good.short(),
            field(&v.good_ref),
            v.bad.short(),
            field(&v.bad_ref),
            v.endpoints
                .map(|e| format!(": {} in {} rounds", e.words(), e.rounds))
                .unwrap_or_default()
        ),
    ));
    out.push((
        "search".into(),
        format!(
            "{} candidates, {} steps ({} skipped; a plain bisection needs at most {}), {} \
             rounds in all",
            v.candidates, v.steps, v.skipped, v.plain_steps, v.rounds
        ),
    ));
    out.push((
        "workload".into(),
        format!(
            "patchbench {} ({} executor){}",
            field(&v.workload.join(" ")),
            v.executor,
            v.primary
                .as_deref()
                .map(|p| format!(", following {}", field(p)))
                .unwrap_or_default()
        ),
    ));
    out.push(("tree".into(), field(&v.tree)));
    out
}

/// The text report (`status` without the path when `with_path` is false).
pub fn text(v: &BisectView, with_path: bool) -> String {
    let mut out = format!("{}\n", v.headline());
    for (k, val) in facts(v) {
        out += &format!("  {:<10} {val}\n", format!("{k}:"));
    }
    if with_path && !v.path.is_empty() {
        let rows = rows(v);
        let mut widths: Vec<usize> = HEADER.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r.iter()) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut l = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                if i + 1 == cells.len() {
                    l += c;
                } else {
                    l += &format!("{c:<w$}  ", w = widths[i]);
                }
            }
            l.trim_end().to_string() + "\n"
        };
        out += "path:\n";
        out += &line(HEADER.to_vec());
        for r in &rows {
            out += &line(r.iter().map(String::as_str).collect());
        }
        out += &format!(
            "  (change: ln(patched/base) of each round, paired; interval at {:.0} % with the \
             spread pooled over the bisection and the midpoint's own uncertainty; a step is good \
             or bad when its interval lies wholly on one side of the midpoint D/2)\n",
            100.0 * v.confidence
        );
    }
    out += &format!("{}\n", v.hint);
    out
}

fn md(s: &str) -> String {
    crate::safe_text::escape(s)
        .replace('|', "\\|")
        .replace('<', "&lt;")
}

/// The Markdown report, ready to paste into a regression report.
pub fn markdown(v: &BisectView) -> String {
    let mut out = format!("### {}\n\n", md(&v.headline()));
    for (k, val) in facts(v) {
        out += &format!("- **{}**: {}\n", md(&k), md(&val));
    }
    if !v.path.is_empty() {
        out += "\n| ";
        out += &HEADER.join(" | ");
        out += " |\n|";
        out += &"---|".repeat(HEADER.len());
        out += "\n";
        for r in rows(v) {
            out += "| ";
            out += &r.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ");
            out += " |\n";
        }
        out += &format!(
            "\nIntervals at {:.0} %, paired per round, spread pooled over the bisection; a step \
             is good or bad when its interval lies wholly on one side of the midpoint D/2.\n",
            100.0 * v.confidence
        );
    }
    out
}

/// The JSON document (schema `patchbench.bisect/1`).
pub fn json(v: &BisectView) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// A self-contained HTML page.
pub fn html(v: &BisectView) -> String {
    use super::html::page::Page;
    use super::svg::esc;
    let mut page = Page::new(&v.headline(), &[esc(&v.hint)]);
    let mut facts_html = String::from("<table>");
    for (k, val) in facts(v) {
        let cell = if k == "link" {
            format!("<a href=\"{0}\">{0}</a>", esc(&val))
        } else {
            esc(&val)
        };
        facts_html += &format!("<tr><th>{}</th><td>{cell}</td></tr>", esc(&k));
    }
    facts_html += "</table>";
    page.section("answer", "Answer", &facts_html);
    let mut table = String::from("<div class=\"scroll\"><table><tr>");
    for h in HEADER {
        table += &format!("<th>{}</th>", esc(h));
    }
    table += "</tr>";
    for r in rows(v) {
        table += "<tr>";
        for (i, c) in r.iter().enumerate() {
            let class = if matches!(i, 0 | 6 | 7 | 8) {
                " class=\"num\""
            } else {
                ""
            };
            table += &format!("<td{class}>{}</td>", esc(c));
        }
        table += "</tr>";
    }
    table += "</table></div>";
    page.section("path", "Path", &table);
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_in_a_subject_is_escaped_in_markdown_and_html_escapes_tags() {
        assert_eq!(md("a|b<c"), "a\\|b&lt;c");
        assert!(md("x\ny").contains("\\n"));
    }
}
