//! The fio reader: what patchbench adds to fio's command line (`--output-format=json` and
//! `--output=FILE` in the run's private directory, unless the user gave an output format or
//! an output file), the check made before anything starts (fio must be told where to write:
//! `--directory` or `--filename`, else it writes in the current directory), and the metrics
//! read back from its JSON, named as LKP names them. For each job of `jobs[]` and each
//! direction `<dir>` (`read`, `write`, `trim`) that moved data (`io_bytes` > 0):
//!
//! - `fio.<dir>_iops`: its `iops` (IOPS, higher is better);
//! - `fio.<dir>_bw_MBps`: its `bw`, which fio gives in KiB/s, divided by 1024: MiB/s, LKP's
//!   `MBps` (higher is better);
//! - `fio.<dir>_clat_mean_ns`: `clat_ns.mean` (ns, lower is better);
//! - `fio.<dir>_clat_99%_ns`: `clat_ns.percentile["99.000000"]` (ns, lower is better), left
//!   out when fio printed no 99th percentile (`--clat_percentiles=0`, a `--percentile_list`
//!   without 99).
//!
//! With more than one job, each metric has the job's name in its params (`job=NAME`); jobs of
//! one name (`--numjobs` without `--group_reporting`) are told apart as `NAME#1`, `NAME#2`, ...
//! in their order. A job whose `error` is not 0, a file that is not fio's JSON, or one where
//! no job moved data fails the run: a file we cannot read is never half-read. Checked against
//! Debian 12's fio 3.33, whose real outputs are kept in `tests/fixtures/exec/`.

use super::Value;
use crate::record::Direction;
use std::collections::BTreeMap;

/// The directions fio reports, in its order.
const DIRECTIONS: &[&str] = &["read", "write", "trim"];

/// The output formats this reader reads, when the user gives one.
const JSON_FORMATS: &[&str] = &["json", "json+"];

/// The value of option `--NAME` in fio's arguments: `--NAME=VALUE` or `--NAME VALUE` (the
/// last one given, as fio takes it).
fn option<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let long = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == long {
            found = it.next().map(String::as_str).or(found);
        } else if let Some(v) = a.strip_prefix(&with_value) {
            found = Some(v);
        }
    }
    found
}

/// Refuses, before anything starts, a fio command line that would write in the current
/// directory (neither `--directory` nor `--filename`) or whose output this reader cannot
/// read (an `--output-format` other than json or json+). The error is one line.
pub fn check(args: &[String]) -> Result<(), String> {
    if option(args, "directory").is_none() && option(args, "filename").is_none() {
        return Err(
            "fio would lay out its files in the current directory: give --directory={dir} \
             (the run's private directory, or a campaign's --scratch file system)"
                .to_string(),
        );
    }
    match option(args, "output-format") {
        Some(f) if !JSON_FORMATS.contains(&f) => Err(format!(
            "fio --output-format={} cannot be read by the fio reader: leave it out \
             (patchbench adds --output-format=json) or give --reader generic",
            crate::safe_text::field(f)
        )),
        _ => Ok(()),
    }
}

/// The arguments to add to the user's (after them): `--output-format=json` unless the user
/// gave an output format, and `--output=FILE` unless the user gave an output file. Returns the
/// additions and the file the JSON will be in: the user's, ours, or `None` for fio's standard
/// output (the user gave a JSON format and no file).
pub fn additions(args: &[String], ours: &str) -> (Vec<String>, Option<String>) {
    let users_format = option(args, "output-format").is_some();
    let users_file = option(args, "output").map(str::to_string);
    if users_format {
        return (Vec::new(), users_file);
    }
    let mut add = vec!["--output-format=json".to_string()];
    match users_file {
        Some(file) => (add, Some(file)),
        None => {
            add.push(format!("--output={ours}"));
            (add, Some(ours.to_string()))
        }
    }
}

/// The metrics of one fio JSON document (text before its first `{`, such as a warning fio
/// printed on the same stream, is skipped).
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    let start = text
        .find('{')
        .ok_or("its output has no JSON document (was --output-format=json given?)")?;
    let doc: serde_json::Value =
        serde_json::from_str(&text[start..]).map_err(|e| format!("its JSON is unreadable: {e}"))?;
    let jobs = doc
        .get("jobs")
        .and_then(serde_json::Value::as_array)
        .ok_or("its JSON has no jobs[]")?;
    let names: Vec<String> = jobs
        .iter()
        .map(|j| {
            j.get("jobname")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let labels = job_labels(&names);
    let mut out = Vec::new();
    for (job, label) in jobs.iter().zip(&labels) {
        let shown = crate::safe_text::field(label);
        match job.get("error").and_then(serde_json::Value::as_i64) {
            Some(0) => {}
            Some(e) => return Err(format!("its job {shown} ended with error {e}")),
            None => return Err(format!("its job {shown} has no error field")),
        }
        let params: BTreeMap<String, String> = if jobs.len() > 1 {
            BTreeMap::from([("job".to_string(), label.clone())])
        } else {
            BTreeMap::new()
        };
        for dir in DIRECTIONS {
            let Some(d) = job.get(*dir) else { continue };
            let number = |path: &[&str]| -> Option<f64> {
                let mut v = d;
                for p in path {
                    v = v.get(*p)?;
                }
                v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
            };
            let bytes = number(&["io_bytes"])
                .ok_or_else(|| format!("its job {shown} has no {dir}.io_bytes"))?;
            if bytes <= 0.0 {
                continue;
            }
            let need = |path: &[&str]| {
                number(path).ok_or_else(|| {
                    format!("its job {shown} has no number at {dir}.{}", path.join("."))
                })
            };
            let value = |what: &str, title: String, unit: &str, direction, value| Value {
                name: format!("fio.{dir}_{what}"),
                params: params.clone(),
                title,
                unit: unit.to_string(),
                direction,
                value,
            };
            out.push(value(
                "iops",
                format!("fio {dir} IOPS"),
                "IOPS",
                Direction::HigherIsBetter,
                need(&["iops"])?,
            ));
            out.push(value(
                "bw_MBps",
                format!("fio {dir} bandwidth (bw KiB/s / 1024)"),
                "MiB/s",
                Direction::HigherIsBetter,
                need(&["bw"])? / 1024.0,
            ));
            out.push(value(
                "clat_mean_ns",
                format!("fio {dir} completion latency, mean"),
                "ns",
                Direction::LowerIsBetter,
                need(&["clat_ns", "mean"])?,
            ));
            if let Some(p99) = number(&["clat_ns", "percentile", "99.000000"]) {
                out.push(value(
                    "clat_99%_ns",
                    format!("fio {dir} completion latency, 99th percentile"),
                    "ns",
                    Direction::LowerIsBetter,
                    p99,
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("its JSON shows no job that read, wrote or trimmed anything".to_string());
    }
    Ok(out)
}

/// Each job's name for the params: its `jobname`, or `NAME#k` (k from 1, in order) when
/// several jobs share it.
fn job_labels(names: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    names
        .iter()
        .map(|n| {
            let shared = names.iter().filter(|m| *m == n).count() > 1;
            if shared {
                let k = seen.entry(n.as_str()).or_insert(0);
                *k += 1;
                format!("{n}#{k}")
            } else {
                n.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn find<'a>(v: &'a [Value], name: &str, job: Option<&str>) -> &'a Value {
        v.iter()
            .find(|x| x.name == name && x.params.get("job").map(String::as_str) == job)
            .unwrap_or_else(|| panic!("no {name} {job:?} in {v:#?}"))
    }

    #[test]
    fn json_and_a_file_are_added_unless_given() {
        let (add, file) = additions(&w("--name=t --directory=/s"), "/p/1.fio.json");
        assert_eq!(add, w("--output-format=json --output=/p/1.fio.json"));
        assert_eq!(file.as_deref(), Some("/p/1.fio.json"));
        let (add, file) = additions(&w("--name=t --output /s/mine.json"), "/p/1.json");
        assert_eq!(add, w("--output-format=json"));
        assert_eq!(file.as_deref(), Some("/s/mine.json"));
        let (add, file) = additions(&w("--name=t --output-format=json+"), "/p/1.json");
        assert!(add.is_empty());
        assert_eq!(file, None, "read from its standard output");
    }

    #[test]
    fn fio_must_be_told_where_to_write_and_in_json() {
        let e = check(&w("--name=t --rw=read --size=1M")).unwrap_err();
        assert!(e.contains("--directory={dir}"), "{e}");
        assert!(check(&w("--name=t --directory={dir}")).is_ok());
        assert!(check(&w("--name=t --directory /mnt/s")).is_ok());
        assert!(check(&w("--name=t --filename={dir}/f")).is_ok());
        assert!(check(&w("--name=t --directory={dir} --output-format=json+")).is_ok());
        let e = check(&w("--name=t --directory={dir} --output-format=terse")).unwrap_err();
        assert!(e.contains("--reader generic"), "{e}");
    }

    #[test]
    fn the_real_one_job_output_is_read_without_params() {
        let v = parse(include_str!("../../tests/fixtures/exec/fio-randread.json")).unwrap();
        let names: Vec<&str> = v.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fio.read_iops",
                "fio.read_bw_MBps",
                "fio.read_clat_mean_ns",
                "fio.read_clat_99%_ns"
            ]
        );
        assert!(v.iter().all(|x| x.params.is_empty()));
        assert_eq!(v[0].value, 36819.590205);
        assert_eq!(v[0].direction, Direction::HigherIsBetter);
        // bw 147278 KiB/s.
        assert_eq!(v[1].value, 147278.0 / 1024.0);
        assert_eq!(v[1].unit, "MiB/s");
        assert_eq!(v[2].value, 26782.165658);
        assert_eq!(v[2].direction, Direction::LowerIsBetter);
        assert_eq!(v[3].value, 31872.0);
    }

    #[test]
    fn the_real_two_job_output_names_each_job_and_only_the_directions_used() {
        let v = parse(include_str!("../../tests/fixtures/exec/fio-two-jobs.json")).unwrap();
        assert_eq!(v.len(), 8, "{v:#?}");
        assert_eq!(find(&v, "fio.read_iops", Some("r")).value, 19742.257742);
        assert_eq!(find(&v, "fio.read_clat_99%_ns", Some("r")).value, 1384448.0);
        assert_eq!(
            find(&v, "fio.write_bw_MBps", Some("w")).value,
            1216603.0 / 1024.0
        );
        assert_eq!(
            find(&v, "fio.write_clat_mean_ns", Some("w")).value,
            1895.269068
        );
        assert!(!v.iter().any(|x| x.name.starts_with("fio.trim")));
        assert!(!v
            .iter()
            .any(|x| x.name.starts_with("fio.write") && x.params["job"] == "r"));
    }

    #[test]
    fn jobs_of_one_name_are_numbered() {
        let names = ["t", "t", "u"].map(String::from);
        assert_eq!(job_labels(&names), ["t#1", "t#2", "u"]);
    }

    #[test]
    fn what_cannot_be_read_is_refused() {
        assert!(parse("fio: no such option").unwrap_err().contains("JSON"));
        assert!(parse("{\"jobs\": 3}").unwrap_err().contains("jobs[]"));
        let idle = r#"{"jobs":[{"jobname":"t","error":0,"read":{"io_bytes":0}}]}"#;
        assert!(parse(idle).unwrap_err().contains("no job"));
        let failed = r#"{"jobs":[{"jobname":"t","error":5,"read":{"io_bytes":4096}}]}"#;
        assert!(parse(failed).unwrap_err().contains("error 5"));
        let partial = r#"{"jobs":[{"jobname":"t","error":0,"read":{"io_bytes":4096,"iops":1}}]}"#;
        assert!(parse(partial).unwrap_err().contains("read.bw"));
        // A warning before the document is skipped.
        let warned = format!(
            "note: both iodepth >= 1 and synchronous I/O engine are selected\n{}",
            include_str!("../../tests/fixtures/exec/fio-randread.json")
        );
        assert_eq!(parse(&warned).unwrap().len(), 4);
    }
}
