//! pthread_mutex1 — "Contended pthread mutex": lock and unlock one global pthread mutex (the C
//! library's, as in will-it-scale).
//!
//! As in will-it-scale, "contended" holds only in thread mode: every forked process has its
//! own copy of the global mutex, so in process mode each task locks a mutex nobody else uses.

use super::*;
use std::cell::UnsafeCell;

pub const TESTCASE: Testcase = Testcase {
    name: "pthread_mutex1",
    description: "Contended pthread mutex",
    prepare: no_prepare,
    run: |ctx| locked_loop(ctx, MUTEX.get(), || {}),
    helpers: 0,
};

/// A global, as a C file-scope variable: shared by the threads of a process, copied by fork.
pub struct Global<T>(UnsafeCell<T>);

// SAFETY: the values are only reached through raw pointers, under the testcase's own locking
// (a pthread mutex) or by one thread.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    pub const fn new(v: T) -> Global<T> {
        Global(UnsafeCell::new(v))
    }

    pub fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// A statically initialised mutex (`PTHREAD_MUTEX_INITIALIZER`).
pub type Mutex = Global<libc::pthread_mutex_t>;

impl Mutex {
    pub const fn unlocked() -> Mutex {
        Global::new(libc::PTHREAD_MUTEX_INITIALIZER)
    }
}

static MUTEX: Mutex = Mutex::unlocked();

/// Adds one to the value at `p` with a plain load and store (a C `val++`).
///
/// # Safety
/// `p` is valid and, while this runs, written by no one else.
#[inline(always)]
pub unsafe fn bump(p: *mut u64) {
    p.write_volatile(p.read_volatile().wrapping_add(1));
}

/// Locks `mutex`, runs `update`, unlocks, forever (also used by pthread_mutex2-5).
pub fn locked_loop(
    ctx: &TaskCtx<'_>,
    mutex: *mut libc::pthread_mutex_t,
    mut update: impl FnMut(),
) -> Result<()> {
    loop {
        // SAFETY: an initialised mutex that lives as long as the loop.
        let r = unsafe { libc::pthread_mutex_lock(mutex) };
        if r != 0 {
            return Err(std::io::Error::from_raw_os_error(r)).context("pthread_mutex_lock");
        }
        update();
        // SAFETY: the mutex was initialised and this thread holds it.
        unsafe { libc::pthread_mutex_unlock(mutex) };
        ctx.slot.add(1);
    }
}
