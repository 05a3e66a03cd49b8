//! The tasks' working directory, AIM's suite directory: a private directory (0700) in the
//! system temp directory holding what AIM's setup leaves next to multitask, and AIM's log.
//!
//! - `true`: the one-line `#!/bin/sh` script exec_test runs as `./true`;
//! - `aim_1.sh`, `aim_2.sh`, `aim_3.sh`: the scripts of shell_rtns_1..3 (`ls -l` with all
//!   output discarded), found through PATH: the tasks get this directory appended to theirs,
//!   as AIM's users add `.`;
//! - `logfile.suite7`: opened once by the driver with O_APPEND before forking, so every task
//!   shares one open file description and appends one line after every job, as AIM's tasks do
//!   (and the driver one per reaped task);
//! - `num_fcns.tables`: num_fcns.c's tables of values, which every task maps (shared pages, as
//!   AIM's tasks share the parent's copy).

use super::jobs::shell_rtns_1::{SCRIPTS, SCRIPT_TEXT};
use super::jobs::Job;
use crate::private_dir::PrivateDir;
use anyhow::Context;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// AIM's `./true`.
const TRUE_SCRIPT: &str = "#!/bin/sh\n";
/// AIM's log file.
pub const LOG_FILE: &str = "logfile.suite7";
/// num_fcns.c's tables, for the tasks to map.
pub const TABLES_FILE: &str = "num_fcns.tables";
/// PATH for tasks when the driver has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The suite directory and the shared log.
pub struct Suite {
    dir: PrivateDir,
    log: Option<OwnedFd>,
    /// The directory, for the tasks' chdir.
    pub dir_c: CString,
    /// The tasks' PATH: the driver's with the suite directory appended.
    pub path_env: CString,
}

/// Refuses a mix that runs a shell on a system without `/bin/sh`.
pub fn check_shell(jobs: &[&Job]) -> Result<(), String> {
    let needs = jobs
        .iter()
        .find(|j| j.name == "exec_test" || j.name.starts_with("shell_rtns"));
    match needs {
        Some(j) if !Path::new("/bin/sh").exists() => Err(format!(
            "{} runs /bin/sh, which this system lacks; install a shell or leave the test out",
            j.name
        )),
        _ => Ok(()),
    }
}

fn write_script(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
}

impl Suite {
    /// Makes the directory, its scripts and (unless `log` is false) the open log.
    pub fn create(log: bool) -> anyhow::Result<Suite> {
        let parent = std::env::temp_dir();
        let dir = PrivateDir::create(&parent, "patchbench-aim7-suite-").with_context(|| {
            format!("cannot create the tasks' directory in {}", parent.display())
        })?;
        let path = std::path::absolute(dir.path()).unwrap_or_else(|_| dir.path().to_path_buf());
        write_script(&path, "true", TRUE_SCRIPT)?;
        for s in SCRIPTS {
            write_script(&path, s, SCRIPT_TEXT)?;
        }
        super::jobs::num_fcns::write_file(&path.join(TABLES_FILE))
            .context("cannot write num_fcns's tables for the tasks")?;
        let log = if log {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o666)
                .custom_flags(libc::O_CLOEXEC)
                .open(path.join(LOG_FILE))
                .context("cannot open AIM's log file")?;
            Some(OwnedFd::from(f))
        } else {
            None
        };
        let bytes = path.as_os_str().as_encoded_bytes().to_vec();
        let mut search = std::env::var_os("PATH")
            .map(|p| p.as_encoded_bytes().to_vec())
            .unwrap_or_else(|| DEFAULT_PATH.as_bytes().to_vec());
        search.push(b':');
        search.extend_from_slice(&bytes);
        Ok(Suite {
            dir,
            log,
            dir_c: CString::new(bytes).context("the temp directory's path has a NUL byte")?,
            path_env: CString::new(search).context("PATH has a NUL byte")?,
        })
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Closes the log and removes the directory, saying why if it cannot.
    pub fn close(self) -> anyhow::Result<()> {
        drop(self.log);
        self.dir.close()
    }

    /// Lines in the shared log so far.
    pub fn log_lines(&self) -> u64 {
        std::fs::read(self.dir().join(LOG_FILE))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
            .unwrap_or(0)
    }

    /// The shared log's descriptor, or -1 without a log.
    pub fn log_fd(&self) -> RawFd {
        self.log.as_ref().map_or(-1, |f| f.as_raw_fd())
    }
}
