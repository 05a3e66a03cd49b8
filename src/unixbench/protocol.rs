//! The protocol between the runner and a worker (one `patchbench-worker` process per copy per
//! pass), used by both sides and by the overhead bench:
//!
//! - argv: `patchbench-worker TEST SECONDS`; the working directory is the run's private
//!   directory.
//! - stdin is the start gate: the worker does its setup, prints `READY`, then waits for end of
//!   file. The runner closes the write end once every copy is ready, releasing all at once.
//! - stdout carries result lines in UnixBench's style: `COUNT|count|timebase|unit`, optionally
//!   `TIME|seconds` (self-timed tests), always `WALL|seconds` (from release to the end of the
//!   work, children reaped), or `ERROR|message` with exit status 1. Later lines win, as in
//!   UnixBench's Run. Then `WINDOW|start_ns|stop_ns`: the copy's timed window on
//!   CLOCK_MONOTONIC (the same clock in every process), the span its count was made in: the
//!   release to the end of the work, or, for a test with a `TIME`, its own timed section. The
//!   file tests print `PAUSES|s,s,...` first: the internal pauses they made, in seconds.
//!   (`patchbench-execl` and `patchbench-spawn`, `no_std`, write the same lines by hand.)
//! - `execl` replaces the worker, after the release, with `patchbench-execl 0 DURATION_MS 0
//!   START_NS`, which execs itself until the deadline and prints the same result lines.
//! - `spawn` replaces the worker, before READY, with `patchbench-spawn SECONDS`, which speaks
//!   this protocol itself (READY, the gate, the result lines).

/// The line a worker prints when its setup is done and it waits at the gate.
pub const READY: &[u8] = b"READY\n";

/// True when a worker's output so far starts with its READY line.
pub fn is_ready(stdout: &[u8]) -> bool {
    stdout.starts_with(READY)
}

/// `COUNT|count|timebase|unit`.
pub fn count_line(count: f64, timebase: u32, unit: &str) -> String {
    format!("COUNT|{count}|{timebase}|{unit}\n")
}

/// `TIME|seconds`: the workload's own measured time.
pub fn time_line(seconds: f64) -> String {
    format!("TIME|{seconds}\n")
}

/// `WALL|seconds`: release to the end of the work.
pub fn wall_line(seconds: f64) -> String {
    format!("WALL|{seconds}\n")
}

/// `WINDOW|start_ns|stop_ns`: the copy's timed window on CLOCK_MONOTONIC.
pub fn window_line(start_ns: u64, stop_ns: u64) -> String {
    format!("WINDOW|{start_ns}|{stop_ns}\n")
}

/// `PAUSES|s,s,...`: the internal pauses a workload made, in whole seconds, in order.
pub fn pauses_line(pauses: &[u64]) -> String {
    let list: Vec<String> = pauses.iter().map(u64::to_string).collect();
    format!("PAUSES|{}\n", list.join(","))
}

/// `ERROR|message`, on one line.
pub fn error_line(message: &str) -> String {
    format!("ERROR|{}\n", message.replace('\n', " "))
}

/// Parsed result lines of one copy.
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    pub count: Option<f64>,
    pub time: Option<f64>,
    pub wall: Option<f64>,
    /// The timed window, CLOCK_MONOTONIC nanoseconds.
    pub window: Option<(u64, u64)>,
    /// The internal pauses (file tests), in seconds.
    pub pauses: Option<Vec<u64>>,
    pub error: Option<String>,
}

impl Report {
    /// The rate a report gives over its wall time (the overhead bench's figure).
    pub fn rate_over_wall(&self) -> Option<f64> {
        Some(self.count? / self.wall?)
    }
}

/// Parses a worker's stdout (later lines win).
pub fn parse(text: &str) -> Report {
    let mut r = Report::default();
    for line in text.lines() {
        let mut f = line.split('|');
        match (f.next(), f.next()) {
            (Some("WINDOW"), Some(a)) => {
                r.window = match (a.parse(), f.next().map(str::parse)) {
                    (Ok(a), Some(Ok(b))) if b >= a => Some((a, b)),
                    _ => None,
                }
            }
            (Some("COUNT"), Some(v)) => r.count = v.parse().ok(),
            (Some("TIME"), Some(v)) => r.time = v.parse().ok(),
            (Some("WALL"), Some(v)) => r.wall = v.parse().ok(),
            (Some("PAUSES"), Some(v)) => {
                r.pauses = v
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(|p| p.parse().ok())
                    .collect()
            }
            (Some("ERROR"), Some(_)) => r.error = Some(line["ERROR|".len()..].to_string()),
            _ => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_lines_win_and_errors_are_kept() {
        let r = parse("READY\nCOUNT|10|1|lps\nCOUNT|11|1|lps\nTIME|2.5\nWALL|2.6\n");
        assert_eq!(r.count, Some(11.0));
        assert_eq!(r.time, Some(2.5));
        assert_eq!(r.wall, Some(2.6));
        assert_eq!(r.error, None);
        let r = parse("READY\nERROR|pipe: pipe write: Broken pipe|x\n");
        assert_eq!(r.error.as_deref(), Some("pipe: pipe write: Broken pipe|x"));
        assert_eq!(r.count, None);
    }

    #[test]
    fn written_lines_parse_back() {
        let text = [
            count_line(1234.0, 1, "lps"),
            time_line(2.5),
            wall_line(2.75),
            pauses_line(&[2, 2, 1]),
            window_line(1_000, 3_750),
        ]
        .concat();
        let r = parse(&text);
        assert_eq!(
            (r.count, r.time, r.wall),
            (Some(1234.0), Some(2.5), Some(2.75))
        );
        assert_eq!(r.rate_over_wall(), Some(1234.0 / 2.75));
        assert_eq!(r.pauses, Some(vec![2, 2, 1]));
        assert_eq!(r.window, Some((1_000, 3_750)));
        assert_eq!(parse("WINDOW|9|8\n").window, None);
        assert_eq!(pauses_line(&[2, 1]), "PAUSES|2,1\n");
        assert_eq!(parse(&error_line("a\nb")).error.as_deref(), Some("a b"));
        assert!(is_ready(b"READY\nCOUNT|1"));
    }
}
