//! The [`Store`] type and what every part of the store shares: one open connection, where
//! it is and whether it was opened read-only, a write transaction and a query that explain
//! their failure (always naming the store). The rest of `Store` lives by concern beside it
//! (`crate::store`'s doc lists the files), each an `impl Store` block over [`Db`]
//! (`crate::store::sql`). Every write is one transaction (on SQLite `BEGIN IMMEDIATE` in WAL
//! mode with a busy timeout, so two patchbench processes can write one store at once).
//!
//! A call that did not finish in time, whichever the backend (a server that does not answer,
//! a SQLite statement or lock wait cut at the bound, `crate::store::bounds`), is a
//! [`crate::error::StoreUnreachable`]: a command exits 2, and an agent keeps the step's run in
//! its spool and tries the store again.

use super::bounds::lock_wait;
use super::descs::DescCache;
use super::location::Location;
use super::packed::Contents;
use super::sql::{self, Db, DbError, Failure};
use crate::error::Usage;
use std::cell::RefCell;

/// An open result store.
pub struct Store {
    /// In a cell so that queries take `&self`, as callers expect of reads.
    db: RefCell<Box<dyn Db>>,
    location: Location,
    read_only: bool,
    /// The metric descriptors seen so far (`crate::store::descs`).
    descs: RefCell<DescCache>,
    /// The run this store wrote last and what its parts add up to, so the next write of it
    /// (a run's next finished unit) is diffed without reading it back.
    pub(super) written: Option<Written>,
}

/// What the store last wrote of one run.
#[derive(Debug, Clone)]
pub(super) struct Written {
    pub run_id: i64,
    /// The number of its parts (the next one's `seq`).
    pub parts: i64,
    pub contents: Contents,
}

impl Store {
    /// A store over an open connection (`open` makes one, then prepares it).
    pub(super) fn from_db(db: Box<dyn Db>, location: Location, read_only: bool) -> Store {
        Store {
            db: RefCell::new(db),
            location,
            read_only,
            descs: RefCell::new(DescCache::default()),
            written: None,
        }
    }

    /// Where this store is (a file, or a URL shown without its password).
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Refuses (one line) a store that cannot take a write now (a file whose file system is
    /// full, a store opened read-only), before work whose result would be lost.
    pub fn check_writable(&self) -> anyhow::Result<()> {
        if self.read_only {
            return Err(Usage(format!(
                "store {} is read-only; give a writable --store",
                self.location
            ))
            .into());
        }
        match &self.location {
            Location::File(p) => super::sqlite::refuse_if_full(p),
            Location::Postgres(_) => Ok(()),
        }
    }

    /// True when the store was opened read-only (read-only media, or no write permission).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The connection, for the store's other query modules.
    pub(super) fn db(&mut self) -> &mut dyn Db {
        self.db.get_mut().as_mut()
    }

    /// Says what a failed database call means for this store, always naming the store.
    pub fn explain(&self, e: &DbError) -> anyhow::Error {
        let shown = self.location.shown();
        let postgres = matches!(self.location, Location::Postgres(_));
        let line = match e.failure {
            Failure::Busy if !postgres => {
                let holders = self
                    .location
                    .file()
                    .map(super::locks::holders)
                    .unwrap_or_default();
                let who = if holders.is_empty() {
                    "another process".to_string()
                } else {
                    holders.join(", ")
                };
                return crate::error::StoreUnreachable(self.location.scrub(&format!(
                    "store {shown} is locked by {who}; gave up after {:.1} s; wait for it to \
                     finish or give another --store",
                    lock_wait().as_secs_f64()
                )))
                .into();
            }
            Failure::TimedOut => {
                return crate::error::StoreUnreachable(self.location.scrub(&format!(
                    "store {shown}: {e}; what was committed before is kept"
                )))
                .into()
            }
            Failure::Full => format!(
                "store {shown}: the filesystem is full ({e}); free some space there or give \
                 another --store"
            ),
            Failure::ReadOnly => format!(
                "store {shown} is read-only ({e}); it can be read but not written: give a \
                 writable --store"
            ),
            Failure::Permission if postgres => format!(
                "store {shown}: permission denied ({e}); the role lacks a grant (docs/lab.md \
                 lists what each role needs)"
            ),
            Failure::Permission => format!("store {shown}: permission denied ({e})"),
            Failure::NoMemory => format!(
                "store {shown}: out of memory ({e}); raise the process's memory limit and try \
                 again"
            ),
            Failure::Unreachable => {
                return crate::error::StoreUnreachable(self.location.scrub(&format!(
                    "store {shown}: lost the connection to the server ({e}); what was committed \
                     before is kept"
                )))
                .into()
            }
            Failure::Corrupt => {
                format!("store {shown} is damaged ({e}); move it aside or give another --store")
            }
            Failure::Duplicate if e.message.contains("uuid") => format!(
                "store {shown} already has this run (a run with the same UUID: a run is stored \
                 once; `patchbench push` skips such runs); nothing was saved"
            ),
            _ => format!("store {shown}: {e}"),
        };
        Usage(self.location.scrub(&line)).into()
    }

    /// Runs `f` in one write transaction and explains its failure.
    pub(super) fn writing<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Db) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        self.refuse_if_read_only()?;
        let result = sql::in_transaction(self.db.get_mut().as_mut(), f);
        result.map_err(|e| self.explain(&e))
    }

    /// The error of a write to a store opened for reading.
    fn refuse_if_read_only(&self) -> anyhow::Result<()> {
        if self.read_only {
            return Err(Usage(format!(
                "store {} is read-only (opened for reading); nothing was written",
                self.location
            ))
            .into());
        }
        Ok(())
    }

    /// Like [`Store::writing`], with the descriptor cache; a failed write forgets the cache
    /// (an id it holds may be from the rolled-back transaction) and what was last written.
    pub(super) fn writing_runs<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Db, &mut DescCache) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        self.refuse_if_read_only()?;
        let cache = self.descs.get_mut();
        let result = sql::in_transaction(self.db.get_mut().as_mut(), |db| f(db, cache));
        if result.is_err() {
            self.descs.get_mut().clear();
            self.written = None;
        }
        result.map_err(|e| self.explain(&e))
    }

    /// Like [`Store::reading`], with the descriptor cache.
    pub(super) fn reading_runs<T>(
        &self,
        f: impl FnOnce(&mut dyn Db, &mut DescCache) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        let result = f(self.db.borrow_mut().as_mut(), &mut self.descs.borrow_mut());
        result.map_err(|e| self.explain(&e))
    }

    /// Runs a query and explains its failure.
    pub(super) fn reading<T>(
        &self,
        f: impl FnOnce(&mut dyn Db) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        let result = f(self.db.borrow_mut().as_mut());
        result.map_err(|e| self.explain(&e))
    }

    /// Runs `f` while holding the store's write lock (a testing aid: other writers wait).
    pub fn with_write_lock<T>(
        &mut self,
        f: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let postgres = matches!(self.location, Location::Postgres(_));
        let mut out = None;
        self.writing(|db| {
            if postgres {
                db.batch("LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE")?;
            }
            out = Some(f());
            Ok(())
        })?;
        out.unwrap_or_else(|| Err(anyhow::anyhow!("the locked section did not run")))
    }
}
