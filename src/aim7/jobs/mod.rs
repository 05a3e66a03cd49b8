//! The 56 AIM7 tests, one small file each, and what they share: the per-task context
//! (directories, temp-name counter, 1 KiB buffer, AIM's random stream, op counters, AIM's
//! static tables) and the table that maps an AIM7 test name to its code, argument string, AIM
//! factor and units.
//!
//! A job runs inside a forked task with raw system calls (no allocation in its inner loops) and
//! returns the failing call and errno on error, which the task reports to the driver. Like
//! AIM, a failing job is fatal for the whole run, so a job does not tidy up on its error paths:
//! the task exits and the driver removes the private directories.
//!
//! Shared helpers: `arith` (the add/mul/div kernel of 15 tests), `disk` (block I/O of the disk
//! tests), `num_fcns` (num_fcns.c's tables of values), `messages` (pipe_test.c's message loop),
//! `memsizes` (the size table of mem_rtns_1/2), `shell` (fork + wait until ECHILD).

use super::aim_rand::AimRand;
use std::ffi::{CStr, CString};

pub mod arith;
pub mod disk;
pub mod memsizes;
pub mod messages;
pub mod num_fcns;
pub mod shell;

/// AIM's disk block: FILESIZE and POOLSIZE are counted in these (`NBUFSIZE`).
pub const BLOCK: usize = 1024;

/// The name of the shared input file disk_rd, disk_cp and sync_disk_cp read, as in AIM.
pub const COMMON_FILE: &str = "tmpa.common";
/// The directory tree disk_src searches.
pub const FAKE_TREE: &str = "fakeh";

/// AIM's "factor": how many operations one job counts for in its units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    Fixed(u64),
    /// The disk tests: the number of 1 KiB blocks per file (FILESIZE + POOLSIZE / load).
    DiskBlocks,
    /// The sync tests that work on half a file.
    HalfDiskBlocks,
}

/// One AIM7 test: its name, AIM's argument string, factor and units, and the function that
/// runs one job.
#[derive(Debug)]
pub struct Job {
    pub name: &'static str,
    /// Other accepted spellings (re-aim's underscore names).
    pub aliases: &'static [&'static str],
    /// AIM's registered argument string, which the job parses as AIM's does (so loop counts
    /// and kernel inputs are run-time values, as in the C). Empty for `DISKS` tests.
    pub args: &'static str,
    pub factor: Factor,
    pub units: &'static str,
    /// Takes a `DISKS` directory (round-robin over `--dir`).
    pub uses_dirs: bool,
    /// Extra processes each task creates at once (fork_test, exec_test...), for the limit check.
    pub extra_procs: u32,
    /// Names of the counters the job bumps in [`TaskCtx::counters`].
    pub counters: &'static [&'static str],
    pub run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
}

fn nothing(_: &mut TaskCtx, _: usize) -> Result<(), Fail> {
    Ok(())
}

impl Job {
    /// The fields most jobs leave alone, for `..Job::BASE`.
    pub const BASE: Job = Job {
        name: "",
        aliases: &[],
        args: "",
        factor: Factor::Fixed(1),
        units: "",
        uses_dirs: false,
        extra_procs: 0,
        counters: &[],
        run: nothing,
    };

    /// A test with a fixed factor and no `DISKS` directory.
    pub const fn simple(
        name: &'static str,
        args: &'static str,
        factor: u64,
        units: &'static str,
        counters: &'static [&'static str],
        run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
    ) -> Job {
        Job {
            name,
            args,
            factor: Factor::Fixed(factor),
            units,
            counters,
            run,
            ..Job::BASE
        }
    }
}

/// Declares each job's module and lists its `JOB` in [`JOBS`]: registering an AIM7 job is
/// its file plus one line in the list below.
macro_rules! jobs {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every job patchbench knows, in AIM's registration order (add.c, creat-clo.c,
        /// disk1.c, disk_src.c, div.c, int_fcns.c, mul.c, num_fcns.c, pipe_test.c, ram.c).
        pub static JOBS: &[Job] = &[$($name::JOB),*];
    };
}

jobs! {
    add_double,
    add_float,
    add_long,
    add_int,
    add_short,
    creat_clo,
    page_test,
    brk_test,
    jmp_test,
    signal_test,
    exec_test,
    fork_test,
    link_test,
    disk_rr,
    disk_rw,
    disk_rd,
    disk_wrt,
    disk_cp,
    sync_disk_rw,
    sync_disk_wrt,
    sync_disk_cp,
    sync_disk_update,
    disk_src,
    div_double,
    div_float,
    div_long,
    div_int,
    div_short,
    sieve,
    mul_double,
    mul_float,
    mul_long,
    mul_int,
    mul_short,
    num_rtns_1,
    new_raph,
    trig_rtns,
    matrix_rtns,
    array_rtns,
    string_rtns,
    mem_rtns_1,
    mem_rtns_2,
    sort_rtns_1,
    misc_rtns_1,
    dir_rtns_1,
    shell_rtns_1,
    shell_rtns_2,
    shell_rtns_3,
    series_1,
    shared_memory,
    tcp_test,
    udp_test,
    stream_pipe,
    dgram_pipe,
    pipe_cpy,
    ram_copy,
}

/// Looks a test up by name or alias.
pub fn find(name: &str) -> Option<&'static Job> {
    JOBS.iter()
        .find(|j| j.name == name || j.aliases.contains(&name))
}

/// The names of every job, for messages.
pub fn names() -> String {
    JOBS.iter().map(|j| j.name).collect::<Vec<_>>().join(", ")
}

/// A failed system call inside a job, or (errno 0) a wrong result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fail {
    pub op: &'static str,
    pub errno: i32,
}

impl Fail {
    /// The failure of `op` with the current errno.
    pub fn last(op: &'static str) -> Fail {
        Fail {
            op,
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }

    /// A computation whose result AIM checks came out wrong (errno 0).
    pub fn wrong(op: &'static str) -> Fail {
        Fail { op, errno: 0 }
    }
}

/// Turns a libc return value below 0 into the failure of `op`.
pub fn check(op: &'static str, ret: libc::c_int) -> Result<libc::c_int, Fail> {
    if ret < 0 {
        Err(Fail::last(op))
    } else {
        Ok(ret)
    }
}

/// An argument string that does not parse (a bug in a job's registration).
pub const BAD_ARGS: Fail = Fail {
    op: "arguments",
    errno: libc::EINVAL,
};

/// One `--dir` as a task sees it: the private directory and the fixtures in it.
///
/// AIM's jobs name their files `D/tmpb...` with D the `config` directory, so the kernel
/// walks D's components and the name. patchbench's files are one directory deeper, in its
/// private directory P inside D, and each extra component costs about 2.5 % of a creat +
/// close on tmpfs (measured: ten more components, +25 %): enough to make creat-clo read 3 %
/// below AIM. So a task reaches its files through a descriptor of P's first component (`/tmp`
/// for `/tmp/D/P`) and the rest of the path: as many components as AIM walks for the same D.
#[derive(Debug, Clone)]
pub struct TaskDir {
    /// The private directory (inside the user's `--dir`), absolute, as bytes without a NUL.
    pub path: Vec<u8>,
    /// P's first component (`/tmp`), and P below it (`D/P`; empty when P is that component).
    base: Vec<u8>,
    below: Vec<u8>,
    /// A descriptor of `base` once the task opened it ([`TaskDir::open_base`]); until then,
    /// or if it cannot be opened, `AT_FDCWD` and absolute paths.
    pub at: i32,
    /// `tmpa.common`, walked from `at`.
    pub common_file: CString,
    /// The `fakeh` tree, absolute (disk_src changes into it).
    pub fake_tree: CString,
}

/// A file in one of the task's directories: the descriptor its path is walked from and the
/// path.
#[derive(Debug, Clone)]
pub struct DirFile {
    pub at: i32,
    pub path: CString,
}

impl TaskDir {
    /// `private` is made absolute: tasks work from their own current directory.
    pub fn new(private: &std::path::Path) -> TaskDir {
        use std::os::unix::ffi::OsStrExt;
        let abs = std::path::absolute(private).unwrap_or_else(|_| private.to_path_buf());
        let path = abs.as_os_str().as_bytes().to_vec();
        let (base, below) = match path.iter().skip(1).position(|&b| b == b'/') {
            Some(i) => (path[..i + 1].to_vec(), path[i + 2..].to_vec()),
            None => (path.clone(), Vec::new()),
        };
        let mut dir = TaskDir {
            fake_tree: CString::new([&path[..], b"/", FAKE_TREE.as_bytes()].concat())
                .unwrap_or_default(),
            common_file: CString::default(),
            path,
            base,
            below,
            at: libc::AT_FDCWD,
        };
        dir.common_file = dir.walked(COMMON_FILE.as_bytes());
        dir
    }

    /// In the task, before the start: opens P's first component, so that files are walked
    /// from it; left at absolute paths if it cannot be.
    pub fn open_base(&mut self) {
        let Ok(base) = CString::new(self.base.clone()) else {
            return;
        };
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: opening a NUL-terminated path.
        let fd = unsafe { libc::open(base.as_ptr(), flags) };
        if fd >= 0 {
            self.at = fd;
            self.common_file = self.walked(COMMON_FILE.as_bytes());
        }
    }

    /// The path of `name` in P, as walked from [`TaskDir::at`].
    fn walked(&self, name: &[u8]) -> CString {
        let p = if self.at == libc::AT_FDCWD {
            [&self.path[..], b"/", name].concat()
        } else if self.below.is_empty() {
            name.to_vec()
        } else {
            [&self.below[..], b"/", name].concat()
        };
        CString::new(p).unwrap_or_default()
    }
}

/// AIM's static buffers that only some tests use, allocated by the first job of a task that
/// needs them (AIM's are in .bss, faulted in by their first use).
#[derive(Debug, Default)]
pub struct Statics {
    /// ram_copy's two 8200-byte buffers.
    pub ram: Vec<u8>,
    /// array_rtns's matrices `a` and `a_orig`.
    pub matrices: Vec<f64>,
    /// sort_rtns_1's global table of 10,000 ints, 0..9999 at first.
    pub table: Vec<i32>,
}

/// Everything one task carries from job to job.
pub struct TaskCtx {
    /// The task's number, 0-based.
    pub task: u32,
    /// The task's pid % 100000: the unique part of its temp names, as in AIM.
    pub pid5: u32,
    /// The operation load (number of tasks); AIM appends it to every argument string.
    pub load: u32,
    /// The running job's argument string ([`Job::args`]).
    pub args: &'static str,
    pub dirs: Vec<TaskDir>,
    /// Blocks per file for the disk tests: FILESIZE + POOLSIZE / load.
    pub disk_blocks: usize,
    /// The running job's counters (the task zeroes them before each job).
    pub counters: [u64; 4],
    /// disk1.c's static 1 KiB buffer `nbuf`, shared by every disk test of the task.
    pub buf: Vec<u8>,
    /// AIM's `aim_rand` stream, shared by job selection and the tests that draw from it.
    pub rng: AimRand,
    /// num_fcns.c's read positions in its value tables, kept across jobs and tests.
    pub num: num_fcns::Cursor,
    /// pipe_test.c's position in its message-size table, kept across jobs and tests.
    pub msg_at: usize,
    pub statics: Statics,
    temp_counter: u32,
}

impl TaskCtx {
    pub fn new(task: u32, mut dirs: Vec<TaskDir>, disk_blocks: usize, load: u32) -> Self {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        for d in &mut dirs {
            d.open_base();
        }
        TaskCtx {
            task,
            pid5: pid % 100_000,
            load,
            args: "",
            dirs,
            disk_blocks,
            counters: [0; 4],
            buf: vec![0u8; BLOCK],
            rng: AimRand::seeded(u64::from(task)),
            num: num_fcns::Cursor::default(),
            msg_at: 0,
            statics: Statics::default(),
            temp_counter: 0,
        }
    }

    /// Field `i` of the job's argument string.
    pub fn field(&self, i: usize) -> Result<&'static str, Fail> {
        self.args.split_whitespace().nth(i).ok_or(BAD_ARGS)
    }

    /// Field `i` of the job's argument string, parsed as AIM's sscanf does.
    pub fn arg<T: std::str::FromStr>(&self, i: usize) -> Result<T, Fail> {
        self.field(i)?.parse().map_err(|_| BAD_ARGS)
    }

    /// A fresh temp file in directory `dir`: `<private>/<prefix><pid%100000 5 digits>
    /// <counter 5 digits>`, AIM's `aim_mktemp`; the counter wraps at 100000 as AIM's does.
    pub fn temp_path(&mut self, dir: usize, prefix: &str) -> DirFile {
        let counter = self.temp_counter;
        self.temp_counter = (self.temp_counter + 1) % 100_000;
        let d = &self.dirs[dir];
        let name = format!("{prefix}{:05}{counter:05}", self.pid5);
        DirFile {
            at: d.at,
            path: d.walked(name.as_bytes()),
        }
    }
}

/// Creates (or truncates) `path` (walked from `at`) with AIM's `creat()` mode 0777.
pub fn creat(at: i32, path: &CStr) -> Result<i32, Fail> {
    open_mode(
        at,
        path,
        libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
        "creat",
    )
}

/// Opens `path` (walked from `at`) with `flags` (and mode 0777 when they create), failing as
/// `op`.
pub fn open_mode(at: i32, path: &CStr, flags: i32, op: &'static str) -> Result<i32, Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    check(op, unsafe { libc::openat(at, path.as_ptr(), flags, 0o777) })
}

/// Opens an existing `path` (walked from `at`) with `flags`.
pub fn open(at: i32, path: &CStr, flags: i32) -> Result<i32, Fail> {
    open_mode(at, path, flags, "open")
}

/// Closes `fd`.
pub fn close(fd: i32) -> Result<(), Fail> {
    // SAFETY: closing a descriptor this job opened.
    check("close", unsafe { libc::close(fd) }).map(drop)
}

/// Removes `path` (walked from `at`).
pub fn unlink(at: i32, path: &CStr) -> Result<(), Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    check("unlink", unsafe { libc::unlinkat(at, path.as_ptr(), 0) }).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(pid5: u32) -> TaskCtx {
        let dirs = vec![TaskDir::new(std::path::Path::new("/x/priv"))];
        let mut c = TaskCtx::new(0, dirs, 4, 1);
        c.pid5 = pid5;
        c
    }

    #[test]
    fn temp_names_follow_aims_pattern_and_advance() {
        let mut c = ctx(42);
        assert_eq!(
            c.temp_path(0, "tmpb.").path.to_str().unwrap(),
            "/x/priv/tmpb.0004200000"
        );
        assert_eq!(
            c.temp_path(0, "tmpb.").path.to_str().unwrap(),
            "/x/priv/tmpb.0004200001"
        );
        c.temp_counter = 99_999;
        assert_eq!(
            c.temp_path(0, "link").path.to_str().unwrap(),
            "/x/priv/link0004299999"
        );
        assert_eq!(
            c.temp_path(0, "link").path.to_str().unwrap(),
            "/x/priv/link0004200000"
        );
    }

    /// A task walks as many path components to its files as AIM does for the same --dir:
    /// from a descriptor of the private directory's first component.
    #[test]
    fn files_are_walked_from_the_first_component() {
        let outer = tempfile::tempdir().unwrap();
        let private = outer.path().join("patchbench-aim7-x");
        std::fs::create_dir(&private).unwrap();
        let mut c = TaskCtx::new(0, vec![TaskDir::new(&private)], 4, 1);
        c.pid5 = 7;
        let f = c.temp_path(0, "tmpb.");
        assert_ne!(f.at, libc::AT_FDCWD);
        let abs = private.join("tmpb.0000700000");
        let first = abs.iter().nth(1).unwrap();
        let rest = abs
            .strip_prefix(std::path::Path::new("/").join(first))
            .unwrap();
        assert_eq!(f.path.to_str().unwrap(), rest.to_str().unwrap());
        // One component fewer than the absolute path (as AIM's D/name without P).
        assert_eq!(rest.iter().count(), abs.iter().count() - 2);
        let fd = creat(f.at, &f.path).unwrap();
        close(fd).unwrap();
        assert!(abs.is_file());
        unlink(f.at, &f.path).unwrap();
        assert!(!abs.exists());
        assert!(c.dirs[0]
            .common_file
            .to_str()
            .unwrap()
            .ends_with("patchbench-aim7-x/tmpa.common"));
        // A private directory right under / is its own first component.
        let top = TaskDir::new(std::path::Path::new("/p"));
        assert_eq!(top.walked(b"n").to_str().unwrap(), "/p/n");
    }

    #[test]
    fn the_pid_part_is_the_pid_mod_100000() {
        let c = TaskCtx::new(3, Vec::new(), 1, 1);
        assert_eq!(c.pid5, std::process::id() % 100_000);
    }

    #[test]
    fn all_56_jobs_are_found_by_name_and_alias_once() {
        assert_eq!(JOBS.len(), 56);
        for j in JOBS {
            assert!(std::ptr::eq(find(j.name).unwrap(), j));
            assert!(
                j.counters.len() <= 4 && !j.counters.is_empty(),
                "{}",
                j.name
            );
            assert!(!j.units.is_empty(), "{}", j.name);
            assert_eq!(j.uses_dirs, j.args.is_empty(), "{}", j.name);
        }
        let mut names: Vec<&str> = JOBS.iter().map(|j| j.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 56);
        assert_eq!(find("creat_clo").unwrap().name, "creat-clo");
        assert!(find("nope").is_none());
    }

    #[test]
    fn arguments_parse_like_sscanf_fields() {
        let mut c = ctx(1);
        c.args = "3.14159 -3.14159 1500000";
        assert_eq!(c.arg::<f64>(1).unwrap(), "-3.14159".parse::<f64>().unwrap());
        assert_eq!(c.arg::<u64>(2).unwrap(), 1_500_000);
        assert_eq!(c.arg::<u64>(3).unwrap_err().op, "arguments");
    }
}
