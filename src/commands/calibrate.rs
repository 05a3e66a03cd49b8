//! `patchbench calibrate`: this box's false-alarm rates, from the user's own A/A runs (one
//! kernel on both sides). Reads a campaign's runs (`--campaign`: both sides as one pool, and
//! its rounds as the pairs) or the runs under a label (`--label`: neighbours in time pair),
//! resamples them into A/A tables (`crate::calibrate`) and prints the rates
//! (`crate::report::calibrate`).

use super::shared::StoreArg;
use super::store::TextOrJson;
use crate::calibrate::{self, Options, Pool, MIN_RUNS};
use crate::error::usage;
use crate::record::RunRecord;
use crate::store::db::Store;
use clap::Args;

const AFTER_HELP: &str = "\
How often does `compare` cry wolf on this box? From your own A/A runs (the same kernel on both \
sides), calibrate draws random A/A tables: unpaired 3 v 3, 5 v 5 and 10 v 10 runs, and paired \
3, 5 and 10 rounds (a campaign's rounds, kept whole, or neighbouring runs in time; as in \
`compare`, a paired verdict needs 6 rounds at its 90 %, so the 3- and 5-round tables' scores \
are judged unpaired), 500 of each by default, seeded, and runs `compare` on every one. It \
prints:

- the share of tables with any improved or regressed row (false alarms: with one kernel \
there is nothing to find), for the scores, for the monitor rows (\"what changed with it\") and \
per kind of row (proc-vmstat, interrupts, ...), each with a 95 % Wilson interval;
- how often a change planted in the same runs is found: the headline score x0.95, a steady \
counter x2, a sporadic counter made steady;
- the smallest loss of the headline score found in at least 80 % of tables, per design;
- the monitor rows too sporadic to judge on this box.

Getting A/A data: a campaign with no setup on either side runs this kernel twice each round,
  patchbench campaign start aa --executor local --rounds 10 -- \\
      run syscall --duration 1 --passes 1 --no-settle --copies 1
  patchbench calibrate --campaign aa
or label at least 6 runs of one workload (20 or more for the 10 v 10 tables),
  for i in $(seq 20); do patchbench run syscall --copies 1 --label aa; done
  patchbench calibrate --label aa";

/// Arguments of `patchbench calibrate`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct CalibrateArgs {
    /// A campaign of one kernel on both sides: both sides' runs are the pool, its rounds
    /// the pairs.
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "label",
        conflicts_with = "label"
    )]
    pub campaign: Option<String>,
    /// Runs of one workload and kernel stored under this label (neighbouring runs in time
    /// form the pairs).
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// A/A tables drawn for each design (at least 50; each rate's interval says how
    /// precise it is).
    #[arg(long, value_name = "N", default_value_t = 500,
          value_parser = clap::value_parser!(u32).range(50..=100_000))]
    pub tables: u32,
    /// Seed of the draws (the same seed and runs give the same numbers).
    #[arg(long, value_name = "N", default_value_t = Options::default().seed)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    #[command(flatten)]
    pub store: StoreArg,
}

/// The runs under `label`, with their ids.
fn labelled(store: &Store, label: &str) -> anyhow::Result<Vec<(String, RunRecord)>> {
    let mut out = Vec::new();
    for id in store.ids_with_label(label)? {
        if let Some(r) = store.get(id)? {
            out.push((id.to_string(), r));
        }
    }
    Ok(out)
}

/// The runs of campaign `name`: those under its labels `NAME/SIDE` made by it.
fn campaign_runs(store: &Store, name: &str) -> anyhow::Result<Vec<(String, RunRecord)>> {
    let prefix = format!("{name}/");
    let mut out = Vec::new();
    for label in store.labels()?.iter().filter(|l| l.starts_with(&prefix)) {
        out.extend(
            labelled(store, label)?
                .into_iter()
                .filter(|(_, r)| r.campaign.as_ref().is_some_and(|s| s.campaign == name)),
        );
    }
    Ok(out)
}

/// `patchbench calibrate`.
pub fn execute(a: &CalibrateArgs) -> anyhow::Result<i32> {
    let store = a.store.open(false)?;
    let (name, runs) = match (&a.campaign, &a.label) {
        (Some(c), _) => (format!("campaign {c}"), campaign_runs(&store, c)?),
        (None, Some(l)) => (format!("label {l}"), labelled(&store, l)?),
        (None, None) => return usage("give --campaign NAME or --label NAME"),
    };
    let pool = Pool::new(name.clone(), runs);
    if pool.runs.len() < MIN_RUNS {
        let how = match &a.campaign {
            Some(c) => format!(
                "run more rounds (`patchbench campaign start {c}2 --executor local --rounds 10 \
                 -- WORKLOAD`, the same kernel on both sides)"
            ),
            None => format!(
                "record more runs of one workload on one kernel (`patchbench run syscall \
                 --copies 1 --label {}`, repeated)",
                a.label.as_deref().unwrap_or("aa")
            ),
        };
        return usage(format!(
            "calibrate needs at least {MIN_RUNS} complete runs of one configuration (3 a side); \
             {name} has {}{}: {how}",
            pool.runs.len(),
            if pool.left_out.is_empty() {
                String::new()
            } else {
                format!(
                    " (and {} of another configuration or interrupted)",
                    pool.left_out.len()
                )
            }
        ));
    }
    let options = Options {
        tables: a.tables as usize,
        seed: a.seed,
        ..Options::default()
    };
    let c = calibrate::calibrate(&pool, &options)?;
    let text = match a.format {
        TextOrJson::Text => crate::report::calibrate::text(&c),
        TextOrJson::Json => crate::report::calibrate::json(&c)?,
    };
    crate::report::print(&text)?;
    Ok(0)
}
