//! `patchbench-worker`: the lean program that runs one copy of one UnixBench workload.
//! patchbench starts one per copy; it is kept small (std and libc only) so that the fork and
//! exec costs measured by `execl`, `spawn` and `context1` are those of a small program.
//! Not meant to be run by hand; see `patchbench::worker` for its protocol.

fn main() {
    std::process::exit(patchbench::unixbench::worker::main(
        std::env::args_os().collect(),
    ));
}
