//! The PostgreSQL password file (`~/.pgpass`, or `PGPASSFILE`), read as libpq reads it: lines
//! `hostname:port:database:username:password`, `*` matching anything in the first four
//! fields, `\:` and `\\` for a literal colon or backslash, `#` starting a comment; the first
//! matching line wins. A file that group or others may read is ignored with a warning.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The password for this connection from `file`, if a line matches.
pub fn lookup(file: &Path, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        crate::safe_text::eprint_line(&format!(
            "patchbench: warning: password file {} has group or world access and is ignored; \
             make it u=rw (chmod 0600)",
            file.display()
        ));
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        if line.trim_start().starts_with('#') {
            return None;
        }
        let fields = split_fields(line);
        let [h, p, d, u, pw] = <[String; 5]>::try_from(fields).ok()?;
        let matches = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        (matches(&h, host) && matches(&p, port) && matches(&d, db) && matches(&u, user))
            .then_some(pw)
    })
}

/// The fields of a line, with `\` escapes resolved. The last field takes the rest of the line.
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(f)) = (chars.next(), fields.last_mut()) {
                    f.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => {
                if let Some(f) = fields.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let f = file(
            "# comment\nother:5432:*:*:no\nlocalhost:*:lab:agent:pa\\:ss\\\\w:rd\n*:*:*:*:any\n",
            0o600,
        );
        assert_eq!(
            lookup(f.path(), "localhost", "5433", "lab", "agent").as_deref(),
            Some("pa:ss\\w:rd")
        );
        assert_eq!(
            lookup(f.path(), "elsewhere", "1", "x", "y").as_deref(),
            Some("any")
        );
    }

    #[test]
    fn a_file_others_can_read_is_ignored() {
        let f = file("*:*:*:*:pw\n", 0o644);
        assert_eq!(lookup(f.path(), "h", "1", "d", "u"), None);
    }
}
