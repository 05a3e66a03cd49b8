//! The HTML report without a browser: `compare --format html` and `show --format html` give
//! one self-contained page (no script, nothing fetched) with the expected charts; every string
//! from a record is escaped (a hostile label, hostname, test name, side name and noise
//! finding); `--html FILE` writes the run's page when the run ends and is refused before any
//! work when it cannot be written. The page in a real browser: tests/browser.rs.

mod common;

use std::path::Path;

const BASE: &str = "ub60-base-1.txt,ub60-base-2.txt,ub60-base-3.txt";
const PATCHED: &str = "ub60-patched-1.txt,ub60-patched-2.txt,ub60-patched-3.txt";

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

/// Nothing in the page can make the browser fetch or run anything.
fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(html.trim_end().ends_with("</html>"));
    // (Escaped text may read `src=`, but never with a quote: quotes are escaped too.)
    for bad in [
        "<script", "src=\"", "href=\"", "url(", "@import", "http:", "https:", "<link",
    ] {
        assert!(!html.contains(bad), "the page contains {bad:?}");
    }
}

#[test]
fn a_comparison_page_has_the_table_the_forest_plot_and_the_runs() {
    let out = common::patchbench()
        .current_dir(common::fixture(""))
        .env("PATCHBENCH_STORE", "/nonexistent/store.db")
        .args(["compare", BASE, PATCHED, "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let html = String::from_utf8(out.stdout).unwrap();
    assert_self_contained(&html);
    // 26 rows: 12 tests and the index at 1 and 2 copies.
    assert_eq!(count(&html, "class=\"chart chart-forest\""), 1);
    assert_eq!(count(&html, "class=\"chart chart-runs\""), 26);
    assert_eq!(count(&html, "<g class=\"forest-row\">"), 26);
    assert_eq!(
        count(&html, "class=\"chart chart-curve\""),
        0,
        "UnixBench has no curves"
    );
    // The labels, as the text formats give them: one improved, one regressed.
    assert_eq!(count(&html, "class=\"verdict v-improved\""), 1);
    assert_eq!(count(&html, "class=\"verdict v-regressed\""), 1);
    assert_eq!(count(&html, "class=\"verdict v-no-change\""), 2);
    assert!(html.contains("<td class=\"num\">[+3.0% +4.2% +5.4%]</td>"));
    // Every run of each side is a dot: 26 rows × 6 runs.
    assert_eq!(count(&html, "<circle class=\"run side-"), 26 * 6);
    assert!(html.contains("class=\"band\""), "the noise band is drawn");
    for section in [
        "comparison",
        "forest",
        "sensitivity",
        "noise",
        "fingerprint",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }
    // Imported reports stored no noise check, and the page says so.
    assert!(html.contains("No run of this side stored a noise check"));
}

/// A patchbench JSON document with hostile strings wherever a record carries text.
fn hostile_record(value_scale: f64) -> serde_json::Value {
    let mut doc = common::read_json(Path::new(&common::fixture("patchbench-run.json")));
    doc["label"] = "<script>alert('label')</script>".into();
    doc["system"]["hostname"] = "<img src=x onerror=alert(1)>".into();
    doc["system"]["cpu_model"] = "\"><svg onload=alert(2)>".into();
    doc["system"]["noise"] = serde_json::json!({
        "schema": "patchbench.check/1",
        "sample_secs": 0.25,
        "dir": "/tmp",
        "findings": [{
            "id": "steal", "source": "steal <b>bold</b>", "kind": "activity",
            "status": "warn", "value": "<script>alert(3)</script>", "fix": "&amp; <i>"
        }],
        "activity": null
    });
    for m in doc["metrics"].as_array_mut().unwrap() {
        m["title"] = "</td><script>alert(4)</script>".into();
        m["unit"] = "<u>".into();
        let v = m["value"].as_f64().unwrap();
        m["value"] = (v * value_scale).into();
        let samples: Vec<f64> = m["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap() * value_scale)
            .collect();
        m["samples"] = samples.into();
    }
    doc
}

fn assert_no_markup_from_records(html: &str) {
    assert_self_contained(html);
    for raw in [
        "<img",
        "<svg onload",
        "<b>bold",
        "<i>",
        "<u>",
        "</td><script",
        "alert('",
    ] {
        assert!(!html.contains(raw), "{raw:?} came through unescaped");
    }
}

#[test]
fn every_string_from_a_record_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("<b>base&lt;.json");
    let patched = dir.path().join("p'\"&.json");
    std::fs::write(&base, hostile_record(1.0).to_string()).unwrap();
    std::fs::write(&patched, hostile_record(1.1).to_string()).unwrap();
    let out = common::patchbench()
        .env("PATCHBENCH_STORE", dir.path().join("none.db"))
        .args(["compare", "--format", "html"])
        .arg(&base)
        .arg(&patched)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let html = String::from_utf8(out.stdout).unwrap();
    assert_no_markup_from_records(&html);
    assert!(
        html.contains("&lt;b&gt;base&amp;lt;.json"),
        "the side name, escaped"
    );
    assert!(html.contains("p&#39;&quot;&amp;.json"));
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the hostname"
    );
    assert!(
        html.contains("&lt;/td&gt;&lt;script&gt;alert(4)&lt;/script&gt;"),
        "the title"
    );
    assert!(
        html.contains("&lt;script&gt;alert(3)&lt;/script&gt;"),
        "the noise value"
    );
    // The same record as a stored run's page.
    let store = dir.path().join("results.db");
    let status = common::patchbench_with_store(&store)
        .args(["import", "--label", "<script>alert('label')</script>"])
        .arg(&base)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let out = common::patchbench_with_store(&store)
        .args(["show", "1", "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).unwrap();
    assert_no_markup_from_records(&page);
    assert!(page.contains("run 1 (&lt;script&gt;alert(&#39;label&#39;)&lt;/script&gt;)"));
    assert!(page.contains("steal &lt;b&gt;bold&lt;/b&gt;: &lt;script&gt;alert(3)"));
    assert!(
        page.contains("class=\"chart chart-runs\""),
        "the samples are drawn"
    );
}

#[test]
fn an_unwritable_html_file_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    // A missing directory, a directory, and a directory that exists and passes access() for
    // root but takes no new file (procfs).
    for bad in ["/nonexistent-dir/report.html", "/tmp", "/proc/report.html"] {
        for args in [
            vec!["run", "syscall", "--quick", "--html", bad],
            vec!["aim7", "fork_test", "--load", "1", "--html", bad],
            vec!["scale", "getppid1", "-t", "1", "--html", bad],
            vec!["model", "model-setbit", "-t", "1", "--html", bad],
        ] {
            let out = common::patchbench_with_store(&store)
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("--html"), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(!store.exists(), "{args:?} started work");
        }
    }
}

#[test]
fn html_file_of_a_real_scale_run_has_its_curves_and_noise_check() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("scale.html");
    let out = common::patchbench()
        .args([
            "scale",
            "getppid1",
            "-t",
            "1,2",
            "-m",
            "process",
            "--no-store",
        ])
        .args(common::SHORT)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("wrote {}", page.display())));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert_eq!(
        count(&html, "class=\"chart chart-curve\""),
        1,
        "getppid1 as processes"
    );
    assert!(html.contains("will-it-scale getppid1 (processes)"));
    assert!(html.contains("Checked over 0.25 s as the run started"));
    assert_eq!(
        common::entries(dir.path()),
        vec!["scale.html"],
        "no temporary file left"
    );
}

#[test]
fn a_campaign_page_has_a_per_round_chart_of_every_row_and_escapes_box_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = [Vec::new(), Vec::new()];
    for round in 1..=4u32 {
        for (side, name) in ["base", "patched"].iter().enumerate() {
            let mut doc = hostile_record(1.0 + 0.05 * side as f64 + 0.01 * f64::from(round));
            doc["label"] = format!("c/{name}").into();
            doc["campaign"] = serde_json::json!({
                "campaign": "<i>camp</i>", "round": round, "side": name,
                "slot": (side + round as usize) % 2, "box": "<b>box</b>",
                "executor": "local", "attempt": 1,
                "kernel": { "release": "", "cmdline": "" }
            });
            let file = dir.path().join(format!("{name}-{round}.json"));
            std::fs::write(&file, doc.to_string()).unwrap();
            sides[side].push(file.display().to_string());
        }
    }
    let out = common::patchbench()
        .env("PATCHBENCH_STORE", dir.path().join("none.db"))
        .args([
            "compare",
            &sides[0].join(","),
            &sides[1].join(","),
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let html = String::from_utf8(out.stdout).unwrap();
    assert_no_markup_from_records(&html);
    let rows = count(&html, "<g class=\"forest-row\">");
    assert!(rows > 0);
    assert!(html.contains("<section id=\"paired\">"));
    assert_eq!(count(&html, "class=\"chart chart-rounds\""), rows);
    // Four rounds a row, each a dot coloured by which side ran first.
    assert_eq!(
        count(&html, "<circle class=\"run side-base\" cx")
            + count(&html, "<circle class=\"run side-patched\" cx"),
        rows * (2 * 4 + 4)
    );
    assert!(
        html.contains("paired design: campaign &lt;i&gt;camp&lt;/i&gt;"),
        "the campaign name, escaped"
    );
    assert!(
        html.contains("on box &lt;b&gt;box&lt;/b&gt;"),
        "the box name, escaped"
    );
    assert!(html.contains("paired vs unpaired"));
}
