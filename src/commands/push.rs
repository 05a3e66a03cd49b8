//! `patchbench push --to postgres://...`: copies this box's runs (from `--store`, or the
//! default local store) into another store, a lab's shared one: in batches of
//! [`crate::store::push::BATCH`] runs, one transaction each, every run stored once whatever
//! is pushed again (runs are matched by their UUID). A push cut short is finished by running
//! it again. It says what it pushed and what was already there.

use super::shared::StoreArg;
use crate::error::usage;
use crate::progress::Progress;
use crate::store::db::Store;
use crate::store::push::{PushCount, PushOptions};
use crate::store::{Access, Location};
use clap::Args;
use std::ffi::OsString;

#[derive(Debug, Clone, Args)]
pub struct PushArgs {
    /// The store to copy the runs into: postgres://USER@HOST:PORT/DB?sslmode=require (the
    /// password from PGPASSWORD or ~/.pgpass), or another store file.
    #[arg(long, value_name = "URL|PATH", required = true)]
    pub to: OsString,
    /// Only runs with this label.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Push interrupted (incomplete) runs too. By default they stay behind: a run still being
    /// written is incomplete, and only its first copy would ever be pushed.
    #[arg(long)]
    pub include_incomplete: bool,
    /// The store to push from (see --store of the other commands).
    #[command(flatten)]
    pub store: StoreArg,
}

fn summary(count: &PushCount, to: &Location) -> String {
    let runs = |n: usize| if n == 1 { "run" } else { "runs" };
    let mut line = format!(
        "pushed {} {} to {to} ({} already there)",
        count.pushed,
        runs(count.pushed),
        count.already
    );
    if count.incomplete > 0 {
        line.push_str(&format!(
            "; {} incomplete {} not pushed (--include-incomplete pushes them)",
            count.incomplete,
            runs(count.incomplete)
        ));
    }
    line.push('\n');
    line
}

/// `patchbench push`.
pub fn execute(a: &PushArgs) -> anyhow::Result<i32> {
    let from_location = a.store.location()?;
    let to_location = Location::parse(&a.to)?;
    if from_location.same_store(&to_location) {
        return usage(format!(
            "--to {to_location} is the store the runs are in; give the shared store to push to"
        ));
    }
    if let Some(dir) = to_location
        .file()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return usage(format!(
            "--to {to_location}: the directory {} does not exist; push into an existing store \
             (a lab's postgres://... URL, or a store file)",
            dir.display()
        ));
    }
    let from = Store::open(&from_location, Access::Read, a.store.connect_timeout)?;
    if let Some(label) = &a.label {
        if from.ids_with_label(label)?.is_empty() {
            let labels = from.labels()?;
            return usage(format!(
                "no run labelled {} in store {from_location} (labels there: {}); nothing was \
                 pushed",
                crate::safe_text::field(label),
                if labels.is_empty() {
                    "none".to_string()
                } else {
                    crate::safe_text::field(&labels.join(", "))
                }
            ));
        }
    }
    let mut to = Store::open(&to_location, Access::Create, a.store.connect_timeout)?;
    let options = PushOptions {
        label: a.label.clone(),
        include_incomplete: a.include_incomplete,
    };
    let progress = Progress::new();
    // TESTING AID: a pause after each batch, so a test can kill a push between batches.
    let pause = std::env::var("PATCHBENCH_PUSH_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis);
    let result = from.push_to(&mut to, &options, &mut |c| {
        if let Some(p) = pause {
            std::thread::sleep(p);
        }
        progress.show(&format!(
            "pushing to {to_location}: {} of {} runs ({} new, {} already there)",
            c.pushed + c.already,
            c.total,
            c.pushed,
            c.already
        ));
    });
    drop(progress);
    let count = result?;
    crate::report::print(&summary(&count, &to_location))?;
    Ok(0)
}
