//! AIM7 `shared_memory` ("Shared Memory Operations", factor 100; a `DISKS` test whose
//! directory only names an unused file in AIM): one job creates a SysV shared memory segment
//! of 2048 bytes and a set of one semaphore, both with the task's pid as key (IPC_CREAT,
//! 0666), attaches the segment, sets the semaphore to 1, then 100 × (semop −1, memcpy into
//! the segment, semop +1, semop −1, memcpy out of it, semop +1) with sizes from pipe_test.c's
//! message table, and detaches and removes both: 400 semops a job.
//!
//! When the system's limit on segments or semaphore sets is reached, AIM sleeps 1 s and
//! tries again (forever); patchbench does the same, counting the retries (LKP raises
//! `kernel.sem` for this test). A task killed mid-job leaves its objects behind, so the
//! driver removes any whose key is one of its tasks' pids ([`remove_leftovers`]).

use super::messages::next_size;
use super::{check, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "shared_memory",
    factor: Factor::Fixed(100),
    units: "Shared Memory Operations",
    uses_dirs: true,
    counters: &["semops", "bytes", "retries"],
    run,
    ..Job::BASE
};

const SEGMENT: usize = 2048;
const ROUNDS: u32 = 100;

/// Whether `errno` says a system-wide limit was reached (AIM then waits and retries).
fn at_limit(errno: i32) -> bool {
    errno == libc::ENOSPC || errno == libc::ENOMEM
}

/// The segment and the semaphore set, created as AIM does.
fn create(ctx: &mut TaskCtx, key: libc::key_t) -> Result<(i32, i32), Fail> {
    loop {
        // SAFETY: plain SysV IPC calls.
        let shm = unsafe { libc::shmget(key, SEGMENT, libc::IPC_CREAT | 0o666) };
        if shm < 0 {
            let f = Fail::last("shmget");
            if !at_limit(f.errno) {
                return Err(f);
            }
        } else {
            // SAFETY: as above.
            let sem = unsafe { libc::semget(key, 1, libc::IPC_CREAT | 0o666) };
            if sem >= 0 {
                return Ok((shm, sem));
            }
            let f = Fail::last("semget");
            // SAFETY: removing the segment just created.
            unsafe { libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()) };
            if !at_limit(f.errno) {
                return Err(f);
            }
        }
        ctx.counters[2] += 1;
        // SAFETY: sleep has no preconditions.
        unsafe { libc::sleep(1) };
    }
}

fn semop(ctx: &mut TaskCtx, sem: i32, op: i16) -> Result<(), Fail> {
    let mut b = libc::sembuf {
        sem_num: 0,
        sem_op: op,
        sem_flg: 0,
    };
    // SAFETY: one operation on our own set.
    check("semop", unsafe { libc::semop(sem, &mut b, 1) })?;
    ctx.counters[0] += 1;
    Ok(())
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    // SAFETY: getpid has no preconditions.
    let key = unsafe { libc::getpid() } as libc::key_t;
    let (shm, sem) = create(ctx, key)?;
    // SAFETY: attaching the segment just made.
    let at = unsafe { libc::shmat(shm, std::ptr::null(), 0) };
    if at as isize == -1 {
        return Err(Fail::last("shmat"));
    }
    // SAFETY: setting our own semaphore.
    check("semctl SETVAL", unsafe {
        libc::semctl(sem, 0, libc::SETVAL, 1)
    })?;
    let mut local = [0u8; SEGMENT];
    for _ in 0..ROUNDS {
        let size = next_size(ctx);
        semop(ctx, sem, -1)?;
        // SAFETY: both buffers hold SEGMENT >= size bytes.
        unsafe { libc::memcpy(at, local.as_ptr().cast(), size) };
        semop(ctx, sem, 1)?;
        semop(ctx, sem, -1)?;
        // SAFETY: as above.
        unsafe { libc::memcpy(local.as_mut_ptr().cast(), at, size) };
        semop(ctx, sem, 1)?;
        ctx.counters[1] += 2 * size as u64;
    }
    // SAFETY: detaching and removing what this job made.
    unsafe {
        check("shmdt", libc::shmdt(at))?;
        check(
            "shmctl IPC_RMID",
            libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()),
        )?;
        check("semctl IPC_RMID", libc::semctl(sem, 0, libc::IPC_RMID))?;
    }
    Ok(())
}

/// Removes the segments and semaphore sets that tasks with these pids made and did not
/// remove (a task killed mid-job): a segment whose key is the pid and whose creator is that
/// pid, a semaphore set whose key is the pid and whose creator is this user.
pub fn remove_leftovers(pids: &[libc::pid_t]) {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for &pid in pids {
        // SAFETY: SysV IPC look-ups and removals with stat buffers on the stack.
        unsafe {
            let shm = libc::shmget(pid as libc::key_t, 0, 0);
            if shm >= 0 {
                let mut ds: libc::shmid_ds = std::mem::zeroed();
                if libc::shmctl(shm, libc::IPC_STAT, &mut ds) == 0 && ds.shm_cpid == pid {
                    libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
                }
            }
            let sem = libc::semget(pid as libc::key_t, 0, 0);
            if sem >= 0 {
                let mut ds: libc::semid_ds = std::mem::zeroed();
                if libc::semctl(sem, 0, libc::IPC_STAT, &mut ds as *mut libc::semid_ds) == 0
                    && ds.sem_perm.cuid == uid
                {
                    libc::semctl(sem, 0, libc::IPC_RMID);
                }
            }
        }
    }
}
