//! Metrics read from a program's output by a pattern the user gives: `--metric
//! 'NAME[:UNIT[:higher|lower]]=REGEX'`. The value is the pattern's first capture group (the
//! whole match when it has none), looked for in the invocation's standard output, then in its
//! standard error; the first match counts. A bare NAME becomes `exec.NAME`; a NAME with a dot
//! is kept as given (`myapp.latency`). Higher is better unless said.

use crate::record::Direction;
use regex::Regex;

/// One `--metric`.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The metric's full name (`exec.score`).
    pub name: String,
    pub unit: String,
    pub direction: Direction,
    pub regex: Regex,
    /// As given, for the record's settings.
    pub given: String,
}

/// The `--metric` syntax, for messages.
pub const SYNTAX: &str = "NAME[:UNIT[:higher|lower]]=REGEX";

/// Parses one `--metric` value; the error says what is wrong and how to write it.
pub fn parse(s: &str) -> Result<Pattern, String> {
    let (head, pattern) = s
        .split_once('=')
        .ok_or_else(|| format!("--metric {s:?}: give {SYNTAX}, e.g. 'score=score: (\\d+)'"))?;
    let mut parts = head.split(':');
    let name = parts.next().unwrap_or("").trim();
    let unit = parts.next().unwrap_or("").trim();
    let direction = match parts.next().map(str::trim) {
        None | Some("higher") => Direction::HigherIsBetter,
        Some("lower") => Direction::LowerIsBetter,
        Some(other) => {
            return Err(format!(
                "--metric {s:?}: the direction is higher or lower, not {other:?}"
            ))
        }
    };
    if parts.next().is_some() {
        return Err(format!("--metric {s:?}: give {SYNTAX}"));
    }
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-%".contains(c))
        && !name.starts_with('.')
        && !name.ends_with('.');
    if !name_ok {
        return Err(format!(
            "--metric {s:?}: the name {name:?} must be 1-64 letters, digits, '.', '_', '-' or '%'"
        ));
    }
    if unit.chars().any(|c| c.is_control() || c == ',') || unit.len() > 16 {
        return Err(format!(
            "--metric {s:?}: the unit {unit:?} must be up to 16 plain characters"
        ));
    }
    if pattern.is_empty() {
        return Err(format!("--metric {s:?}: the pattern after '=' is empty"));
    }
    let regex = Regex::new(pattern)
        .map_err(|e| format!("--metric {s:?}: the pattern is not a regular expression: {e}"))?;
    let name = if name.contains('.') {
        name.to_string()
    } else {
        format!("exec.{name}")
    };
    if crate::record::monitors::is_monitor(&name) {
        return Err(format!(
            "--metric {s:?}: {name} is a monitor's name; choose another"
        ));
    }
    Ok(Pattern {
        name,
        unit: unit.to_string(),
        direction,
        regex,
        given: s.to_string(),
    })
}

impl Pattern {
    /// The value in `stdout`, else in `stderr`; the error says why there is none.
    pub fn read(&self, stdout: &str, stderr: &str) -> Result<f64, String> {
        let caps = self
            .regex
            .captures(stdout)
            .or_else(|| self.regex.captures(stderr))
            .ok_or_else(|| {
                let last = stdout
                    .lines()
                    .chain(stderr.lines())
                    .rfind(|l| !l.trim().is_empty())
                    .map_or("nothing".to_string(), |l| {
                        format!("{:?}", crate::safe_text::field_cut(l.trim(), 120))
                    });
                format!(
                    "its output does not match --metric {} (its last line: {last})",
                    crate::safe_text::field(&self.given)
                )
            })?;
        let text = caps
            .get(1)
            .or_else(|| caps.get(0))
            .map_or("", |m| m.as_str());
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!(
                    "--metric {}: {} matched {}, which is not a number ≥ 0",
                    crate::safe_text::field(&self.name),
                    crate::safe_text::field(&self.given),
                    crate::safe_text::field(text)
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_directions_parse() {
        let p = parse(r"score=score: (\d+)").unwrap();
        assert_eq!(p.name, "exec.score");
        assert_eq!(p.unit, "");
        assert_eq!(p.direction, Direction::HigherIsBetter);
        let p = parse(r"myapp.lat:ms:lower=latency (\d+\.\d+) ms").unwrap();
        assert_eq!(p.name, "myapp.lat");
        assert_eq!(p.unit, "ms");
        assert_eq!(p.direction, Direction::LowerIsBetter);
        // '=' and ':' inside the pattern are the pattern's.
        let p = parse(r"x=a=(\d+):b").unwrap();
        assert_eq!(p.regex.as_str(), r"a=(\d+):b");
        for (bad, why) in [
            ("score", "give NAME"),
            ("=x", "the name"),
            ("a b=x", "the name"),
            ("s:u:up=x", "higher or lower"),
            ("s:u:lower:more=x", "give NAME"),
            ("s=", "empty"),
            ("s=(", "regular expression"),
            ("time.user_time=(\\d+)", "monitor"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn values_come_from_stdout_then_stderr() {
        let p = parse(r"score=score: (\d+)").unwrap();
        assert_eq!(p.read("hello\nscore: 42\n", ""), Ok(42.0));
        assert_eq!(p.read("nothing", "score: 7"), Ok(7.0));
        assert!(p
            .read("nothing", "")
            .unwrap_err()
            .contains("does not match"));
        let whole = parse(r"n=\d+\.\d+").unwrap();
        assert_eq!(whole.read("took 1.50 s", ""), Ok(1.5));
        let neg = parse(r"n=v (-?\d+)").unwrap();
        assert!(neg.read("v -3", "").unwrap_err().contains("not a number"));
    }
}
