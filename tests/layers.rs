//! The architecture, checked: reads every `crate::` (and `super::`-free top-level) path in
//! src/, builds the graph of the library's top-level modules, and fails on a cycle, on a
//! module that imports from the CLI layer, or on a lower layer that imports from a higher one.
//! `cargo test --test layers -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top to bottom; a module may use its own layer and the ones below.
const LAYERS: &[&[&str]] = &[
    &["commands"],
    &["args", "bisect", "calibrate", "compare", "import", "report"],
    &[
        "aim7",
        "build",
        "campaign",
        "exec",
        "model",
        "unixbench",
        "will_it_scale",
    ],
    &["counter_harness", "store"],
    &["monitor", "proc", "progress", "record", "stats"],
    &[
        "clock",
        "emergency",
        "error",
        "fsinfo",
        "noise",
        "out_of_memory",
        "perf_events",
        "perf_scope",
        "private_dir",
        "proc_stat",
        "safe_text",
        "remove_tree",
        "sysinfo",
    ],
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of src/ belongs to (None for the binaries and lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" | "cli.rs" | "bin" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// Every top-level module named after `crate::` in the code of a file (comments left out; test
/// modules included: they must obey the layers too).
fn uses(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

fn layer(m: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&m))
        .unwrap_or_else(|| panic!("module {m} is in no layer of tests/layers.rs"))
}

#[test]
fn modules_form_layers_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel != "main.rs" && (text.contains("crate::cli") || text.contains("patchbench::cli")) {
            problems.push(format!("{rel} imports from the CLI layer"));
        }
        let Some(m) = module_of(&src, f) else {
            continue;
        };
        let entry = graph.entry(m.clone()).or_default();
        for u in uses(&text) {
            if u != m {
                entry.insert(u);
            }
        }
    }
    for (m, deps) in &graph {
        println!(
            "{m:>16} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for d in deps {
            if layer(d) < layer(m) {
                problems.push(format!(
                    "{m} (layer {}) uses {d} (layer {})",
                    layer(m),
                    layer(d)
                ));
            }
        }
    }
    // Cycles: depth-first search over the module graph.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        cycles: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == m) {
            cycles.push(format!("{} -> {m}", path[i..].join(" -> ")));
            return;
        }
        if !done.insert(m.to_string()) {
            return;
        }
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            visit(d, graph, path, done, cycles);
        }
        path.pop();
    }
    let mut cycles = Vec::new();
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done, &mut cycles);
    }
    problems.extend(cycles.into_iter().map(|c| format!("cycle: {c}")));
    println!("{} modules, {} problems", graph.len(), problems.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A file's code without its comments (as [`uses`] reads it).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What only the campaign engine (`src/campaign/`) does: choosing and making an executor,
/// driving steps, planning them, claiming and settling them in the store.
const CAMPAIGN_FLOW: &[&str] = &[
    "Local::new",
    "Vm::new",
    "Kexec::new",
    "Driver",
    "BootRun",
    "Agent {",
    "plan::steps",
    "plan::for_boxes",
    "create_campaign",
    "extend_campaign",
    "claim_step",
    "reclaim_steps",
    "release_step",
    "renew_lease",
    "finish_step",
    "fail_step",
    "expire_leases",
    "take_place",
    "spec.executor ==",
    "spec.executor {",
];

/// Names of the store's backends: only `src/store/` may say them.
const BACKENDS: &[&str] = &[
    "rusqlite",
    "postgres::",
    "tokio_postgres",
    "SqliteDb",
    "PgDb",
    "sqlite::",
    "store::postgres",
    "Location::Postgres",
];

#[test]
fn commands_hold_no_campaign_flow_and_only_the_store_names_a_backend() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut problems = Vec::new();
    for f in &all {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        if rel.starts_with("commands/") {
            for word in CAMPAIGN_FLOW {
                if code.contains(word) {
                    problems.push(format!(
                        "{rel} names {word:?}: the campaign's flow belongs in src/campaign/"
                    ));
                }
            }
            // Only the arguments-to-spec checks name an executor kind (its options' rules).
            if rel != "commands/campaign/spec.rs" && code.contains("ExecutorKind::") {
                problems.push(format!(
                    "{rel} matches an executor kind: `crate::campaign::runner_for` chooses"
                ));
            }
        }
        if !rel.starts_with("store/") {
            for word in BACKENDS {
                if code.contains(word) {
                    problems.push(format!(
                        "{rel} names the store backend {word:?}: open a store by its location \
                         (`Store::open`) and go through `crate::store`"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A file's module path below the crate: `commands/campaign.rs` is `[commands, campaign]`,
/// `campaign/vm/mod.rs` is `[campaign, vm]` (None for the binaries, main.rs, cli.rs and lib.rs).
fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
    module_of(src, file)?;
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments of the paths a `{...}` group at the start of `s` imports
/// (`{a::b, c}` gives `a`, `c`).
fn group_heads(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut at_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                at_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => at_start = true,
            c if c.is_whitespace() => {}
            _ if at_start && depth == 1 => {
                let id = ident(&s[i..]);
                if !id.is_empty() && id != "self" {
                    out.push(id.to_string());
                }
                at_start = false;
            }
            _ => {}
        }
    }
    out
}

/// Every module path a file names, made absolute: `crate::a::b`, `super::x` (from the file's
/// own module) and `self::x`; a `{...}` group counts each of its heads.
fn named_paths(me: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("::") {
        // The path's start: walk back over identifiers and `::`.
        let head = &code[..i];
        let start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |p| p + 1);
        if start != i - ident_len_back(head) {
            continue; // not the first `::` of a path
        }
        let first = &code[start..i];
        let mut base: Vec<String> = match first {
            "crate" => Vec::new(),
            "self" => me.to_vec(),
            "super" => me[..me.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut rest = &code[i + 2..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let mut path = base.clone();
        loop {
            if rest.starts_with('{') {
                for h in group_heads(rest) {
                    let mut p = path.clone();
                    p.push(h);
                    out.push(p);
                }
                break;
            }
            let id = ident(rest);
            if id.is_empty() {
                out.push(path.clone());
                break;
            }
            path.push(id.to_string());
            match rest[id.len()..].strip_prefix("::") {
                Some(r) => rest = r,
                None => {
                    out.push(path.clone());
                    break;
                }
            }
        }
    }
    out
}

/// The length of the identifier that ends `s`.
fn ident_len_back(s: &str) -> usize {
    s.chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .count()
}

#[test]
fn no_folder_has_a_circle_of_imports_among_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    // Per folder (a module path with children), the graph of its children.
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &all {
        let Some(me) = module_path(&src, f) else {
            continue;
        };
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        // A `#[cfg(test)]` module may reach anywhere in its folder: only the code above it.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for named in named_paths(&me, code) {
            for k in 1..me.len() {
                if named.len() <= k || named[..k] != me[..k] || named[k] == me[k] {
                    continue;
                }
                graphs
                    .entry(me[..k].to_vec())
                    .or_default()
                    .entry(me[k].clone())
                    .or_default()
                    .insert(named[k].clone());
            }
        }
    }
    let mut cycles = Vec::new();
    for (folder, graph) in &graphs {
        // Tarjan-free: a child on a path back to itself (depth-first, each start).
        for start in graph.keys() {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((m, path)) = stack.pop() {
                for d in graph.get(&m).into_iter().flatten() {
                    if d == start {
                        cycles.push(format!(
                            "{}/: {} -> {start}",
                            folder.join("/"),
                            path.join(" -> ")
                        ));
                    } else if seen.insert(d.clone()) {
                        let mut p = path.clone();
                        p.push(d.clone());
                        stack.push((d.clone(), p));
                    }
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    for c in &cycles {
        println!("{c}");
    }
    assert!(
        cycles.is_empty(),
        "circles of imports inside a folder:\n{}",
        cycles.join("\n")
    );
}
