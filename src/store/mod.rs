//! The result store: every run is kept in a database so that any two sets of runs can be
//! compared later: an embedded SQLite file by default, or a lab's shared PostgreSQL database
//! (`--store postgres://...`). This module holds where the store is (`location`), how a
//! command means to use it ([`Access`]) and the [`StoreSink`] the measuring commands save
//! through (one transaction per finished unit).
//!
//! The store's queries are written once over the connection interface of `sql`, which
//! `sqlite` and `postgres` implement, as `impl Store` blocks split by concern:
//! - `db`: the `Store` type itself and what the others share (the connection, a write
//!   transaction and a query that explain their failure); `bounds` how long a call may take
//!   on either backend (`sqlite_deadline` holds a SQLite call to it);
//! - `open`: opening the store, its integrity check and migrating its schema (`schema` holds
//!   the migrations);
//! - `runs`: writing and reading runs, and the listings; a run's values and record are kept
//!   as packed parts (`packed`: the bytes, `stored_form`: a record as parts hold it, `descs`:
//!   each metric's descriptor, stored once);
//! - `decode`: reading a stored record back, also one an earlier build wrote;
//! - `profile`: the noise profile's data, pooled in the database;
//! - `push`: copying runs to another store, with its bulk insert;
//! - `campaign`: the campaign tables, adding rounds to a campaign included (one function,
//!   whoever adds them); `bisect` the bisection tables; `lab` the lab's boxes and their
//!   places in a campaign; `spool` a box's spool of runs waiting while the lab's store cannot
//!   be reached.
//!
//! `locks` finds who holds a lock on a SQLite file; `pg_target` and `pgpass` resolve a
//! PostgreSQL address and its credentials as libpq does.

pub mod bisect;
pub mod bounds;
pub mod campaign;
pub mod db;
pub mod decode;
pub mod descs;
pub mod lab;
pub mod location;
pub mod locks;
pub mod open;
pub mod packed;
pub mod pg_target;
pub mod pgpass;
pub mod postgres;
pub mod profile;
pub mod push;
pub mod runs;
pub mod schema;
pub mod spool;
pub mod sql;
pub mod sqlite;
pub mod sqlite_deadline;
pub mod stored_form;

use crate::record::sink::Sink;
use crate::record::RunRecord;
use db::Store;
pub use location::{store_location, Location};
use std::time::Duration;

/// What says a signal arrived, for store calls to wait only a moment more once it did.
type Interrupt = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

static INTERRUPT: std::sync::RwLock<Option<Interrupt>> = std::sync::RwLock::new(None);

/// From now on, a store call that waits for a server waits at most a second more once `flag`
/// says a signal arrived (`crate::proc::signals::Signals::flag`), so a process that catches
/// SIGTERM ends within seconds even while its server does not answer.
pub fn interrupt_when(flag: impl Fn() -> bool + Send + Sync + 'static) {
    if let Ok(mut f) = INTERRUPT.write() {
        *f = Some(std::sync::Arc::new(flag));
    }
}

/// True once the flag of [`interrupt_when`] says a signal arrived.
pub(crate) fn interrupted() -> bool {
    INTERRUPT
        .read()
        .ok()
        .and_then(|f| f.clone())
        .is_some_and(|f| f())
}

/// How a command uses the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only queries (`runs`, `show`, `export`, `compare`): a store that cannot be written is
    /// opened read-only; a missing one is an error.
    Read,
    /// Changes an existing store (`rm`).
    Write,
    /// Saves runs, creating the store if needed (`run`, `import`, `push`'s target).
    Create,
}

/// Opens (creating if needed) the store at `location` for a run labelled `label`.
pub fn sink(
    location: &Location,
    label: Option<String>,
    connect_timeout: Option<Duration>,
) -> anyhow::Result<StoreSink> {
    Ok(StoreSink {
        store: Store::open(location, Access::Create, connect_timeout)?,
        label,
        id: None,
    })
}

/// Saves a finished record in one step (created if needed, at `location`); returns its id.
pub fn save(location: &Location, label: Option<String>, record: &RunRecord) -> anyhow::Result<i64> {
    let mut sink = sink(location, label, None)?;
    sink.write(record, record.incomplete, true)?;
    sink.id
        .ok_or_else(|| anyhow::anyhow!("the store gave the run no id"))
}

/// True when a record holds a result of any kind (a unit was stored).
fn has_results(record: &RunRecord) -> bool {
    !record.metrics.is_empty()
        || !record.tests.is_empty()
        || record.aim7.as_ref().is_some_and(|d| !d.points.is_empty())
        || record
            .will_it_scale
            .as_ref()
            .is_some_and(|d| !d.points.is_empty())
        || record.model.as_ref().is_some_and(|d| !d.points.is_empty())
}

/// Saves a run incrementally: the first `progress` that carries a result inserts it marked
/// incomplete, each later one replaces its record and metrics in one transaction, `finished`
/// records the final state. A run that ends before any result leaves no run behind. The
/// `--label` given here wins over one already in the record.
pub struct StoreSink {
    store: Store,
    label: Option<String>,
    id: Option<i64>,
}

impl StoreSink {
    /// Writes the record: replaces the stored one, or inserts it when it has results (or
    /// `always`).
    fn write(&mut self, record: &RunRecord, incomplete: bool, always: bool) -> anyhow::Result<()> {
        let mut r = record.clone();
        if self.label.is_some() {
            r.label = self.label.clone();
        }
        r.incomplete = incomplete;
        match self.id {
            Some(id) => self.store.update(id, &r),
            None if always || has_results(&r) => {
                self.id = Some(self.store.insert(&r)?);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Where the store is.
    pub fn location(&self) -> &Location {
        self.store.location()
    }
}

impl Sink for StoreSink {
    fn name(&self) -> String {
        format!("store {}", self.store.location())
    }

    fn started(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true, false)
    }

    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true, false)
    }

    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, record.incomplete, false)
    }

    fn saved_as(&self) -> Option<String> {
        self.id.map(|i| i.to_string())
    }

    fn done_line(&self) -> Option<String> {
        let id = self.id?;
        Some(format!("saved as run {id} in {}", self.store.location()))
    }
}
