//! UnixBench's CSV (`UB_OUTPUT_CSV=true`, unixbench.md §7.4): a header
//! `Concurrency,<test name>,...` in report order, then one row of scores (`%.1f`) per copy
//! count. Scores only, as UnixBench writes it. A test name (an imported run says what it
//! likes) is neutralised for spreadsheets as every CSV cell of patchbench is
//! (`crate::safe_text::csv_cell`).

use crate::record::{RunRecord, TestResult};

/// Renders the CSV of a run.
pub fn render(record: &RunRecord) -> String {
    let mut names: Vec<&str> = record.tests.iter().map(|t| t.name.as_str()).collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names.dedup();
    let mut copies: Vec<u32> = record.tests.iter().map(|t| t.copies).collect();
    copies.dedup();
    let quote = |s: &str| {
        let s = &crate::safe_text::csv_cell(s);
        if s.contains(',') || s.contains('"') {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("Concurrency");
    for n in &names {
        out.push(',');
        out.push_str(&quote(n));
    }
    out.push('\n');
    for c in copies {
        out.push_str(&c.to_string());
        for n in &names {
            out.push(',');
            let found: Option<&TestResult> =
                record.tests.iter().find(|t| t.copies == c && t.name == *n);
            if let Some(t) = found {
                out.push_str(&format!("{:.1}", t.score));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unixbench::catalog::find;
    use crate::unixbench::runner::scoring::{combine_copies, combine_passes};

    #[test]
    fn one_row_per_copy_count_in_report_order() {
        let result = |id: &str, copies: u32, score: f64| {
            let mut r = combine_passes(
                find(id).unwrap(),
                copies,
                1.0,
                vec![combine_copies(1, vec![], 0)],
            );
            r.score = score;
            r
        };
        let record = RunRecord {
            tests: vec![
                result("syscall", 1, 1000.04),
                result("pipe", 1, 2000.0),
                result("syscall", 2, 1900.0),
                result("pipe", 2, 3900.26),
            ],
            ..RunRecord::new(crate::record::Kind::Unixbench, Default::default(), &())
        };
        assert_eq!(
            render(&record),
            "Concurrency,Pipe Throughput,System Call Overhead\n1,2000.0,1000.0\n2,3900.3,1900.0\n"
        );
    }
}
