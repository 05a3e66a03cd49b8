//! open1 — "Separate file open/close": each task opens (O_RDWR) and closes its own file.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "open1",
    description: "Separate file open/close",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (_, path) = private_file(ctx.dir, 0)?;
    open_close_loop(ctx, &path)
}

/// open O_RDWR + close of `path`, one operation per pair (also used by open2 and open3).
pub fn open_close_loop(ctx: &TaskCtx<'_>, path: &Path) -> Result<()> {
    let c = c_path(path)?;
    loop {
        // SAFETY: a valid C string; the fd is closed at once.
        let fd = ok(unsafe { libc::open(c.as_ptr(), libc::O_RDWR) }, "open")?;
        // SAFETY: closes a descriptor this code opened and uses no more.
        unsafe { libc::close(fd) };
        ctx.slot.add(1);
    }
}
