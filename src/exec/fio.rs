//! The fio reader: what patchbench adds to fio's command line (`--output-format=json` and
//! `--output=FILE` in the run's private directory, unless the user gave an output format or
//! an output file), the check made before anything starts (fio must be told where every job
//! writes: `--directory` or `--filename` among its global options, or each job's own, on the
//! command line or in its job files; else the job writes in the current directory), and the
//! metrics
//! read back from its JSON, named as LKP names them. For each job of `jobs[]` and each
//! direction `<dir>` (`read`, `write`, `trim`) that moved data (`io_bytes` > 0):
//!
//! - `fio.<dir>_iops`: its `iops` (IOPS, higher is better);
//! - `fio.<dir>_bw_MBps`: its `bw`, which fio gives in KiB/s, divided by 1024: MiB/s, LKP's
//!   `MBps` (higher is better);
//! - `fio.<dir>_clat_mean_ns`: `clat_ns.mean` (ns, lower is better);
//! - `fio.<dir>_clat_90%_ns`, `_clat_95%_ns`, `_clat_99%_ns`: `clat_ns.percentile["90.000000"]`
//!   and so on (ns, lower is better; LKP's percentiles), each left out when fio printed no
//!   such percentile (`--clat_percentiles=0`, a `--percentile_list` without it).
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

/// The options that say where a job's files go.
const PLACES: &[&str] = &["directory", "filename"];

/// fio's options that take no value, so that a word after one is a job file (`fio
/// --time_based job.fio`); any other `--NAME` without `=` takes the next word as its value.
const FLAGS: &[&str] = &[
    "time_based",
    "group_reporting",
    "minimal",
    "append-terse",
    "showcmd",
    "readonly",
    "parse-only",
    "latency-log",
    "bandwidth-log",
    "warnings-fatal",
    "cpuclock-test",
    "merge-blktrace-only",
];

/// One job, and whether it is told where its files go.
#[derive(Debug, PartialEq)]
struct Job {
    name: String,
    /// `on its command line`, `in FILE`.
    from: String,
    placed: bool,
}

/// fio's command line as far as placing files goes: whether its global options (those before
/// the first `--name`, which apply to every job, those of the job files too) place them, its
/// jobs (each `--name` and the options after it), and its job files (the other words).
fn command_line(args: &[String]) -> (bool, Vec<Job>, Vec<&str>) {
    let mut global = false;
    let mut jobs: Vec<Job> = Vec::new();
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(opt) = a.strip_prefix("--") else {
            if !a.starts_with('-') {
                files.push(a.as_str());
            }
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None if FLAGS.contains(&opt) => (opt, None),
            None => (opt, it.next().map(String::as_str)),
        };
        let value = value.unwrap_or("");
        if name == "name" {
            jobs.push(Job {
                name: value.to_string(),
                from: "on its command line".to_string(),
                placed: false,
            });
        } else if PLACES.contains(&name) && !value.is_empty() {
            match jobs.last_mut() {
                Some(job) => job.placed = true,
                None => global = true,
            }
        }
    }
    (global, jobs, files)
}

/// The jobs of a job file (fio's ini format: `[NAME]` sections, `[global]` setting the
/// defaults of the jobs after it in the file, `key=value` lines, `;` and `#` comments). A
/// `directory=` or `filename=` with `{dir}` is refused: fio reads it as it is, a directory
/// named `{dir}` in the current one.
fn job_file(path: &str) -> Result<Vec<Job>, String> {
    let shown = crate::safe_text::field(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read fio's job file {shown}: {e}"))?;
    let mut global = false;
    let mut in_global = false;
    let mut jobs: Vec<Job> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_global = section == "global";
            if !in_global {
                jobs.push(Job {
                    name: section.to_string(),
                    from: format!("in {shown}"),
                    placed: global,
                });
            }
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        let (key, value) = (key.trim(), value.trim());
        if !PLACES.contains(&key) || value.is_empty() {
            continue;
        }
        if value.contains(super::tool::DIR_PLACEHOLDER) {
            return Err(format!(
                "fio's job file {shown} says {key}={}: patchbench replaces {{dir}} on the \
                 command line only; write {key}=${{{}}} in a job file",
                crate::safe_text::field(value),
                super::tool::DIR_ENV
            ));
        }
        match jobs.last_mut() {
            Some(job) if !in_global => job.placed = true,
            _ => global = true,
        }
    }
    Ok(jobs)
}

/// Refuses, before anything starts, a fio command line with a job that would write in the
/// current directory (no `--directory` or `--filename` among the global options, and none
/// of its own on the command line or in its job file), or whose output this reader cannot
/// read (an `--output-format` other than json or json+). The error is one line.
pub fn check(args: &[String]) -> Result<(), String> {
    let (global, mut jobs, files) = command_line(args);
    for f in files {
        jobs.extend(job_file(f)?);
    }
    if !global {
        if jobs.is_empty() {
            return Err(
                "fio would lay out its files in the current directory: give --directory={dir} \
                 (the run's private directory, or a campaign's --scratch file system)"
                    .to_string(),
            );
        }
        if let Some(job) = jobs.iter().find(|j| !j.placed) {
            return Err(format!(
                "fio's job {} ({}) would lay out its files in the current directory: give it \
                 directory= or filename= (${{{}}} in a job file is the run's private directory), \
                 or --directory={{dir}} before the first --name",
                crate::safe_text::field(&job.name),
                job.from,
                super::tool::DIR_ENV
            ));
        }
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
            for (key, pct) in [
                ("90.000000", "90"),
                ("95.000000", "95"),
                ("99.000000", "99"),
            ] {
                if let Some(p) = number(&["clat_ns", "percentile", key]) {
                    out.push(value(
                        &format!("clat_{pct}%_ns"),
                        format!("fio {dir} completion latency, {pct}th percentile"),
                        "ns",
                        Direction::LowerIsBetter,
                        p,
                    ));
                }
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
        let e = check(&w("--rw=read --size=1M")).unwrap_err();
        assert!(e.contains("give --directory={dir}"), "{e}");
        let e = check(&w("--name=t --rw=read --size=1M")).unwrap_err();
        assert!(e.contains("job t (on its command line)"), "{e}");
        // A directory after a --name is that job's only.
        let e = check(&w("--name=a --name=b --directory=/s")).unwrap_err();
        assert!(e.contains("job a "), "{e}");
        assert!(check(&w("--directory /s --name=a --name=b")).is_ok());
        assert!(check(&w("--name=t --directory={dir}")).is_ok());
        assert!(check(&w("--name=t --directory /mnt/s")).is_ok());
        assert!(check(&w("--name=t --filename={dir}/f")).is_ok());
        assert!(check(&w("--name=t --directory={dir} --output-format=json+")).is_ok());
        let e = check(&w("--name=t --directory={dir} --output-format=terse")).unwrap_err();
        assert!(e.contains("--reader generic"), "{e}");
    }

    #[test]
    fn job_files_are_read_for_where_each_job_writes() {
        let d = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = d.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let global = file(
            "g.fio",
            "; placed\n[global]\ndirectory = /s\n[a]\nrw=read\n[b]\n",
        );
        let each = file(
            "e.fio",
            "[a]\nfilename=/s/f\n# b too\n[b]\ndirectory=${PATCHBENCH_DIR}\n",
        );
        let one = file(
            "o.fio",
            "[global]\nsize=1M\n[a]\ndirectory=/s\n[b]\nrw=write\n",
        );
        let late = file("l.fio", "[a]\n[global]\ndirectory=/s\n[b]\n");
        let braces = file("d.fio", "[a]\ndirectory={dir}\n");
        assert!(check(std::slice::from_ref(&global)).is_ok());
        assert!(check(&w(&format!("--time_based {each} --output-format=json"))).is_ok());
        let e = check(std::slice::from_ref(&one)).unwrap_err();
        assert!(e.starts_with("fio's job b (in "), "{e}");
        assert!(
            e.contains("o.fio) would lay out its files in the current directory"),
            "{e}"
        );
        // A [global] after a job is not that job's.
        assert!(check(&[late]).unwrap_err().contains("job a "));
        // The command line's global --directory places the job file's jobs too; one after a
        // --name does not.
        assert!(check(&w(&format!("--directory={{dir}} {one}"))).is_ok());
        let e = check(&w(&format!("--name=c --directory=/s {one}"))).unwrap_err();
        assert!(e.contains("job b "), "{e}");
        // The value of an option written without `=` is not a job file.
        assert!(check(&w(&format!("--output {one} {global}"))).is_ok());
        let e = check(&[braces]).unwrap_err();
        assert!(e.contains("write directory=${PATCHBENCH_DIR}"), "{e}");
        let e = check(&w("/nonexistent/job.fio")).unwrap_err();
        assert!(
            e.contains("cannot read fio's job file /nonexistent/job.fio"),
            "{e}"
        );
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
                "fio.read_clat_90%_ns",
                "fio.read_clat_95%_ns",
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
        assert_eq!(v[5].value, 31872.0);
        // LKP's 90th and 95th, from the same percentile list.
        assert!(
            v[3].value <= v[4].value && v[4].value <= v[5].value,
            "{v:#?}"
        );
    }

    #[test]
    fn the_real_two_job_output_names_each_job_and_only_the_directions_used() {
        let v = parse(include_str!("../../tests/fixtures/exec/fio-two-jobs.json")).unwrap();
        assert_eq!(v.len(), 12, "{v:#?}");
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
        assert_eq!(parse(&warned).unwrap().len(), 6);
    }
}
