//! unlink1 — "Separate file open/close/unlink": each task creates (O_CREAT), closes and unlinks
//! a file of its own name, every iteration.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "unlink1",
    description: "Separate file open/close/unlink",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    create_unlink_loop(ctx, ctx.dir)
}

/// A mkstemp-style name in `dir` (made, then removed), then create + close + unlink of it.
pub fn create_unlink_loop(ctx: &TaskCtx<'_>, dir: &Path) -> Result<()> {
    let (_, path) = private_file(dir, 0)?;
    std::fs::remove_file(&path).context("cannot remove the test file")?;
    let c = c_path(&path)?;
    loop {
        // SAFETY: a valid C string; the fd is closed at once.
        let fd = ok(
            unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o600) },
            "open",
        )?;
        // SAFETY: closes a descriptor this code opened and uses no more.
        unsafe { libc::close(fd) };
        // SAFETY: a NUL-terminated path.
        ok(unsafe { libc::unlink(c.as_ptr()) }, "unlink")?;
        ctx.slot.add(1);
    }
}
