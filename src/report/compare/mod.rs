//! The output formats of `patchbench compare`. Each one prints a [`Comparison`] computed
//! elsewhere; none decides anything. `unixbench` is the layout of the posted tables, `lkp` the
//! robot's `%stddev %change %stddev`, `inline` one line per metric for mail, and `markdown`,
//! `csv`, `json` for reviews and machines. Every format prints the interval, p, q and n of
//! each row (criterion's `[-4.1% -3.0% -1.9%]`, benchstat's `(p=0.015 q=0.03 n=5+5)`); the
//! human formats end with the table's false-flag statement, the primary rows, what each row
//! could have detected and how many runs would detect 1 % and 2 %. `html` is one
//! self-contained page with the table, a forest plot, the runs, the curves and the
//! fingerprints (`crate::report::html`).
//!
//! A paired comparison (the two sides of one campaign) says so in its notes, marks its rows'
//! counts as pairs, and adds after the table the paired, robust and unpaired estimates of
//! every row with which interval is narrower, and the drift and round-order checks that
//! matter ([`paired`]).
//!
//! With `color` the verdict words of the human formats are coloured (see
//! `crate::report::color`); nothing else changes, so the uncoloured text is the same bytes.
//!
//! The text formats (all but json and html) print [`for_text`]'s copy of the comparison:
//! every string that came from the runs or the command line (side names, run names, metric
//! names, titles, units, parameters, warnings, notes) shown escaped and cut
//! (`crate::safe_text`), and Markdown cells with `|` escaped. JSON keeps the exact strings;
//! HTML escapes for itself.

mod lkp;
pub mod paired;
mod plain;
mod unixbench;
pub mod why;

use crate::compare::model::Level;
use crate::compare::shape::Shape;
use crate::compare::verdict::{Rule, Verdict};
use crate::compare::{Comparison, Row, SideStats};
use crate::report::color::{self, Paint};

/// Output format of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Unixbench,
    Lkp,
    Inline,
    Markdown,
    Csv,
    Json,
    /// One self-contained HTML page (tables, forest plot, runs, curves, fingerprints).
    Html,
}

/// Renders the comparison in a text format (every format but HTML, whose page
/// `crate::report::comparison` has `html` draw), with coloured verdicts when `color`.
/// Warnings are part of the text for the human formats; csv and json leave them to the caller
/// for the terminal (json carries them too).
pub fn render_text(c: &Comparison, format: Format, color: bool) -> anyhow::Result<String> {
    let shown;
    let c = if matches!(format, Format::Json | Format::Html) {
        c
    } else {
        shown = for_text(c);
        &shown
    };
    Ok(match format {
        Format::Unixbench => preamble(c) + &unixbench::render(c, color) + &summary(c, false),
        Format::Lkp => preamble(c) + &lkp::render(c, color) + &summary(c, false),
        Format::Inline => preamble(c) + &plain::inline(c, color) + &summary(c, false),
        Format::Markdown => preamble(c) + &plain::markdown(c, color) + &summary(c, true),
        Format::Csv => plain::csv(c)?,
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
        Format::Html => anyhow::bail!("the HTML page is drawn by crate::report::comparison"),
    })
}

/// True when the format's text already contains the warnings.
pub fn shows_warnings(format: Format) -> bool {
    !matches!(format, Format::Csv | Format::Json | Format::Html)
}

/// The comparison as the text formats show it: every string from the runs or the command line
/// escaped and cut (`crate::safe_text::field`; warnings, notes and reasons as whole lines,
/// `crate::safe_text::line`). Escaping is idempotent, so a copy made twice is the same.
pub fn for_text(c: &Comparison) -> Comparison {
    use crate::safe_text::{field, line};
    let fields = |v: &[String]| v.iter().map(|s| field(s)).collect::<Vec<_>>();
    let lines = |v: &[String]| v.iter().map(|s| line(s)).collect::<Vec<_>>();
    let mut t = c.clone();
    t.base = field(&c.base);
    t.patched = field(&c.patched);
    t.base_runs = fields(&c.base_runs);
    t.patched_runs = fields(&c.patched_runs);
    t.warnings = lines(&c.warnings);
    t.notes = lines(&c.notes);
    for n in &mut t.noise {
        n.side = field(&n.side);
        n.line = n.line.as_deref().map(line);
    }
    for r in t.rows.iter_mut().chain(t.why.iter_mut()) {
        r.key = field(&r.key);
        r.name = field(&r.name);
        r.title = field(&r.title);
        r.unit = field(&r.unit);
        r.params = r.params.iter().map(|(k, v)| (field(k), field(v))).collect();
        let j = &mut r.judgement;
        j.reason = j.reason.as_deref().map(line);
        if let Some(e) = &mut j.estimate {
            e.borrowed = fields(&e.borrowed);
        }
        if let Some(Shape::Bimodal { side, .. }) = &mut j.shape {
            *side = field(side);
        }
    }
    t
}

/// The warning lines of a comparison: what is not comparable, and the noise-check warnings
/// the sides ran with (shown as [`for_text`] shows them).
pub fn warning_lines(c: &Comparison) -> Vec<String> {
    let c = &for_text(c);
    let mut out: Vec<String> = c
        .warnings
        .iter()
        .map(|w| format!("warning: not comparable: {w}"))
        .collect();
    out.extend(
        c.noise_lines()
            .iter()
            .map(|n| format!("warning: noise: {n}")),
    );
    out
}

fn preamble(c: &Comparison) -> String {
    let mut s = String::new();
    for w in warning_lines(c) {
        s += &w;
        s.push('\n');
    }
    s += &format!(
        "{}: {} run(s) [{}]; {}: {} run(s) [{}]\nrule: {}\n",
        c.base,
        c.base_runs.len(),
        c.base_runs.join(", "),
        c.patched,
        c.patched_runs.len(),
        c.patched_runs.join(", "),
        rule_description(c),
    );
    for n in &c.notes {
        s += &format!("note: {n}\n");
    }
    s + "\n"
}

/// What the rule does, in one line.
pub fn rule_description(c: &Comparison) -> String {
    let s = &c.settings;
    let ci = 100.0 * s.confidence;
    match s.rule {
        Rule::Lkp => format!(
            "lkp, the 0-day robot's (≥3 runs a side, each median outside the other side's \
             range, medians {}% apart); intervals: {ci:.0}% Welch on log run values",
            s.noise_pct
        ),
        Rule::Welch if c.design.is_some() => format!(
            "paired: {ci:.0}% interval of the change from the per-round log ratios (t over the \
             pairs, p never below the exact sign-flip test's; Welch on log run values where a \
             row has fewer than {} pairs); improved/regressed when q < {} (Benjamini–Hochberg) \
             and the whole interval is beyond ±{}%, no change when it is inside ±{}%, else \
             inconclusive",
            crate::stats::sign_flip::fewest_pairs(s.alpha()),
            s.alpha(),
            s.noise_pct,
            s.noise_pct
        ),
        Rule::Welch => format!(
            "welch: {ci:.0}% interval of the ratio of geometric means (Welch t on log run \
             values); improved/regressed when q < {} (Benjamini–Hochberg) and the whole \
             interval is beyond ±{}%, no change when it is inside ±{}%, else inconclusive",
            s.alpha(),
            s.noise_pct,
            s.noise_pct
        ),
    }
}

/// The text after the table: false flags, primary rows, row notes, sensitivity and plan.
fn summary(c: &Comparison, markdown: bool) -> String {
    let mut s = String::from("\n");
    if let Some(f) = false_flags(c) {
        s += &f;
        s.push('\n');
    }
    let primary = c.primary_rows();
    if !primary.is_empty() {
        s += &format!(
            "Primary: {} (the index score is the result; the other rows explain it).\n",
            primary.join("; ")
        );
    }
    s += &row_notes(c);
    s += &paired::section(c, markdown);
    s += &sensitivity_table(c, markdown);
    s += &why::text(c, markdown);
    s
}

/// The table's false-flag statement, one sentence (none for the lkp rule without a rate).
pub fn false_flags(c: &Comparison) -> Option<String> {
    let f = &c.family;
    Some(match &f.lkp {
        Some(l) => {
            format!(
                "False alarms: with identical sides and noise well above {}%, the lkp rule flags \
                 a row {:.1}% of the time at {}+{} runs, so a table of this size shows at least \
                 one flag {:.1}% of the time.",
                c.settings.noise_pct,
                100.0 * l.per_row,
                l.n_base,
                l.n_new,
                100.0 * l.per_table
            )
        }
        None if c.settings.rule == Rule::Lkp => return None,
        None if f.rows == 0 => "No row could be judged.".to_string(),
        None => {
            format!(
                "False flags: {} of {} rows flagged at a false discovery rate of {}% \
                 (Benjamini–Hochberg over the rows): at most {:.2} of them expected to be \
                 false; with no real change anywhere, a table shows any flag at most {}% of \
                 the time.",
                f.flagged,
                f.rows,
                100.0 * f.alpha,
                f.expected_false,
                100.0 * f.alpha
            )
        }
    })
}

/// Why rows have no verdict or what else to know, grouped by reason.
pub(crate) fn row_notes(c: &Comparison) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in &c.rows {
        let Some(text) = row_note(r) else { continue };
        match groups.iter_mut().find(|g| g.0 == text) {
            Some(g) => g.1.push(r.display_name()),
            None => groups.push((text, vec![r.display_name()])),
        }
    }
    let mut s = String::new();
    for (text, names) in groups {
        let who = if names.len() > 3 {
            format!("{} rows", names.len())
        } else {
            names.join("; ")
        };
        s += &format!("{who}: {text}\n");
    }
    s
}

/// The note of one row, if it has one.
pub(crate) fn row_note(r: &Row) -> Option<String> {
    let j = &r.judgement;
    let shape = match &j.shape {
        Some(Shape::Bimodal {
            side,
            low,
            low_runs,
            high,
            high_runs,
            cause,
        }) if j.verdict == Verdict::Bimodal => Some(format!(
            "bimodal: runs of {side} fall into two groups, {low_runs} near {} and {high_runs} \
             near {} {}; a mean describes neither{}",
            num(*low),
            num(*high),
            r.unit,
            cause.as_ref().map(|c| format!(". {c}")).unwrap_or_default()
        )),
        Some(Shape::Drift { total_pct, p, runs })
            if j.verdict == Verdict::Drifting && r.paired.is_some() =>
        {
            Some(format!(
                "drifting: over {runs} rounds the per-round ratio moves {total_pct:+.1}% \
                 (p={}): the change is not steady, so no average of it is judged; look for \
                 what changes on the machine (thermal, background load, an update)",
                sig(*p)
            ))
        }
        Some(Shape::Drift { total_pct, p, runs }) if j.verdict == Verdict::Drifting => {
            Some(format!(
                "drifting: over {runs} runs in time order the values move {total_pct:+.1}% \
             (p={}); interleave base and patched runs and look for what changes on the \
             machine (thermal, background load)",
                sig(*p)
            ))
        }
        Some(Shape::Bimodal {
            side, low, high, ..
        }) if j.apart.is_some() => Some(format!(
            "runs of {side} fall into two groups (near {} and {} {}), but every run of one \
             side lies beyond every run of the other by more than that: judged",
            num(*low),
            num(*high),
            r.unit
        )),
        Some(Shape::Drift { total_pct, .. }) if j.apart.is_some() => Some(format!(
            "the values drift {total_pct:+.1}% over the runs, but every run of one side lies \
             beyond every run of the other by more than that: judged"
        )),
        _ => None,
    };
    match (shape, &j.reason) {
        (Some(s), Some(r)) => Some(format!("{s} ({r})")),
        (Some(s), None) => Some(s),
        (None, Some(r)) => Some(if j.verdict == Verdict::NoVerdict {
            format!("no verdict: {r}")
        } else {
            r.clone()
        }),
        (None, None) => None,
    }
}

fn sensitivity_table(c: &Comparison, markdown: bool) -> String {
    let Some((header, cells)) = sensitivity(c) else {
        return String::new();
    };
    let mut s = String::from("\n");
    s += &grid(&header, &cells, markdown);
    s += &sensitivity_note(c);
    s.push('\n');
    s
}

/// The spread and sensitivity table: header and cells (None when no row has a spread).
pub(crate) fn sensitivity(c: &Comparison) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let rows: Vec<&Row> = c
        .rows
        .iter()
        .filter(|r| r.sensitivity.is_some() || r.spread.within_pct.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let targets = &c.settings.plan_pct;
    let mut header: Vec<String> = [
        "spread and sensitivity",
        "between runs",
        "within a run",
        "dominates",
        "MDE (80%)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let paired = c.design.is_some();
    header.extend(targets.iter().map(|t| {
        if paired {
            format!("rounds for {t}%")
        } else {
            format!("runs a side for {t}%")
        }
    }));
    let cells: Vec<Vec<String>> =
        rows.iter()
            .map(|r| {
                let sp = &r.spread;
                let mut row = vec![
                    r.display_name(),
                    match (&r.sensitivity, sp.between_pct) {
                        (Some(s), _) if s.spread_from == "pairs" => {
                            format!("±{:.2}% (pairs)", s.spread_pct)
                        }
                        (Some(s), _) if s.spread_from != "runs" => {
                            format!("±{:.2}% (profile)", s.spread_pct)
                        }
                        (_, Some(b)) => format!("±{b:.2}%"),
                        _ => "-".into(),
                    },
                    match (sp.within_pct, sp.samples_per_run) {
                        (Some(w), Some(k)) => format!("±{w:.2}% ×{k:.0}"),
                        _ => "-".into(),
                    },
                    match sp.dominates {
                        Some(Level::BetweenRuns) => "between: add runs".into(),
                        Some(Level::WithinRuns) => "within: passes help".into(),
                        None => "-".into(),
                    },
                    r.sensitivity
                        .as_ref()
                        .and_then(|s| s.mde_pct)
                        .map(|m| format!("{m:.1}%"))
                        .unwrap_or_else(|| "-".into()),
                ];
                for (i, _) in targets.iter().enumerate() {
                    row.push(
                        r.sensitivity
                            .as_ref()
                            .and_then(|s| s.plan.get(i))
                            .map(|p| {
                                let n = p.runs.map(|n| n.to_string()).unwrap_or_else(|| {
                                    format!(">{}", crate::compare::plan::MAX_RUNS)
                                });
                                let n = if paired
                                    && r.sensitivity.as_ref().is_some_and(|s| {
                                        s.unit == crate::compare::plan::PlanUnit::RunsASide
                                    }) {
                                    format!("{n} runs a side")
                                } else {
                                    n
                                };
                                if p.band_lowered {
                                    format!("{n} (--noise {})", p.band_pct)
                                } else {
                                    n
                                }
                            })
                            .unwrap_or_else(|| "-".into()),
                    );
                }
                row
            })
            .collect();
    Some((header, cells))
}

/// What the sensitivity table's columns mean.
pub(crate) fn sensitivity_note(c: &Comparison) -> String {
    let paired = if c.design.is_some() {
        " Paired rows: the spread is that of the per-round log ratio d (\"(pairs)\"), and the \
         MDE and the rounds needed (one run of each side per round, on one box) are those of \
         the paired t; a shared drift or box level costs nothing there."
    } else {
        ""
    };
    format!(
        "Between runs: sd of ln(run value) within each side, pooled (verdicts rest on it). \
         Within a run: sd of ln(pass) × passes per run, for information only. MDE: the \
         smallest change this comparison flags with 80% power (a change inside the ±{}% band \
         never is). Runs a side: for 80% power at that change; where it is not beyond the \
         band, the band must be lowered, and the count is for the band shown.{paired}",
        c.settings.noise_pct
    )
}

/// `+3.3%`, or `-` when undefined.
pub(crate) fn pct(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_infinite() => "from 0".to_string(),
        Some(x) => format!("{x:+.decimals$}%"),
        None => "-".to_string(),
    }
}

/// A value with two significant digits: 0.015, 0.30, 1.0; `<0.001` below 0.001.
pub(crate) fn sig(x: f64) -> String {
    if x < 0.001 {
        return "<0.001".to_string();
    }
    let digits = (1 - x.log10().floor() as i32).max(1) as usize;
    format!("{x:.digits$}")
}

/// The interval `[-4.1% -3.0% -1.9%]`, or `-` when there is none.
pub(crate) fn interval(r: &Row) -> String {
    let Some(e) = &r.judgement.estimate else {
        return "-".to_string();
    };
    let d = if r.judgement.estimate.is_some() && e.upper_pct - e.lower_pct < 0.5 {
        2
    } else {
        1
    };
    let f = |x: f64| {
        if x.is_infinite() {
            "from 0".to_string()
        } else {
            format!("{x:+.d$}%")
        }
    };
    format!("[{} {} {}]", f(e.lower_pct), f(e.point_pct), f(e.upper_pct))
}

/// `p=0.015 q=0.03`, or `-`.
pub(crate) fn pq(r: &Row) -> String {
    match &r.judgement.estimate {
        Some(e) => format!("p={} q={}", sig(e.p), sig(e.q)),
        None => "-".to_string(),
    }
}

/// benchstat's `(p=0.015 q=0.03 n=5+5)`; a paired row counts its pairs (`n=10 pairs`).
pub(crate) fn stat_note(r: &Row) -> String {
    let n = match (paired::paired_estimate(r), &r.paired) {
        (Some(_), Some(p)) => format!("n={} pairs", p.pairs),
        _ => format!("n={}+{}", n(&r.base), n(&r.patched)),
    };
    match &r.judgement.estimate {
        Some(_) => format!("({} {n})", pq(r)),
        None => format!("({n})"),
    }
}

/// Header of the interval column: `90% CI`.
pub(crate) fn ci_header(c: &Comparison) -> String {
    format!("{:.0}% CI", 100.0 * c.settings.confidence)
}

/// A number with a sensible number of digits for a table.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{v:.4e}")
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

pub(crate) fn mean(s: &Option<SideStats>) -> String {
    s.as_ref()
        .map(|x| num(x.mean))
        .unwrap_or_else(|| "-".to_string())
}

pub(crate) fn n(s: &Option<SideStats>) -> String {
    s.as_ref()
        .map(|x| x.n.to_string())
        .unwrap_or_else(|| "0".to_string())
}

pub(crate) fn spread(s: &Option<SideStats>) -> String {
    match s.as_ref().and_then(|x| x.stddev_pct) {
        Some(v) => format!("±{v:.1}%"),
        None => "-".to_string(),
    }
}

/// The verdict column: the label (notes after the table say why).
pub(crate) fn verdict(r: &Row) -> String {
    r.judgement.verdict.as_str().to_string()
}

/// The verdict's colour when colouring, else none.
pub(crate) fn verdict_paint(r: &Row, color: bool) -> Option<Paint> {
    color
        .then(|| color::of_verdict(r.judgement.verdict))
        .flatten()
}

/// [`grid`] with the last cell of data row i in `paints[i]`; the padding stays as without
/// colour (the escape sequences go around the word, inside its padding).
pub(crate) fn painted_grid(
    header: &[String],
    rows: &[Vec<String>],
    markdown: bool,
    paints: &[Option<Paint>],
) -> String {
    let plain = grid(header, rows, markdown);
    if paints.iter().all(Option::is_none) {
        return plain;
    }
    let skip = if markdown { 2 } else { 1 };
    let mut out = String::with_capacity(plain.len() + 16 * rows.len());
    for (i, line) in plain.lines().enumerate() {
        let row = i.checked_sub(skip);
        let paint = row.and_then(|r| paints.get(r).copied().flatten());
        let last = row
            .and_then(|r| rows.get(r))
            .and_then(|r| r.get(header.len() - 1));
        match (paint, last) {
            (Some(p), Some(cell)) if !cell.is_empty() => match line
                .strip_suffix(" |")
                .and_then(|l| l.strip_suffix(cell.as_str()))
            {
                Some(head) => {
                    out += head;
                    out += &color::paint(cell, Some(p));
                    out += " |";
                }
                None => out += line,
            },
            _ => out += line,
        }
        out.push('\n');
    }
    out
}

/// A table with `|` separators and padded columns, drawn by comfy-table: the first column is
/// left-aligned, the others right-aligned; lines end with `|`. With `markdown`, lines also
/// start with `|` and a delimiter row (`---`, `---:` for the right-aligned columns, at least
/// three characters each as GitHub wants) follows the header.
pub(crate) fn grid(header: &[String], rows: &[Vec<String>], markdown: bool) -> String {
    use comfy_table::{CellAlignment, ContentArrangement, Table};
    let cols = header.len();
    let mut t = Table::new();
    // LeftBorder, RightBorder, ..., VerticalLines: only the borders between and after cells.
    t.load_preset(if markdown {
        "||      |          "
    } else {
        " |      |          "
    });
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.force_no_tty();
    // A `|` inside a Markdown cell would end it: escaped as Markdown wants.
    let cell = |s: &String| {
        if markdown {
            s.replace('|', "\\|")
        } else {
            s.clone()
        }
    };
    let header: Vec<String> = header.iter().map(cell).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let (header, rows) = (header.as_slice(), rows.as_slice());
    t.set_header(header.to_vec());
    if markdown {
        let width = |i: usize| {
            std::iter::once(header)
                .chain(rows.iter().map(Vec::as_slice))
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
                .max(3)
        };
        t.add_row((0..cols).map(|i| {
            if i == 0 {
                "-".repeat(width(i))
            } else {
                format!("{}:", "-".repeat(width(i) - 1))
            }
        }));
    }
    for r in rows {
        t.add_row(r.iter().take(cols).cloned().collect::<Vec<_>>());
    }
    for (i, c) in t.column_iter_mut().enumerate() {
        if i == 0 {
            c.set_padding((if markdown { 1 } else { 0 }, 1));
        } else {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_plain_grid_pads_and_aligns_as_the_posted_tables() {
        let header = cells(&["System Benchmarks Index Values", "base", "patched", "cmp"]);
        let rows = vec![
            cells(&["Pipe Throughput", "1335.00", "1379.10", "+3.30%"]),
            cells(&["System Call Overhead", "968.50", "960.00", "-0.88%"]),
        ];
        assert_eq!(
            grid(&header, &rows, false),
            "\
System Benchmarks Index Values |    base | patched |    cmp |
Pipe Throughput                | 1335.00 | 1379.10 | +3.30% |
System Call Overhead           |  968.50 |  960.00 | -0.88% |
"
        );
    }

    #[test]
    fn markdown_has_a_delimiter_row_with_alignment() {
        let header = cells(&["metric", "n", "base", "±"]);
        let rows = vec![cells(&["Pipe Throughput", "3", "1234.50", "±1.0%"])];
        assert_eq!(
            grid(&header, &rows, true),
            "\
| metric          |   n |    base |     ± |
| --------------- | --: | ------: | ----: |
| Pipe Throughput |   3 | 1234.50 | ±1.0% |
"
        );
    }

    #[test]
    fn a_bar_in_a_markdown_cell_is_escaped() {
        let header = cells(&["metric", "base|x"]);
        let rows = vec![cells(&["a | b", "1"])];
        let md = grid(&header, &rows, true);
        for line in md.lines() {
            assert_eq!(
                line.matches('|').count() - line.matches("\\|").count(),
                3,
                "two cells, three separators: {md}"
            );
        }
        assert!(md.contains("a \\| b"), "{md}");
    }

    #[test]
    fn p_values_print_with_two_significant_digits() {
        assert_eq!(sig(0.0153), "0.015");
        assert_eq!(sig(0.3), "0.30");
        assert_eq!(sig(1.0), "1.0");
        assert_eq!(sig(0.0004), "<0.001");
        assert_eq!(sig(0.05), "0.050");
    }
}
