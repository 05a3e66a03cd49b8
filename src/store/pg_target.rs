//! A PostgreSQL store's address and credentials, resolved as libpq resolves them: the URL
//! (`postgres://USER:PASSWORD@HOST:PORT,HOST2/DB?sslmode=require&...`), then the environment
//! (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, `PGSSLMODE`, `PGSSLROOTCERT`,
//! `PGCONNECT_TIMEOUT`, `PGAPPNAME`), then the password file (`PGPASSFILE`, else
//! `~/.pgpass`), then libpq's defaults. The password is kept here only: [`PgTarget::shown`]
//! is the URL without it, and [`PgTarget::scrub`] removes it from any message.

use crate::error::Usage;
use percent_encoding::percent_decode_str;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Debian's libpq looks for the server's socket here when no host is given.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// The URL query parameters understood (libpq's names).
const PARAMETERS: &[&str] = &[
    "host",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "application_name",
];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    /// TLS when the server offers it (libpq's `allow` is read as this too).
    Prefer,
    /// TLS, without checking the certificate (checked against `sslrootcert` when one is
    /// there, as libpq does).
    Require,
    /// TLS with a certificate signed by a trusted authority.
    VerifyCa,
    /// `VerifyCa`, and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

/// A resolved PostgreSQL store.
#[derive(Clone)]
pub struct PgTarget {
    /// Host names, addresses or socket directories (starting with `/`), tried in order.
    pub hosts: Vec<String>,
    /// One port per host.
    pub ports: Vec<u16>,
    pub user: String,
    pub dbname: String,
    password: Option<String>,
    pub sslmode: SslMode,
    /// Trusted authorities for the server's certificate.
    pub sslrootcert: Option<PathBuf>,
    /// From the URL or `PGCONNECT_TIMEOUT`; a command's `--connect-timeout` wins.
    pub connect_timeout: Option<Duration>,
    pub application_name: String,
    /// The URL as given, password removed.
    shown: String,
}

fn refuse<T>(url: &str, what: impl std::fmt::Display) -> anyhow::Result<T> {
    Err(Usage(format!(
        "store {}: {what}; the form is postgres://USER@HOST:PORT/DATABASE?sslmode=require \
         (password from PGPASSWORD or ~/.pgpass)",
        PgTarget::redact_url(url)
    ))
    .into())
}

fn decode(url: &str, s: &str) -> anyhow::Result<String> {
    match percent_decode_str(s).decode_utf8() {
        Ok(v) => Ok(v.into_owned()),
        Err(_) => refuse(url, "a part of the URL is not UTF-8 after %-decoding"),
    }
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

impl PgTarget {
    /// Reads a `postgres://` URL and completes it from the environment and the password file.
    pub fn from_url(url: &str) -> anyhow::Result<PgTarget> {
        let Some((_, rest)) = url.split_once("://") else {
            return refuse(url, "not a URL");
        };
        if rest.contains('#') {
            return refuse(url, "a URL fragment (#...) means nothing here");
        }
        let (body, query) = match rest.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match body.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (body, None),
        };
        let (userinfo, hostlist) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let mut user = None;
        let mut password = None;
        if let Some(info) = userinfo {
            let (u, p) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info, None),
            };
            if !u.is_empty() {
                user = Some(decode(url, u)?);
            }
            if let Some(p) = p {
                password = Some(decode(url, p)?);
            }
        }
        let mut hosts = Vec::new();
        let mut ports: Vec<Option<u16>> = Vec::new();
        if !hostlist.is_empty() {
            for spec in hostlist.split(',') {
                let (host, port) = split_host_port(url, spec)?;
                hosts.push(decode(url, host)?);
                ports.push(port);
            }
        }
        let mut dbname = path
            .filter(|p| !p.is_empty())
            .map(|p| decode(url, p))
            .transpose()?;
        let mut sslmode = None;
        let mut sslrootcert = None;
        let mut connect_timeout = None;
        let mut application_name = None;
        for pair in query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (k, v) = (decode(url, k)?, decode(url, v)?);
            match k.as_str() {
                "host" => {
                    hosts = v.split(',').map(str::to_string).collect();
                    ports.resize(hosts.len(), None);
                }
                "port" => {
                    let given = parse_ports(url, &v)?;
                    ports = given.into_iter().map(Some).collect();
                }
                "dbname" => dbname = Some(v),
                "user" => user = Some(v),
                "password" => password = Some(v),
                "sslmode" => match SslMode::parse(&v) {
                    Some(m) => sslmode = Some(m),
                    None => {
                        return refuse(
                            url,
                            format!(
                                "sslmode={v} is not one of disable, allow, prefer, require, \
                                 verify-ca, verify-full"
                            ),
                        )
                    }
                },
                "sslrootcert" => sslrootcert = Some(PathBuf::from(v)),
                "connect_timeout" => {
                    connect_timeout = Some(parse_timeout(url, "connect_timeout", &v)?)
                }
                "application_name" => application_name = Some(v),
                _ => {
                    return refuse(
                        url,
                        format!(
                            "unknown URL parameter {k:?} (known: {})",
                            PARAMETERS.join(", ")
                        ),
                    )
                }
            }
        }
        // The environment, as libpq reads it, for whatever the URL left out.
        if hosts.is_empty() {
            hosts = match env("PGHOST") {
                Some(h) => h.split(',').map(str::to_string).collect(),
                None => vec![DEFAULT_SOCKET_DIR.to_string()],
            };
            ports.resize(hosts.len(), None);
        }
        let default_port = match env("PGPORT") {
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return refuse(url, format!("PGPORT={p:?} is not a port number")),
            },
            None => 5432,
        };
        if ports.len() == 1 && hosts.len() > 1 {
            ports = vec![ports[0]; hosts.len()];
        }
        if ports.len() != hosts.len() {
            return refuse(url, "give one port, or one port per host");
        }
        let ports: Vec<u16> = ports
            .into_iter()
            .map(|p| p.unwrap_or(default_port))
            .collect();
        let user = match user.or_else(|| env("PGUSER")) {
            Some(u) => u,
            None => os_user_name(),
        };
        let dbname = dbname
            .or_else(|| env("PGDATABASE"))
            .unwrap_or_else(|| user.clone());
        let sslmode = match sslmode {
            Some(m) => m,
            None => match env("PGSSLMODE") {
                Some(v) => match SslMode::parse(&v) {
                    Some(m) => m,
                    None => return refuse(url, format!("PGSSLMODE={v:?} is not an sslmode")),
                },
                None => SslMode::Prefer,
            },
        };
        let sslrootcert = sslrootcert
            .or_else(|| env("PGSSLROOTCERT").map(PathBuf::from))
            .or_else(|| {
                let home = std::env::var_os("HOME")?;
                let p = Path::new(&home).join(".postgresql/root.crt");
                p.exists().then_some(p)
            });
        let connect_timeout = match connect_timeout {
            Some(t) => Some(t),
            None => env("PGCONNECT_TIMEOUT")
                .map(|v| parse_timeout(url, "PGCONNECT_TIMEOUT", &v))
                .transpose()?,
        };
        let application_name = application_name
            .or_else(|| env("PGAPPNAME"))
            .unwrap_or_else(|| "patchbench".to_string());
        let mut target = PgTarget {
            hosts,
            ports,
            user,
            dbname,
            password,
            sslmode,
            sslrootcert,
            connect_timeout,
            application_name,
            shown: PgTarget::redact_url(url),
        };
        if target.password.is_none() {
            target.password = env("PGPASSWORD").or_else(|| target.password_from_file());
        }
        Ok(target)
    }

    /// The URL with any password (in the user part or as a parameter) left out.
    pub fn redact_url(url: &str) -> String {
        let (scheme, rest) = match url.split_once("://") {
            Some(parts) => parts,
            None => return url.to_string(),
        };
        let (body, query) = match rest.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match body.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (body, None),
        };
        let authority = match authority.rsplit_once('@') {
            Some((info, hosts)) => {
                let user = info.split_once(':').map_or(info, |(u, _)| u);
                format!("{user}@{hosts}")
            }
            None => authority.to_string(),
        };
        let mut out = format!("{scheme}://{authority}");
        if let Some(p) = path {
            out.push('/');
            out.push_str(p);
        }
        if let Some(q) = query {
            let kept: Vec<&str> = q
                .split('&')
                .filter(|p| {
                    let key = p.split_once('=').map_or(*p, |(k, _)| k);
                    !percent_decode_str(key)
                        .decode_utf8_lossy()
                        .eq_ignore_ascii_case("password")
                })
                .collect();
            if !kept.is_empty() {
                out.push('?');
                out.push_str(&kept.join("&"));
            }
        }
        out
    }

    /// The URL as shown in messages (no password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The password, for the connection only.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// `message` with the password (as given and %-encoded) replaced by `***`.
    pub fn scrub(&self, message: &str) -> String {
        let Some(p) = self.password.as_deref().filter(|p| p.len() >= 3) else {
            return message.to_string();
        };
        let encoded = percent_encoding::utf8_percent_encode(p, percent_encoding::NON_ALPHANUMERIC)
            .to_string();
        message.replace(p, "***").replace(&encoded, "***")
    }

    /// The password of the first host from the password file, as libpq finds it: a socket
    /// directory matches `localhost`; a file readable by group or others is ignored (with a
    /// warning), as libpq ignores it.
    fn password_from_file(&self) -> Option<String> {
        let file = match env("PGPASSFILE") {
            Some(f) => PathBuf::from(f),
            None => Path::new(&std::env::var_os("HOME")?).join(".pgpass"),
        };
        let host = self.hosts.first()?;
        let host = if host.starts_with('/') {
            "localhost"
        } else {
            host
        };
        let port = self.ports.first()?.to_string();
        super::pgpass::lookup(&file, host, &port, &self.dbname, &self.user)
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port<'a>(url: &str, spec: &'a str) -> anyhow::Result<(&'a str, Option<u16>)> {
    let (host, port) = if let Some(rest) = spec.strip_prefix('[') {
        match rest.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':')),
            None => return refuse(url, "an IPv6 address without its closing ]"),
        }
    } else {
        match spec.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (spec, None),
        }
    };
    let port = match port.filter(|p| !p.is_empty()) {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Some(n),
            _ => return refuse(url, format!("{p:?} is not a port number")),
        },
        None => None,
    };
    Ok((host, port))
}

fn parse_ports(url: &str, v: &str) -> anyhow::Result<Vec<u16>> {
    v.split(',')
        .map(|p| match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => refuse(url, format!("port={p:?} is not a port number")),
        })
        .collect()
}

/// libpq's connect_timeout: whole seconds; 0 or less means none (here: our default).
fn parse_timeout(url: &str, what: &str, v: &str) -> anyhow::Result<Duration> {
    match v.trim().parse::<i64>() {
        Ok(s) if s > 0 => Ok(Duration::from_secs(s.min(86_400) as u64)),
        Ok(_) => Ok(Duration::from_secs(0)),
        Err(_) => refuse(url, format!("{what}={v:?} is not a number of seconds")),
    }
}

/// The name of the user running this process (libpq's default user).
fn os_user_name() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| env("USER"))
        .unwrap_or_else(|| "postgres".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> PgTarget {
        PgTarget::from_url(url).unwrap()
    }

    #[test]
    fn a_full_url_is_read_and_shown_without_its_password() {
        let t = target("postgres://lab:s%40cret@db.example:6543/results?sslmode=require");
        assert_eq!(t.hosts, ["db.example"]);
        assert_eq!(t.ports, [6543]);
        assert_eq!((t.user.as_str(), t.dbname.as_str()), ("lab", "results"));
        assert_eq!(t.password(), Some("s@cret"));
        assert_eq!(t.sslmode, SslMode::Require);
        assert_eq!(
            t.shown(),
            "postgres://lab@db.example:6543/results?sslmode=require"
        );
        assert_eq!(t.scrub("x s@cret y s%40cret"), "x *** y ***");
    }

    #[test]
    fn socket_directories_several_hosts_and_parameters() {
        let t = target("postgresql://u@%2Ftmp%2Fpg/db?connect_timeout=3&application_name=a");
        assert_eq!(t.hosts, ["/tmp/pg"]);
        assert_eq!(t.connect_timeout, Some(Duration::from_secs(3)));
        assert_eq!(t.application_name, "a");
        let t = target("postgres://u@a:1,b,[::1]:3/db");
        assert_eq!(t.hosts, ["a", "b", "::1"]);
        assert_eq!(t.ports[0], 1);
        assert_eq!(t.ports[2], 3);
        let t = target("postgres:///db?host=/run/x&password=pw123&user=z");
        assert_eq!(t.hosts, ["/run/x"]);
        assert_eq!(t.password(), Some("pw123"));
        assert_eq!(t.shown(), "postgres:///db?host=/run/x&user=z");
    }

    #[test]
    fn bad_urls_are_refused_without_their_password() {
        for url in [
            "postgres://u:topsecret@h:99999/db",
            "postgres://u:topsecret@h/db?sslmode=maybe",
            "postgres://u:topsecret@h/db?colour=blue",
            "postgres://u:topsecret@h/db#frag",
        ] {
            let e = PgTarget::from_url(url).err().unwrap().to_string();
            assert!(
                !e.contains("topsecret") && e.contains("postgres://u@h"),
                "{e}"
            );
        }
    }
}
