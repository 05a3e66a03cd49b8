//! `patchbench check`'s table: one line per noise source, `status  source  value`, the
//! columns aligned and the fix of a warning at the end of its line, so `grep ^warn` shows
//! every problem with its remedy. With `color`, the word `warn` is yellow (nothing else
//! changes).

use crate::noise::{NoiseReport, Status};
use crate::report::color::{self, Paint};

pub fn render(report: &NoiseReport, color: bool) -> String {
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
        let word = f.status.word();
        let pad = " ".repeat(status_w - word.len());
        let paint = (color && f.status == Status::Warn).then_some(Paint::Yellow);
        out.push_str(&format!(
            "{}{pad}  {:source_w$}  {}{fix}\n",
            color::paint(word, paint),
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
            color::strip(&render(&r, true)),
            render(&r, false),
            "colour changes nothing but the escapes"
        );
        assert!(render(&r, true).contains("\x1b[33mwarn\x1b[0m         turbo/boost"));
        assert_eq!(
            render(&r, false),
            "\
ok           ASLR              full randomization (2)
warn         turbo/boost       on; fix: echo 1 > x
not exposed  cpufreq governor  no cpufreq
"
        );
    }
}
