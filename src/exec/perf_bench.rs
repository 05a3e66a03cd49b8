//! The `perf bench` reader for `perf bench sched messaging|pipe`, `perf bench syscall basic`
//! and `perf bench futex hash|lock-pi|wake|wake-parallel|requeue` (default format), matched by
//! labels, not columns (the text changes across perf versions):
//!
//! - `Total time: X [sec]` → `perf-bench.sched-messaging.total_time`,
//!   `perf-bench.sched-pipe.total_time` or `perf-bench.syscall-basic.total_time` (s, lower is
//!   better);
//! - pipe's and syscall's `X usecs/op` → `perf-bench.<bench>.usecs_per_op` (µs, lower is
//!   better) and `X ops/sec` → `perf-bench.<bench>.ops_per_sec` (higher is better);
//! - futex's `Averaged X operations/sec` → `perf-bench.futex-hash.ops_per_sec` or
//!   `perf-bench.futex-lock-pi.ops_per_sec` (higher is better; perf prints no total time);
//! - futex wake's and requeue's averaged `Wokeup N of N threads in X ms (+-Y%)` and `Requeued N
//!   of N threads in X ms (+-Y%)` → `perf-bench.futex-wake.time_ms` and
//!   `perf-bench.futex-requeue.time_ms` (the time to wake or requeue all the threads, ms, lower
//!   is better); wake-parallel's averaged `Avg per-thread latency (waking N/M threads) in X ms`
//!   → `perf-bench.futex-wake-parallel.latency_ms` (ms, lower is better). The averaged line is
//!   the one without a `[Run N]:` prefix (perf prints one such line per run before it).
//!
//! The benchmark is the one perf names in its `# Running 'sched/pipe' benchmark:` line. Any
//! other benchmark, or an output without its figures, is refused: say it with `--reader
//! generic` and `--metric` instead.

use super::{number_after, Value};
use crate::record::Direction;

/// Whether `perf ARGS` runs a benchmark this reader reads (`bench sched messaging|pipe`,
/// perf's options before them allowed).
pub fn reads(args: &[String]) -> bool {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    matches!(
        words.as_slice(),
        ["bench", "sched", "messaging" | "pipe", ..]
            | ["bench", "syscall", "basic", ..]
            | [
                "bench",
                "futex",
                "hash" | "lock-pi" | "wake" | "wake-parallel" | "requeue",
                ..
            ]
    )
}

/// The metrics of one output of a benchmark [`reads`] recognises.
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    let bench = text
        .lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("# Running '")?;
            rest.split_once('\'').map(|(b, _)| b.to_string())
        })
        .ok_or("it printed no `# Running '...' benchmark` line (give --format=default)")?;
    let prefix = match bench.as_str() {
        "sched/messaging" => "perf-bench.sched-messaging",
        "sched/pipe" => "perf-bench.sched-pipe",
        "syscall/basic" => "perf-bench.syscall-basic",
        "futex/hash" | "futex/lock-pi" | "futex/wake" | "futex/requeue" | "futex/wake-parallel" => {
            return futex(&bench, text).map(|v| vec![v])
        }
        other => {
            return Err(format!(
                "its benchmark {other:?} has no reader yet; use --reader generic and --metric"
            ))
        }
    };
    let total =
        number_after(text, "Total time:").ok_or("it printed no `Total time: X [sec]` line")?;
    let mut out = vec![Value::new(
        format!("{prefix}.total_time"),
        format!("perf bench {bench} total time"),
        "s",
        Direction::LowerIsBetter,
        total,
    )];
    if bench == "sched/pipe" || bench == "syscall/basic" {
        let before = |label: &str| -> Option<f64> {
            text.lines().find_map(|l| {
                let mut w = l.split_whitespace();
                let v = w.next()?.parse::<f64>().ok()?;
                (w.next()? == label).then_some(v)
            })
        };
        let usecs = before("usecs/op").ok_or("it printed no `X usecs/op` line")?;
        let ops = before("ops/sec").ok_or("it printed no `X ops/sec` line")?;
        out.push(Value::new(
            format!("{prefix}.ops_per_sec"),
            format!("perf bench {bench} ops/s"),
            "ops/s",
            Direction::HigherIsBetter,
            ops,
        ));
        out.push(Value::new(
            format!("{prefix}.usecs_per_op"),
            format!("perf bench {bench} µs/op"),
            "us",
            Direction::LowerIsBetter,
            usecs,
        ));
        // The figures perf prints first: the most-followed metric is the first one.
        out.rotate_left(1);
    }
    Ok(out)
}

/// The one figure of a futex benchmark (perf prints no total time for them).
fn futex(bench: &str, text: &str) -> Result<Value, String> {
    let (what, title, unit, direction, value) = match bench {
        "futex/hash" | "futex/lock-pi" => {
            let ops = number_after(text, "Averaged")
                .ok_or("it printed no `Averaged X operations/sec` line")?;
            (
                "ops_per_sec",
                "ops/s",
                "ops/s",
                Direction::HigherIsBetter,
                ops,
            )
        }
        _ => {
            let (label, what, title) = match bench {
                "futex/wake" => ("Wokeup", "time_ms", "time to wake all threads"),
                "futex/requeue" => ("Requeued", "time_ms", "time to requeue all threads"),
                _ => (
                    "Avg per-thread latency",
                    "latency_ms",
                    "per-thread wake latency",
                ),
            };
            let ms = averaged_ms(text, label)
                .ok_or_else(|| format!("it printed no averaged `{label} ... in X ms` line"))?;
            (what, title, "ms", Direction::LowerIsBetter, ms)
        }
    };
    Ok(Value::new(
        format!("perf-bench.{}.{what}", bench.replace('/', "-")),
        format!("perf bench {bench} {title}"),
        unit,
        direction,
        value,
    ))
}

/// X of the last line that starts with `label` and has `in X ms` (futex wake's and requeue's
/// averaged line, not their `[Run N]:` lines).
fn averaged_ms(text: &str, label: &str) -> Option<f64> {
    text.lines()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            if !l.starts_with(label) {
                return None;
            }
            let (_, rest) = l.rsplit_once(" in ")?;
            let mut w = rest.split_whitespace();
            let v = w.next()?.parse::<f64>().ok()?;
            (w.next()? == "ms").then_some(v)
        })
        .filter(|v| v.is_finite() && *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarks_it_reads_are_recognised() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert!(reads(&w("bench sched messaging -g 2")));
        assert!(reads(&w("--no-pager bench sched pipe -l 10")));
        assert!(reads(&w("bench futex hash -r 1")));
        assert!(reads(&w("bench syscall basic")));
        assert!(reads(&w("bench futex wake -t 4")));
        assert!(reads(&w("bench futex wake-parallel")));
        assert!(reads(&w("bench futex requeue --pi")));
        assert!(!reads(&w("bench futex all")));
        assert!(!reads(&w("stat -a true")));
    }

    #[test]
    fn the_real_outputs_are_read_by_their_labels() {
        let m = parse(include_str!(
            "../../tests/fixtures/exec/perf-bench-sched-messaging.txt"
        ))
        .unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].name, "perf-bench.sched-messaging.total_time");
        assert_eq!(m[0].value, 0.076);
        let p = parse(include_str!(
            "../../tests/fixtures/exec/perf-bench-sched-pipe.txt"
        ))
        .unwrap();
        let names: Vec<&str> = p.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "perf-bench.sched-pipe.ops_per_sec",
                "perf-bench.sched-pipe.usecs_per_op",
                "perf-bench.sched-pipe.total_time"
            ]
        );
        assert_eq!(p[0].value, 538444.0);
        assert_eq!(p[1].value, 1.8572);
        assert_eq!(p[2].value, 0.037);
    }

    #[test]
    fn futex_and_syscall_outputs_are_read_by_their_labels() {
        let read = |text: &str| -> Vec<(String, f64)> {
            parse(text)
                .unwrap()
                .into_iter()
                .map(|v| (v.name, v.value))
                .collect()
        };
        let hash = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-futex-hash.txt"
        ));
        assert_eq!(hash.len(), 1);
        assert_eq!(hash[0].0, "perf-bench.futex-hash.ops_per_sec");
        assert!(hash[0].1 > 1000.0);
        let pi = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-futex-lock-pi.txt"
        ));
        assert_eq!(pi[0].0, "perf-bench.futex-lock-pi.ops_per_sec");
        // wake, requeue, wake-parallel: the averaged line, not the last `[Run N]:` one.
        let wake = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-futex-wake.txt"
        ));
        assert_eq!(
            wake,
            [("perf-bench.futex-wake.time_ms".to_string(), 0.0254)]
        );
        let requeue = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-futex-requeue.txt"
        ));
        assert_eq!(
            requeue,
            [("perf-bench.futex-requeue.time_ms".to_string(), 0.0032)]
        );
        let parallel = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-futex-wake-parallel.txt"
        ));
        assert_eq!(
            parallel,
            [(
                "perf-bench.futex-wake-parallel.latency_ms".to_string(),
                0.0085
            )]
        );
        let sys = read(include_str!(
            "../../tests/fixtures/exec/perf-bench-syscall-basic.txt"
        ));
        let names: Vec<&str> = sys.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "perf-bench.syscall-basic.ops_per_sec",
                "perf-bench.syscall-basic.usecs_per_op",
                "perf-bench.syscall-basic.total_time"
            ]
        );
    }

    #[test]
    fn outputs_it_cannot_read_are_refused() {
        assert!(parse("0.004\n").unwrap_err().contains("--format=default"));
        let futex = "# Running 'futex/wake' benchmark:\n[Run 1]: Wokeup 2 of 2 threads\n";
        assert!(parse(futex).unwrap_err().contains("averaged `Wokeup"));
        let other = "# Running 'mem/memcpy' benchmark:\n";
        assert!(parse(other).unwrap_err().contains("no reader yet"));
        let hash = "# Running 'futex/hash' benchmark:\nnothing\n";
        assert!(parse(hash).unwrap_err().contains("Averaged"));
        let cut = "# Running 'sched/pipe' benchmark:\n     Total time: 0.1 [sec]\n";
        assert!(parse(cut).unwrap_err().contains("usecs/op"));
    }
}
