//! The state a campaign keeps in the store: the campaign's own state and every step's.
//!
//! A step moves `planned` → `running` (claimed by an owner: this process, a boot, an agent;
//! its attempt counted) → `done` (its run stored in the same transaction) or, on failure,
//! back to `planned` for one retry and then `failed`. A step whose owner was interrupted
//! (Ctrl-C) or died (SIGKILL, power loss, a lost agent) goes back to `planned`, so `resume`
//! re-runs exactly the unfinished steps; a run is only ever stored together with its step's
//! `done`, so nothing is stored half or twice.
//!
//! A campaign is `running` until every planned step is done or failed (`finished`), until
//! `campaign stop` (`stopping`, then `stopped` once the current step is over), or until a
//! fault that must not be retried unattended (`failed`, with the reason `status` shows).

use super::spec::CampaignSpec;
use serde::{Deserialize, Serialize};

/// Attempts a step gets: the first and one retry.
pub const MAX_ATTEMPTS: u32 = 2;

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    Planned,
    Running,
    Done,
    Failed,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Planned => "planned",
            StepState::Running => "running",
            StepState::Done => "done",
            StepState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<StepState> {
        Some(match s {
            "planned" => StepState::Planned,
            "running" => StepState::Running,
            "done" => StepState::Done,
            "failed" => StepState::Failed,
            _ => return None,
        })
    }
}

/// One step as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub id: i64,
    pub campaign_id: i64,
    pub round: u32,
    pub slot: u32,
    pub side: String,
    /// The box it is planned for (empty: any, or a single machine).
    pub r#box: String,
    pub state: StepState,
    /// Attempts started so far.
    pub attempts: u32,
    /// Who runs it now (while `running`): see [`Owner`].
    pub owner: Option<String>,
    /// Until when the owner's claim holds (seconds since the epoch), while `running`.
    pub lease_until: Option<f64>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The stored run (when `done`).
    pub run_uuid: Option<String>,
    /// Why the last attempt failed (kept when a retry succeeds).
    pub error: Option<String>,
    /// The last lines the workload or guest printed in the last failed attempt.
    pub console_tail: Option<String>,
}

/// Where a campaign is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CampaignState {
    Running,
    /// `campaign stop` asked; ends after the current step.
    Stopping,
    Finished,
    Stopped,
    Failed,
}

impl CampaignState {
    pub fn as_str(self) -> &'static str {
        match self {
            CampaignState::Running => "running",
            CampaignState::Stopping => "stopping",
            CampaignState::Finished => "finished",
            CampaignState::Stopped => "stopped",
            CampaignState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<CampaignState> {
        Some(match s {
            "running" => CampaignState::Running,
            "stopping" => CampaignState::Stopping,
            "finished" => CampaignState::Finished,
            "stopped" => CampaignState::Stopped,
            "failed" => CampaignState::Failed,
            _ => return None,
        })
    }

    /// Whether steps may still be run.
    pub fn is_open(self) -> bool {
        matches!(self, CampaignState::Running)
    }
}

/// A campaign as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Campaign {
    pub id: i64,
    pub name: String,
    pub spec: CampaignSpec,
    pub state: CampaignState,
    pub state_reason: Option<String>,
    /// Rounds planned so far (the pilot until `--until` decides).
    pub planned_rounds: u32,
    /// What `--until` decided after the pilot.
    pub decision: Option<Decision>,
    pub created_at: String,
    pub updated_at: String,
}

/// What the `--until` rule decided from the pilot, once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The metric followed.
    pub primary: String,
    /// Pilot rounds used (complete pairs).
    pub pilot_pairs: usize,
    /// sd of the pilot's per-round log ratios.
    pub pilot_sd: f64,
    /// Rounds Stein's rule needs for the asked half-width.
    pub rounds_needed: u32,
    /// Rounds planned in all.
    pub rounds: u32,
    /// Which bound cut the rounds short of `rounds_needed`: `--max-rounds` or `--max-time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// The half-width (%) the planned rounds give at the campaign's confidence.
    pub half_width_pct: f64,
}

/// Who owns a running step: `host:pid:boot_id` for a process on a machine. An owner on this
/// machine and boot whose process is gone is dead, so its step may be taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub pid: u32,
    pub boot_id: String,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        Owner {
            host: crate::sysinfo::hostname(),
            pid: std::process::id(),
            boot_id: boot_id(),
        }
    }

    pub fn parse(s: &str) -> Option<Owner> {
        let mut parts = s.rsplitn(3, ':');
        let boot_id = parts.next()?.to_string();
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_string();
        Some(Owner { host, pid, boot_id })
    }

    /// True when this owner is a process of this machine's current boot that no longer
    /// exists (or is only a zombie), or a process of an earlier boot of this machine.
    pub fn is_dead_here(&self) -> bool {
        let me = Owner::me();
        if self.host != me.host {
            return false;
        }
        if self.boot_id != me.boot_id {
            return true;
        }
        crate::sysinfo::process_gone(self.pid as i32)
    }
}

impl Owner {
    /// An owner as a message names it: `process 7719` on this host, `process 7719 on HOST`
    /// elsewhere, the text itself when it is no `host:pid:boot`.
    pub fn describe(owner: &str) -> String {
        match Owner::parse(owner) {
            Some(o) if o.host == crate::sysinfo::hostname() => format!("process {}", o.pid),
            Some(o) => format!("process {} on {}", o.pid, o.host),
            None => owner.to_string(),
        }
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.host, self.pid, self.boot_id)
    }
}

/// Seconds a campaign has left: the mean time of its done steps times the steps not yet done
/// (planned or running); None before a step is done.
pub fn eta_s(steps: &[Step]) -> Option<f64> {
    let times: Vec<f64> = steps
        .iter()
        .filter(|s| s.state == StepState::Done)
        .filter_map(|s| {
            crate::clock::secs_between(s.started_at.as_deref()?, s.finished_at.as_deref()?)
        })
        .collect();
    let mean = crate::stats::mean(&times)?;
    let left = steps
        .iter()
        .filter(|s| matches!(s.state, StepState::Planned | StepState::Running))
        .count();
    Some(mean * left as f64)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), or `unknown`.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_round_trip_and_the_living_are_not_dead() {
        let me = Owner::me();
        assert_eq!(Owner::parse(&me.to_string()), Some(me.clone()));
        assert!(!me.is_dead_here());
        let earlier_boot = Owner {
            boot_id: "0000".into(),
            ..me.clone()
        };
        assert!(earlier_boot.is_dead_here());
        let elsewhere = Owner {
            host: "another-box".into(),
            boot_id: "0000".into(),
            ..me.clone()
        };
        assert!(!elsewhere.is_dead_here());
        // A host name with a colon still parses.
        let odd = Owner::parse("a:b:12:xyz").unwrap();
        assert_eq!((odd.host.as_str(), odd.pid), ("a:b", 12));
    }

    #[test]
    fn a_reaped_process_is_dead() {
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let mut child = child;
        child.wait().unwrap();
        let gone = Owner { pid, ..Owner::me() };
        assert!(gone.is_dead_here());
    }
}
