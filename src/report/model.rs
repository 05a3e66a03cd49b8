//! The models' output: the list of models and their variants, and the final table of a run
//! (model-setbit: ops/s per task of both variants and their ratio per mode and task count;
//! model-isize: reads/s, writes/s, reads and violations per variant).

use crate::model::{isize, setbit};
use crate::record::model::ModelPoint;
use crate::record::RunRecord;
use std::collections::BTreeMap;

/// `patchbench model --list`.
pub fn list() -> String {
    format!(
        "{:<13} {}\n{:<13} variants: {}\n{:<13} {}\n{:<13} variants: {}\n",
        "model-setbit",
        setbit::DESCRIPTION,
        "",
        setbit::VARIANTS.join(", "),
        "model-isize",
        isize::DESCRIPTION,
        "",
        isize::VARIANTS.join(", ")
    )
}

/// The final table of a model run (empty before its first point).
pub fn table(record: &RunRecord) -> String {
    let Some(d) = record.model.as_ref().filter(|d| !d.points.is_empty()) else {
        return String::new();
    };
    if d.model == "model-isize" {
        isize_table(&d.points)
    } else {
        setbit_table(&d.points)
    }
}

fn setbit_table(points: &[ModelPoint]) -> String {
    let mut rows: Vec<(&str, usize, BTreeMap<&str, f64>)> = Vec::new();
    for p in points {
        let value = p.ops_per_sec_per_task.unwrap_or(0.0);
        match rows
            .iter_mut()
            .find(|(m, n, _)| *m == p.mode && *n == p.tasks)
        {
            Some(r) => {
                r.2.insert(&p.variant, value);
            }
            None => rows.push((
                &p.mode,
                p.tasks,
                BTreeMap::from([(p.variant.as_str(), value)]),
            )),
        }
    }
    let mut s = format!(
        "\n{:<9} {:>6} {:>18} {:>18} {:>18}\n",
        "mode", "tasks", "always ops/s/task", "test-first ops/s", "test-first/always"
    );
    let f = |v: Option<&f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
    for (mode, n, per_task) in &rows {
        let r = match (per_task.get("test-first"), per_task.get("always")) {
            (Some(t), Some(a)) => setbit::ratio(*t, *a),
            _ => None,
        };
        s.push_str(&format!(
            "{:<9} {:>6} {:>18} {:>18} {:>18}\n",
            mode,
            n,
            f(per_task.get("always")),
            f(per_task.get("test-first")),
            r.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into())
        ));
    }
    s
}

fn isize_table(points: &[ModelPoint]) -> String {
    let mut s = format!(
        "\n{:<13} {:<9} {:>7} {:>14} {:>14} {:>12} {:>10}\n",
        "variant", "mode", "readers", "reads/s", "writes/s", "reads", "violations"
    );
    for p in points {
        s.push_str(&format!(
            "{:<13} {:<9} {:>7} {:>14.0} {:>14.0} {:>12} {:>10}\n",
            p.variant,
            p.mode,
            p.tasks,
            p.reads_per_sec.unwrap_or(0.0),
            p.writes_per_sec.unwrap_or(0.0),
            p.reads.unwrap_or(0),
            p.violations.unwrap_or(0)
        ));
    }
    s
}
