//! The AIM7 jobs patchbench implements, one small file each, and what they share: the per-task
//! context (directories, temp-name counter, 1 KiB buffer, random numbers, op counters) and the
//! table that maps an AIM7 test name to its code, AIM factor and units.
//!
//! A job runs inside a forked task with raw system calls (no allocation in its inner loops) and
//! returns the failing call and errno on error, which the task reports to the driver.

use std::ffi::CString;

/// AIM's disk block: FILESIZE and POOLSIZE are counted in these (`NBUFSIZE`).
pub const BLOCK: usize = 1024;

/// The name of the shared input file `disk_rd` and `disk_cp` read, as in AIM.
pub const COMMON_FILE: &str = "tmpa.common";
/// The directory tree `disk_src` searches.
pub const FAKE_TREE: &str = "fakeh";

/// What a job needs prepared in each private directory before the tasks start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixture {
    None,
    /// `tmpa.common` of the per-task disk size (disk_rd, disk_cp).
    CommonFile,
    /// The `fakeh` tree with its `dirlist` (disk_src).
    FakeTree,
}

/// AIM's "factor": how many operations one job counts for in its units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    Fixed(u64),
    /// The disk tests: the number of 1 KiB blocks per file (FILESIZE + POOLSIZE / load).
    DiskBlocks,
}

/// One AIM7 test: its name, AIM's factor and units, and the function that runs one job.
#[derive(Debug)]
pub struct Job {
    pub name: &'static str,
    /// Other accepted spellings (re-aim's underscore names).
    pub aliases: &'static [&'static str],
    pub factor: Factor,
    pub units: &'static str,
    /// Takes a `DISKS` directory (round-robin over `--dir`).
    pub uses_dirs: bool,
    pub fixture: Fixture,
    /// Extra processes each task creates at once (fork_test, exec_test), for the limit check.
    pub extra_procs: u32,
    /// Names of the counters the job bumps in [`TaskCtx::counters`].
    pub counters: &'static [&'static str],
    pub run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
}

/// Declares each job's module and lists its `JOB` in [`JOBS`]: registering an AIM7 job is
/// its file plus one line in the list below.
macro_rules! jobs {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every job patchbench knows, in AIM's order.
        pub static JOBS: &[Job] = &[$($name::JOB),*];
    };
}

jobs! {
    creat_clo,
    disk_rr,
    disk_rw,
    disk_rd,
    disk_wrt,
    disk_cp,
    disk_src,
    link_test,
    fork_test,
    exec_test,
    signal_test,
    brk_test,
    page_test,
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

/// A failed system call inside a job.
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
}

/// One `--dir` as a task sees it: the private directory and the fixtures in it.
#[derive(Debug, Clone)]
pub struct TaskDir {
    /// The private directory (inside the user's `--dir`), as bytes without a trailing NUL.
    pub path: Vec<u8>,
    pub common_file: CString,
    pub fake_tree: CString,
}

impl TaskDir {
    pub fn new(private: &std::path::Path) -> TaskDir {
        use std::os::unix::ffi::OsStrExt;
        let path = private.as_os_str().as_bytes().to_vec();
        let join = |name: &str| {
            let mut p = path.clone();
            p.push(b'/');
            p.extend_from_slice(name.as_bytes());
            CString::new(p).unwrap_or_default()
        };
        TaskDir {
            common_file: join(COMMON_FILE),
            fake_tree: join(FAKE_TREE),
            path,
        }
    }
}

/// Everything one task carries from job to job.
pub struct TaskCtx {
    /// The task's number, 0-based; also the unique part of its temp names.
    pub task: u32,
    pub dirs: Vec<TaskDir>,
    /// Blocks per file for the disk tests: FILESIZE + POOLSIZE / load.
    pub disk_blocks: usize,
    /// The program `exec_test` runs.
    pub true_program: CString,
    pub counters: [u64; 4],
    pub buf: Vec<u8>,
    rng: u64,
    temp_counter: u32,
}

impl TaskCtx {
    pub fn new(task: u32, dirs: Vec<TaskDir>, disk_blocks: usize, true_program: CString) -> Self {
        TaskCtx {
            task,
            dirs,
            disk_blocks,
            true_program,
            counters: [0; 4],
            buf: vec![0u8; BLOCK],
            // AIM seeds each task's generator with its user number; any non-zero seed works.
            rng: 0x9E37_79B9_7F4A_7C15 ^ (u64::from(task) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            temp_counter: 0,
        }
    }

    /// A fresh temp-file path in directory `dir`: `<private>/<prefix><task 5 digits><counter
    /// 5 digits>`. AIM uses pid % 100000 where we use the task number, so names stay unique
    /// whatever the pid range; the counter wraps at 100000 as AIM's does.
    pub fn temp_path(&mut self, dir: usize, prefix: &str) -> CString {
        let counter = self.temp_counter;
        self.temp_counter = (self.temp_counter + 1) % 100_000;
        let mut p = self.dirs[dir].path.clone();
        p.extend_from_slice(format!("/{prefix}{:05}{counter:05}", self.task).as_bytes());
        CString::new(p).unwrap_or_default()
    }

    /// A pseudo-random number (xorshift64*), standing in for AIM's `aim_rand()`.
    pub fn random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Creates (or truncates) `path` with AIM's `creat()` mode 0777.
pub fn creat(path: &CString) -> Result<i32, Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC | libc::O_CLOEXEC,
            0o777,
        )
    };
    if fd < 0 {
        Err(Fail::last("creat"))
    } else {
        Ok(fd)
    }
}

/// Opens `path` with `flags`.
pub fn open(path: &CString, flags: i32) -> Result<i32, Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(Fail::last("open"))
    } else {
        Ok(fd)
    }
}

/// Closes `fd`.
pub fn close(fd: i32) -> Result<(), Fail> {
    // SAFETY: closing a descriptor this job opened.
    if unsafe { libc::close(fd) } < 0 {
        Err(Fail::last("close"))
    } else {
        Ok(())
    }
}

/// Removes `path`.
pub fn unlink(path: &CString) -> Result<(), Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    if unsafe { libc::unlink(path.as_ptr()) } < 0 {
        Err(Fail::last("unlink"))
    } else {
        Ok(())
    }
}

/// Writes one 1 KiB block from `buf`; a short write counts as a failure (ENOSPC if no errno).
pub fn write_block(fd: i32, buf: &[u8]) -> Result<(), Fail> {
    // SAFETY: buf is valid for BLOCK bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), BLOCK) };
    match n {
        n if n == BLOCK as isize => Ok(()),
        n if n < 0 => Err(Fail::last("write")),
        _ => Err(Fail {
            op: "write",
            errno: libc::ENOSPC,
        }),
    }
}

/// Reads one 1 KiB block into `buf`; a short read is a failure (the file is too short).
pub fn read_block(fd: i32, buf: &mut [u8]) -> Result<(), Fail> {
    // SAFETY: buf is valid for BLOCK bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), BLOCK) };
    match n {
        n if n == BLOCK as isize => Ok(()),
        n if n < 0 => Err(Fail::last("read")),
        _ => Err(Fail {
            op: "read",
            errno: libc::EIO,
        }),
    }
}

/// Moves `fd`'s offset to block `block`.
pub fn seek_block(fd: i32, block: u64) -> Result<(), Fail> {
    // SAFETY: plain lseek on an open descriptor.
    if unsafe { libc::lseek(fd, (block * BLOCK as u64) as libc::off_t, libc::SEEK_SET) } < 0 {
        Err(Fail::last("lseek"))
    } else {
        Ok(())
    }
}

/// Writes a new private temp file of `ctx.disk_blocks` blocks in 1 KiB writes and returns its
/// path (the common set-up of disk_rr and disk_rw). Counts blocks in counter 0, files in 2.
pub fn write_temp_file(ctx: &mut TaskCtx, dir: usize) -> Result<CString, Fail> {
    let path = ctx.temp_path(dir, "tmpb.");
    let fd = creat(&path)?;
    ctx.counters[2] += 1;
    for _ in 0..ctx.disk_blocks {
        if let Err(e) = write_block(fd, &ctx.buf) {
            let _ = close(fd);
            let _ = unlink(&path);
            return Err(e);
        }
        ctx.counters[0] += 1;
    }
    close(fd)?;
    Ok(path)
}

/// Counter names shared by the disk tests.
pub const DISK_COUNTERS: &[&str] = &["blocks_written", "blocks_read", "files_created", "unlinks"];

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(task: u32) -> TaskCtx {
        let dirs = vec![TaskDir::new(std::path::Path::new("/x/priv"))];
        TaskCtx::new(task, dirs, 4, CString::new("/bin/true").unwrap())
    }

    #[test]
    fn temp_names_follow_aims_pattern_and_advance() {
        let mut c = ctx(42);
        assert_eq!(
            c.temp_path(0, "tmpb.").to_str().unwrap(),
            "/x/priv/tmpb.0004200000"
        );
        assert_eq!(
            c.temp_path(0, "tmpb.").to_str().unwrap(),
            "/x/priv/tmpb.0004200001"
        );
        c.temp_counter = 99_999;
        assert_eq!(
            c.temp_path(0, "link").to_str().unwrap(),
            "/x/priv/link0004299999"
        );
        assert_eq!(
            c.temp_path(0, "link").to_str().unwrap(),
            "/x/priv/link0004200000"
        );
    }

    #[test]
    fn every_job_is_found_by_name_and_alias() {
        for j in JOBS {
            assert!(std::ptr::eq(find(j.name).unwrap(), j));
            assert!(j.counters.len() <= 4);
        }
        assert_eq!(find("creat_clo").unwrap().name, "creat-clo");
        assert!(find("nope").is_none());
    }

    #[test]
    fn random_numbers_differ_per_task() {
        let (mut a, mut b) = (ctx(0), ctx(1));
        assert_ne!(a.random(), b.random());
        let v: Vec<u64> = (0..100).map(|_| a.random() % 10).collect();
        assert!(v.iter().any(|&x| x != v[0]));
    }
}
