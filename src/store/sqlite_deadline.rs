//! Every call on a SQLite store ends within the store's bound (`super::bounds::call_limit`,
//! `PATCHBENCH_STORE_TIMEOUT`, the bound PostgreSQL's calls have): a statement still running
//! at the bound is interrupted by SQLite's progress handler (`sqlite3_interrupt`'s effect:
//! the statement fails with `SQLITE_INTERRUPT`, and a write's whole transaction is rolled
//! back), and a lock wait never lasts past it (`super::bounds::lock_wait`). Once a signal has
//! arrived (`super::interrupt_when`), a running statement gets one second more
//! (`super::bounds::SIGNAL_GRACE`). A call cut short is a [`Failure::TimedOut`] whose message
//! names what was running and the bound; `super::db::Store::explain` gives it the
//! consequences of a server that does not answer (an agent keeps the step's run in its spool).

use super::bounds::SIGNAL_GRACE;
use super::sql::{DbError, Failure};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// SQLite's virtual-machine steps between two looks at the clock: a fraction of a
/// millisecond. Measured on a recursive count to 5 million (release build, 15 runs each way,
/// 2026-12-07): every 10,000 steps costs nothing measurable (median 0.660 s against 0.656 s
/// without the handler), every 1,000 about 2-4 %.
const STEPS_PER_LOOK: std::ffi::c_int = 10_000;

/// The bound of one connection's calls.
pub struct Deadline {
    limit: Duration,
    base: Instant,
    shared: Arc<Shared>,
    /// When the running call started (None between calls).
    started: Option<Instant>,
}

/// What the progress handler reads and writes.
struct Shared {
    /// Nanoseconds after `base` at which the running call is cut; 0 between calls.
    at: AtomicU64,
    /// A signal arrived during the running call (its deadline was brought forward).
    signalled: AtomicBool,
    /// The handler cut the running call.
    cut: AtomicBool,
}

/// How a call ended, for its error.
pub struct Ended {
    pub elapsed: Duration,
    /// The progress handler interrupted it (past the bound, or the grace after a signal).
    pub cut: bool,
    pub signalled: bool,
}

impl Deadline {
    /// Bounds every later call on `conn` by `limit`.
    pub fn install(conn: &rusqlite::Connection, limit: Duration) -> Deadline {
        let base = Instant::now();
        let shared = Arc::new(Shared {
            at: AtomicU64::new(0),
            signalled: AtomicBool::new(false),
            cut: AtomicBool::new(false),
        });
        let seen = Arc::clone(&shared);
        conn.progress_handler(
            STEPS_PER_LOOK,
            Some(move || {
                let at = seen.at.load(Relaxed);
                if at == 0 {
                    return false;
                }
                let now = nanos(base.elapsed());
                if !seen.signalled.load(Relaxed) && super::interrupted() {
                    seen.signalled.store(true, Relaxed);
                    seen.at.store(at.min(now + nanos(SIGNAL_GRACE)), Relaxed);
                }
                let cut = now >= seen.at.load(Relaxed);
                if cut {
                    seen.cut.store(true, Relaxed);
                }
                cut
            }),
        );
        Deadline {
            limit,
            base,
            shared,
            started: None,
        }
    }

    /// The bound of each call.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// A call starts now.
    pub fn arm(&mut self) {
        let now = Instant::now();
        self.started = Some(now);
        self.shared.signalled.store(false, Relaxed);
        self.shared.cut.store(false, Relaxed);
        let at = nanos(now.duration_since(self.base) + self.limit);
        self.shared.at.store(at.max(1), Relaxed);
    }

    /// The call has ended: how.
    pub fn disarm(&mut self) -> Ended {
        self.shared.at.store(0, Relaxed);
        Ended {
            elapsed: self.started.take().map_or(Duration::ZERO, |s| s.elapsed()),
            cut: self.shared.cut.load(Relaxed),
            signalled: self.shared.signalled.load(Relaxed),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The first words of `sql`, on one line, to name what was running.
pub fn statement_head(sql: &str) -> String {
    const SHOWN: usize = 60;
    let words: Vec<&str> = sql.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{} …", &line[..cut]),
        None => line,
    }
}

/// The error of a call the bound cut short, or None when the bound had no part in `failure`:
/// the statement interrupted by the handler, or a lock wait that lasted until the bound.
/// `in_transaction`: the call ran inside a write transaction (now rolled back); `holders`:
/// who holds the store's locks, asked only for a lock wait.
pub fn cut_short(
    sql: &str,
    ended: &Ended,
    limit: Duration,
    failure: Failure,
    in_transaction: bool,
    holders: impl FnOnce() -> Vec<String>,
) -> Option<DbError> {
    let what = statement_head(sql);
    let bound = format!(
        "the {:.1} s bound of a store call ({})",
        limit.as_secs_f64(),
        super::bounds::CALL_LIMIT_ENV
    );
    let undone = if in_transaction {
        "; the transaction it was part of was rolled back, nothing of it is stored"
    } else {
        ""
    };
    let line = if ended.cut && ended.signalled {
        format!("`{what}` was interrupted: a signal arrived and its second of grace passed{undone}")
    } else if ended.cut {
        format!("`{what}` ran past {bound} and was interrupted{undone}")
    } else if failure == Failure::Busy && ended.elapsed >= limit {
        let who = holders();
        let who = if who.is_empty() {
            "another process".to_string()
        } else {
            who.join(", ")
        };
        let undone = if in_transaction {
            undone
        } else {
            "; nothing was written"
        };
        format!("`{what}` waited for the lock held by {who} until {bound}{undone}")
    } else {
        return None;
    };
    Some(DbError::new(Failure::TimedOut, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sql::{in_transaction, Db};
    use crate::store::sqlite;

    /// A statement that runs for minutes: a recursive count to 10^10.
    const LONG: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                        WHERE i < 10000000000) SELECT count(*) FROM n";

    #[test]
    fn a_statement_past_the_bound_is_interrupted_and_its_write_rolled_back() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s.db");
        let (mut db, _) = sqlite::open(&path, crate::store::Access::Create).unwrap();
        db.batch("CREATE TABLE t (x INTEGER)").unwrap();
        let limit = Duration::from_millis(300);
        db.bound_calls(limit);
        // A write transaction whose second statement runs past the bound.
        let started = Instant::now();
        let e = in_transaction(&mut db, |db| {
            db.execute("INSERT INTO t VALUES (1), (2), (3)", &[])?;
            db.query(LONG, &[]).map(|_| ())
        })
        .unwrap_err();
        let took = started.elapsed();
        assert_eq!(e.failure, Failure::TimedOut, "{e}");
        assert!(
            e.message.starts_with("`WITH RECURSIVE n(i) AS")
                && e.message
                    .contains("ran past the 0.3 s bound of a store call")
                && e.message.contains("PATCHBENCH_STORE_TIMEOUT")
                && e.message.contains("rolled back"),
            "{e}"
        );
        assert!(took >= limit && took < limit * 4, "{took:?}");
        // Nothing of the transaction is stored, and the store reads on.
        let n = db.query_one("SELECT count(*) FROM t", &[]).unwrap();
        assert_eq!(n.int(0).unwrap(), 0);
        drop(db);
        let (mut again, _) = sqlite::open(&path, crate::store::Access::Read).unwrap();
        let check = again.query_one("PRAGMA quick_check", &[]).unwrap();
        assert_eq!(check.text(0).unwrap(), "ok");
        // A read outside a transaction: cut the same way, with nothing to undo.
        again.bound_calls(limit);
        let e = again.query(LONG, &[]).unwrap_err();
        assert!(
            e.failure == Failure::TimedOut && !e.message.contains("rolled back"),
            "{e}"
        );
        // The next call has a bound of its own.
        assert_eq!(
            again
                .query_one("SELECT count(*) FROM t", &[])
                .unwrap()
                .int(0)
                .unwrap(),
            0
        );
    }

    #[test]
    fn what_was_running_is_named_on_one_short_line() {
        assert_eq!(
            statement_head("SELECT a,\n       b\n  FROM runs"),
            "SELECT a, b FROM runs"
        );
        let long = statement_head(&format!("INSERT INTO t VALUES ({})", "1, ".repeat(100)));
        assert!(long.ends_with(" …") && long.chars().count() == 62, "{long}");
    }
}
