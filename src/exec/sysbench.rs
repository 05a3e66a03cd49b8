//! The sysbench reader (sysbench 1.0's text output, read by labels, not columns) for its
//! built-in tests `cpu`, `memory`, `threads` and `mutex`, the test named on its command line
//! (`sysbench [OPTIONS] TEST [OPTIONS] run`):
//!
//! - `cpu`: `events per second: X` → `sysbench.cpu.events_per_sec` (higher is better);
//! - `memory`: `N MiB transferred (X MiB/sec)` → `sysbench.memory.transfer_MiBps` (higher
//!   is better), and `Total operations: N (X per second)` → `sysbench.memory.ops_per_sec`
//!   (higher is better);
//! - `threads` and `mutex`: `total time: Xs` → `sysbench.<test>.total_time` (s), and under
//!   `Latency (ms):` the `avg:` line → `sysbench.<test>.latency_avg_ms` and the `Nth
//!   percentile:` line (95th unless `--percentile` says otherwise) →
//!   `sysbench.<test>.latency_<N>th_ms` (ms), all lower is better.
//!
//! Any other test (`fileio`, a Lua script) is not this reader's: auto picks the generic one.
//! An output without its figures is refused (a run we cannot read is never half-read).
//! Checked against Debian 12's sysbench 1.0.20, whose real outputs are kept in
//! `tests/fixtures/exec/`.

use super::{number_after, Value};
use crate::record::Direction;

/// The tests this reader reads.
const TESTS: &[&str] = &["cpu", "memory", "threads", "mutex"];

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
            let latency = text
                .split_once("Latency (ms):")
                .map(|(_, rest)| rest)
                .ok_or("it printed no `Latency (ms):` section")?;
            let avg =
                number_after(latency, "avg:").ok_or("its latency section has no `avg:` line")?;
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
                value(test, "total_time", "total time", "s", lower, total),
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
        other => Err(format!(
            "its test {} has no reader yet; use --reader generic and --metric",
            crate::safe_text::field(other)
        )),
    }
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
        assert_eq!(test(&w("fileio --file-test-mode=seqwr run")), None);
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
        assert!(parse("fileio", "").unwrap_err().contains("no reader"));
    }
}
