//! What a bisection keeps in the store (`crate::store::bisect` holds the rows): its spec,
//! fixed at `bisect start`, and its path, one [`PathStep`] per campaign it ran or tried: the
//! endpoints, each candidate, the confirmations. The search's state is the marks of the path's
//! candidate steps, so it is rebuilt from the store after any interruption.

use super::git::Commit;
use super::rule::{Endpoints, Judgement, Settings};
use super::search::{Answer, Mark, Search};
use crate::record::campaign::spec::{CampaignSpec, Schedule};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A bisection as `bisect start` fixed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BisectSpec {
    pub name: String,
    /// The user's git tree (read, never written).
    pub tree: PathBuf,
    pub good_ref: String,
    pub bad_ref: String,
    pub good: Commit,
    pub bad: Commit,
    /// Bad's first-parent commits that good lacks, oldest first; the last is `bad`.
    pub candidates: Vec<Commit>,
    /// Every campaign of the bisection is this one with its name, sides, schedule and seed
    /// set: the workload, the executor and its options, the order, the confidence.
    pub template: CampaignSpec,
    /// The endpoints' schedule (`--rounds` or `--until`; 5 rounds by default).
    pub endpoint_schedule: Schedule,
    pub settings: Settings,
    /// The most candidates tested (`--max-steps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// How kernels are built (config, fragments, jobs, cache), as the command gave it; read by
    /// the command's [`super::flow::Kernels`].
    #[serde(default)]
    pub build: serde_json::Value,
}

/// What a step of the path is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Good (base) against bad (patched): is there a change, and how large.
    Endpoints,
    /// A candidate (patched) against the good endpoint (base).
    Step,
    /// Confirmation: the culprit (patched) against its parent (base).
    Parent,
    /// Confirmation: the bad endpoint (patched) against itself with the culprit reverted
    /// (base).
    Revert,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Endpoints => "endpoints",
            Role::Step => "step",
            Role::Parent => "parent",
            Role::Revert => "revert",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "endpoints" => Role::Endpoints,
            "step" => Role::Step,
            "parent" => Role::Parent,
            "revert" => Role::Revert,
            _ => return None,
        })
    }
}

/// Where a step of the path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathState {
    /// Its kernels are being built (or are to be, after an interruption).
    Building,
    /// Its campaign runs (or is to go on).
    Running,
    /// Judged.
    Done,
    /// Not judged, with its reason: a kernel did not build or boot, no round completed, or
    /// still unsure at the round bound.
    Skipped,
    /// Its campaign could not run at all (a fault of the machine or the store): the step is
    /// recorded as failed and the search goes around it.
    Failed,
}

impl PathState {
    pub fn as_str(self) -> &'static str {
        match self {
            PathState::Building => "building",
            PathState::Running => "running",
            PathState::Done => "done",
            PathState::Skipped => "skipped",
            PathState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<PathState> {
        Some(match s {
            "building" => PathState::Building,
            "running" => PathState::Running,
            "done" => PathState::Done,
            "skipped" => PathState::Skipped,
            "failed" => PathState::Failed,
            _ => return None,
        })
    }

    /// Whether the step is over (judged, skipped or failed).
    pub fn is_over(self) -> bool {
        matches!(
            self,
            PathState::Done | PathState::Skipped | PathState::Failed
        )
    }
}

/// One step of the path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PathStep {
    pub seq: u32,
    pub role: Role,
    /// The commit measured (the campaign's patched side): a candidate, the bad endpoint, the
    /// culprit.
    pub commit: String,
    /// The candidate's index (a step, a confirmation of a culprit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The base side: the good endpoint, the culprit's parent, or the bad endpoint with the
    /// culprit reverted (`REVERT_OF` + the culprit's hash).
    pub base: String,
    /// The campaign that measures it (once both kernels are built).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    pub state: PathState,
    /// The build ids of its two kernels (base, patched).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<String>,
    /// The metric followed (set by the endpoints' campaign, then every campaign's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// The endpoints' measure of the change (role endpoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Endpoints>,
    /// The last judgement of its rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgement: Option<Judgement>,
    /// What the candidate turned out to be (role step, when over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<Mark>,
    /// Why it was skipped or failed, or what the confirmation says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Rounds planned for its campaign so far.
    #[serde(default)]
    pub planned_rounds: u32,
    /// The per-round log ratios ln(patched / base) of the metric followed, as last judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<f64>,
    /// The endpoints' campaign got more rounds to place the midpoint (once).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extended: bool,
}

/// The base of a revert confirmation: `REVERT_OF` + the culprit's hash.
pub const REVERT_OF: &str = "revert-of-";

/// How a bisection ended (stored as its answer).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Conclusion {
    /// The endpoints' campaign found no change: nothing to bisect.
    NoChange,
    /// The search's answer.
    Found(Answer),
    /// `--max-steps` ran out: the change lies in this bracket (candidate indices, inclusive).
    Unfinished { first: usize, last: usize },
}

/// The search as the path's candidate steps left it.
pub fn search_of(spec: &BisectSpec, path: &[PathStep]) -> Search {
    let mut s = Search::new(spec.candidates.len());
    for p in path.iter().filter(|p| p.role == Role::Step) {
        if let (Some(i), Some(m)) = (p.index, p.mark.as_ref()) {
            s.mark(i, m.clone());
        }
    }
    s
}

/// The endpoints' measure, once their campaign is judged.
pub fn endpoints_of(path: &[PathStep]) -> Option<(&PathStep, Endpoints)> {
    path.iter()
        .find(|p| p.role == Role::Endpoints && p.state == PathState::Done)
        .and_then(|p| p.endpoints.map(|e| (p, e)))
}
