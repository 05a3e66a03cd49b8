//! Opening the store (a SQLite file or a PostgreSQL URL, with a clear message for anything
//! that is not a store or cannot be reached): the connection, the integrity check of a small
//! SQLite file, refusing what is not a patchbench store, WAL mode, and migrating the schema
//! (`crate::store::schema`) where the store may be written; and opening it again after the
//! server came back.

use super::bounds::lock_wait;
use super::db::Store;
use super::location::Location;
use super::schema::{self, Found};
use super::sql::{Db, DbError, Failure};
use super::Access;
use crate::error::Usage;
use std::time::Duration;

impl Store {
    /// Opens the store at `location` (a file or a server: the one way in, whichever
    /// database holds it) for `access`, migrating its schema where it may; a PostgreSQL server
    /// gets `connect_timeout` (else the URL's, `PGCONNECT_TIMEOUT`, or 5 s).
    pub fn open(
        location: &Location,
        access: Access,
        connect_timeout: Option<Duration>,
    ) -> anyhow::Result<Store> {
        let shown = location.shown();
        let (db, read_only): (Box<dyn Db>, bool) = match location {
            Location::File(path) => {
                let (db, opened) = super::sqlite::open(path, access)?;
                (Box::new(db), opened == super::sqlite::Opened::ReadOnly)
            }
            Location::Postgres(target) => {
                let db = super::postgres::connect(target, connect_timeout).map_err(|e| {
                    let how = match e.failure {
                        Failure::Permission => {
                            "check the user and password (PGPASSWORD, \
                                                ~/.pgpass) and the server's pg_hba.conf"
                        }
                        _ => "check that the server runs and the URL's host, port and sslmode",
                    };
                    let line = format!("cannot reach store {shown}: {e}; {how}");
                    if e.failure == Failure::Unreachable {
                        anyhow::Error::from(crate::error::StoreUnreachable(line))
                    } else {
                        Usage(line).into()
                    }
                })?;
                (Box::new(db), false)
            }
        };
        let mut store = Store::from_db(db, location.clone(), read_only);
        store.prepare(access, schema::CURRENT).map_err(|e| {
            if e.downcast_ref::<Usage>().is_some() {
                return e;
            }
            match e.downcast::<DbError>() {
                Ok(db) => match location {
                    Location::File(path) => super::sqlite::opening_error(&db, path),
                    Location::Postgres(_) => store.explain(&db),
                },
                Err(e) => e,
            }
        })?;
        Ok(store)
    }

    /// TESTING AID: makes a new store whose tables are as schema version `version` (an
    /// earlier one) left them, so that a test can write a store as an earlier build did and
    /// see this build migrate it.
    #[doc(hidden)]
    pub fn create_at_version(location: &Location, version: i64) -> anyhow::Result<()> {
        let db: Box<dyn Db> = match location {
            Location::File(path) => Box::new(super::sqlite::open(path, Access::Create)?.0),
            Location::Postgres(target) => Box::new(super::postgres::connect(target, None)?),
        };
        Store::from_db(db, location.clone(), false).prepare(Access::Create, version)
    }

    /// Opens the same store again (a new connection to a server that went away and came
    /// back); the old connection is dropped only when the new one is there.
    pub fn reconnect(&mut self, connect_timeout: Option<Duration>) -> anyhow::Result<()> {
        let access = if self.is_read_only() {
            Access::Read
        } else {
            Access::Write
        };
        *self = Store::open(&self.location().clone(), access, connect_timeout)?;
        Ok(())
    }

    /// Makes a new connection ready for `access`: the lock wait, the integrity check, the
    /// store's schema (refusing what is not a store), WAL mode, and the migration (to
    /// `version`: [`schema::CURRENT`] but in tests).
    fn prepare(&mut self, access: Access, version: i64) -> anyhow::Result<()> {
        let file = matches!(self.location(), Location::File(_));
        if file {
            let lock_ms = lock_wait().as_millis();
            self.db().batch(&format!("PRAGMA busy_timeout={lock_ms}"))?;
        }
        let small = self
            .location()
            .file()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.len() <= WHOLE_CHECK_BYTES);
        if small {
            let check = self.db().query_one("PRAGMA quick_check", &[])?.text(0)?;
            if check != "ok" {
                return Err(DbError::new(
                    integrity_failure(&check),
                    format!("integrity check failed: {check}"),
                )
                .into());
            }
        }
        let shown = self.location().shown();
        let found = schema::found(self.db())?;
        match found {
            Found::Foreign => {
                return Err(Usage(format!(
                    "{shown} is {} but not a patchbench store; give another --store",
                    if file {
                        "an SQLite database"
                    } else {
                        "a database"
                    }
                ))
                .into())
            }
            Found::Empty if access != Access::Create => {
                // Reading commands must not turn an empty file (or database) into a store.
                return Err(Usage(format!(
                    "{shown} is empty, not a patchbench store (no run was ever saved there); \
                     give the store your runs are in with --store or PATCHBENCH_STORE"
                ))
                .into());
            }
            _ => {}
        }
        if file && !self.is_read_only() {
            let mode = self.switch_to_wal()?;
            if !mode.eq_ignore_ascii_case("wal") {
                anyhow::bail!("cannot switch the store to WAL mode (got {mode})");
            }
            self.db()
                .batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")?;
        }
        if found == Found::Version(version) {
            return Ok(());
        }
        if self.is_read_only() {
            if let Found::Version(v) = found {
                if v > schema::CURRENT {
                    return Err(Usage(format!(
                        "store {shown} has schema version {v}, newer than this patchbench reads \
                         ({}); use a newer patchbench",
                        schema::CURRENT
                    ))
                    .into());
                }
                return Err(Usage(format!(
                    "store {shown} has schema version {v} and is read-only, so it cannot be \
                     brought to version {} for this patchbench; open it once where it can be \
                     written (any command, e.g. `patchbench runs`), or use the patchbench that \
                     wrote it",
                    schema::CURRENT
                ))
                .into());
            }
        }
        let refused = schema::migrate_to(self.db(), &shown, version)?;
        if refused > 0 {
            crate::safe_text::eprint_line(&format!(
                "patchbench: warning: store {shown}: {refused} stored metric values were outside \
                 their domain (not finite, or a zero score: written by an earlier patchbench); \
                 they are kept in table metrics_refused and left out of every result"
            ));
        }
        Ok(())
    }
}

impl Store {
    /// Puts a store file in WAL mode; returns the mode it is in. SQLite does not call the busy
    /// handler for this switch: a process that opens a new store while another one is switching
    /// it (two runs started at once on a new store) gets "database is locked" at once, so the
    /// switch is tried again until the lock wait. The second try finds the file in WAL mode.
    fn switch_to_wal(&mut self) -> anyhow::Result<String> {
        let started = std::time::Instant::now();
        loop {
            match self.db().query_one("PRAGMA journal_mode=WAL", &[]) {
                Ok(row) => return Ok(row.text(0)?),
                Err(e) if e.failure == Failure::Busy && started.elapsed() < lock_wait() => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// A SQLite store up to this size is checked whole (`PRAGMA quick_check`, which reads every
/// page) when it is opened, so damage is found before anything is read from it; a larger one
/// is not (the check would cost more than the command), and SQLite names a damaged page when
/// a query reads it.
const WHOLE_CHECK_BYTES: u64 = 16 << 20;

/// What a failed `PRAGMA quick_check` means: a page it could not read for lack of memory
/// (`error code=7`, SQLITE_NOMEM) or an I/O error (10) is not damage; anything else is.
fn integrity_failure(report: &str) -> Failure {
    let code = report.split("error code=").nth(1).and_then(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i32>().ok()
    });
    match code {
        Some(rusqlite::ffi::SQLITE_NOMEM) => Failure::NoMemory,
        Some(rusqlite::ffi::SQLITE_IOERR) => Failure::Other,
        Some(rusqlite::ffi::SQLITE_FULL) => Failure::Full,
        _ => Failure::Corrupt,
    }
}
