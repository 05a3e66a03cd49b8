//! What `patchbench build` and `patchbench builds` print: one build with its id, what it was
//! made of and its files; the cache as a table (id, commit, patches, config, release, size,
//! age); both also as JSON (`patchbench.build/1`, `patchbench.builds/1`). Every string from a
//! build's record (subjects, authors, paths) is shown escaped (`crate::safe_text::field`).

use crate::build::prune::{Pruned, WorkArea};
use crate::build::Build;
use crate::safe_text::field;
use std::fmt::Write as _;

/// `patchbench build`'s text.
pub fn build_text(b: &Build) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "build {} ({})", b.id, b.how());
    let _ = writeln!(
        out,
        "  commit      {} ({} = {})",
        b.commit,
        field(&b.git_ref),
        &b.base_commit[..12.min(b.base_commit.len())]
    );
    for p in &b.patches {
        let _ = writeln!(
            out,
            "  patch       {}: \"{}\"{}{}",
            field(&p.file),
            field(&p.subject),
            if p.author.is_empty() {
                String::new()
            } else {
                format!(" by {}", field(&p.author))
            },
            p.skipped
                .as_deref()
                .map(|s| format!(" (skipped: {s})"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "  config      {} (from {}), sha256 {}",
        field(&b.config.choice),
        field(&b.config.origin),
        b.config.sha256
    );
    for f in &b.config.fragments {
        let _ = writeln!(out, "  fragment    {} sha256 {}", field(&f.file), f.sha256);
    }
    for d in &b.config.dropped {
        let _ = writeln!(out, "  not kept    {}", field(&d.to_string()));
    }
    for d in &b.config.diff {
        let _ = writeln!(out, "  config diff {}", field(d));
    }
    let _ = writeln!(out, "  compiler    {}", field(&b.compiler));
    let _ = writeln!(out, "  release     {}", field(&b.release));
    let _ = writeln!(out, "  image       {}", b.image.display());
    let _ = writeln!(out, "  System.map  {}", b.system_map.display());
    let _ = writeln!(out, "  vmlinux     {}", b.vmlinux.display());
    let _ = writeln!(out, "  .config     {}", b.config_file.display());
    let _ = writeln!(
        out,
        "  modules     {}",
        b.modules
            .as_ref()
            .map(|m| m.display().to_string())
            .unwrap_or_else(|| "none (CONFIG_MODULES is off)".to_string())
    );
    let _ = writeln!(out, "  log         {}", b.log.display());
    out
}

/// One build as JSON, with its files.
pub fn build_value(b: &Build) -> serde_json::Value {
    let mut v = serde_json::to_value(b).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        let path = |p: &std::path::Path| serde_json::Value::from(p.display().to_string());
        o.insert("dir".into(), path(&b.dir));
        o.insert("image".into(), path(&b.image));
        o.insert("system_map".into(), path(&b.system_map));
        o.insert("vmlinux".into(), path(&b.vmlinux));
        o.insert("config_file".into(), path(&b.config_file));
        o.insert(
            "modules".into(),
            b.modules
                .as_deref()
                .map(path)
                .unwrap_or(serde_json::Value::Null),
        );
        o.insert("log".into(), path(&b.log));
        o.insert("cached".into(), serde_json::Value::from(b.cached));
    }
    v
}

/// `patchbench build --format json`.
pub fn build_json(b: &Build) -> anyhow::Result<String> {
    let mut v = build_value(b);
    if let Some(o) = v.as_object_mut() {
        o.insert("schema".into(), "patchbench.build/1".into());
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// `12 MiB`, `1.4 GiB`.
fn size(bytes: u64) -> String {
    let mib = bytes as f64 / (1024.0 * 1024.0);
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

/// `3 min`, `2 h`, `4 d` since an RFC 3339 time.
fn age(since: &str) -> String {
    let Some(s) = crate::clock::secs_since(since) else {
        return "-".to_string();
    };
    let s = s.max(0.0);
    if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86400.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} d", s / 86400.0)
    }
}

/// `patchbench builds`'s table (each build with its size on disk).
pub fn builds_text(
    cache: &std::path::Path,
    list: &[(Build, u64)],
    work: Option<&WorkArea>,
    pruned: Option<&Pruned>,
) -> String {
    let mut out = String::new();
    if let Some(p) = pruned {
        let _ = writeln!(
            out,
            "pruned: freed {} ({} build slot(s), {} build(s){}){}",
            size(p.freed_bytes),
            p.slots_removed,
            p.builds_removed.len(),
            if p.builds_removed.is_empty() {
                String::new()
            } else {
                format!(": {}", p.builds_removed.join(", "))
            },
            if p.slots_in_use.is_empty() {
                String::new()
            } else {
                format!(
                    "; left {} slot(s) a running build is using",
                    p.slots_in_use.len()
                )
            }
        );
    }
    let work_line = work.filter(|w| w.total() > 0).map(|w| {
        format!(
            "work area: {} in {}/.work (build slots {}: make's objects, which make the next \
             build of a tree incremental; repositories {}; logs and the rest {}); `patchbench \
             builds --prune` frees the slots and logs\n",
            size(w.total()),
            cache.display(),
            size(w.slots),
            size(w.repos),
            size(w.other)
        )
    });
    if list.is_empty() {
        let _ = write!(
            out,
            "no builds in {} (make one with `patchbench build --tree DIR`)\n{}",
            cache.display(),
            work_line.unwrap_or_default()
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{:<16}  {:<12}  {:<36}  {:<20}  {:<28}  {:>8}  {:>6}",
        "ID", "COMMIT", "FROM", "CONFIG", "RELEASE", "SIZE", "AGE"
    );
    for (b, bytes) in list {
        let subjects = b.subjects();
        let from = match subjects.len() {
            0 => field(&b.git_ref),
            1 => format!("{} + \"{}\"", field(&b.git_ref), field(&subjects[0])),
            n => format!("{} + {n} patches", field(&b.git_ref)),
        };
        let _ = writeln!(
            out,
            "{:<16}  {:<12}  {:<36}  {:<20}  {:<28}  {:>8}  {:>6}",
            b.id,
            &b.commit[..12.min(b.commit.len())],
            crate::safe_text::cut(&from, 36),
            format!(
                "{} {}",
                crate::safe_text::cut(&field(&b.config.choice), 11),
                &b.config.sha256[..8.min(b.config.sha256.len())]
            ),
            field(&b.release),
            size(*bytes),
            age(&b.built_at)
        );
    }
    let _ = writeln!(out, "cache: {}", cache.display());
    out.push_str(&work_line.unwrap_or_default());
    out
}

/// `patchbench builds --format json`.
pub fn builds_json(
    cache: &std::path::Path,
    list: &[(Build, u64)],
    work: Option<&WorkArea>,
    pruned: Option<&Pruned>,
) -> anyhow::Result<String> {
    let builds: Vec<serde_json::Value> = list
        .iter()
        .map(|(b, bytes)| {
            let mut v = build_value(b);
            if let Some(o) = v.as_object_mut() {
                o.insert("size_bytes".into(), (*bytes).into());
            }
            v
        })
        .collect();
    let mut doc = serde_json::json!({
        "schema": "patchbench.builds/1",
        "cache": cache.display().to_string(),
        "builds": builds,
    });
    if let Some(o) = doc.as_object_mut() {
        if let Some(w) = work {
            o.insert("work_area_bytes".into(), serde_json::to_value(w)?);
        }
        if let Some(p) = pruned {
            o.insert("pruned".into(), serde_json::to_value(p)?);
        }
    }
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}
