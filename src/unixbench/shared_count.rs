//! The copies' loop counts as the runner can read them while the copies run, for the
//! throughput over the window in which all copies ran (will-it-scale's way: every task
//! counts in shared memory, the parent samples all counters at one moment).
//!
//! With more copies than CPUs each copy's timed window starts when it first gets a CPU, so
//! the windows drift apart and UnixBench's sum of counts over the mean window is no
//! throughput (at 256 copies on 2 CPUs they overlap 0 %). Every copy is released at once, and
//! each one's window ends at its own start + the duration, so none ends before release +
//! duration: the runner reads every copy's count at one moment before then (the common
//! stop; `crate::unixbench::runner::pass` says when), and the sum over the time since release
//! is the machine's throughput with all copies running (or waiting for a CPU) together.
//!
//! The runner makes a memfd of one 64-byte slot per copy (a cache line each, so copies never
//! share one) and hands it to each copy as an inherited descriptor named in
//! [`ENV`] (`FD:SLOT`). The worker maps it before READY; a test whose loop keeps its count
//! there ([`crate::unixbench::catalog::TestSpec::live_count`]) stores the count after every
//! loop, as UnixBench's C loops keep theirs in a global variable that their alarm handler
//! reads: a plain store, no clock, no call, nothing else of the harness in the loop.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable naming a copy's descriptor and slot (`FD:SLOT`).
pub const ENV: &str = "PATCHBENCH_SHARED_COUNT";
/// Bytes per copy: one cache line.
const SLOT_BYTES: usize = 64;

/// A mapping of `len` bytes, unmapped when dropped.
struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapping {
    fn new(fd: i32, len: usize) -> std::io::Result<Mapping> {
        // SAFETY: mapping `len` bytes of a descriptor we hold, shared, read-write.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping { ptr, len })
    }

    /// The counter of slot `i` (which must be inside the mapping).
    fn slot(&self, i: usize) -> &AtomicU64 {
        // SAFETY: slot i starts at i * 64 < len, is 8-byte aligned (the mapping is
        // page-aligned) and is only ever accessed atomically.
        unsafe {
            &*(self
                .ptr
                .cast::<u8>()
                .add(i * SLOT_BYTES)
                .cast::<AtomicU64>())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping what `new` mapped.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The runner's side: one slot per copy.
pub struct Counters {
    map: Mapping,
    copies: usize,
    /// Inherited by the copies while they start; closed once they all have.
    fd: Option<OwnedFd>,
}

impl Counters {
    /// Zeroed counters for `copies` copies.
    pub fn create(copies: usize) -> std::io::Result<Counters> {
        // Not close-on-exec: every copy inherits it (and closes it once mapped).
        // SAFETY: memfd_create with a NUL-terminated name.
        let raw = unsafe { libc::memfd_create(c"patchbench-counts".as_ptr(), 0) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just made and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let len = copies.max(1) * SLOT_BYTES;
        // SAFETY: sizing our own memfd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let map = Mapping::new(fd.as_raw_fd(), len)?;
        Ok(Counters {
            map,
            copies,
            fd: Some(fd),
        })
    }

    /// What copy `i` (from 0) gets in [`ENV`].
    pub fn env_value(&self, i: usize) -> String {
        let fd = self.fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        format!("{fd}:{i}")
    }

    /// Closes the runner's descriptor once every copy has started (the mapping stays).
    pub fn close_descriptor(&mut self) {
        self.fd = None;
    }

    /// Every copy's count now, and their sum.
    pub fn read(&self) -> (Vec<u64>, u64) {
        let counts: Vec<u64> = (0..self.copies)
            .map(|i| self.map.slot(i).load(Ordering::Relaxed))
            .collect();
        let sum = counts.iter().sum();
        (counts, sum)
    }
}

/// A copy's slot, mapped for the life of the process.
static SLOT: std::sync::OnceLock<SlotRef> = std::sync::OnceLock::new();
/// Where a copy that was given no slot keeps its count.
static UNSHARED: AtomicU64 = AtomicU64::new(0);

struct SlotRef {
    map: Mapping,
    slot: usize,
}

// SAFETY: the mapping is process-wide shared memory accessed only through atomics.
unsafe impl Send for SlotRef {}
// SAFETY: as above.
unsafe impl Sync for SlotRef {}

/// In a worker: maps the slot [`ENV`] names, if any, and closes the inherited descriptor.
/// A malformed value is an error naming it.
pub fn attach_from_env() -> std::io::Result<()> {
    let Some(value) = std::env::var_os(ENV) else {
        return Ok(());
    };
    let value = value.to_string_lossy();
    let bad = || std::io::Error::other(format!("{ENV}={value:?} is not FD:SLOT"));
    let (fd, slot) = value.split_once(':').ok_or_else(bad)?;
    let (fd, slot): (i32, usize) = (
        fd.parse().map_err(|_| bad())?,
        slot.parse().map_err(|_| bad())?,
    );
    let len = (slot + 1) * SLOT_BYTES;
    let map = Mapping::new(fd, len)?;
    // SAFETY: closing the inherited descriptor; the mapping keeps the memory.
    unsafe { libc::close(fd) };
    let _ = SLOT.set(SlotRef { map, slot });
    Ok(())
}

/// Where this copy's loop keeps its count: its shared slot, or a private counter.
pub fn counter() -> &'static AtomicU64 {
    match SLOT.get() {
        Some(s) => s.map.slot(s.slot),
        None => &UNSHARED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_written_in_one_mapping_is_read_in_another() {
        let mut c = Counters::create(3).unwrap();
        let (fd, _) = c
            .env_value(2)
            .split_once(':')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        let fd: i32 = fd.parse().unwrap();
        let other = Mapping::new(fd, 3 * SLOT_BYTES).unwrap();
        other.slot(2).store(41, Ordering::Relaxed);
        other.slot(0).store(1, Ordering::Relaxed);
        c.close_descriptor();
        assert_eq!(c.read(), (vec![1, 0, 41], 42));
    }
}
