//! The embedded store: a SQLite file. Opening it checks the path first (a missing file for a
//! command that only reads, anything that is not a regular file, a store that cannot be
//! written for one that writes: each refused with one line, before anything is created), and
//! opens a store it may not write read-only (on read-only media without touching the
//! directory), so queries still work there. Errors are named for what SQLite says they are:
//! only "not a database" and damaged pages are called corrupt. A store's every call is bounded
//! in time (`super::sqlite_deadline`); a spool's is not (its own lock wait bounds it).

use super::sql::{numbered_to_sqlite, Db, DbError, Dialect, Failure, Row, Value};
use super::sqlite_deadline::{cut_short, Deadline};
use super::Access;
use crate::error::Usage;
use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, Connection, ErrorCode, OpenFlags};
use std::path::{Path, PathBuf};

/// A connection to a SQLite store.
pub struct SqliteDb {
    conn: Connection,
    path: PathBuf,
    /// The bound of each call (a store's; None for a spool).
    deadline: Option<Deadline>,
}

/// How a SQLite store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    ReadWrite,
    /// The user may not write it, or its file system is mounted read-only.
    ReadOnly,
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Bool(b) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*b))),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn read_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl SqliteDb {
    fn err(&self, e: rusqlite::Error) -> DbError {
        classify(&e, &self.path)
    }

    /// Runs one call (`sql`, to name it) on the connection within the deadline; a call the
    /// bound cut short is a [`Failure::TimedOut`] naming it.
    fn bounded<T>(
        &mut self,
        sql: &str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let in_transaction = !self.conn.is_autocommit();
        if let Some(d) = self.deadline.as_mut() {
            d.arm();
        }
        let result = f(&self.conn);
        let ended = self.deadline.as_mut().map(|d| (d.disarm(), d.limit()));
        result.map_err(|e| {
            let plain = classify(&e, &self.path);
            let path = &self.path;
            ended
                .and_then(|(ended, limit)| {
                    cut_short(sql, &ended, limit, plain.failure, in_transaction, || {
                        super::locks::holders(path)
                    })
                })
                .unwrap_or(plain)
        })
    }

    /// Bounds every later call by `limit` (a test makes a store's connection with its own).
    pub fn bound_calls(&mut self, limit: std::time::Duration) {
        self.deadline = Some(Deadline::install(&self.conn, limit));
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Db for SqliteDb {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let sql = numbered_to_sqlite(sql);
        let n = self.bounded(&sql, |conn| {
            conn.prepare_cached(&sql)?
                .execute(rusqlite::params_from_iter(params.iter()))
        })?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let sql = numbered_to_sqlite(sql);
        self.bounded(&sql, |conn| {
            let mut stmt = conn.prepare_cached(&sql)?;
            let columns = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let values = (0..columns)
                    .map(|i| r.get_ref(i).map(read_value))
                    .collect::<rusqlite::Result<Vec<Value>>>()?;
                out.push(Row(values));
            }
            Ok(out)
        })
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.bounded(sql, |conn| conn.execute_batch(sql))
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        // Unbounded: a rollback after a call the bound cut must not be cut in turn.
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Opens the store file at `path` for `access`. A store this process may not write is opened
/// read-only for [`Access::Read`] and refused for the others.
pub fn open(path: &Path, access: Access) -> anyhow::Result<(SqliteDb, Opened)> {
    let shown = path.display();
    let exists = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => true,
        Ok(m) => {
            return Err(Usage(format!(
                "store {shown} is not a regular file ({}); give the path of a store file \
                 (`patchbench run` and `import` create one)",
                file_kind(&m)
            ))
            .into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Usage(format!(
                "cannot open store {shown}: {}; check the path's permissions or give another \
                 --store",
                io_reason(&e)
            ))
            .into())
        }
    };
    if !exists {
        if access != Access::Create {
            return Err(Usage(format!(
                "store {shown} does not exist; runs are saved there by `patchbench run` or \
                 `patchbench import`, or point --store / PATCHBENCH_STORE at another"
            ))
            .into());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Usage(format!(
                    "cannot create the store directory {}: {}",
                    dir.display(),
                    io_reason(&e)
                ))
            })?;
        }
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let read_only_fs = nix::sys::statvfs::statvfs(if exists { path } else { dir })
        .is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY));
    let w = nix::unistd::AccessFlags::W_OK;
    let file_writable = !exists || nix::unistd::access(path, w).is_ok();
    let dir_writable = nix::unistd::access(dir, w).is_ok();
    let writable = !read_only_fs && file_writable && dir_writable;
    if !writable {
        let why = if read_only_fs {
            "its file system is mounted read-only".to_string()
        } else if !file_writable {
            "this user may not write the file".to_string()
        } else {
            format!("this user may not write its directory {}", dir.display())
        };
        if access != Access::Read || !exists {
            return Err(Usage(format!(
                "store {shown} is read-only ({why}); it can be read (runs, show, compare, \
                 export) but not written: give a writable --store"
            ))
            .into());
        }
    }
    if access != Access::Read {
        // Refused before any work: the first write would fail anyway.
        refuse_if_full(path)?;
    }
    let opened = if writable {
        Opened::ReadWrite
    } else {
        Opened::ReadOnly
    };
    let conn = match opened {
        Opened::ReadWrite => Connection::open(path),
        // Without the right to create the -shm and -wal files beside it, read the file as
        // it is (nothing of ours can be writing it).
        Opened::ReadOnly if read_only_fs || !dir_writable => match immutable_uri(path) {
            Some(uri) => Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
            ),
            None => Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY),
        },
        Opened::ReadOnly => Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY),
    };
    let conn = conn.map_err(|e| opening_error(&classify(&e, path), path))?;
    let mut db = SqliteDb {
        conn,
        path: path.to_path_buf(),
        deadline: None,
    };
    db.bound_calls(super::bounds::call_limit());
    db.conn.set_prepared_statement_cache_capacity(64);
    register_functions(&db.conn).map_err(|e| opening_error(&db.err(e), path))?;
    Ok((db, opened))
}

/// Opens (creating) a small SQLite file of patchbench's own that is not a store, such as an
/// agent's spool, waiting up to `busy` for another process's lock.
pub fn open_plain(path: &Path, busy: std::time::Duration) -> Result<SqliteDb, DbError> {
    let conn = Connection::open(path).map_err(|e| classify(&e, path))?;
    conn.busy_timeout(busy).map_err(|e| classify(&e, path))?;
    Ok(SqliteDb {
        conn,
        path: path.to_path_buf(),
        deadline: None,
    })
}

/// The one line for a store that could not be opened or read as a store.
pub fn opening_error(e: &DbError, path: &Path) -> anyhow::Error {
    let shown = path.display();
    let line = match e.failure {
        Failure::Corrupt => format!(
            "{shown} is not a readable patchbench store (corrupt or not a database: {e}); move \
             it aside or give another --store"
        ),
        Failure::NoMemory => format!(
            "cannot open store {shown}: out of memory ({e}); raise the process's memory limit \
             (ulimit -v) and try again"
        ),
        Failure::Permission => format!(
            "cannot open store {shown}: permission denied ({e}); check the file's and its \
             directory's permissions or give another --store"
        ),
        Failure::ReadOnly => format!(
            "store {shown} is read-only ({e}); give a writable --store to save anything there"
        ),
        Failure::Full => format!(
            "store {shown}: the filesystem is full ({e}); free some space there or give \
             another --store"
        ),
        Failure::TimedOut => {
            return crate::error::StoreUnreachable(format!("cannot open store {shown}: {e}")).into()
        }
        _ => format!("cannot open store {shown}: {e}"),
    };
    Usage(line).into()
}

/// `file:` URI of `path` with `immutable=1` (a file on read-only media), None when the path is
/// not UTF-8.
fn immutable_uri(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    let mut uri = String::from("file:");
    for c in text.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            _ => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    Some(uri)
}

fn file_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// What a SQLite error means.
pub fn classify(e: &rusqlite::Error, path: &Path) -> DbError {
    let extended = match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
        _ => 0,
    };
    let failure = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Failure::Busy,
        Some(ErrorCode::DiskFull) => Failure::Full,
        Some(ErrorCode::ReadOnly) => Failure::ReadOnly,
        Some(ErrorCode::PermissionDenied | ErrorCode::AuthorizationForStatementDenied) => {
            Failure::Permission
        }
        Some(ErrorCode::OutOfMemory) => Failure::NoMemory,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Failure::Corrupt,
        Some(ErrorCode::ConstraintViolation) => {
            if extended == ffi::SQLITE_CONSTRAINT_UNIQUE
                || extended == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            {
                Failure::Duplicate
            } else {
                Failure::Constraint
            }
        }
        // The shared-memory index cannot grow on a full file system either (a tmpfs).
        Some(ErrorCode::SystemIoFailure)
            if (extended == ffi::SQLITE_IOERR_SHMMAP || extended == ffi::SQLITE_IOERR_SHMSIZE)
                && filesystem_full(path) =>
        {
            Failure::Full
        }
        Some(ErrorCode::SystemIoFailure)
            if extended == ffi::SQLITE_IOERR_NOMEM
                || extended == ffi::SQLITE_IOERR_SHMMAP
                || extended == ffi::SQLITE_IOERR_SHMSIZE =>
        {
            Failure::NoMemory
        }
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) if filesystem_full(path) => {
            Failure::Full
        }
        Some(ErrorCode::CannotOpen) if denied(path) => Failure::Permission,
        _ => Failure::Other,
    };
    let mut message = e.to_string();
    if failure == Failure::NoMemory && !message.contains("memory") {
        message = format!("{message}: no memory for the shared-memory index");
    }
    DbError::new(failure, message)
}

/// The store's filesystem has no free block.
fn filesystem_full(path: &Path) -> bool {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    nix::sys::statvfs::statvfs(dir).is_ok_and(|v| v.blocks_available() == 0)
}

/// Refuses (one line) a store file whose file system has no free block: a write would fail.
pub fn refuse_if_full(path: &Path) -> anyhow::Result<()> {
    if filesystem_full(path) {
        return Err(Usage(format!(
            "store {}: the filesystem is full (no free block); free some space there or give \
             another --store",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// This user may not read the file or its directory.
fn denied(path: &Path) -> bool {
    let r = nix::unistd::AccessFlags::R_OK;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    nix::unistd::access(dir, nix::unistd::AccessFlags::X_OK).is_err()
        || (path.exists() && nix::unistd::access(path, r).is_err())
}

/// `ln` and `var_samp`, which PostgreSQL has built in, so that the store's queries are the
/// same on both.
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("ln", 1, flags, |ctx| {
        let v: Option<f64> = ctx.get(0)?;
        Ok(v.filter(|v| *v > 0.0).map(f64::ln))
    })?;
    conn.create_aggregate_function("var_samp", 1, flags, SampleVariance)
}

/// The sample variance (Welford's running form), NULL below two values.
struct SampleVariance;

impl Aggregate<(u64, f64, f64), Option<f64>> for SampleVariance {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<(u64, f64, f64)> {
        Ok((0, 0.0, 0.0))
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut (u64, f64, f64)) -> rusqlite::Result<()> {
        let Some(x) = ctx.get::<Option<f64>>(0)? else {
            return Ok(());
        };
        acc.0 += 1;
        let delta = x - acc.1;
        acc.1 += delta / acc.0 as f64;
        acc.2 += delta * (x - acc.1);
        Ok(())
    }

    fn finalize(
        &self,
        _: &mut Context<'_>,
        acc: Option<(u64, f64, f64)>,
    ) -> rusqlite::Result<Option<f64>> {
        Ok(acc
            .filter(|a| a.0 >= 2)
            .map(|(n, _, m2)| m2 / (n - 1) as f64))
    }
}
