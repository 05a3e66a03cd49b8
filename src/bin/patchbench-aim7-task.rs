//! `patchbench-aim7-task`: the small program every AIM7 task is. The aim7 driver forks and
//! execs one per task, so a task (and what fork_test, exec_test and the shell tests fork from
//! it) is a copy of a small process, as AIM's tasks are copies of its small `multitask`. It
//! links the AIM7 jobs and what they use only. Not meant to be run by hand; see
//! `patchbench::aim7::task` for the design and `patchbench::aim7::task_program` for its
//! command line.

/// A task that runs out of memory exits with a status its driver reports in one line.
#[global_allocator]
static ALLOC: patchbench::out_of_memory::Guard =
    patchbench::out_of_memory::Guard::quiet(patchbench::out_of_memory::OUT_OF_MEMORY_STATUS);

/// The main thread's signal stack in static memory (see `patchbench::out_of_memory`).
#[used]
#[link_section = ".init_array"]
static SIGNAL_STACK: extern "C" fn() = patchbench::out_of_memory::install_signal_stack;

fn main() {
    std::process::exit(patchbench::aim7::task_program::main(
        std::env::args_os().collect(),
    ));
}
