//! Whether the programs a test runs are there (`TestSpec::tools`): a name without `/` must be
//! an executable file in a directory of PATH, as `execvp` finds it; a path must be one. A test
//! whose program is missing is skipped with one line, and the rest of the run goes on
//! (UnixBench's Run would start it and abort the whole run on its error).

use super::Skipped;
use crate::unixbench::catalog::TestSpec;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `tool` can be run, looking names up in `path` (a PATH value).
pub fn available(tool: &str, path: &str) -> bool {
    if tool.contains('/') {
        return executable(Path::new(tool));
    }
    std::env::split_paths(path).any(|dir| executable(&dir.join(tool)))
}

/// Why `spec` cannot run here, if it cannot: the first of its programs that is missing.
pub fn missing(spec: &TestSpec, path: &str) -> Option<String> {
    let tool = spec.tools.iter().find(|t| !available(t, path))?;
    Some(if tool.contains('/') {
        format!("it needs {tool}, which is not there")
    } else {
        format!("it needs `{tool}`, which is not in PATH; install it to run this test")
    })
}

/// Splits a selection into the tests that can run here and the ones to skip, in order.
pub fn split(tests: Vec<&'static TestSpec>) -> (Vec<&'static TestSpec>, Vec<Skipped>) {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for t in tests {
        match missing(t, &path) {
            Some(reason) => skipped.push(Skipped { test: t.id, reason }),
            None => run.push(t),
        }
    }
    (run, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unixbench::catalog::find;

    #[test]
    fn programs_are_found_in_path_or_by_their_path() {
        assert!(available("sh", "/nonexistent:/bin:/usr/bin"));
        assert!(!available("sh", "/nonexistent"));
        assert!(available("/bin/sh", ""));
        assert!(!available("/bin/no-such-program", "/bin"));
        // A directory is not a program.
        assert!(!available("bin", "/"));
        let c = find("C").unwrap();
        assert!(missing(c, "/nonexistent").unwrap().contains("`gcc`"));
        assert_eq!(missing(find("pipe").unwrap(), ""), None);
    }
}
