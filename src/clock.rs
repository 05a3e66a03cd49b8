//! Clocks shared by every command: wall-clock timestamps for results (RFC 3339, UTC) and the
//! monotonic clock in nanoseconds, the one clock every process on the machine agrees on.

/// The current time as RFC 3339 in UTC, e.g. `2026-11-29T20:35:04.123Z`.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// CLOCK_MONOTONIC in nanoseconds (the same clock in every process, across exec).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Seconds from one RFC 3339 time to another (None when either does not parse).
pub fn secs_between(from: &str, to: &str) -> Option<f64> {
    let parse = |s: &str| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
    };
    Some((parse(to)? - parse(from)?).as_seconds_f64())
}

/// Seconds from an RFC 3339 time to now (None when it does not parse).
pub fn secs_since(from: &str) -> Option<f64> {
    secs_between(from, &now_rfc3339())
}

/// `1 h 05 min`, `4 min 10 s`, `12 s`.
pub fn human_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}
