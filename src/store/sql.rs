//! What the store's queries are written against: one connection interface ([`Db`]) that both
//! databases implement, the values and rows that cross it, the errors it gives (classified, so
//! a failure is named for what it is whichever database said it), and the few places where the
//! two SQL dialects differ ([`Dialect`]). Queries use `$1`, `$2`, ... placeholders; the SQLite
//! side rewrites them to `?1`, `?2`, ...

use std::fmt;

/// A value bound to a placeholder or read from a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    /// Bytes (SQLite BLOB, PostgreSQL BYTEA): a run's packed parts.
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(v.into())
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Value {
        Value::Blob(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// Values for a statement's placeholders, in order: `params![a, b]`.
macro_rules! params {
    ($($v:expr),* $(,)?) => { &[$($crate::store::sql::Value::from($v)),*][..] };
}
pub(crate) use params;

/// One result row.
#[derive(Debug, Clone)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn at(&self, i: usize) -> Result<&Value, DbError> {
        self.0
            .get(i)
            .ok_or_else(|| DbError::other(format!("the query returned no column {i}")))
    }

    fn wrong(&self, i: usize, want: &str) -> DbError {
        DbError::other(format!(
            "column {i} holds {:?}, not {want}",
            self.0.get(i).unwrap_or(&Value::Null)
        ))
    }

    /// An integer (a boolean reads as 0 or 1).
    pub fn int(&self, i: usize) -> Result<i64, DbError> {
        match self.at(i)? {
            Value::Int(v) => Ok(*v),
            Value::Bool(b) => Ok(i64::from(*b)),
            _ => Err(self.wrong(i, "an integer")),
        }
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, DbError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// A number (an integer column reads as a float).
    pub fn real(&self, i: usize) -> Result<f64, DbError> {
        match self.at(i)? {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            _ => Err(self.wrong(i, "a number")),
        }
    }

    pub fn opt_real(&self, i: usize) -> Result<Option<f64>, DbError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.real(i).map(Some),
        }
    }

    /// A boolean (SQLite keeps them as 0 and 1).
    pub fn bool(&self, i: usize) -> Result<bool, DbError> {
        match self.at(i)? {
            Value::Bool(b) => Ok(*b),
            Value::Int(v) => Ok(*v != 0),
            _ => Err(self.wrong(i, "a boolean")),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, DbError> {
        match self.at(i)? {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(self.wrong(i, "text")),
        }
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>, DbError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    pub fn blob(&self, i: usize) -> Result<&[u8], DbError> {
        match self.at(i)? {
            Value::Blob(b) => Ok(b),
            _ => Err(self.wrong(i, "bytes")),
        }
    }
}

/// What a failed database call means, whichever database it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Another process holds the lock longer than the wait.
    Busy,
    /// No space left for the write.
    Full,
    /// The store (or its file system, or the server) accepts no writes.
    ReadOnly,
    /// The operating system or the server refused access.
    Permission,
    /// The database ran out of memory.
    NoMemory,
    /// The file is not a database, or its pages are damaged.
    Corrupt,
    /// A row with this unique key is already there.
    Duplicate,
    /// A row broke a CHECK or NOT NULL rule of the schema.
    Constraint,
    /// The server cannot be reached, or the connection was lost.
    Unreachable,
    /// A SQLite call ran, or waited for a lock, until the store's bound (or a signal's grace)
    /// and was cut short (`crate::store::sqlite_deadline`).
    TimedOut,
    /// Anything else.
    Other,
}

/// A failed database call: its kind and the database's own words (never a password).
#[derive(Debug, Clone)]
pub struct DbError {
    pub failure: Failure,
    pub message: String,
}

impl DbError {
    pub fn new(failure: Failure, message: impl Into<String>) -> DbError {
        DbError {
            failure,
            message: message.into(),
        }
    }

    pub fn other(message: impl Into<String>) -> DbError {
        DbError::new(Failure::Other, message)
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

/// The SQL dialect of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Seconds since the epoch by the database's clock (one clock for every box of a lab).
    pub fn now_epoch(self) -> &'static str {
        match self {
            Dialect::Sqlite => "((julianday('now') - 2440587.5) * 86400.0)",
            Dialect::Postgres => "CAST(extract(epoch FROM clock_timestamp()) AS DOUBLE PRECISION)",
        }
    }

    /// The end of a `SELECT ... LIMIT 1` that claims a row: PostgreSQL locks it and skips rows
    /// other claimers hold; SQLite's write transaction already serialises claimers.
    pub fn skip_locked(self, table: &str) -> String {
        match self {
            Dialect::Sqlite => String::new(),
            Dialect::Postgres => format!("FOR UPDATE OF {table} SKIP LOCKED"),
        }
    }

    /// The end of a `SELECT` whose row the transaction is about to change.
    pub fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => "FOR UPDATE",
        }
    }

    /// The larger of two numbers.
    pub fn greatest(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Sqlite => format!("max({a}, {b})"),
            Dialect::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// A condition: `column` is not among the integers of the JSON array in placeholder `param`.
    pub fn not_in_json_ids(self, column: &str, param: &str) -> String {
        match self {
            Dialect::Sqlite => {
                format!("{column} NOT IN (SELECT value FROM json_each({param}))")
            }
            Dialect::Postgres => format!(
                "{column} NOT IN (SELECT CAST(jsonb_array_elements_text(CAST({param} AS jsonb)) \
                 AS BIGINT))"
            ),
        }
    }
}

/// A connection to a store's database. Every query of the store goes through these few
/// calls; a transaction is `begin`, statements, then `commit` (or `rollback`).
pub trait Db {
    fn dialect(&self) -> Dialect;
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs a query; returns every row.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs several statements without parameters (schema scripts).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Starts a write transaction (SQLite: takes the write lock at once).
    fn begin(&mut self) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    /// Undoes the open transaction, if any (errors are ignored: the connection may be gone).
    fn rollback(&mut self);

    /// The first row of a query, if any.
    fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row a query must return.
    fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, DbError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| DbError::other("the query returned no row"))
    }
}

/// Runs `f` in a transaction of `db`: committed when it returns Ok, rolled back otherwise.
pub fn in_transaction<T>(
    db: &mut dyn Db,
    f: impl FnOnce(&mut dyn Db) -> Result<T, DbError>,
) -> Result<T, DbError> {
    db.begin()?;
    match f(db) {
        Ok(v) => {
            if let Err(e) = db.commit() {
                db.rollback();
                return Err(e);
            }
            Ok(v)
        }
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}

/// `$1, $2, ...` rewritten as SQLite's `?1, ?2, ...` (a `$` followed by a digit; JSON paths
/// such as `'$.tasks'` are left alone).
pub fn numbered_to_sqlite(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

/// `($1, $2, $3), ($4, $5, $6), ...`: the VALUES list of a multi-row insert of `rows` rows of
/// `columns` columns.
pub fn values_list(rows: usize, columns: usize) -> String {
    let mut out = String::new();
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        out.push('(');
        for c in 0..columns {
            if c > 0 {
                out.push_str(", ");
            }
            out.push('$');
            out.push_str(&(r * columns + c + 1).to_string());
        }
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_but_json_paths_are_not() {
        assert_eq!(
            numbered_to_sqlite("SELECT json_extract(x, '$.tasks') FROM t WHERE a=$1 AND b=$12"),
            "SELECT json_extract(x, '$.tasks') FROM t WHERE a=?1 AND b=?12"
        );
    }

    #[test]
    fn values_lists_number_every_cell() {
        assert_eq!(values_list(2, 2), "($1, $2), ($3, $4)");
    }
}
