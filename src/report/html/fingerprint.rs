//! The system fingerprints of the sides side by side (a row per attribute; a difference
//! `compare` warns about is highlighted, the kernel's expected difference shaded), and the
//! noise-check warnings each side's runs were measured with.

use crate::compare::comparability::{Attribute, SideNoise};
use crate::compare::meaning;
use crate::noise::{Finding, Status};
use crate::record::RunRecord;
use crate::report::svg::esc;
use std::fmt::Write;

/// System attributes first, then the kind, then the settings.
fn order(a: &Attribute) -> (u8, &str) {
    let group = if a.name.starts_with("system.") {
        0
    } else if a.name.starts_with("config.") {
        2
    } else {
        1
    };
    (group, a.name.as_str())
}

/// The attributes with a column per side; `sides` names the columns (one or two).
pub fn table(attributes: &[Attribute], sides: &[&str]) -> String {
    if attributes.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&Attribute> = attributes.iter().collect();
    sorted.sort_by_key(|a| order(a));
    let mut out = String::from(
        "<div class=\"scroll\"><table class=\"fingerprint\"><thead><tr><th>attribute</th>",
    );
    for s in sides {
        let _ = write!(out, "<th>{}</th>", esc(s));
    }
    out += "</tr></thead><tbody>\n";
    for a in sorted {
        let class = match (sides.len() > 1 && a.differs, a.expected) {
            (true, false) => " class=\"differs\"",
            (true, true) => " class=\"expected\"",
            _ => "",
        };
        let _ = write!(
            out,
            "<tr{class}><td class=\"name\">{}</td><td>{}</td>",
            esc(&a.name),
            esc(&a.base)
        );
        if sides.len() > 1 {
            let _ = write!(out, "<td>{}</td>", esc(&a.patched));
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>";
    if sides.len() > 1 {
        out += "<p class=\"note\">Highlighted (≠): differs between the sides, and compare warns \
                about it. Shaded: the kernel, expected to differ.</p>";
    }
    out
}

/// Each side's noise-check warnings, with the runs that had them.
pub fn side_noise(noise: &[SideNoise]) -> String {
    let mut out = String::new();
    for n in noise {
        let _ = write!(out, "<h3>{}</h3>", esc(&n.side));
        if n.checked == 0 {
            out += "<p class=\"note\">No run of this side stored a noise check (imported or \
                    older results).</p>";
            continue;
        }
        let _ = write!(
            out,
            "<p class=\"note\">{} of {} runs stored a noise check; {} warned.</p>",
            n.checked, n.runs, n.warned
        );
        if !n.warnings.is_empty() {
            out += "<ul class=\"warnings\">";
            for w in &n.warnings {
                let per_run: Vec<String> = w
                    .runs
                    .iter()
                    .zip(&w.values)
                    .map(|(run, v)| format!("<li>run {}: {}</li>", esc(run), esc(v)))
                    .collect();
                let s = if w.runs.len() == 1 { "" } else { "s" };
                let _ = write!(
                    out,
                    "<li>{} <span class=\"note\">(in {} run{s})</span><ul>{}</ul></li>",
                    esc(&w.source),
                    w.runs.len(),
                    per_run.join("")
                );
            }
            out += "</ul>";
        }
    }
    out
}

/// One run's noise check: every warning that applies to the run ([`meaning::applies`]) with
/// its fix, and how many did not apply (empty list when none warned).
pub fn run_noise(run: &RunRecord) -> String {
    let Some(r) = run.system.noise.as_ref() else {
        return "<p class=\"note\">This run stored no noise check (imported or older \
                results).</p>"
            .to_string();
    };
    let warned: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.status == Status::Warn)
        .collect();
    let warns: Vec<String> = warned
        .iter()
        .filter(|f| meaning::applies(f, run))
        .map(|f| {
            format!(
                "<li>{}: {}{}</li>",
                esc(&f.source),
                esc(&f.value),
                f.fix
                    .as_ref()
                    .map(|x| format!(" <span class=\"note\">(fix: {})</span>", esc(x)))
                    .unwrap_or_default()
            )
        })
        .collect();
    let not_applying: Vec<String> = warned
        .iter()
        .filter(|f| !meaning::applies(f, run))
        .map(|f| esc(&f.source))
        .collect();
    let mut out = format!(
        "<p class=\"note\">Checked over {:.2} s as the run started: {} sources, {} warned.</p>",
        r.sample_secs,
        r.findings.len(),
        warns.len()
    );
    // Not the start's check: what the per-pass monitor saw during the passes.
    let per_pass: usize = run
        .tests
        .iter()
        .flat_map(|t| &t.passes)
        .filter_map(|p| p.noise.as_ref())
        .map(|a| a.warnings().len())
        .sum();
    if per_pass > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">During the passes the per-pass monitor (what else ran beside \
             each pass) warned {per_pass} time{}: the noise lines of the UnixBench report \
             below.</p>",
            if per_pass == 1 { "" } else { "s" }
        );
    }
    if !not_applying.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note\">Not counted, since this run's workload does not use it: {}.</p>",
            not_applying.join(", ")
        );
    }
    if !warns.is_empty() {
        out += &format!("<ul class=\"warnings\">{}</ul>", warns.join(""));
    }
    out
}
