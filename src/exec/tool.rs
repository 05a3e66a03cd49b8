//! The program an `exec` run measures, before anything starts: found on PATH (or at the path
//! given), refused with the Debian package that installs it when it is missing, and
//! identified for the record: the version from `PROGRAM --version` for the tools we know
//! (only those: an unknown program given `--version` might run its benchmark), else the
//! SHA-256 of the program file. Also the placeholders of its arguments (`{dir}`, `{cpus}`,
//! `{ncpus}`) and the environment variables that carry the same values.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The tools we know: the name on PATH and the Debian package that installs it.
pub const PACKAGES: &[(&str, &str)] = &[
    ("stress-ng", "stress-ng"),
    ("perf", "linux-perf"),
    ("hackbench", "rt-tests"),
    ("fio", "fio"),
    ("sysbench", "sysbench"),
    ("iperf3", "iperf3"),
];

/// How long `PROGRAM --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// The placeholder replaced by the run's working directory in the program's arguments.
pub const DIR_PLACEHOLDER: &str = "{dir}";

/// The environment variable that names the run's working directory to the program.
pub const DIR_ENV: &str = "PATCHBENCH_DIR";

/// The placeholder replaced by the CPUs the run may use, as a list (`0-3,6`).
pub const CPUS_PLACEHOLDER: &str = "{cpus}";

/// The environment variable that holds the same list.
pub const CPUS_ENV: &str = "PATCHBENCH_CPUS";

/// The placeholder replaced by the number of CPUs the run may use.
pub const NCPUS_PLACEHOLDER: &str = "{ncpus}";

/// The environment variable that holds the same number.
pub const NCPUS_ENV: &str = "PATCHBENCH_NCPUS";

/// The last component of the program's name (`/usr/bin/stress-ng` → `stress-ng`).
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Where the program is: the path given when it has a `/`, else the first executable file of
/// that name on `path` (PATH's value). The error is one line naming the package to install.
pub fn find(program: &str, path: Option<&str>) -> Result<PathBuf, String> {
    if program.is_empty() {
        return Err(
            "give the program to run after `--`, e.g. `patchbench exec -- \
                    stress-ng --get 1 --timeout 5`"
                .to_string(),
        );
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        return if executable(&p) {
            Ok(p)
        } else {
            Err(format!(
                "{} is not an executable file; give the path of the program to run",
                crate::safe_text::field(program)
            ))
        };
    }
    path.unwrap_or("")
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| executable(p))
        .ok_or_else(|| missing(program))
}

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The refusal for a program not on PATH.
fn missing(program: &str) -> String {
    let shown = crate::safe_text::field(program);
    match PACKAGES.iter().find(|(name, _)| *name == program) {
        Some((_, package)) => format!(
            "{shown} is not installed (not found on PATH); install Debian's package \
             {package} (apt-get install {package})"
        ),
        None => {
            format!("{shown} is not found on PATH; install it or give its path (e.g. ./{shown})")
        }
    }
}

/// Whether `--version` is asked of the program (a tool we know).
fn known(program: &str) -> bool {
    PACKAGES.iter().any(|(name, _)| *name == basename(program))
}

/// What identifies the program's build: for a tool we know, the version in the first line
/// of its `--version` that has one (the first number with a dot: stress-ng prints `stress-ng, version
/// 0.15.06 (gcc 12.2.0, x86_64 Linux 6.1.0)`, whose kernel release would make every kernel a
/// new version), else that line; for any other program `sha256:` and 16 hex digits of the
/// file. `unknown (why)` when neither can be had.
pub fn version(program: &str, path: &Path, signals: &crate::proc::signals::Signals) -> String {
    if known(program) {
        return match first_line_of_version(path, signals) {
            Some(line) => version_number(&line).unwrap_or(line),
            None => "unknown (no --version line)".to_string(),
        };
    }
    // 16 hex digits of the program file's SHA-256 (its file changes with its version).
    match crate::campaign::kernel_image::sha256_file(path) {
        Ok(d) => format!("sha256:{}", &d[..16.min(d.len())]),
        Err(e) => format!("unknown ({e})"),
    }
}

/// The first of the first 5 non-empty lines `PROGRAM --version` prints within
/// [`VERSION_TIMEOUT`] that has a version number, else the first of them (hackbench has no
/// `--version`: it says so, then prints its usage, whose first line is `hackbench V 2.40`).
fn first_line_of_version(path: &Path, signals: &crate::proc::signals::Signals) -> Option<String> {
    let mut cmd = std::process::Command::new(path);
    cmd.arg("--version");
    let running = crate::proc::supervise::Supervised::spawn(cmd).ok()?;
    let mut lines: Vec<String> = Vec::new();
    running.wait(
        signals,
        Some(Instant::now() + VERSION_TIMEOUT),
        &mut |line| {
            if lines.len() < 5 && !line.trim().is_empty() {
                lines.push(crate::safe_text::field_cut(line.trim(), 120));
            }
            true
        },
        &mut || {},
    );
    lines
        .iter()
        .find(|l| version_number(l).is_some())
        .or(lines.first())
        .cloned()
}

/// The first word of `line` that starts with digits and a dot (`0.15.06`, `3.33`), without
/// trailing punctuation; `fio-3.33` gives `3.33`.
fn version_number(line: &str) -> Option<String> {
    let re = regex::Regex::new(r"\d+\.\d+[0-9A-Za-z.+~_-]*").ok()?;
    re.find(line)
        .map(|m| m.as_str().trim_end_matches(['.', '-', '_']).to_string())
}

/// Checks, on this host before any build or boot, that a campaign's vm or kexec step will
/// find `program` (found on this shell's PATH already): the step looks for a name on
/// [`STEP_PATH`](crate::campaign::vm::step_script::STEP_PATH), not on this shell's PATH, in
/// another current directory (`/tmp` in a vm guest, `/` under a kexec box's boot hook), and
/// a vm guest has an empty tmpfs over [`TMPFS_DIRS`](crate::campaign::vm::init_script::TMPFS_DIRS)
/// (patchbench's own directory, `own_dir`, is bound back). The error is one line.
pub fn check_for_step(program: &str, vm: bool, own_dir: Option<&Path>) -> Result<(), String> {
    use crate::campaign::vm::{init_script::TMPFS_DIRS, step_script::STEP_PATH};
    let shown = crate::safe_text::field(program);
    let step = if vm {
        "a vm guest's step"
    } else {
        "a kexec box's step"
    };
    let path = if !program.contains('/') {
        find(program, Some(STEP_PATH)).map_err(|_| {
            format!(
                "{shown} is on this shell's PATH but not on the PATH {step} has \
                 ({STEP_PATH}): give its absolute path, or install it in one of those \
                 directories"
            )
        })?
    } else if program.starts_with('/') {
        PathBuf::from(program)
    } else {
        return Err(format!(
            "{shown} is a relative path, and {step} runs in another directory: give its \
             absolute path"
        ));
    };
    if !vm {
        return Ok(());
    }
    // Under the guest's tmpfs, but for patchbench's own directory (bound back into it).
    let real = path.canonicalize().unwrap_or_else(|_| path.clone());
    let covered = TMPFS_DIRS.iter().find(|d| real.starts_with(d));
    match covered {
        Some(d) if !own_dir.is_some_and(|own| real.starts_with(own)) => {
            let really = if real == path {
                String::new()
            } else {
                format!(
                    " ({})",
                    crate::safe_text::field(&real.display().to_string())
                )
            };
            Err(format!(
                "{shown}{really} is under {d}, which a vm guest covers with an empty tmpfs: put \
                 it elsewhere (e.g. /usr/local/bin)"
            ))
        }
        _ => Ok(()),
    }
}

/// The CPUs this process may run on (`sched_getaffinity`: taskset, a cpuset, a vm guest's
/// vCPUs), ascending; the program inherits them.
pub fn allowed_cpus() -> anyhow::Result<Vec<usize>> {
    crate::noise::topology::current_affinity()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| anyhow::anyhow!("cannot read the CPUs this process may run on"))
}

/// What the placeholders stand for in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Places {
    /// The run's working directory (`{dir}`).
    pub dir: PathBuf,
    /// The CPUs the run may use (`{cpus}`, `{ncpus}`), ascending.
    pub cpus: Vec<usize>,
}

impl Places {
    /// Each placeholder, its environment variable and its value.
    fn values(&self) -> [(&'static str, &'static str, String); 3] {
        [
            (DIR_PLACEHOLDER, DIR_ENV, self.dir.display().to_string()),
            (
                CPUS_PLACEHOLDER,
                CPUS_ENV,
                crate::noise::sysfs::format_cpu_list(&self.cpus),
            ),
            (NCPUS_PLACEHOLDER, NCPUS_ENV, self.cpus.len().to_string()),
        ]
    }

    /// The arguments with every placeholder replaced, in one pass (a value that holds a
    /// placeholder's text, such as a directory named `{cpus}`, is left as it is).
    pub fn expand(&self, args: &[String]) -> Vec<String> {
        let values = self.values();
        args.iter()
            .map(|a| {
                let mut out = String::new();
                let mut rest = a.as_str();
                while let Some(at) = rest.find('{') {
                    out.push_str(&rest[..at]);
                    rest = &rest[at..];
                    match values.iter().find(|(p, _, _)| rest.starts_with(p)) {
                        Some((p, _, v)) => {
                            out.push_str(v);
                            rest = &rest[p.len()..];
                        }
                        None => {
                            out.push('{');
                            rest = &rest[1..];
                        }
                    }
                }
                out.push_str(rest);
                out
            })
            .collect()
    }

    /// Sets the environment variables on `cmd`.
    pub fn set_env(&self, cmd: &mut std::process::Command) {
        for (_, env, value) in self.values() {
            cmd.env(env, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_name_their_package() {
        let e = find("stress-ng", Some("/nonexistent")).unwrap_err();
        assert!(e.contains("package stress-ng"), "{e}");
        let e = find("perf", Some("")).unwrap_err();
        assert!(e.contains("linux-perf"), "{e}");
        let e = find("hackbench", None).unwrap_err();
        assert!(e.contains("rt-tests"), "{e}");
        let e = find("mybench", Some("/nonexistent")).unwrap_err();
        assert!(e.contains("install it or give its path"), "{e}");
        let e = find("/nonexistent/x", Some("/bin")).unwrap_err();
        assert!(e.contains("not an executable file"), "{e}");
        assert_eq!(
            find("sh", Some("/nonexistent:/bin")),
            Ok(PathBuf::from("/bin/sh"))
        );
    }

    #[test]
    fn versions_are_the_number_not_the_line() {
        assert_eq!(
            version_number("stress-ng, version 0.15.06 (gcc 12.2.0, x86_64 Linux 6.1.0)"),
            Some("0.15.06".to_string())
        );
        assert_eq!(version_number("fio-3.33"), Some("3.33".to_string()));
        assert_eq!(
            version_number("perf version 6.1.158"),
            Some("6.1.158".to_string())
        );
        assert_eq!(version_number("no number here"), None);
        assert_eq!(version_number("hackbench V 2.40"), Some("2.40".to_string()));
        assert!(known("/usr/bin/stress-ng") && !known("./bench.sh"));
    }

    #[test]
    fn a_vm_or_kexec_step_must_find_the_program_where_it_runs() {
        assert_eq!(check_for_step("sh", true, None), Ok(()));
        assert_eq!(check_for_step("/bin/sh", false, None), Ok(()));
        let e = check_for_step("./bench.sh", false, None).unwrap_err();
        assert!(e.contains("relative path, and a kexec box's step"), "{e}");
        let e = check_for_step("no-such-tool-here", true, None).unwrap_err();
        assert!(
            e.contains("not on the PATH a vm guest's step has (/usr/local/sbin:"),
            "{e}"
        );
        let d = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let bench = d.path().join("bench.sh");
        std::fs::write(&bench, "#!/bin/sh\n").unwrap();
        let bench = bench.to_str().unwrap();
        let e = check_for_step(bench, true, None).unwrap_err();
        assert!(e.contains("under /tmp, which a vm guest covers"), "{e}");
        assert_eq!(check_for_step(bench, false, None), Ok(()));
        // Beside patchbench's own programs, which the guest binds back.
        let own = d.path().canonicalize().unwrap();
        assert_eq!(check_for_step(bench, true, Some(&own)), Ok(()));
    }

    #[test]
    fn the_placeholders_are_expanded_in_one_pass() {
        let places = Places {
            dir: PathBuf::from("/mnt/{cpus}"),
            cpus: vec![0, 1, 2, 3, 6],
        };
        let args = [
            "--filename={dir}/f",
            "--cpu={ncpus}",
            "-c",
            "{cpus}",
            "{x} {",
        ];
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        assert_eq!(
            places.expand(&args),
            [
                "--filename=/mnt/{cpus}/f",
                "--cpu=5",
                "-c",
                "0-3,6",
                "{x} {"
            ]
        );
        let mut cmd = std::process::Command::new("true");
        places.set_env(&mut cmd);
        let mut envs: Vec<_> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_str().unwrap(), v.unwrap().to_str().unwrap()))
            .collect();
        envs.sort();
        assert_eq!(
            envs,
            [
                ("PATCHBENCH_CPUS", "0-3,6"),
                ("PATCHBENCH_DIR", "/mnt/{cpus}"),
                ("PATCHBENCH_NCPUS", "5")
            ]
        );
        assert!(allowed_cpus().is_ok_and(|c| !c.is_empty()));
    }
}
