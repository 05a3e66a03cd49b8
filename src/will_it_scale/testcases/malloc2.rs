//! malloc2 — "malloc/free of 1kB": the C library's malloc of 1 KiB, then free.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "malloc2",
    description: "malloc/free of 1kB",
    prepare: no_prepare,
    run,
    helpers: 0,
};

const SIZE: usize = 1024;

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    loop {
        // SAFETY: malloc and free of the C library; the block is freed at once.
        let p = unsafe { libc::malloc(SIZE) };
        if p.is_null() {
            anyhow::bail!("malloc of {SIZE} bytes failed");
        }
        // black_box keeps the compiler from deleting the malloc/free pair.
        // SAFETY: the pointer came from malloc above and is freed once.
        unsafe { libc::free(std::hint::black_box(p)) };
        ctx.slot.add(1);
    }
}
