//! The shared store: a PostgreSQL database (a lab's, for many boxes). Connecting honours the
//! resolved [`PgTarget`] (libpq's conventions, `sslmode` included) and gives up after the
//! connect timeout, whatever the server does (the whole start-up, not only the socket, is
//! bounded). Statements are prepared once per connection. Every message is scrubbed of the
//! password before it leaves this module.
//!
//! Every call is bounded in time, whatever the network does: the client waits at most
//! [`call_limit`] (`super::bounds`) for an answer (a connection that stopped forwarding
//! without a reset, as a dead route or a NAT timeout leaves it, is then given up: later calls
//! fail at once, and the caller reconnects); the server ends a statement after the same time (`statement_timeout`)
//! and a transaction left idle by a vanished client after twice that
//! (`idle_in_transaction_session_timeout`), so its row locks go; TCP keepalives and
//! `TCP_USER_TIMEOUT` find a dead peer. Once a signal has arrived ([`super::interrupt_when`]),
//! a call waits at most [`SIGNAL_GRACE`] more, so SIGTERM is honoured within seconds in every
//! state. The client runs on a current-thread runtime driven only while a call waits: no
//! thread is started, so the process may still fork its workloads.

use super::bounds::{call_limit, SIGNAL_GRACE};
use super::pg_target::{PgTarget, SslMode};
use super::sql::{Db, DbError, Dialect, Failure, Row, Value};
use bytes::{BufMut, BytesMut};
use std::collections::HashMap;
use std::net::ToSocketAddrs;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, Statement};

/// The connect timeout when neither the command, the URL nor `PGCONNECT_TIMEOUT` gives one.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to a PostgreSQL store.
pub struct PgDb {
    runtime: tokio::runtime::Runtime,
    client: Client,
    statements: HashMap<String, Statement>,
    target: PgTarget,
    limit: Duration,
    /// Why the connection was given up (a call that got no answer in time).
    given_up: Option<String>,
}

/// Why a bounded wait ended without its answer.
enum Cut {
    /// No answer within the limit.
    TimedOut(Duration),
    /// A signal arrived and the grace after it passed.
    Interrupted,
}

/// Runs `fut` on `runtime` for at most `limit`, or [`SIGNAL_GRACE`] after a signal.
fn bounded<F: std::future::Future>(
    runtime: &tokio::runtime::Runtime,
    limit: Duration,
    fut: F,
) -> Result<F::Output, Cut> {
    runtime.block_on(async {
        let mut fut = std::pin::pin!(fut);
        let mut deadline = tokio::time::Instant::now() + limit;
        let mut signalled = false;
        loop {
            let look = tokio::time::Instant::now() + Duration::from_millis(100);
            match tokio::time::timeout_at(look.min(deadline), fut.as_mut()).await {
                Ok(v) => return Ok(v),
                Err(_) if tokio::time::Instant::now() >= deadline => {
                    return Err(if signalled {
                        Cut::Interrupted
                    } else {
                        Cut::TimedOut(limit)
                    })
                }
                Err(_) => {
                    if !signalled && super::interrupted() {
                        signalled = true;
                        deadline = deadline.min(tokio::time::Instant::now() + SIGNAL_GRACE);
                    }
                }
            }
        }
    })
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
            (Value::Blob(b), _) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

fn read_value(row: &tokio_postgres::Row, i: usize) -> Result<Value, tokio_postgres::Error> {
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
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Value::Null, Value::Blob),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::Text),
    })
}

impl PgDb {
    fn err(&self, e: tokio_postgres::Error) -> DbError {
        classify(&e, &self.target)
    }

    /// Runs one call on the connection, bounded; a call cut short gives the connection up.
    fn call<T>(
        &mut self,
        f: impl for<'c> FnOnce(
            &'c Client,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<T, tokio_postgres::Error>> + 'c>,
        >,
    ) -> Result<T, DbError> {
        if let Some(why) = &self.given_up {
            return Err(DbError::new(Failure::Unreachable, why.clone()));
        }
        match bounded(&self.runtime, self.limit, f(&self.client)) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.err(e)),
            Err(cut) => {
                let shown = self.target.shown().to_string();
                let why = match cut {
                    Cut::TimedOut(d) => format!(
                        "no answer from {shown} within {:.1} s (each store call is bounded: \
                         PATCHBENCH_STORE_TIMEOUT); the connection is given up",
                        d.as_secs_f64()
                    ),
                    Cut::Interrupted => {
                        format!("interrupted while waiting for {shown}; the connection is given up")
                    }
                };
                self.given_up = Some(why.clone());
                Err(DbError::new(Failure::Unreachable, why))
            }
        }
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let text = sql.to_string();
        let s = self.call(move |c| Box::pin(async move { c.prepare(&text).await }))?;
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
        let params = params.to_vec();
        self.call(move |c| {
            Box::pin(async move {
                let bound: Vec<Bound> = params.iter().map(Bound).collect();
                let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b as _).collect();
                c.execute(&stmt, &refs).await
            })
        })
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let stmt = self.statement(sql)?;
        let params = params.to_vec();
        let rows = self.call(move |c| {
            Box::pin(async move {
                let bound: Vec<Bound> = params.iter().map(Bound).collect();
                let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b as _).collect();
                c.query(&stmt, &refs).await
            })
        })?;
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
        let text = sql.to_string();
        self.call(move |c| Box::pin(async move { c.batch_execute(&text).await }))
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.call(|c| Box::pin(c.batch_execute("BEGIN")))
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.call(|c| Box::pin(c.batch_execute("COMMIT")))
    }

    fn rollback(&mut self) {
        let _ = self.call(|c| Box::pin(c.batch_execute("ROLLBACK")));
    }
}

/// Connects to `target`, giving up after `timeout` (the command's), else the URL's or
/// `PGCONNECT_TIMEOUT`'s, else [`DEFAULT_CONNECT_TIMEOUT`]; then bounds the server's side of
/// every later call (see the module's doc).
pub fn connect(target: &PgTarget, timeout: Option<Duration>) -> Result<PgDb, DbError> {
    let limit = timeout
        .or(target.connect_timeout)
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    let shown = target.shown().to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DbError::new(Failure::Other, format!("cannot start connecting: {e}")))?;
    let calls = call_limit();
    let config = config_for(target, limit, calls)?;
    // The start-up exchange may hang on a server that accepted the socket and says nothing:
    // the whole of it is bounded.
    let connected = match bounded(&runtime, limit, connect_now(target, &config)) {
        Ok(r) => r?,
        Err(Cut::TimedOut(_)) => {
            return Err(DbError::new(
                Failure::Unreachable,
                format!(
                    "no answer from {shown} within {:.0} s (the connect timeout: \
                     --connect-timeout, connect_timeout in the URL or PGCONNECT_TIMEOUT)",
                    limit.as_secs_f64()
                ),
            ))
        }
        Err(Cut::Interrupted) => {
            return Err(DbError::new(
                Failure::Unreachable,
                format!("interrupted while connecting to {shown}"),
            ))
        }
    };
    let (client, connection) = connected;
    // Driven whenever a call waits on this current-thread runtime; it ends with the client.
    runtime.spawn(connection);
    let mut db = PgDb {
        runtime,
        client,
        statements: HashMap::new(),
        target: target.clone(),
        limit: calls,
        given_up: None,
    };
    let ms = calls.as_millis();
    db.batch(&format!(
        "SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {}",
        2 * ms
    ))?;
    Ok(db)
}

/// The client's settings for `target`: user, database, hosts, keepalives, TLS mode.
fn config_for(
    target: &PgTarget,
    limit: Duration,
    calls: Duration,
) -> Result<tokio_postgres::Config, DbError> {
    let mut config = tokio_postgres::Config::new();
    config
        .user(&target.user)
        .dbname(&target.dbname)
        .application_name(&target.application_name)
        .connect_timeout(limit)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(10))
        .keepalives_interval(Duration::from_secs(5))
        .keepalives_retries(3)
        .tcp_user_timeout(calls);
    if let Some(p) = target.password() {
        config.password(p);
    }
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
    config.ssl_mode(match tls_mode(target) {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        _ => tokio_postgres::config::SslMode::Require,
    });
    Ok(config)
}

/// The connection's future: the client and the connection task that drives it.
type Connected = (
    Client,
    std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
);

async fn connect_now(
    target: &PgTarget,
    config: &tokio_postgres::Config,
) -> Result<Connected, DbError> {
    match tls_mode(target) {
        SslMode::Disable => connect_with(config, tokio_postgres::NoTls, target).await,
        mode => connect_with(config, tls_connector(target, mode)?, target).await,
    }
}

/// Connects with `tls`; the client and its connection task.
async fn connect_with<T>(
    config: &tokio_postgres::Config,
    tls: T,
    target: &PgTarget,
) -> Result<Connected, DbError>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| classify(&e, target))?;
    Ok((
        client,
        Box::pin(async move {
            let _ = connection.await;
        }),
    ))
}

/// The TLS mode a connection to `target` uses: none over Unix sockets, as with libpq,
/// whatever sslmode says.
fn tls_mode(target: &PgTarget) -> SslMode {
    if target.hosts.iter().all(|h| h.starts_with('/')) {
        SslMode::Disable
    } else {
        target.sslmode
    }
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
fn classify(e: &tokio_postgres::Error, target: &PgTarget) -> DbError {
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
