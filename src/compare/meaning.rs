//! What a fingerprint difference or a noise-check warning says, decided here and nowhere else:
//! every place that warns about one (`compare`'s "not comparable" lines, its noise lines, the
//! HTML page's highlighted rows and "warned" counts, `show`'s noise warnings) asks this module.
//!
//! The rule, one for the class: **a field warns only when its value says something about the
//! numbers compared.**
//! - The fingerprint: a field that differs by design (the kernel) is shown, shaded, never
//!   warned about; a field measured afresh at every boot (BogoMIPS: the kernel's delay-loop
//!   calibration, which jitters by a few per mille between boots of one kernel on one machine)
//!   is shown and never compared; a quantity that moves a little between kernels and boots
//!   (memory: what the kernel reserves) differs only beyond a relative tolerance; every other
//!   field differs when its values do, the random names of patchbench's own private
//!   directories (`patchbench-campaign-XXXXXX`, a new one per `campaign start`, `resume` and
//!   lab box) left out.
//! - The noise check a run stored as it started: a finding applies to a run only where the run
//!   used what it measures. The file tests' directory (its file system, free space, read-only
//!   or network) applies only to a run whose workload writes there (UnixBench's file, shell and
//!   looper tests, AIM7, will-it-scale; not `run syscall` or the models).
//!
//! [`RULES`] is the list of fields that are not compared exactly; [`applies`] is the list of
//! findings that depend on the workload.

use crate::noise::{Finding, Status};
use crate::record::{Kind, RunRecord};
use std::collections::BTreeSet;

/// How an attribute's values are compared between the sides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Differs by design (the kernel): shown, never warned about.
    Expected,
    /// Measured afresh at every boot, with a jitter that says nothing: shown, never compared.
    Measured,
    /// Numbers that differ only beyond this relative tolerance (one side's value has none of
    /// the other side's within it).
    Within(f64),
    /// Differs when the values do (private directories' random names left out).
    Exact,
}

/// The fields not compared exactly, by attribute name (`system.*` for the fingerprint,
/// `config.*` for the settings).
pub const RULES: &[(&str, Rule)] = &[
    ("system.kernel_release", Rule::Expected),
    ("system.kernel_version", Rule::Expected),
    ("system.bogomips", Rule::Measured),
    // MemTotal moves by what the kernel reserves: a few MiB between kernels and boots.
    ("system.memory_bytes", Rule::Within(0.02)),
    // Whom a run measured beside (--allow-overlap): warned about run by run, not as a
    // difference (crate::compare::comparability::overlap_warning).
    ("system.measured_beside", Rule::Measured),
];

/// The rule of attribute `name`.
pub fn rule(name: &str) -> Rule {
    RULES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Rule::Exact, |(_, r)| *r)
}

/// Whether the sides' values of attribute `name` differ under its rule.
pub fn differs(name: &str, base: &BTreeSet<String>, patched: &BTreeSet<String>) -> bool {
    match rule(name) {
        Rule::Measured => false,
        Rule::Within(tolerance) => match (numbers(base), numbers(patched)) {
            (Some(b), Some(p)) => {
                let near = |x: f64, others: &[f64]| {
                    others
                        .iter()
                        .any(|y| (x - y).abs() <= tolerance * x.abs().max(y.abs()))
                };
                b.iter().any(|x| !near(*x, &p)) || p.iter().any(|x| !near(*x, &b))
            }
            _ => base != patched,
        },
        Rule::Expected | Rule::Exact => normalised(base) != normalised(patched),
    }
}

/// Whether a difference of attribute `name` is warned about (the kernel's is expected, a
/// measured field's is never one).
pub fn warns(name: &str) -> bool {
    matches!(rule(name), Rule::Within(_) | Rule::Exact)
}

fn numbers(values: &BTreeSet<String>) -> Option<Vec<f64>> {
    values.iter().map(|v| v.parse::<f64>().ok()).collect()
}

fn normalised(values: &BTreeSet<String>) -> BTreeSet<String> {
    values.iter().map(|v| without_private_names(v)).collect()
}

/// `v` with the random suffix of every path component patchbench's private directories are
/// named with (`patchbench-<what>-XXXXXX`: `crate::private_dir`, six random characters)
/// replaced by `*`.
fn without_private_names(v: &str) -> String {
    v.split('/')
        .map(|part| {
            let random = part.len() > 6 && part.is_char_boundary(part.len() - 6) && {
                let (head, tail) = part.split_at(part.len() - 6);
                head.starts_with("patchbench-")
                    && head.ends_with('-')
                    && tail.chars().all(|c| c.is_ascii_alphanumeric())
            };
            if random {
                format!("{}*", &part[..part.len() - 6])
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a finding of the noise check `run` stored says something about its numbers.
pub fn applies(finding: &Finding, run: &RunRecord) -> bool {
    match finding.id.as_str() {
        "dir" => writes_in_its_directory(run),
        _ => true,
    }
}

/// The warnings of the noise check `run` stored that apply to it ([`applies`]).
pub fn noise_warnings(run: &RunRecord) -> Vec<&Finding> {
    run.system
        .noise
        .iter()
        .flat_map(|n| n.findings.iter())
        .filter(|f| f.status == Status::Warn && applies(f, run))
        .collect()
}

/// The same, one line each (`source: value`).
pub fn noise_warning_lines(run: &RunRecord) -> Vec<String> {
    noise_warnings(run)
        .into_iter()
        .map(|f| format!("{}: {}", f.source, f.value))
        .collect()
}

/// Whether the run's workload writes files in its directory: a UnixBench run with a file,
/// shell or looper test (`Params::writes_files`), any AIM7 run (its log and its tasks'
/// files), any will-it-scale run (its file testcases are not told apart here), no model. A
/// UnixBench run whose tests are unknown (none of its metrics names one) counts as writing.
fn writes_in_its_directory(run: &RunRecord) -> bool {
    match run.kind {
        Kind::Unixbench => {
            let tests: Vec<&'static crate::unixbench::catalog::TestSpec> = run
                .metrics
                .iter()
                .filter_map(|m| m.params.get("test"))
                .filter_map(|id| crate::unixbench::catalog::find(id))
                .collect();
            tests.is_empty() || tests.iter().any(|t| t.params.writes_files())
        }
        Kind::Model => false,
        // A program we did not write may write anywhere in its directory.
        Kind::Aim7 | Kind::WillItScale | Kind::Exec | Kind::Debug => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::Kind as NoiseKind;
    use crate::record::{Direction, Metric};

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bogomips_never_differs_the_kernel_is_expected_memory_has_a_tolerance() {
        let (a, b) = (set(&["4885.89", "4890.84"]), set(&["4890.75"]));
        assert!(!differs("system.bogomips", &a, &b));
        assert!(!warns("system.bogomips"));
        assert!(differs(
            "system.kernel_release",
            &set(&["6.1"]),
            &set(&["6.2"])
        ));
        assert!(!warns("system.kernel_release"));
        // 2.00 GiB against 1.97 GiB (the kernel reserved 30 MiB more): the same machine.
        let gib = |g: f64| ((g * (1u64 << 30) as f64) as u64).to_string();
        assert!(!differs(
            "system.memory_bytes",
            &set(&[&gib(2.0)]),
            &set(&[&gib(1.97)])
        ));
        assert!(differs(
            "system.memory_bytes",
            &set(&[&gib(2.0)]),
            &set(&[&gib(4.0)])
        ));
        // Two boxes of a lab, both sides on both: the same sets, whatever their spread.
        assert!(!differs(
            "system.memory_bytes",
            &set(&[&gib(2.0), &gib(4.0)]),
            &set(&[&gib(4.01), &gib(1.99)])
        ));
        assert!(warns("system.memory_bytes"));
        assert!(differs(
            "system.cpu_model",
            &set(&["EPYC"]),
            &set(&["Xeon"])
        ));
    }

    #[test]
    fn private_directories_are_compared_without_their_random_names() {
        let a = set(&["/tmp/patchbench-campaign-Ab12Cd/scratch"]);
        let b = set(&["/tmp/patchbench-campaign-xY9zQ0/scratch"]);
        assert!(!differs("config.dir", &a, &b));
        assert!(differs(
            "config.dir",
            &a,
            &set(&["/srv/patchbench-campaign-xY9zQ0/scratch"])
        ));
        // A user's directory that only looks like one is compared as it is.
        assert!(differs(
            "config.dir",
            &set(&["/home/me/patchbench-runs"]),
            &set(&["/home/me/patchbench-other"])
        ));
    }

    fn run(kind: Kind, tests: &[&str], dir_status: Status) -> RunRecord {
        let mut r = RunRecord::new(kind, crate::sysinfo::SystemInfo::default(), &());
        r.metrics = tests
            .iter()
            .map(|t| {
                Metric::new(
                    "unixbench.score",
                    &[("test", t.to_string()), ("copies", "1".to_string())],
                    *t,
                    "lps",
                    Direction::HigherIsBetter,
                    1.0,
                    vec![1.0],
                )
            })
            .collect();
        let dir = Finding {
            status: dir_status,
            fix: Some("free space".into()),
            ..Finding::ok(
                "dir",
                "file tests' directory",
                NoiseKind::Setting,
                "/tmp: memory (tmpfs), only 0.96 GiB free",
            )
        };
        let load = Finding::warn("load", "load average", NoiseKind::Activity, "3.0", "wait");
        r.system.noise = Some(crate::noise::NoiseReport {
            schema: crate::noise::SCHEMA.into(),
            sample_secs: 0.25,
            dir: "/tmp".into(),
            findings: vec![load, dir],
            activity: None,
        });
        r
    }

    #[test]
    fn the_directory_warns_only_for_a_run_that_writes_there() {
        let syscall = run(Kind::Unixbench, &["syscall"], Status::Warn);
        assert_eq!(noise_warning_lines(&syscall), ["load average: 3.0"]);
        for writes in [&["syscall", "fstime"][..], &["shell1"], &["C"]] {
            let r = run(Kind::Unixbench, writes, Status::Warn);
            assert_eq!(noise_warnings(&r).len(), 2, "{writes:?}");
        }
        assert_eq!(noise_warnings(&run(Kind::Aim7, &[], Status::Warn)).len(), 2);
        assert_eq!(
            noise_warnings(&run(Kind::Model, &[], Status::Warn)).len(),
            1
        );
        assert_eq!(
            noise_warnings(&run(Kind::Unixbench, &[], Status::Warn)).len(),
            2
        );
        assert_eq!(
            noise_warnings(&run(Kind::Unixbench, &["fstime"], Status::Ok)).len(),
            1
        );
    }
}
