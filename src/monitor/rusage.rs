//! The workload's own resource use: `getrusage` of this process (every thread: the
//! in-process workloads) plus of the children it has waited for (the copies and tasks, and
//! the grandchildren they waited for; man getrusage(2)).

/// Resource use so far, summed over self and waited-for children.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub user_s: f64,
    pub system_s: f64,
    pub minflt: f64,
    pub majflt: f64,
    pub nvcsw: f64,
    pub nivcsw: f64,
}

impl Usage {
    /// This process's and its reaped children's use so far.
    pub fn now() -> Usage {
        let a = read(libc::RUSAGE_SELF);
        let b = read(libc::RUSAGE_CHILDREN);
        Usage {
            user_s: a.user_s + b.user_s,
            system_s: a.system_s + b.system_s,
            minflt: a.minflt + b.minflt,
            majflt: a.majflt + b.majflt,
            nvcsw: a.nvcsw + b.nvcsw,
            nivcsw: a.nivcsw + b.nivcsw,
        }
    }

    /// What was used between `before` and this reading (never negative).
    pub fn since(&self, before: &Usage) -> Usage {
        let d = |a: f64, b: f64| (a - b).max(0.0);
        Usage {
            user_s: d(self.user_s, before.user_s),
            system_s: d(self.system_s, before.system_s),
            minflt: d(self.minflt, before.minflt),
            majflt: d(self.majflt, before.majflt),
            nvcsw: d(self.nvcsw, before.nvcsw),
            nivcsw: d(self.nivcsw, before.nivcsw),
        }
    }
}

fn read(who: libc::c_int) -> Usage {
    // SAFETY: getrusage writes one struct rusage into the zeroed buffer it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one struct rusage into the buffer it is given.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return Usage::default();
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        user_s: secs(ru.ru_utime),
        system_s: secs(ru.ru_stime),
        minflt: ru.ru_minflt as f64,
        majflt: ru.ru_majflt as f64,
        nvcsw: ru.ru_nvcsw as f64,
        nivcsw: ru.ru_nivcsw as f64,
    }
}
