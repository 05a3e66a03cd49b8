//! `patchbench check`'s table: one line per noise source, `status  source  value`, the
//! columns aligned and the fix of a warning at the end of its line, so `grep ^warn` shows
//! every problem with its remedy.

use crate::noise::NoiseReport;

pub fn render(report: &NoiseReport) -> String {
    let status_w = report
        .findings
        .iter()
        .map(|f| f.status.word().len())
        .max()
        .unwrap_or(0);
    let source_w = report
        .findings
        .iter()
        .map(|f| f.source.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for f in &report.findings {
        let fix = f
            .fix
            .as_ref()
            .map(|x| format!("; fix: {x}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{:status_w$}  {:source_w$}  {}{fix}\n",
            f.status.word(),
            f.source,
            f.value
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{Finding, Kind, SCHEMA};

    #[test]
    fn one_aligned_line_per_source() {
        let r = NoiseReport {
            schema: SCHEMA.into(),
            sample_secs: 1.0,
            dir: "/tmp".into(),
            findings: vec![
                Finding::ok("aslr", "ASLR", Kind::Setting, "full randomization (2)"),
                Finding::warn("boost", "turbo/boost", Kind::Setting, "on", "echo 1 > x"),
                Finding::not_exposed("governor", "cpufreq governor", Kind::Setting, "no cpufreq"),
            ],
            activity: None,
        };
        assert_eq!(
            render(&r),
            "\
ok           ASLR              full randomization (2)
warn         turbo/boost       on; fix: echo 1 > x
not exposed  cpufreq governor  no cpufreq
"
        );
    }
}
