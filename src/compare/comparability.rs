//! What differs between the two sides besides the kernel: every system-fingerprint field
//! (CPU model and count, memory, patchbench version and build, shell, libc, governor, the
//! filesystems of the directories used, …) and every configuration setting (durations,
//! passes, copies, profile, directories). Each difference becomes one warning line.

use super::Side;
use std::collections::{BTreeMap, BTreeSet};

/// Fingerprint fields that are expected to differ between base and patched (`noise` holds
/// measured activity, different on every run; its warnings are listed on their own).
const IGNORED_SYSTEM: &[&str] = &["kernel_release", "kernel_version", "noise"];

/// One warning per attribute whose set of values differs between the sides.
pub fn differences(base: &Side, patched: &Side) -> Vec<String> {
    let b = attributes(base);
    let p = attributes(patched);
    let keys: BTreeSet<&String> = b.keys().chain(p.keys()).collect();
    let mut out = Vec::new();
    let empty = BTreeSet::new();
    for k in keys {
        let bv = b.get(k).unwrap_or(&empty);
        let pv = p.get(k).unwrap_or(&empty);
        if bv != pv {
            out.push(format!(
                "{k} differs: {} {} vs {} {}",
                base.name,
                show(bv),
                patched.name,
                show(pv)
            ));
        }
    }
    out
}

fn show(values: &BTreeSet<String>) -> String {
    if values.is_empty() {
        return "(not recorded)".to_string();
    }
    values
        .iter()
        .map(|v| {
            if v.is_empty() {
                "(unknown)".to_string()
            } else {
                v.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

/// attribute name → the values the side's runs have for it.
fn attributes(side: &Side) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, run) in &side.runs {
        let mut add = |k: String, v: String| {
            out.entry(k).or_default().insert(v);
        };
        add("kind".to_string(), run.kind.to_string());
        if let Ok(serde_json::Value::Object(sys)) = serde_json::to_value(&run.system) {
            for (k, v) in sys {
                if IGNORED_SYSTEM.contains(&k.as_str()) || k == "extra" {
                    continue;
                }
                let text = match (k.as_str(), &v) {
                    // Memory moves by a few kB between kernels; compare in tenths of a GiB.
                    ("memory_bytes", serde_json::Value::Number(n)) => match n.as_f64() {
                        Some(b) if b > 0.0 => format!("{:.1} GiB", b / (1u64 << 30) as f64),
                        _ => String::new(),
                    },
                    ("cpus", serde_json::Value::Number(n)) if n.as_u64() == Some(0) => {
                        String::new()
                    }
                    _ => plain(&v),
                };
                add(format!("system.{k}"), text);
            }
        }
        for (k, v) in &run.system.extra {
            add(format!("system.{k}"), v.clone());
        }
        for (k, v) in &run.config {
            add(format!("config.{k}"), plain(v));
        }
    }
    out
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
