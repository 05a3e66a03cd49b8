//! The stress-ng reader: what patchbench adds to its command line (`--metrics`, and `--yaml
//! FILE` in the run's private directory unless the user gave `--yaml`), and the metrics read
//! back from that YAML file, named as LKP names them: `stress-ng.<stressor>.ops_per_sec` (bogo
//! ops per second of real time) and `stress-ng.<stressor>.ops` (bogo ops), both higher is
//! better.
//!
//! The file is read by a small parser of the one shape stress-ng writes (checked against
//! 0.15.06's, kept in `tests/fixtures/exec/`), not a YAML library: after a line `metrics:`,
//! each `- stressor: NAME` line starts a stressor and the indented `key: value` lines under it
//! are its figures, until a line that is not indented (the document's end `...`, or another
//! section). Anything else in the file (`system-info:`, per-stressor extras such as
//! `mb-per-sec-devnull-write-rate`) is left alone. A stressor without both figures, or a
//! figure that is not a number, is an error: a file we cannot read is never half-read.

use std::collections::BTreeMap;

/// One stressor's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Stressor {
    pub name: String,
    /// `bogo-ops`.
    pub ops: f64,
    /// `bogo-ops-per-second-real-time`.
    pub ops_per_sec: f64,
}

/// The arguments to add to the user's (after them): `--metrics` unless given, and `--yaml
/// yaml` unless the user named a YAML file. Returns the additions and the YAML file the
/// figures will be in (the user's, where given).
pub fn additions(args: &[String], yaml: &str) -> (Vec<String>, String) {
    let mut add = Vec::new();
    if !args.iter().any(|a| a == "--metrics" || a == "-M") {
        add.push("--metrics".to_string());
    }
    match users_yaml(args) {
        Some(file) => (add, file),
        None => {
            add.push("--yaml".to_string());
            add.push(yaml.to_string());
            (add, yaml.to_string())
        }
    }
}

/// The YAML file the user gave (`--yaml FILE`, `--yaml=FILE`, `-Y FILE`).
fn users_yaml(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--yaml" || a == "-Y" {
            return it.next().cloned();
        }
        if let Some(f) = a.strip_prefix("--yaml=") {
            return Some(f.to_string());
        }
    }
    None
}

/// The stressors of a stress-ng YAML document, in its order.
pub fn parse(text: &str) -> Result<Vec<Stressor>, String> {
    let mut in_metrics = false;
    let mut current: Option<(String, BTreeMap<String, String>)> = None;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(' ');
        if !indented {
            if let Some(s) = current.take() {
                out.push(finish(s)?);
            }
            in_metrics = line == "metrics:";
            continue;
        }
        if !in_metrics {
            continue;
        }
        let body = line.trim_start();
        if let Some(item) = body.strip_prefix("- ") {
            if let Some(s) = current.take() {
                out.push(finish(s)?);
            }
            let (key, value) = key_value(item)
                .ok_or_else(|| format!("line {}: {:?} is not `key: value`", i + 1, item))?;
            if key != "stressor" {
                return Err(format!(
                    "line {}: a metrics entry starts with {key:?}, not `stressor`",
                    i + 1
                ));
            }
            current = Some((value.to_string(), BTreeMap::new()));
        } else if let Some((_, fields)) = current.as_mut() {
            if let Some((key, value)) = key_value(body) {
                fields.insert(key.to_string(), value.to_string());
            }
        }
    }
    if let Some(s) = current.take() {
        out.push(finish(s)?);
    }
    Ok(out)
}

/// `key: value`, the value without quotes.
fn key_value(s: &str) -> Option<(&str, &str)> {
    let (k, v) = s.split_once(':')?;
    let v = v.trim();
    let v = v
        .strip_prefix('\'')
        .and_then(|x| x.strip_suffix('\''))
        .unwrap_or(v);
    Some((k.trim(), v))
}

fn finish((name, fields): (String, BTreeMap<String, String>)) -> Result<Stressor, String> {
    let number = |key: &str| -> Result<f64, String> {
        let v = fields
            .get(key)
            .ok_or_else(|| format!("stressor {name:?} has no {key}"))?;
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("stressor {name:?}: {key} {v:?} is not a number"))
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
    {
        return Err(format!("stressor name {name:?} is not a stressor's name"));
    }
    Ok(Stressor {
        ops: number("bogo-ops")?,
        ops_per_sec: number("bogo-ops-per-second-real-time")?,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn metrics_and_a_yaml_file_are_added_unless_given() {
        let (add, file) = additions(&w("--get 1 --timeout 2"), "/p/y.yaml");
        assert_eq!(add, w("--metrics --yaml /p/y.yaml"));
        assert_eq!(file, "/p/y.yaml");
        let (add, file) = additions(&w("--get 1 -M --yaml mine.yaml"), "/p/y.yaml");
        assert!(add.is_empty());
        assert_eq!(file, "mine.yaml");
        let (_, file) = additions(&w("--get 1 --yaml=/t/m.yaml"), "/p/y.yaml");
        assert_eq!(file, "/t/m.yaml");
    }

    #[test]
    fn the_real_files_are_read() {
        let one = include_str!("../../tests/fixtures/exec/stress-ng-get.yaml");
        let s = parse(one).unwrap();
        assert_eq!(
            s,
            vec![Stressor {
                name: "get".into(),
                ops: 20739.0,
                ops_per_sec: 10369.424596,
            }]
        );
        let two = include_str!("../../tests/fixtures/exec/stress-ng-get-null.yaml");
        let s = parse(two).unwrap();
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["get", "null"]);
        assert_eq!(s[1].ops, 115690.0);
        assert_eq!(s[1].ops_per_sec, 115648.062004);
    }

    #[test]
    fn a_file_without_metrics_has_no_stressors_and_bad_figures_are_refused() {
        assert!(parse("---\nsystem-info:\n      cpus: 2\n...\n")
            .unwrap()
            .is_empty());
        let bad = "metrics:\n    - stressor: get\n      bogo-ops: many\n      \
                   bogo-ops-per-second-real-time: 1.0\n";
        assert!(parse(bad).unwrap_err().contains("bogo-ops"));
        let missing = "metrics:\n    - stressor: get\n      bogo-ops: 3\n";
        assert!(parse(missing)
            .unwrap_err()
            .contains("bogo-ops-per-second-real-time"));
        let odd = "metrics:\n    - stressor: ../x\n      bogo-ops: 3\n";
        assert!(parse(odd).is_err());
    }
}
