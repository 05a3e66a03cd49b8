//! `patchbench-worker`: the lean program that runs one copy of one UnixBench workload.
//! patchbench starts one per copy; it is kept small (std and libc only) so that the fork and
//! exec costs measured by `execl`, `spawn` and `context1` are those of a small program.
//! Not meant to be run by hand; see `patchbench::worker` for its protocol.

/// A failed allocation ends with one line (which the runner reports) and exit status 2.
#[global_allocator]
static ALLOC: patchbench::out_of_memory::Guard = patchbench::out_of_memory::Guard::LOUD;

/// The main thread's signal stack in static memory (see `patchbench::out_of_memory`).
#[used]
#[link_section = ".init_array"]
static SIGNAL_STACK: extern "C" fn() = patchbench::out_of_memory::install_signal_stack;

fn main() {
    std::process::exit(patchbench::unixbench::worker::main(
        std::env::args_os().collect(),
    ));
}
