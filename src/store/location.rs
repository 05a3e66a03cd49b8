//! Where a store is: a SQLite file, or a PostgreSQL database named by a `postgres://` URL.
//! The `--store` value (or `$PATCHBENCH_STORE`) is read here once: a `scheme://` this build
//! does not know is refused, never taken for a file name, and a URL is only ever shown with
//! its password left out.

use super::pg_target::PgTarget;
use crate::error::Usage;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// A store's place.
#[derive(Clone)]
pub enum Location {
    /// An embedded SQLite database in this file.
    File(PathBuf),
    /// A PostgreSQL database (a lab's shared store).
    Postgres(Box<PgTarget>),
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password, not even in a debug print.
        write!(f, "Location({})", self.shown())
    }
}

impl Location {
    /// Reads a `--store` value: a `postgres://` or `postgresql://` URL, any other
    /// `scheme://` refused, else a file path.
    pub fn parse(raw: &OsStr) -> anyhow::Result<Location> {
        let Some(text) = raw.to_str() else {
            return Ok(Location::File(PathBuf::from(raw)));
        };
        match url_scheme(text) {
            None => Ok(Location::File(PathBuf::from(raw))),
            Some(s)
                if s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql") =>
            {
                Ok(Location::Postgres(Box::new(PgTarget::from_url(text)?)))
            }
            Some(s) => Err(Usage(format!(
                "store {}: this build reads stores at a file path or a postgres:// URL, not \
                 {s}://; give a path (for a file whose name has \"://\", write it as ./NAME)",
                PgTarget::redact_url(text)
            ))
            .into()),
        }
    }

    /// How the store is named in messages: the file, or the URL without its password.
    pub fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(t) => t.shown().to_string(),
        }
    }

    /// ` --store WHERE` for a command line a message suggests, or nothing when this is the
    /// store such a command finds by itself (`$PATCHBENCH_STORE`, else the default).
    pub fn hint(&self) -> String {
        let own = store_location(None).map(|l| l.shown()).unwrap_or_default();
        if self.shown() == own {
            return String::new();
        }
        format!(" --store {}", self.as_arg())
    }

    /// The store as one shell word (quoted when it holds anything a shell would read, such
    /// as a URL's `?` or `&`), for a command line a message suggests; never the password.
    pub fn as_arg(&self) -> String {
        let shown = self.shown();
        let plain = !shown.is_empty()
            && shown
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-:@%+=,".contains(c));
        if plain {
            shown
        } else {
            format!("'{}'", shown.replace('\'', "'\\''"))
        }
    }

    /// True when both name the same store: the same file (after resolving links), or the same
    /// server database (hosts, ports and database; the user does not make it another store).
    pub fn same_store(&self, other: &Location) -> bool {
        match (self, other) {
            (Location::File(x), Location::File(y)) => {
                let canon = |p: &Path| std::fs::canonicalize(p).ok();
                x == y || (canon(x).is_some() && canon(x) == canon(y))
            }
            (Location::Postgres(x), Location::Postgres(y)) => {
                x.hosts == y.hosts && x.ports == y.ports && x.dbname == y.dbname
            }
            _ => false,
        }
    }

    /// The file, for a SQLite store.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }

    /// Removes anything secret this location knows (a password) from a message.
    pub fn scrub(&self, message: &str) -> String {
        match self {
            Location::File(_) => message.to_string(),
            Location::Postgres(t) => t.scrub(message),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// `text` with the password of every `scheme://user:password@` in it left out (another
/// process's command line, shown in a message).
pub fn redact_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || c == '/' || c == '?')
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rsplit_once('@') {
            Some((info, hosts)) if info.contains(':') => {
                let user = info.split_once(':').map_or(info, |(u, _)| u);
                out.push_str(user);
                out.push('@');
                out.push_str(hosts);
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The scheme of a `scheme://...` string (RFC 3986 letters), None for anything else.
fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Where the store is: `--store`, else `$PATCHBENCH_STORE`, else
/// `$XDG_DATA_HOME/patchbench/results.db`, else `~/.local/share/patchbench/results.db`.
pub fn store_location(explicit: Option<&OsStr>) -> anyhow::Result<Location> {
    if let Some(p) = explicit {
        return Location::parse(p);
    }
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = env("PATCHBENCH_STORE") {
        return Location::parse(&p);
    }
    if let Some(d) = env("XDG_DATA_HOME") {
        return Ok(Location::File(
            PathBuf::from(d).join("patchbench").join("results.db"),
        ));
    }
    match env("HOME") {
        Some(h) => Ok(Location::File(
            PathBuf::from(h).join(".local/share/patchbench/results.db"),
        )),
        None => crate::error::usage(
            "cannot find a place for the result store: set PATCHBENCH_STORE or give --store PATH",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_in_a_suggested_command_is_one_shell_word() {
        let url = Location::parse(OsStr::new(
            "postgres://lab:secret@db.example:5432/results?sslmode=require&application_name=x",
        ))
        .unwrap();
        let arg = url.as_arg();
        assert!(arg.starts_with('\'') && arg.ends_with('\''), "{arg}");
        assert!(!arg.contains("secret"), "{arg}");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {arg}"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), url.shown());
        let file = Location::File(PathBuf::from("/var/lib/it's here.db"));
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", file.as_arg()))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "/var/lib/it's here.db"
        );
        assert_eq!(Location::File("/tmp/r.db".into()).as_arg(), "/tmp/r.db");
    }

    #[test]
    fn schemes_are_told_from_paths() {
        assert_eq!(url_scheme("postgres://x/y"), Some("postgres"));
        assert_eq!(url_scheme("s3+http://x"), Some("s3+http"));
        assert_eq!(url_scheme("./a://b"), None);
        assert_eq!(url_scheme("/tmp/results.db"), None);
        assert_eq!(url_scheme("1x://y"), None);
    }

    #[test]
    fn passwords_in_command_lines_are_left_out() {
        assert_eq!(
            redact_passwords("patchbench push --to postgres://lab:s3cret@db:5/x?a=b --store y"),
            "patchbench push --to postgres://lab@db:5/x?a=b --store y"
        );
        assert_eq!(redact_passwords("a://b@c d://e"), "a://b@c d://e");
    }

    #[test]
    fn an_unknown_scheme_is_refused_and_a_path_is_a_file() {
        let e = Location::parse(OsStr::new("mysql://u:secret@h/db")).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("mysql://") && !text.contains("secret"),
            "{text}"
        );
        assert!(e.downcast_ref::<Usage>().is_some());
        assert!(matches!(
            Location::parse(OsStr::new("./mysql://x")).unwrap(),
            Location::File(_)
        ));
    }
}
