//! The hackbench reader (rt-tests' hackbench): its `Time: SECONDS` line, and the throughput
//! patchbench derives from it. hackbench says its shape before it runs: `Running in process
//! mode with G groups using 2F file descriptors each (== T tasks)` (F senders and F receivers
//! per group) and `Each sender will pass L messages of S bytes`; every sender writes L messages
//! to each receiver of its group, so a run passes G × F × F × L messages, and
//!
//! ```text
//! hackbench.throughput = G × F × F × L / Time   (messages per second, higher is better)
//! hackbench.time       = Time                   (seconds, lower is better)
//! ```
//!
//! The lines are matched by their words, not their columns; an output without any of them is
//! refused (a run we cannot read is never half-read).

use super::Value;
use crate::record::Direction;

/// The metrics of one hackbench output.
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    let number_after = |label: &str| -> Option<f64> {
        text.lines().find_map(|l| {
            let rest = l.trim().strip_prefix(label)?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
    };
    let time = number_after("Time:")
        .filter(|t| t.is_finite() && *t > 0.0)
        .ok_or("it printed no `Time: SECONDS` line")?;
    let shape = text
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = |word: &str| w.iter().position(|x| *x == word);
            let groups = w.get(at("groups")?.checked_sub(1)?)?.parse::<f64>().ok()?;
            let fds = w.get(at("using")? + 1)?.parse::<f64>().ok()?;
            Some((groups, fds / 2.0))
        })
        .ok_or("it printed no `... with G groups using N file descriptors each` line")?;
    let loops = text
        .lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("Each sender will pass ")?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .ok_or("it printed no `Each sender will pass L messages` line")?;
    let (groups, per_side) = shape;
    let messages = groups * per_side * per_side * loops;
    Ok(vec![
        Value::new(
            "hackbench.throughput",
            "hackbench messages/s (groups × senders × receivers × loops / Time)",
            "msgs/s",
            Direction::HigherIsBetter,
            messages / time,
        ),
        Value::new(
            "hackbench.time",
            "hackbench Time",
            "s",
            Direction::LowerIsBetter,
            time,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_outputs_are_read() {
        let p = parse(include_str!(
            "../../tests/fixtures/exec/hackbench-process.txt"
        ))
        .unwrap();
        assert_eq!(p[1].value, 0.113);
        // 2 groups × 20 senders × 20 receivers × 200 loops in 0.113 s.
        assert!((p[0].value - 2.0 * 20.0 * 20.0 * 200.0 / 0.113).abs() < 1e-6);
        let t = parse(include_str!(
            "../../tests/fixtures/exec/hackbench-threads-pipe.txt"
        ))
        .unwrap();
        assert!((t[0].value - 2.0 * 5.0 * 5.0 * 300.0 / 0.004).abs() < 1e-6);
    }

    #[test]
    fn an_output_without_its_lines_is_refused() {
        assert!(parse("Time: 0.1\n").unwrap_err().contains("groups"));
        assert!(parse("hackbench: unrecognized option\n")
            .unwrap_err()
            .contains("Time"));
        assert!(parse("Time: 0\n").is_err());
    }
}
