//! The HTML report in a real browser: a real comparison (short will-it-scale and AIM7 runs,
//! two a side, measured here, each then given the campaign step it would have as a round of a
//! campaign, so the page is a paired one with its per-round charts) is rendered to HTML and
//! opened in headless Chromium twice:
//! once with a probe script appended that writes every chart's laid-out size into the DOM
//! (`--dump-dom`), once as it is for a screenshot (`--screenshot`), which is decoded and must
//! not be blank. The test skips, with one line naming the browser, where Chromium is missing
//! (`apt-get install chromium`; .ci/run installs it). PATCHBENCH_CHROMIUM names another
//! binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The browser: $PATCHBENCH_CHROMIUM, else the first of Debian's and Google's names on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PATCHBENCH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
    .find(|p| p.is_file())
}

/// Headless Chromium as root in a closed network: no sandbox, no GPU, nothing in the
/// background, a fresh profile.
fn browser(exe: &Path, profile: &Path, args: &[String], stdout: Stdio) -> std::process::Child {
    std::process::Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Appended to a copy of the page: each chart's class, laid-out size, number of drawn shapes
/// and number of texts drawn (partly) outside it, one line each, in `<pre id="chart-sizes">`.
const PROBE: &str = "<script>(function(){var out=[];\
document.querySelectorAll('svg.chart').forEach(function(e){var r=e.getBoundingClientRect();\
var outside=0;e.querySelectorAll('text').forEach(function(t){var b=t.getBoundingClientRect();\
if(b.left<r.left-1||b.right>r.right+1||b.top<r.top-1||b.bottom>r.bottom+1){outside++;}});\
out.push(e.getAttribute('class')+'|'+Math.round(r.width)+'|'+Math.round(r.height)+'|'+\
e.querySelectorAll('circle,line,polyline,rect,polygon').length+'|'+outside);});\
var p=document.createElement('pre');p.id='chart-sizes';p.textContent=out.join('\\n');\
document.body.appendChild(p);})();</script>";

/// A real comparison in `store`: two runs a side of will-it-scale getppid1 (1 and 2 tasks,
/// processes) and of AIM7 fork_test (loads 1 and 2), interleaved.
fn measure(store: &Path) {
    for label in ["base", "patched", "base", "patched"] {
        let out = common::patchbench_with_store(store)
            .args([
                "scale", "getppid1", "-t", "1,2", "-m", "process", "--label", label,
            ])
            .args(common::SHORT)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let out = common::patchbench_with_store(store)
            .args([
                "aim7",
                "fork_test",
                "--load",
                "1,2",
                "--jobs",
                "5",
                "--no-start-delay",
                "--label",
                label,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

/// The 8 runs `measure` stored, exported and given the campaign step each would carry (base
/// and patched runs of each kind in turn are rounds 1 and 2 of that kind: rounds 1-4), as two
/// comma-joined lists of files.
fn as_campaign(store: &Path, dir: &Path) -> (String, String) {
    let mut sides = [Vec::new(), Vec::new()];
    let mut rounds = [0u32; 2];
    for id in 1..=8 {
        let out = common::patchbench_with_store(store)
            .args(["export", &id.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let side = usize::from(doc["label"] == "patched");
        rounds[side] += 1;
        doc["campaign"] = serde_json::json!({
            "campaign": "browser", "round": rounds[side],
            "side": if side == 0 { "base" } else { "patched" },
            "slot": side, "executor": "local", "attempt": 1,
            "kernel": { "release": "", "cmdline": "" }
        });
        let file = dir.join(format!("run-{id}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        sides[side].push(file.display().to_string());
    }
    (sides[0].join(","), sides[1].join(","))
}

/// (pixels that are not the page's white, distinct colours) of an RGB(A) screenshot.
fn ink(png_path: &Path) -> (u32, u32, usize, usize, bool, bool) {
    let file = std::io::BufReader::new(std::fs::File::open(png_path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let mut colours = std::collections::BTreeSet::new();
    let (mut inked, mut base, mut patched) = (0, false, false);
    let near = |p: &[u8], c: [u8; 3]| p.iter().zip(c).all(|(a, b)| a.abs_diff(b) <= 12);
    for px in buf[..info.buffer_size()].chunks(channels) {
        let rgb = [px[0], px[1], px[2]];
        colours.insert(rgb);
        if rgb != [255, 255, 255] {
            inked += 1;
        }
        // The sides' colours in the style sheet: #3b6ea5 and #d9730d.
        base |= near(&rgb, [0x3b, 0x6e, 0xa5]);
        patched |= near(&rgb, [0xd9, 0x73, 0x0d]);
    }
    (info.width, info.height, inked, colours.len(), base, patched)
}

#[test]
fn the_report_draws_its_charts_in_headless_chromium() {
    let Some(exe) = chromium() else {
        eprintln!("skipped: no Chromium browser found (apt-get install chromium, or set PATCHBENCH_CHROMIUM)");
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    measure(&store);
    // The runs as a campaign's steps: base and patched runs k of each kind are round k.
    let (base, patched) = as_campaign(&store, dir.path());
    let compare = |format: &str| {
        let out = common::patchbench_with_store(&store)
            .args(["compare", &base, &patched, "--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    let rows = json["rows"].as_array().unwrap().len();
    assert_eq!(json["design"]["pairs"], 4, "{}", json["design"]);
    let paired_rows = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["paired"].is_object())
        .count();
    assert_eq!(paired_rows, rows, "every row is paired");
    let curves = json["curves"].as_array().unwrap().len();
    assert_eq!(curves, 2, "getppid1 processes and fork_test");
    let html = compare("html");
    let page = dir.path().join("report.html");
    let probe = dir.path().join("probe.html");
    std::fs::write(&page, &html).unwrap();
    std::fs::write(&probe, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let measured = started.elapsed();

    // The laid-out DOM.
    let dom_file = dir.path().join("dom.html");
    let mut child = browser(
        &exe,
        &dir.path().join("profile-dom"),
        &[
            "--window-size=1400,1000".to_string(),
            "--run-all-compositor-stages-before-draw".to_string(),
            "--dump-dom".to_string(),
            format!("file://{}", probe.display()),
        ],
        Stdio::from(std::fs::File::create(&dom_file).unwrap()),
    );
    assert!(common::wait_with_timeout(&mut child, Duration::from_secs(90)).success());
    let dom = std::fs::read_to_string(&dom_file).unwrap();
    let sizes = dom
        .split("<pre id=\"chart-sizes\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe wrote no sizes: {}", &dom[..dom.len().min(500)]));
    let charts: Vec<Vec<&str>> = sizes.lines().map(|l| l.split('|').collect()).collect();
    let of = |kind: &str| {
        charts
            .iter()
            .filter(|c| c[0] == format!("chart chart-{kind}"))
            .count()
    };
    assert_eq!(of("forest"), 1, "{sizes}");
    assert_eq!(of("runs"), rows, "one runs chart per row: {sizes}");
    assert_eq!(of("curve"), curves, "{sizes}");
    assert_eq!(of("rounds"), rows, "one per-round chart per row: {sizes}");
    assert_eq!(charts.len(), 1 + 2 * rows + curves, "{sizes}");
    for c in &charts {
        let (w, h, shapes, outside): (u32, u32, u32, u32) = (
            c[1].parse().unwrap(),
            c[2].parse().unwrap(),
            c[3].parse().unwrap(),
            c[4].parse().unwrap(),
        );
        assert!(w > 0 && h > 0 && shapes > 0, "a chart did not draw: {c:?}");
        assert_eq!(outside, 0, "a label is cut off at the chart's edge: {c:?}");
    }

    // The page as a person sees it (the page itself, without the probe).
    let shot = dir.path().join("report.png");
    let mut child = browser(
        &exe,
        &dir.path().join("profile-shot"),
        &[
            "--window-size=1400,2400".to_string(),
            format!("--screenshot={}", shot.display()),
            format!("file://{}", page.display()),
        ],
        Stdio::null(),
    );
    assert!(common::wait_with_timeout(&mut child, Duration::from_secs(90)).success());
    let (w, h, inked, colours, base, patched) = ink(&shot);
    assert_eq!((w, h), (1400, 2400));
    let share = inked as f64 / (w * h) as f64;
    assert!(
        share > 0.02,
        "the screenshot is (nearly) blank: {share:.4} inked"
    );
    assert!(colours > 50, "only {colours} colours: nothing drew");
    assert!(base && patched, "both sides' colours are on the page");
    if let Ok(keep) = std::env::var("PATCHBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, &keep).unwrap();
        std::fs::copy(&page, format!("{keep}.html")).unwrap();
    }
    eprintln!(
        "browser test: {rows} rows, {curves} curves; measuring {:.1} s, browser {:.1} s; \
         {:.1}% of the screenshot inked, {colours} colours",
        measured.as_secs_f64(),
        (started.elapsed() - measured).as_secs_f64(),
        100.0 * share
    );
}
