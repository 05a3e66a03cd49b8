//! malloc1 — "malloc/free of 128MB": malloc 128 MiB and free it again; counts 1. glibc serves
//! a request this large with mmap and returns it with munmap, so each operation is a mapping
//! made and removed without touching its pages. The pointer goes through `black_box` so the
//! compiler cannot drop the pair of calls (it knows what malloc and free do).

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "malloc1",
    description: "malloc/free of 128MB",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    loop {
        // SAFETY: a plain allocation, freed at once and never dereferenced.
        let p = unsafe { libc::malloc(MEMSIZE) };
        if p.is_null() {
            anyhow::bail!("malloc of {MEMSIZE} bytes failed");
        }
        // SAFETY: `p` came from malloc above.
        unsafe { libc::free(std::hint::black_box(p)) };
        ctx.slot.add(1);
    }
}
