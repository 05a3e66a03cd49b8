//! The HTML report: one self-contained page (inline CSS and inline SVG; no script, no
//! network, no fonts or files fetched) for a comparison (`compare --format html`) or for one
//! run (`show --format html`, `--html FILE` on the measuring commands).
//!
//! A comparison's page: the warnings (what is not comparable, the noise-check warnings each
//! side ran with), the table with the labels and each row's runs as dots, a forest plot of
//! every row's change with its interval over the noise band, the monitor rows that changed
//! with it (`why`), for a campaign's paired
//! comparison the paired and unpaired estimates with a per-round chart of the paired ratio
//! of every row, the will-it-scale and AIM7
//! curves where the runs have them, the spread and sensitivity table, and the system
//! fingerprints side by side with the differences highlighted. A run's page: its noise
//! check, its metrics with their samples, its curves, its fingerprint.
//!
//! The renderer draws what `crate::compare` computed and the records hold; it decides and
//! computes nothing. Every string from a record (labels, hostnames, test names, file names)
//! is escaped (`crate::report::svg::esc`). Files: `page` (document and style), `table`, `dots` (the runs
//! in a table cell), `forest`, `curves`, `fingerprint`, `rounds` (the paired section); the
//! drawing kit is `crate::report::svg`.

mod curves;
mod dots;
mod fingerprint;
mod forest;
pub mod page;
mod profiles;
mod rounds;
pub mod table;
mod why;

use crate::compare::{self, comparability, Comparison, Side};
use crate::record::RunRecord;
use crate::report::compare as text;
use crate::report::svg::esc;
use page::Page;

/// The page of a comparison.
pub fn comparison(c: &Comparison) -> String {
    let runs = |name: &str, ids: &[String]| {
        format!(
            "{}: {} run{} [{}]",
            esc(name),
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            esc(&ids.join(", "))
        )
    };
    let mut page = Page::new(
        &format!("patchbench compare: {} vs {}", c.base, c.patched),
        &[
            format!(
                "{}; {}",
                runs(&c.base, &c.base_runs),
                runs(&c.patched, &c.patched_runs)
            ),
            format!("rule: {}", esc(&text::rule_description(c))),
        ],
    );
    let mut warnings = page::warning_list(&text::warning_lines(c));
    for n in &c.notes {
        warnings += &page::note(&format!("note: {n}"));
    }
    page.section("warnings", "Warnings and notes", &warnings);
    let mut summary = table::comparison(c);
    if let Some(f) = text::false_flags(c) {
        summary += &page::note(&f);
    }
    let primary = c.primary_rows();
    if !primary.is_empty() {
        summary += &page::note(&format!(
            "Primary: {} (the index score is the result; the other rows explain it).",
            primary.join("; ")
        ));
    }
    for line in text::row_notes(c).lines() {
        summary += &page::note(line);
    }
    page.section("comparison", "Comparison", &summary);
    page.section("forest", "Change per row", &forest::plot(c));
    page.section("why", "What changed with it", &why::section(c));
    if let Some(p) = profiles::section(c) {
        page.section("profiles", "The two profiles side by side", &p);
    }
    page.section(
        "paired",
        "Paired design: round by round",
        &rounds::section(c),
    );
    page.section("curves", "Curves", &curves::charts(&c.curves));
    page.section(
        "sensitivity",
        "Spread and sensitivity",
        &table::sensitivity(c),
    );
    page.section(
        "noise",
        "Noise checks the runs started with",
        &fingerprint::side_noise(&c.noise),
    );
    page.section(
        "fingerprint",
        "System fingerprints",
        &fingerprint::table(
            &c.fingerprint,
            &[
                table::column_name(&c.base, "base"),
                table::column_name(&c.patched, "patched"),
            ],
        ),
    );
    page.finish()
}

/// The page of one run; `id` is its store id when it has one.
pub fn run(id: Option<&str>, r: &RunRecord) -> String {
    let name = match (id, &r.label) {
        (Some(id), Some(l)) => format!("run {id} ({l})"),
        (Some(id), None) => format!("run {id}"),
        (None, Some(l)) => l.clone(),
        (None, None) => "run".to_string(),
    };
    let s = &r.system;
    let mut sub = vec![
        format!(
            "host {}, kernel {} {}, {} × {}",
            esc(&s.hostname),
            esc(&s.kernel_release),
            esc(&s.kernel_version),
            s.cpus,
            esc(&s.cpu_model)
        ),
        format!(
            "started {}, finished {}{}",
            esc(&r.started_at),
            esc(&r.finished_at),
            if r.incomplete { " (incomplete)" } else { "" }
        ),
    ];
    if let Some(src) = &r.source {
        sub.push(format!("source {}", esc(src)));
    }
    let mut page = Page::new(&format!("patchbench {}: {name}", r.kind), &sub);
    if let Some(e) = &r.error {
        page.section(
            "error",
            "Stopped early",
            &page::warning_list(std::slice::from_ref(e)),
        );
    }
    page.section("noise", "Noise check", &fingerprint::run_noise(r));
    page.section("metrics", "Metrics", &table::run_metrics(r));
    let runs = vec![(id.unwrap_or("1").to_string(), r.clone())];
    let curves = compare::curves::of(&[(name.as_str(), runs.as_slice())]);
    page.section("curves", "Curves", &curves::charts(&curves));
    if !r.tests.is_empty() {
        page.section(
            "report",
            "UnixBench report",
            &format!(
                "<pre>{}</pre>",
                esc(&crate::report::unixbench_text::render(r))
            ),
        );
    }
    let side = Side::new(name.clone(), runs);
    page.section(
        "fingerprint",
        "System fingerprint",
        &fingerprint::table(&comparability::fingerprint(&side, &side), &[&name]),
    );
    page.finish()
}
