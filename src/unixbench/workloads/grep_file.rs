//! Grep a large file (`grep`: UnixBench's `looper 30 grep -c gimp large.txt`, unixbench.md §5),
//! category Non-Index Benchmarks, baseline 1 lpm (in `index.base` "for convenience", so a run
//! of it prints a Non-Index Benchmarks index section).
//!
//! The looper (`looper.rs`) runs the system's `grep -c gimp large.txt` in the run's private
//! directory again and again; each run reads the 708,495-byte file and counts its 1,032 lines
//! that contain "gimp" (grep prints `1032`, to /dev/null here, to the log under UnixBench).
//!
//! UnixBench's `large.txt` is an strace log of a large GUI program starting; ours is generated
//! (deterministically, by [`large_txt`]) as an strace-like log with its shape, which is what
//! grep's work depends on: 10,000 lines, 708,495 bytes, 4,747 distinct lines, the longest 195
//! characters, 1,032 lines containing "gimp".
//!
//! Unit: lpm (grep runs per minute of wall time). Baseline 1.

/// The command, as UnixBench's `Run` gives it to looper.
pub const ARGV: &[&str] = &["grep", "-c", "gimp", "large.txt"];

/// UnixBench's `large.txt`, in figures.
pub const LINES: usize = 10_000;
pub const BYTES: usize = 708_495;
pub const DISTINCT: usize = 4_747;
pub const LONGEST: usize = 195;
pub const MATCHING: usize = 1_032;

/// Writes `large.txt` into `dir` (the private directory).
pub fn install(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(dir.join("large.txt"), large_txt())
}

/// A small deterministic generator (xorshift64*), so that every run greps the same file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Lines that recur throughout the log (polls, closes, signal masks, the X connection).
const COMMON: &[&str] = &[
    "close(3)                                = 0",
    "close(4)                                = 0",
    "close(5)                                = 0",
    "close(6)                                = 0",
    "brk(0)                                  = 0x0810e000",
    "time(NULL)                              = 1044357532",
    "getpid()                                = 2321",
    "getuid32()                              = 500",
    "geteuid32()                             = 500",
    "getgid32()                              = 500",
    "getegid32()                             = 500",
    "--- SIGCHLD (Child exited) @ 0 (0) ---",
    "--- SIGALRM (Alarm clock) @ 0 (0) ---",
    "sigreturn()                             = ? (mask now [])",
    "poll([{fd=3, events=POLLIN}], 1, 0)     = 0",
    "poll([{fd=3, events=POLLIN, revents=POLLIN}], 1, -1) = 1",
    "ioctl(3, FIONREAD, [0])                 = 0",
    "ioctl(3, FIONREAD, [32])                = 0",
    "ioctl(1, SNDCTL_TMR_TIMEBASE or TCGETS, {B38400 opost isig icanon echo ...}) = 0",
    "rt_sigprocmask(SIG_BLOCK, [CHLD], [], 8) = 0",
    "rt_sigprocmask(SIG_SETMASK, [], NULL, 8) = 0",
    "rt_sigaction(SIGCHLD, {0x4011f3d0, [], SA_RESTART}, {SIG_DFL}, 8) = 0",
    "select(4, [3], NULL, NULL, {0, 0})      = 0 (Timeout)",
    "select(4, [3], NULL, NULL, NULL)        = 1 (in [3])",
    "read(3, 0xbfffe6f0, 32)                 = -1 EAGAIN (Resource temporarily unavailable)",
    "read(3, \"\\1\\0\\326\\2\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\"..., 32) = 32",
    "write(3, \"\\35\\0\\2\\0\\1\\0\\0\\0\", 8)     = 8",
    "write(3, \"\\2\\0\\4\\0\\f\\0\\200\\3\\1\\0\\0\\0\\0\\0\\0\\0\", 16) = 16",
    "writev(3, [{\"\\22\\0\\7\\0\", 4}, {NULL, 0}, {\"\", 0}], 3) = 4",
    "gettimeofday({1044357532, 380221}, NULL) = 0",
    "fstat64(3, {st_mode=S_IFREG|0644, st_size=4214, ...}) = 0",
    "fstat64(1, {st_mode=S_IFCHR|0620, st_rdev=makedev(136, 1), ...}) = 0",
    "fcntl64(3, F_GETFD)                     = 0x1 (flags FD_CLOEXEC)",
    "fcntl64(3, F_SETFD, FD_CLOEXEC)         = 0",
    "lseek(3, 0, SEEK_CUR)                   = 0",
    "munmap(0x40013000, 4096)                = 0",
    "uname({sys=\"Linux\", node=\"localhost\", ...}) = 0",
    "getcwd(\"/home/user\", 4096)            = 11",
    "access(\"/etc/ld.so.preload\", R_OK)      = -1 ENOENT (No such file or directory)",
    "open(\"/etc/ld.so.cache\", O_RDONLY)      = 3",
];

/// Recurring lines that mention gimp.
const COMMON_GIMP: &[&str] = &[
    "access(\"/usr/lib/gimp/1.2/plug-ins\", R_OK|X_OK) = 0",
    "stat64(\"/home/user/.gimp-1.2/gimprc\", {st_mode=S_IFREG|0644, st_size=1214, ...}) = 0",
    "write(2, \"gimp: \", 6)                  = 6",
];

const LIBS: &[&str] = &[
    "libgtk",
    "libgdk",
    "libglib",
    "libgmodule",
    "libX11",
    "libXext",
    "libXi",
    "libm",
    "libdl",
    "libc",
    "libpng",
    "libjpeg",
    "libtiff",
    "libz",
    "libfreetype",
    "libart_lgpl",
];
const GIMP_DIRS: &[&str] = &[
    "plug-ins",
    "modules",
    "scripts",
    "brushes",
    "patterns",
    "palettes",
    "gradients",
    "fonts",
    "environ",
    "tool-plug-ins",
];
const GIMP_NAMES: &[&str] = &[
    "blur",
    "bumpmap",
    "curve_bend",
    "decompose",
    "emboss",
    "gauss",
    "jigsaw",
    "mosaic",
    "newsprint",
    "sharpen",
    "sparkle",
    "unsharp",
    "whirlpinch",
    "script-fu",
    "gif",
    "png",
    "jpeg",
    "tiff",
    "xcf",
    "ps",
    "pat",
    "gbr",
    "gih",
    "cel",
    "bmp",
    "tga",
];
const SYSCALL_ERRS: &[&str] = &[
    "-1 ENOENT (No such file or directory)",
    "-1 ENOTDIR (Not a directory)",
    "-1 EACCES (Permission denied)",
];
const BYTES_OF_ELF: &[&str] = &[
    "\\177ELF\\1\\1\\1\\0\\0\\0\\0\\0\\0\\0\\0\\0\\3\\0\\3\\0\\1\\0\\0\\0",
    "\\0\\0\\0\\0\\0\\0\\0\\0\\240\\21\\0\\0004\\0\\0\\0\\370",
    "# GIMP palette\\nName: Default\\nColumns: 16\\n",
    "\\1\\0\\326\\2\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0",
];

/// The file's text. Fresh lines each carry a serial number (in an address, a size or a file
/// name), so they are distinct from each other and from the recurring lines; read lines carry
/// a payload whose length is set so that the whole file has exactly [`BYTES`] bytes.
pub fn large_txt() -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let common_uses = LINES - (DISTINCT - COMMON.len() - COMMON_GIMP.len());
    let gimp_repeats = 132;
    let fresh_gimp = MATCHING - gimp_repeats;
    let fresh = DISTINCT - COMMON.len() - COMMON_GIMP.len();
    let fresh_reads = 1200;

    // Fresh lines, in order; reads are kept apart to be sized at the end. The first is the
    // program's start, which mentions gimp.
    let mut lines: Vec<Fresh> = Vec::with_capacity(fresh);
    lines.push(Fresh::Line(long_execve_line()));
    let (mut gimp_left, mut reads_left) = (fresh_gimp - 1, fresh_reads);
    let mut serial = 0usize;
    while lines.len() < fresh {
        serial += 1;
        let k = serial;
        let left = fresh - lines.len();
        let roll = rng.below(left);
        let line = if roll < gimp_left {
            gimp_left -= 1;
            let dir = rng.pick(GIMP_DIRS);
            let name = rng.pick(GIMP_NAMES);
            Fresh::Line(match rng.below(3) {
                0 => format!(
                    "open(\"/usr/lib/gimp/1.2/{dir}/{name}-{k}\", O_RDONLY) = {}",
                    3 + rng.below(9)
                ),
                1 => format!(
                    "stat64(\"/home/user/.gimp-1.2/{dir}/{name}{k}.{name}\", 0xbfffe{:03x}) = {}",
                    rng.below(4096),
                    rng.pick(SYSCALL_ERRS)
                ),
                _ => format!(
                    "readlink(\"/usr/share/gimp/1.2/{dir}/{name}_{k}\", 0xbfffd{:03x}, 4095) = {}",
                    rng.below(4096),
                    rng.pick(SYSCALL_ERRS)
                ),
            })
        } else if roll < gimp_left + reads_left {
            reads_left -= 1;
            Fresh::Read {
                head: format!("read({}, \"{k:05x}", 3 + rng.below(9)),
                tail: format!("\"..., {}) = {}", 512 << rng.below(4), 64 + k % 960),
            }
        } else {
            Fresh::Line(match rng.below(5) {
                0 => format!(
                    "old_mmap(NULL, {}, PROT_READ|PROT_EXEC, MAP_PRIVATE, {}, 0) = 0x{:08x}",
                    4096 * (1 + rng.below(300)),
                    3 + rng.below(5),
                    0x4001_0000 + 0x1000 * k
                ),
                1 => format!(
                    "open(\"/usr/lib/{}.so.{}\", O_RDONLY) = {}",
                    rng.pick(LIBS),
                    k,
                    rng.pick(SYSCALL_ERRS)
                ),
                2 => format!(
                    "mprotect(0x{:08x}, {}, PROT_READ|PROT_WRITE) = 0",
                    0x4100_0000 + 0x1000 * k,
                    4096 * (1 + rng.below(16))
                ),
                3 => format!(
                    "brk(0x{:08x})                        = 0x{0:08x}",
                    0x0810_0000 + 0x1000 * k
                ),
                _ => format!(
                    "ioctl(3, 0x{:x}, 0xbfffe{:03x})             = 0",
                    0x5400 + k,
                    rng.below(4096)
                ),
            })
        };
        lines.push(line);
    }

    // Size the reads' payloads so that the file has BYTES bytes in all.
    let common: Vec<&str> = (0..common_uses)
        .map(|i| {
            if i < gimp_repeats {
                COMMON_GIMP[i % COMMON_GIMP.len()]
            } else {
                COMMON[i % COMMON.len()]
            }
        })
        .collect();
    let mut fixed: usize = common.iter().map(|l| l.len() + 1).sum();
    let mut reads = 0;
    for l in &lines {
        match l {
            Fresh::Line(s) => fixed += s.len() + 1,
            Fresh::Read { head, tail } => {
                fixed += head.len() + tail.len() + 1;
                reads += 1;
            }
        }
    }
    let payload = BYTES - fixed;
    let (each, extra) = (payload / reads, payload % reads);
    let mut text_of_read = {
        let mut i = 0;
        move |head: &str, tail: &str, rng: &mut Rng| {
            let mut p = String::new();
            let want = each + usize::from(i < extra);
            i += 1;
            while p.len() < want {
                p.push_str(rng.pick(BYTES_OF_ELF));
            }
            p.truncate(want);
            // Never end on half an escape: swap a trailing backslash for a digit.
            if p.ends_with('\\') {
                p.pop();
                p.push('7');
            }
            format!("{head}{p}{tail}")
        }
    };

    // Interleave: the recurring lines at pseudo-random places among the fresh ones.
    let mut order: Vec<bool> = (0..LINES).map(|i| i < common.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut out = String::with_capacity(BYTES);
    let (mut c, mut f) = (common.iter(), lines.iter());
    for is_common in order {
        let line = if is_common {
            c.next().map(|s| s.to_string())
        } else {
            f.next().map(|l| match l {
                Fresh::Line(s) => s.clone(),
                Fresh::Read { head, tail } => text_of_read(head, tail, &mut rng),
            })
        };
        if let Some(line) = line {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// A line of the generated log that has no copy elsewhere in it.
enum Fresh {
    Line(String),
    /// A read, whose payload is sized last.
    Read {
        head: String,
        tail: String,
    },
}

/// The log's longest line: the program's start, [`LONGEST`] characters.
fn long_execve_line() -> String {
    let mut s = String::from(
        "execve(\"/usr/bin/gimp-1.2\", [\"gimp-1.2\", \"--no-splash\", \"--no-splash-image\"], \
         [/* 38 vars */]) = 0 <the GUI program whose start-up this log records, with its ",
    );
    while s.len() < LONGEST - 1 {
        s.push('.');
    }
    s.push('>');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_txt_has_unixbenchs_shape() {
        let text = large_txt();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), LINES);
        assert_eq!(text.len(), BYTES);
        let distinct: std::collections::HashSet<&str> = lines.iter().copied().collect();
        assert_eq!(distinct.len(), DISTINCT);
        assert_eq!(lines.iter().map(|l| l.len()).max(), Some(LONGEST));
        assert_eq!(
            lines.iter().filter(|l| l.contains("gimp")).count(),
            MATCHING
        );
        assert!(text.is_ascii() && text.ends_with('\n'));
        assert_eq!(large_txt(), text, "deterministic");
    }
}
