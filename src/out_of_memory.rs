//! The global allocator of patchbench's programs: the system's, except that a failed
//! allocation does not abort (Rust's default prints "memory allocation of N bytes failed"
//! and raises SIGABRT, leaving task groups running and private directories behind). Instead
//! [`crate::emergency::exit`] kills the task groups, removes the private directories, writes
//! one line and exits with status 2, all without allocating.
//!
//! A program installs it with `#[global_allocator] static ALLOC: Guard = Guard::LOUD;`. The
//! AIM7 task program uses [`Guard::quiet`]: it exits silently with a status its driver turns
//! into the one line ([`OUT_OF_MEMORY_STATUS`]).
//!
//! Before `main`, Rust's runtime maps an alternate signal stack for the main thread (where its
//! stack-overflow message is printed) unless one is already set; under a tight address-space
//! limit that mmap fails and the runtime aborts with a three-line panic before any of our
//! code runs. [`install_signal_stack`], run from each program's `.init_array` before the
//! runtime starts, sets one in the program's own static memory instead, so there is nothing
//! left to fail there.
//!
//! Because every failed allocation ends here, `try_reserve` never returns an error in these
//! programs: code bounds what it reads instead (the importer's size cap) and allocates what a
//! load point needs before it forks the first task.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// The exit status of an AIM7 task that ran out of memory.
pub const OUT_OF_MEMORY_STATUS: i32 = 6;

/// A status this process exits with, silently, when an allocation fails (0: as its [`Guard`]
/// says). Set by [`quiet_from_now`].
static QUIET_NOW: AtomicI32 = AtomicI32::new(0);

/// From now on a failed allocation in this process exits with `status` without a word (0:
/// as its [`Guard`] says again). A will-it-scale thread host sets it while it makes its
/// threads, so that its driver says the one line (a start refused), not the host.
pub fn quiet_from_now(status: i32) {
    QUIET_NOW.store(status, Relaxed);
}

/// The system allocator with an exit path for failures.
pub struct Guard {
    /// 0: write the line and exit 2; else exit with this status, silently.
    quiet_status: i32,
}

impl Guard {
    /// Says what happened in one line, exits 2.
    pub const LOUD: Guard = Guard { quiet_status: 0 };

    /// Exits with `status` without a word.
    pub const fn quiet(status: i32) -> Guard {
        Guard {
            quiet_status: status,
        }
    }

    #[cold]
    fn failed(&self, bytes: usize) -> ! {
        let quiet = match QUIET_NOW.load(Relaxed) {
            0 => self.quiet_status,
            now => now,
        };
        if quiet != 0 {
            crate::emergency::exit(&[], quiet);
        }
        let mut num = [0u8; 20];
        crate::emergency::exit(
            &[
                b"patchbench: error: out of memory: could not allocate ",
                crate::emergency::decimal(bytes as u64, &mut num),
                b" bytes; raise the memory limit (ulimit -v, the cgroup's memory.max) or ask \
                  for less (a lower --load, fewer copies, a smaller file)",
            ],
            2,
        )
    }
}

/// Bytes of the main thread's alternate signal stack (several times MINSIGSTKSZ).
const SIGNAL_STACK_BYTES: usize = 64 * 1024;

/// The main thread's alternate signal stack, in the program's static memory.
struct SignalStack(std::cell::UnsafeCell<[u8; SIGNAL_STACK_BYTES]>);

// SAFETY: only the kernel writes to it, on the main thread's signal deliveries.
unsafe impl Sync for SignalStack {}

static SIGNAL_STACK: SignalStack = SignalStack(std::cell::UnsafeCell::new([0; SIGNAL_STACK_BYTES]));

/// Sets the main thread's alternate signal stack to static memory, so that Rust's runtime
/// (which sets one only if none is set) maps nothing at start-up. A program calls it from
/// its `.init_array`:
///
/// ```ignore
/// #[used]
/// #[link_section = ".init_array"]
/// static SIGNAL_STACK: extern "C" fn() = patchbench::out_of_memory::install_signal_stack;
/// ```
pub extern "C" fn install_signal_stack() {
    let stack = libc::stack_t {
        ss_sp: SIGNAL_STACK.0.get().cast(),
        ss_flags: 0,
        ss_size: SIGNAL_STACK_BYTES,
    };
    // SAFETY: the stack is static, so it outlives every signal the thread can take.
    unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
}

// SAFETY: every call is forwarded to the system allocator with the same arguments; a null
// result never returns (the process exits).
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            self.failed(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            self.failed(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            self.failed(new_size);
        }
        p
    }
}
