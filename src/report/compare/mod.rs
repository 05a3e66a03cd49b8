//! The output formats of `patchbench compare`. Each one prints a [`Comparison`] computed
//! elsewhere; none decides anything. `unixbench` is the layout of the posted tables, `lkp` the
//! robot's `%stddev %change %stddev`, `inline` one line per metric for mail, and `markdown`,
//! `csv`, `json` for reviews and machines.

mod lkp;
mod plain;
mod unixbench;

use crate::compare::{Comparison, Row, SideStats};

/// Output format of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Unixbench,
    Lkp,
    Inline,
    Markdown,
    Csv,
    Json,
}

/// Renders the comparison. Warnings are part of the text for the human formats; csv and json
/// leave them to the caller (json carries them in a field).
pub fn render(c: &Comparison, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Unixbench => preamble(c) + &unixbench::render(c),
        Format::Lkp => preamble(c) + &lkp::render(c),
        Format::Inline => preamble(c) + &plain::inline(c),
        Format::Markdown => preamble(c) + &plain::markdown(c),
        Format::Csv => plain::csv(c)?,
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
    })
}

/// True when the format's text already contains the warnings.
pub fn shows_warnings(format: Format) -> bool {
    !matches!(format, Format::Csv | Format::Json)
}

fn preamble(c: &Comparison) -> String {
    let mut s = String::new();
    for w in &c.warnings {
        s += &format!("warning: not comparable: {w}\n");
    }
    s += &format!(
        "{}: {} run(s) [{}]; {}: {} run(s) [{}]; rule: {}\n",
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

fn rule_description(c: &Comparison) -> String {
    let s = &c.settings;
    match s.rule {
        crate::compare::verdict::Rule::Lkp => format!(
            "lkp (≥3 samples on a side, each median outside the other's range, change > {}%)",
            s.noise_pct
        ),
        crate::compare::verdict::Rule::Bootstrap => format!(
            "bootstrap (Welch p < {}, {:.0}% CI of the change beyond ±{}%, {} resamples, seed {})",
            s.significance,
            100.0 * s.confidence,
            s.noise_pct,
            s.resamples,
            s.seed
        ),
    }
}

/// `+3.3%`, or `-` when undefined.
pub(crate) fn pct(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) => format!("{x:+.decimals$}%"),
        None => "-".to_string(),
    }
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

/// The verdict column: the verdict, or why there is none.
pub(crate) fn verdict(r: &Row) -> String {
    match (&r.judgement.reason, r.judgement.verdict) {
        (Some(why), crate::compare::verdict::Verdict::NoVerdict) => format!("no verdict ({why})"),
        (_, v) => v.as_str().to_string(),
    }
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
    use super::grid;

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
}
