//! The shared store: a PostgreSQL database (a lab's, for many boxes). Connecting honours the
//! resolved [`PgTarget`] (libpq's conventions, `sslmode` included) and gives up after the
//! connect timeout, whatever the server does (the whole start-up, not only the socket, is
//! bounded). Statements are prepared once per connection. Every message is scrubbed of the
//! password before it leaves this module.

use super::pg_target::{PgTarget, SslMode};
use super::sql::{Db, DbError, Dialect, Failure, Row, Value};
use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, Statement};
use std::collections::HashMap;
use std::net::ToSocketAddrs;
use std::time::Duration;

/// The connect timeout when neither the command, the URL nor `PGCONNECT_TIMEOUT` gives one.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to a PostgreSQL store.
pub struct PgDb {
    client: Client,
    statements: HashMap<String, Statement>,
    target: PgTarget,
}

/// A [`Value`] bound to whatever type PostgreSQL inferred for its placeholder.
#[derive(Debug)]
struct Bound<'a>(&'a Value);

impl ToSql for Bound<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self.0, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(v), &Type::INT8) => v.to_sql(ty, out),
            (Value::Int(v), &Type::INT4) => i32::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::INT2) => i16::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::FLOAT8) => (*v as f64).to_sql(ty, out),
            (Value::Int(v), &Type::BOOL) => (*v != 0).to_sql(ty, out),
            (Value::Int(v), _) => v.to_string().as_str().to_sql(ty, out),
            (Value::Real(v), &Type::FLOAT4) => (*v as f32).to_sql(ty, out),
            (Value::Real(v), &Type::FLOAT8) => v.to_sql(ty, out),
            (Value::Real(v), _) => v.to_string().as_str().to_sql(ty, out),
            (Value::Bool(b), &Type::BOOL) => b.to_sql(ty, out),
            (Value::Bool(b), &Type::INT8 | &Type::INT4 | &Type::INT2) => {
                Bound(&Value::Int(i64::from(*b))).to_sql(ty, out)
            }
            (Value::Bool(b), _) => b.to_string().as_str().to_sql(ty, out),
            (Value::Text(s), &Type::JSONB) => {
                out.put_u8(1);
                out.put_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(s), &Type::JSON) => {
                out.put_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(s), _) => s.as_str().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn read_value(row: &postgres::Row, i: usize) -> Result<Value, postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map_or(Value::Null, |v| Value::Real(v.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, Value::Bool),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::Text),
    })
}

impl PgDb {
    fn err(&self, e: postgres::Error) -> DbError {
        classify(&e, &self.target)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(|e| self.err(e))?;
        if self.statements.len() >= 256 {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

impl Db for PgDb {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let stmt = self.statement(sql)?;
        let bound: Vec<Bound> = params.iter().map(Bound).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b as _).collect();
        self.client.execute(&stmt, &refs).map_err(|e| self.err(e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let stmt = self.statement(sql)?;
        let bound: Vec<Bound> = params.iter().map(Bound).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b as _).collect();
        let rows = self.client.query(&stmt, &refs).map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| read_value(r, i))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Row)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        // A schema change makes prepared statements stale.
        self.statements.clear();
        self.client.batch_execute(sql).map_err(|e| self.err(e))
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(|e| self.err(e))
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("COMMIT").map_err(|e| self.err(e))
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }
}

/// Connects to `target`, giving up after `timeout` (the command's), else the URL's or
/// `PGCONNECT_TIMEOUT`'s, else [`DEFAULT_CONNECT_TIMEOUT`].
pub fn connect(target: &PgTarget, timeout: Option<Duration>) -> Result<PgDb, DbError> {
    let limit = timeout
        .or(target.connect_timeout)
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    let shown = target.shown().to_string();
    let attempt_target = target.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    // The start-up exchange may hang on a server that accepted the socket and says nothing;
    // the attempt runs beside this thread, which stops waiting at the limit. (The thread ends
    // with its attempt; the process is single-threaded again once it has.)
    let attempt = std::thread::Builder::new()
        .name("pg-connect".into())
        .spawn(move || {
            let result = connect_now(&attempt_target, limit);
            let _ = tx.send(result);
        })
        .map_err(|e| DbError::new(Failure::Other, format!("cannot start connecting: {e}")))?;
    match rx.recv_timeout(limit) {
        Ok(result) => {
            let _ = attempt.join();
            let client = result?;
            Ok(PgDb {
                client,
                statements: HashMap::new(),
                target: target.clone(),
            })
        }
        Err(_) => Err(DbError::new(
            Failure::Unreachable,
            format!(
                "no answer from {shown} within {:.0} s (the connect timeout: --connect-timeout, \
                 connect_timeout in the URL or PGCONNECT_TIMEOUT)",
                limit.as_secs_f64()
            ),
        )),
    }
}

fn connect_now(target: &PgTarget, limit: Duration) -> Result<Client, DbError> {
    let mut config = postgres::Config::new();
    config
        .user(&target.user)
        .dbname(&target.dbname)
        .application_name(&target.application_name)
        .connect_timeout(limit)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30))
        .tcp_user_timeout(Duration::from_secs(60));
    if let Some(p) = target.password() {
        config.password(p);
    }
    let only_sockets = target.hosts.iter().all(|h| h.starts_with('/'));
    let no_sockets = target.hosts.iter().all(|h| !h.starts_with('/'));
    for (host, port) in target.hosts.iter().zip(&target.ports) {
        config.port(*port);
        if host.starts_with('/') {
            config.host_path(host);
            continue;
        }
        config.host(host);
        if no_sockets {
            // Resolved here, so that the client's runtime starts no resolver thread.
            let addr = (host.as_str(), *port)
                .to_socket_addrs()
                .map_err(|e| {
                    DbError::new(
                        Failure::Unreachable,
                        format!("cannot resolve host {host}: {e}"),
                    )
                })?
                .next()
                .ok_or_else(|| {
                    DbError::new(Failure::Unreachable, format!("host {host} has no address"))
                })?;
            config.hostaddr(addr.ip());
        }
    }
    // libpq uses no TLS over a Unix socket, whatever sslmode says.
    let mode = if only_sockets {
        SslMode::Disable
    } else {
        target.sslmode
    };
    config.ssl_mode(match mode {
        SslMode::Disable => postgres::config::SslMode::Disable,
        SslMode::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    });
    let result = if mode == SslMode::Disable {
        config.connect(postgres::NoTls)
    } else {
        config.connect(tls_connector(target, mode)?)
    };
    result.map_err(|e| classify(&e, target))
}

/// The TLS settings of `sslmode`: `prefer` and `require` encrypt without checking the
/// certificate (unless `require` has a root certificate, then the authority is checked, as
/// libpq does); `verify-ca` checks the authority, `verify-full` the host name too.
fn tls_connector(
    target: &PgTarget,
    mode: SslMode,
) -> Result<postgres_native_tls::MakeTlsConnector, DbError> {
    let mut builder = native_tls::TlsConnector::builder();
    let root = match &target.sslrootcert {
        Some(path) => Some(std::fs::read(path).map_err(|e| {
            DbError::new(
                Failure::Other,
                format!("cannot read sslrootcert {}: {e}", path.display()),
            )
        })?),
        None => None,
    };
    if let Some(pem) = &root {
        let cert = native_tls::Certificate::from_pem(pem).map_err(|e| {
            DbError::new(
                Failure::Other,
                format!("sslrootcert is not a PEM certificate: {e}"),
            )
        })?;
        builder.add_root_certificate(cert);
    }
    let check_authority = match mode {
        SslMode::VerifyCa | SslMode::VerifyFull => true,
        SslMode::Require => root.is_some(),
        _ => false,
    };
    builder.danger_accept_invalid_certs(!check_authority);
    builder.danger_accept_invalid_hostnames(mode != SslMode::VerifyFull);
    let connector = builder
        .build()
        .map_err(|e| DbError::new(Failure::Other, format!("cannot set up TLS: {e}")))?;
    Ok(postgres_native_tls::MakeTlsConnector::new(connector))
}

/// What a PostgreSQL error means, in the server's words (scrubbed of the password).
fn classify(e: &postgres::Error, target: &PgTarget) -> DbError {
    let (failure, message) = match e.as_db_error() {
        Some(db) => {
            let code = db.code();
            let failure = if *code == SqlState::UNIQUE_VIOLATION {
                Failure::Duplicate
            } else if [
                SqlState::CHECK_VIOLATION,
                SqlState::NOT_NULL_VIOLATION,
                SqlState::FOREIGN_KEY_VIOLATION,
                SqlState::INVALID_TEXT_REPRESENTATION,
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                SqlState::INVALID_PARAMETER_VALUE,
            ]
            .contains(code)
            {
                Failure::Constraint
            } else if [
                SqlState::INSUFFICIENT_PRIVILEGE,
                SqlState::INVALID_PASSWORD,
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
            ]
            .contains(code)
            {
                Failure::Permission
            } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
                Failure::ReadOnly
            } else if *code == SqlState::DISK_FULL {
                Failure::Full
            } else if *code == SqlState::OUT_OF_MEMORY {
                Failure::NoMemory
            } else if [
                SqlState::LOCK_NOT_AVAILABLE,
                SqlState::T_R_SERIALIZATION_FAILURE,
                SqlState::T_R_DEADLOCK_DETECTED,
            ]
            .contains(code)
            {
                Failure::Busy
            } else if [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::TOO_MANY_CONNECTIONS,
            ]
            .contains(code)
            {
                Failure::Unreachable
            } else {
                Failure::Other
            };
            let mut message = db.message().to_string();
            if let Some(detail) = db.detail() {
                message.push_str(&format!(" ({detail})"));
            }
            (failure, message)
        }
        None => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                let text = s.to_string();
                if !message.contains(&text) {
                    message.push_str(&format!(": {text}"));
                }
                source = s.source();
            }
            (Failure::Unreachable, message)
        }
    };
    DbError::new(failure, target.scrub(&message))
}
