//! The sysbench reader (sysbench 1.0's text output, read by labels, not columns) for its
//! built-in tests `cpu`, `memory`, `threads`, `mutex` and `fileio`, the test named on its
//! command line (`sysbench [OPTIONS] TEST [OPTIONS] run`):
//!
//! - `cpu`: `events per second: X` → `sysbench.cpu.events_per_sec` (higher is better);
//! - `memory`: `N MiB transferred (X MiB/sec)` → `sysbench.memory.transfer_MiBps` (higher
//!   is better), and `Total operations: N (X per second)` → `sysbench.memory.ops_per_sec`
//!   (higher is better);
//! - `threads` and `mutex`: `total time: Xs` → `sysbench.<test>.total_time` (s), and under
//!   `Latency (ms):` the `avg:` line → `sysbench.<test>.latency_avg_ms` and the `Nth
//!   percentile:` line (95th unless `--percentile` says otherwise) →
//!   `sysbench.<test>.latency_<N>th_ms` (ms), all lower is better;
//! - `fileio`, named after LKP's `fileio` test (which runs sysbench fileio), its `/s` spelt
//!   `_per_sec` and `MiBps` as above: `reads/s:` → `sysbench.fileio.read_operations_per_sec`,
//!   `writes/s:` → `.write_operations_per_sec`, `fsyncs/s:` → `.fsync_operations_per_sec`
//!   (ops/s), `read, MiB/s:` → `.read_bytes_MiBps`, `written, MiB/s:` → `.write_bytes_MiBps`
//!   (MiB/s), all higher is better, each kept only when above 0 (a `seqrd` run writes
//!   nothing); and the latency rows of `threads`.
//!
//! A `fileio` run needs its files: [`files`] runs `sysbench ... prepare` with the run's own
//! options in the run's working directory before the first invocation (outside the measured
//! ones), every invocation runs there, and `cleanup` runs at the end.
//!
//! Any other test (a Lua script) is not this reader's: auto picks the generic one. An output
//! without its figures is refused (a run we cannot read is never half-read).
//! Checked against Debian 12's sysbench 1.0.20, whose real outputs are kept in
//! `tests/fixtures/exec/`.

use super::{number_after, tool::Places, Value};
use crate::error::RunFailed;
use crate::proc::signals::Signals;
use crate::proc::supervise::Supervised;
use crate::record::Direction;
use std::path::Path;
use std::time::{Duration, Instant};

/// The tests this reader reads.
const TESTS: &[&str] = &["cpu", "memory", "threads", "mutex", "fileio"];

/// The test `sysbench ARGS` runs, when it is one this reader reads: the first word that is
/// not an option, followed by the `run` command.
pub fn test(args: &[String]) -> Option<&'static str> {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    match words.as_slice() {
        [t, "run", ..] => TESTS.iter().find(|x| *x == t).copied(),
        _ => None,
    }
}

/// `args` with the command (`run`, the word after the test) replaced by `command`: the same
/// options, for `prepare` and `cleanup`.
pub fn with_command(args: &[String], command: &str) -> Vec<String> {
    let mut words = 0;
    args.iter()
        .map(|a| {
            if a.starts_with('-') {
                return a.clone();
            }
            words += 1;
            if words == 2 {
                command.to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// `sysbench ARGS` with `command` (`prepare`, `cleanup`) for its test's files: run by
/// `program` in the run's working directory, its placeholders' environment set, within
/// `timeout`. Its failure is the run's, in one line with sysbench's `FATAL:` line (which it
/// prints on its standard output) or its last one.
pub fn files(
    program: &Path,
    args: &[String],
    command: &str,
    places: &Places,
    timeout: Duration,
    signals: &Signals,
) -> anyhow::Result<()> {
    let mut cmd = std::process::Command::new(program);
    cmd.args(with_command(args, command))
        .current_dir(&places.dir);
    places.set_env(&mut cmd);
    let what = format!("sysbench fileio {command}");
    let running = Supervised::spawn(cmd)
        .map_err(|e| RunFailed(format!("{what} could not be started: {e}")))?;
    let outcome = running.wait(
        signals,
        Some(Instant::now() + timeout),
        &mut |_| true,
        &mut || {},
    );
    let tail: Vec<&str> = outcome.tail.iter().map(String::as_str).collect();
    super::ended_well(&what, outcome.ended, timeout, || last_words(&tail)).map(|_| ())
}

/// `: LINE` for sysbench's last `FATAL:` line in `lines`, else for the last line that is not
/// blank, else ` (it printed nothing)`.
pub fn last_words(lines: &[&str]) -> String {
    let lines = || lines.iter().copied();
    match lines().rev().find(|l| l.trim_start().starts_with("FATAL:")) {
        Some(fatal) => super::last_words(std::iter::once(fatal), ""),
        None => super::last_words(lines(), " (it printed nothing)"),
    }
}

fn value(test: &str, what: &str, title: &str, unit: &str, direction: Direction, v: f64) -> Value {
    Value::new(
        format!("sysbench.{test}.{what}"),
        format!("sysbench {test} {title}"),
        unit,
        direction,
        v,
    )
}

/// The metrics of one output of sysbench's `test`.
pub fn parse(test: &str, text: &str) -> Result<Vec<Value>, String> {
    let higher = Direction::HigherIsBetter;
    let lower = Direction::LowerIsBetter;
    match test {
        "cpu" => {
            let eps = number_after(text, "events per second:")
                .ok_or("it printed no `events per second:` line")?;
            Ok(vec![value(
                test,
                "events_per_sec",
                "events/s",
                "events/s",
                higher,
                eps,
            )])
        }
        "memory" => {
            // `1024.00 MiB transferred (2693.85 MiB/sec)`
            let mibps = text
                .lines()
                .find_map(|l| {
                    let (_, rest) = l.split_once("MiB transferred (")?;
                    let (n, unit) = rest.split_once(' ')?;
                    unit.starts_with("MiB/sec")
                        .then(|| n.parse::<f64>().ok())
                        .flatten()
                })
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or("it printed no `N MiB transferred (X MiB/sec)` line")?;
            // `Total operations: 1048576 (2758501.12 per second)`
            let ops = text
                .lines()
                .find_map(|l| {
                    let rest = l.trim().strip_prefix("Total operations:")?;
                    let (_, per) = rest.split_once('(')?;
                    per.strip_suffix("per second)")?.trim().parse::<f64>().ok()
                })
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or("it printed no `Total operations: N (X per second)` line")?;
            Ok(vec![
                value(
                    test,
                    "transfer_MiBps",
                    "MiB/s transferred",
                    "MiB/s",
                    higher,
                    mibps,
                ),
                value(test, "ops_per_sec", "operations/s", "ops/s", higher, ops),
            ])
        }
        "threads" | "mutex" => {
            let total =
                number_after(text, "total time:").ok_or("it printed no `total time:` line")?;
            let mut out = vec![value(test, "total_time", "total time", "s", lower, total)];
            out.extend(latency(test, text)?);
            Ok(out)
        }
        "fileio" => {
            let need = |label: &str| {
                number_after(text, label).ok_or_else(|| format!("it printed no `{label}` line"))
            };
            let mut out = Vec::new();
            for (ops, mib, what) in [
                ("reads/s:", Some("read, MiB/s:"), "read"),
                ("writes/s:", Some("written, MiB/s:"), "write"),
                ("fsyncs/s:", None, "fsync"),
            ] {
                let per_sec = need(ops)?;
                let mibps = mib.map(need).transpose()?;
                if per_sec <= 0.0 && mibps.is_none_or(|m| m <= 0.0) {
                    continue;
                }
                out.push(value(
                    test,
                    &format!("{what}_operations_per_sec"),
                    &format!("{what} operations/s"),
                    "ops/s",
                    higher,
                    per_sec,
                ));
                if let Some(m) = mibps {
                    out.push(value(
                        test,
                        &format!("{what}_bytes_MiBps"),
                        &format!("{what} MiB/s"),
                        "MiB/s",
                        higher,
                        m,
                    ));
                }
            }
            if out.is_empty() {
                return Err("its `File operations:` show no read, write or fsync".to_string());
            }
            out.extend(latency(test, text)?);
            Ok(out)
        }
        other => Err(format!(
            "its test {} has no reader yet; use --reader generic and --metric",
            crate::safe_text::field(other)
        )),
    }
}

/// The `avg:` and `Nth percentile:` lines under `Latency (ms):` (lower is better).
fn latency(test: &str, text: &str) -> Result<Vec<Value>, String> {
    let lower = Direction::LowerIsBetter;
    let latency = text
        .split_once("Latency (ms):")
        .map(|(_, rest)| rest)
        .ok_or("it printed no `Latency (ms):` section")?;
    let avg = number_after(latency, "avg:").ok_or("its latency section has no `avg:` line")?;
    let (nth, pct) = latency
        .lines()
        .find_map(|l| {
            let (label, rest) = l.trim().split_once("th percentile:")?;
            let n: u32 = label.parse().ok()?;
            let v = rest.split_whitespace().next()?.parse::<f64>().ok()?;
            Some((n, v))
        })
        .filter(|(_, v)| v.is_finite() && *v >= 0.0)
        .ok_or("its latency section has no `Nth percentile:` line")?;
    Ok(vec![
        value(test, "latency_avg_ms", "latency, mean", "ms", lower, avg),
        value(
            test,
            &format!("latency_{nth}th_ms"),
            &format!("latency, {nth}th percentile"),
            "ms",
            lower,
            pct,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn figures(v: &[Value]) -> Vec<(&str, f64)> {
        v.iter().map(|x| (x.name.as_str(), x.value)).collect()
    }

    #[test]
    fn the_test_is_the_first_word_before_run() {
        assert_eq!(test(&w("cpu --time=1 run")), Some("cpu"));
        assert_eq!(test(&w("--threads=2 mutex run")), Some("mutex"));
        assert_eq!(test(&w("cpu help")), None);
        assert_eq!(
            test(&w("fileio --file-test-mode=seqwr run")),
            Some("fileio")
        );
        assert_eq!(test(&w("fileio prepare")), None);
        assert_eq!(test(&w("oltp_read_only run")), None);
    }

    #[test]
    fn the_real_outputs_are_read() {
        let cpu = parse(
            "cpu",
            include_str!("../../tests/fixtures/exec/sysbench-cpu.txt"),
        );
        assert_eq!(
            figures(&cpu.unwrap()),
            [("sysbench.cpu.events_per_sec", 1326.12)]
        );
        let mem = parse(
            "memory",
            include_str!("../../tests/fixtures/exec/sysbench-memory.txt"),
        );
        assert_eq!(
            figures(&mem.unwrap()),
            [
                ("sysbench.memory.transfer_MiBps", 2693.85),
                ("sysbench.memory.ops_per_sec", 2758501.12)
            ]
        );
        let threads = parse(
            "threads",
            include_str!("../../tests/fixtures/exec/sysbench-threads.txt"),
        )
        .unwrap();
        let names: Vec<&str> = threads.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sysbench.threads.total_time",
                "sysbench.threads.latency_avg_ms",
                "sysbench.threads.latency_95th_ms"
            ]
        );
        assert_eq!(threads[0].value, 1.0674);
        assert!(threads
            .iter()
            .all(|x| x.direction == Direction::LowerIsBetter));
        let mutex = parse(
            "mutex",
            include_str!("../../tests/fixtures/exec/sysbench-mutex.txt"),
        );
        assert_eq!(
            figures(&mutex.unwrap()),
            [
                ("sysbench.mutex.total_time", 0.1759),
                ("sysbench.mutex.latency_avg_ms", 163.15),
                ("sysbench.mutex.latency_95th_ms", 173.58)
            ]
        );
    }

    #[test]
    fn an_output_without_its_figures_is_refused() {
        let e = parse("cpu", "sysbench 1.0.20\nFATAL: invalid option\n").unwrap_err();
        assert!(e.contains("events per second"), "{e}");
        let e = parse("memory", "Total operations: 5 (7.0 per second)\n").unwrap_err();
        assert!(e.contains("MiB/sec"), "{e}");
        let e = parse("mutex", "    total time:   0.1s\n").unwrap_err();
        assert!(e.contains("Latency"), "{e}");
        assert!(parse("fileio", "").unwrap_err().contains("reads/s:"));
        assert!(parse("oltp", "").unwrap_err().contains("no reader"));
        let idle = "reads/s: 0.00\nwrites/s: 0\nfsyncs/s: 0\nread, MiB/s: 0\nwritten, MiB/s: 0\n";
        assert!(parse("fileio", idle).unwrap_err().contains("no read"));
    }

    #[test]
    fn the_real_fileio_outputs_are_read_with_only_the_operations_done() {
        let rw = parse(
            "fileio",
            include_str!("../../tests/fixtures/exec/sysbench-fileio-rndrw.txt"),
        )
        .unwrap();
        assert_eq!(
            figures(&rw),
            [
                ("sysbench.fileio.read_operations_per_sec", 125.35),
                ("sysbench.fileio.read_bytes_MiBps", 1.96),
                ("sysbench.fileio.write_operations_per_sec", 83.57),
                ("sysbench.fileio.write_bytes_MiBps", 1.31),
                ("sysbench.fileio.fsync_operations_per_sec", 307.53),
                ("sysbench.fileio.latency_avg_ms", 1.81),
                ("sysbench.fileio.latency_95th_ms", 4.03)
            ]
        );
        assert_eq!(rw[1].unit, "MiB/s");
        assert_eq!(rw[4].direction, Direction::HigherIsBetter);
        assert_eq!(rw[6].direction, Direction::LowerIsBetter);
        // A sequential read writes and syncs nothing: no write or fsync rows.
        let rd = parse(
            "fileio",
            include_str!("../../tests/fixtures/exec/sysbench-fileio-seqrd.txt"),
        )
        .unwrap();
        let names: Vec<&str> = rd.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sysbench.fileio.read_operations_per_sec",
                "sysbench.fileio.read_bytes_MiBps",
                "sysbench.fileio.latency_avg_ms",
                "sysbench.fileio.latency_95th_ms"
            ]
        );
    }

    #[test]
    fn prepare_and_cleanup_take_the_runs_options_and_fatal_is_the_last_word() {
        assert_eq!(
            with_command(&w("--threads=2 fileio --file-total-size=8M run"), "prepare"),
            w("--threads=2 fileio --file-total-size=8M prepare")
        );
        // Its FATAL line before a WARNING after it, as sysbench prints a missing prepare.
        let tail = [
            "sysbench 1.0.20",
            "FATAL: Cannot open file",
            "WARNING: Did you forget",
        ];
        assert_eq!(last_words(&tail), ": FATAL: Cannot open file");
        assert_eq!(last_words(&["a", "b"]), ": b");
        assert_eq!(last_words(&[]), " (it printed nothing)");
    }
}
