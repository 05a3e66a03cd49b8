//! `patchbench compare` on a campaign's two sides: runs that carry their campaign step pair by
//! (box, round), the verdict rests on the paired estimate with the unpaired one beside it in
//! every format, a run without a partner is left out and counted, boxes are blocks, the HTML
//! page draws a per-round chart of every row, and `campaign report`'s rounds renderer lists
//! every round with its checks. The runs are synthetic records with a strong drift both sides
//! share (which pairing cancels), written as the JSON files a campaign step stores.

mod common;

use patchbench::compare::{self, Side};
use patchbench::record::campaign::StepInfo;
use patchbench::record::{Direction, Kind, Metric, RunRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// One step's run: pipe and syscall scores at 1 copy.
fn step(side: &str, round: u32, slot: u32, bx: &str, pipe: f64, syscall: f64) -> RunRecord {
    let mut r = RunRecord::new(
        Kind::Unixbench,
        Default::default(),
        &BTreeMap::<String, String>::new(),
    );
    let m = |test: &str, title: &str, v: f64| {
        Metric::new(
            "unixbench.score",
            &[("copies", "1".into()), ("test", test.into())],
            title,
            "lps",
            Direction::HigherIsBetter,
            v,
            vec![],
        )
    };
    r.label = Some(format!("camp/{side}"));
    r.metrics = vec![
        m("pipe", "Pipe Throughput", pipe),
        m("syscall", "System Call Overhead", syscall),
    ];
    r.campaign = Some(StepInfo {
        campaign: "camp".into(),
        round,
        side: side.into(),
        slot,
        r#box: bx.into(),
        executor: "local".into(),
        attempt: 1,
        ..Default::default()
    });
    r
}

/// A campaign of `rounds` rounds on `boxes`: the machine drifts down 2 % a round (shared),
/// each box 20 % above the one before, pipe +3 % on patched, syscall unchanged, ±0.3 % noise;
/// patched's last step on the first box failed (no run).
fn campaign(rounds: u32, boxes: &[&str]) -> (Vec<RunRecord>, Vec<RunRecord>) {
    let (mut base, mut patched) = (Vec::new(), Vec::new());
    let wobble = [0.003, -0.002, 0.0, 0.002, -0.003, 0.001, -0.001, 0.002];
    for (b, bx) in boxes.iter().enumerate() {
        for round in 1..=rounds {
            let level = 1.2f64.powi(b as i32) * (1.0 - 0.02 * f64::from(round));
            let w = |k: u32| 1.0 + wobble[((round + k) % 8) as usize];
            let base_first = !(round + b as u32).is_multiple_of(3);
            let (sb, sp) = if base_first { (0, 1) } else { (1, 0) };
            base.push(step(
                "base",
                round,
                sb,
                bx,
                1000.0 * level * w(0),
                500.0 * level * w(1),
            ));
            if !(b == 0 && round == rounds) {
                patched.push(step(
                    "patched",
                    round,
                    sp,
                    bx,
                    1030.0 * level * w(3),
                    500.0 * level * w(5),
                ));
            }
        }
    }
    (base, patched)
}

/// The runs as files, joined by commas (a side of `compare`).
fn files(dir: &Path, name: &str, runs: &[RunRecord]) -> String {
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let p = dir.join(format!("{name}-{i}.json"));
            std::fs::write(&p, r.to_json().expect("json")).expect("write");
            p.display().to_string()
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn compare_out(dir: &Path, base: &str, patched: &str, format: &str) -> String {
    let out = common::patchbench()
        .env("PATCHBENCH_STORE", dir.join("none.db"))
        .args(["compare", base, patched, "--format", format])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn row<'a>(v: &'a serde_json::Value, test: &str) -> &'a serde_json::Value {
    let key = format!("unixbench.score[copies=1,test={test}]");
    v["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["key"] == key.as_str()))
        .unwrap_or_else(|| panic!("no row {key}"))
}

#[test]
fn a_campaign_is_judged_on_its_pairs_with_the_unpaired_estimate_beside() {
    let dir = tempfile::tempdir().unwrap();
    let (b, p) = campaign(8, &[""]);
    let (bs, ps) = (files(dir.path(), "b", &b), files(dir.path(), "p", &p));
    let v: serde_json::Value =
        serde_json::from_str(&compare_out(dir.path(), &bs, &ps, "json")).unwrap();
    let d = &v["design"];
    assert_eq!(d["campaign"], "camp");
    assert_eq!(
        (d["pairs"].as_u64(), d["blocks"].as_u64()),
        (Some(7), Some(8))
    );
    assert_eq!(d["unpartnered"][0]["side"], "base");
    assert_eq!(d["unpartnered"][0]["round"], 8);
    let pipe = row(&v, "pipe");
    assert_eq!(pipe["estimate"]["method"], "paired-t");
    assert_eq!(pipe["estimate"]["df"], 6.0);
    // The drift (−14 % over the campaign) swamps the unpaired estimate; the pairs cancel it.
    assert_eq!(pipe["verdict"], "improved", "{pipe}");
    assert_eq!(pipe["unpaired"]["method"], "welch");
    let (lo, hi) = (
        pipe["unpaired"]["lower_pct"].as_f64().unwrap(),
        pipe["unpaired"]["upper_pct"].as_f64().unwrap(),
    );
    assert!(
        lo < 0.0 && hi > 3.0,
        "the unpaired interval straddles: {lo} {hi}"
    );
    let paired = &pipe["paired"];
    assert_eq!(paired["narrower"], "paired");
    assert_eq!(paired["pairs"], 7);
    assert_eq!(paired["left_out"], serde_json::json!([1, 0]));
    assert_eq!(paired["rounds"].as_array().map(Vec::len), Some(7));
    assert!(
        paired["robust"]["lower_pct"].as_f64().unwrap() > 2.0,
        "{paired}"
    );
    // The shared drift is seen on both sides, and said to cancel.
    assert_eq!(paired["drift"]["base"]["matters"], true, "{paired}");
    assert_eq!(paired["drift"]["ratio"]["matters"], false, "{paired}");
    assert_eq!(pipe["sensitivity"]["unit"], "rounds");
    assert_eq!(pipe["sensitivity"]["spread_from"], "pairs");
    let syscall = row(&v, "syscall");
    assert_eq!(syscall["verdict"], "no-change", "{syscall}");

    // Every text format says the design is paired and shows both estimates.
    let ub = compare_out(dir.path(), &bs, &ps, "unixbench");
    for needle in [
        "note: paired design: campaign camp, patched vs base, 7 pairs of 8 blocks on one machine",
        "1 run without a partner",
        "paired vs unpaired",
        "paired 90% CI",
        "unpaired 90% CI",
        "robust (Hodges-Lehmann)",
        "drift: Pipe Throughput [copies=1]: over the rounds base moved",
        "rounds for 2%",
        "±",
    ] {
        assert!(ub.contains(needle), "{needle:?} missing:\n{ub}");
    }
    let pipe_line = ub
        .lines()
        .find(|l| l.starts_with("Pipe Throughput [copies=1]") && l.contains("alone)"))
        .unwrap_or_else(|| panic!("{ub}"));
    assert!(pipe_line.ends_with("|   paired |"), "{pipe_line}");
    let lkp = compare_out(dir.path(), &bs, &ps, "lkp");
    assert!(
        lkp.contains("n=7 pairs) improved") && lkp.contains("paired vs unpaired"),
        "{lkp}"
    );
    let inline = compare_out(dir.path(), &bs, &ps, "inline");
    let line = inline.lines().find(|l| l.starts_with("Pipe")).unwrap();
    assert!(
        line.contains("n=7 pairs")
            && line.contains("; paired, unpaired [")
            && line.ends_with("paired narrower"),
        "{line}"
    );
    let md = compare_out(dir.path(), &bs, &ps, "markdown");
    assert!(
        md.contains("| paired vs unpaired") && md.contains("| ---"),
        "{md}"
    );
    let csv = compare_out(dir.path(), &bs, &ps, "csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let pipe_csv = reader.records().next().unwrap().unwrap();
    let col = |name: &str| {
        let i = header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name}"));
        pipe_csv[i].to_string()
    };
    assert_eq!(col("method"), "paired-t");
    assert_eq!(col("pairs"), "7");
    assert_eq!(col("narrower"), "paired");
    assert_eq!(col("unpaired_method"), "welch");
    assert_eq!(col("plan_unit"), "rounds");

    // The page: a per-round chart of every row.
    let html = compare_out(dir.path(), &bs, &ps, "html");
    assert!(html.contains("<section id=\"paired\">"));
    assert_eq!(html.matches("class=\"chart chart-rounds\"").count(), 2);
    assert_eq!(
        html.matches("<circle class=\"run side-").count(),
        2 * 15 + 2 * 7
    );
    assert!(!html.contains("<script"));
}

#[test]
fn boxes_are_blocks_and_the_rounds_renderer_lists_every_round() {
    let (b, p) = campaign(4, &["box-a", "box-b"]);
    let side = |name: &str, runs: Vec<RunRecord>, first: usize| {
        Side::new(
            name,
            runs.into_iter()
                .enumerate()
                .map(|(i, r)| ((first + i).to_string(), r))
                .collect(),
        )
    };
    let base = side("camp/base", b, 1);
    let patched = side("camp/patched", p, 100);
    let c = compare::compare(&base, &patched, &Default::default()).unwrap();
    let d = c.design.as_ref().unwrap();
    assert_eq!(d.boxes, vec!["box-a", "box-b"]);
    assert_eq!(d.pairs, 7);
    let pipe = &c.rows[0];
    let e = pipe.judgement.estimate.as_ref().unwrap();
    assert_eq!(e.method.as_str(), "paired-t");
    // 7 pairs on 2 boxes: 5 df.
    assert_eq!(e.df, 5.0);
    assert_eq!(pipe.judgement.verdict.as_str(), "improved");
    // Unpaired within boxes: the 20 % between boxes does not widen it.
    let u = pipe.judgement.unpaired.as_ref().unwrap();
    assert_eq!(u.method.as_str(), "blocked");
    assert!(u.upper_pct - u.lower_pct < 20.0, "{u:?}");
    let share = pipe.paired.as_ref().unwrap().between_boxes.unwrap();
    assert!(share.share > 0.8, "{share:?}");
    assert!(
        c.notes[0].contains("2 boxes (box-a, box-b), each box a block"),
        "{:?}",
        c.notes
    );

    let text = patchbench::report::campaign_rounds::render(&c, &[]);
    assert!(!text.contains("rounds: no paired row"));
    // No primary row here: the first paired row, every round with its box and order.
    assert!(
        text.starts_with("Pipe Throughput [copies=1] (lps): 7 pairs, 1 base and 0 patched"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("box-")).count(),
        7,
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("box-b") && l.split('|').nth(1).map(str::trim) == Some("4")),
        "{text}"
    );
    assert!(
        text.contains("base first") && text.contains("patched first"),
        "{text}"
    );
    for needle in [
        "paired 90%:",
        "robust:",
        "narrower:",
        "round order:",
        "between boxes:",
        "drift of the change:",
    ] {
        assert!(text.contains(needle), "{needle:?}:\n{text}");
    }
    let both = patchbench::report::campaign_rounds::render(
        &c,
        &[
            "unixbench.score[copies=1,test=pipe]",
            "unixbench.score[copies=1,test=syscall]",
        ],
    );
    assert!(
        both.contains("System Call Overhead [copies=1] (lps)"),
        "{both}"
    );
}

#[test]
fn runs_that_do_not_pair_say_why_and_are_compared_unpaired() {
    let dir = tempfile::tempdir().unwrap();
    let (b, mut p) = campaign(4, &[""]);
    // A run of no campaign among the patched ones.
    let mut plain = p[0].clone();
    plain.campaign = None;
    p.push(plain);
    let (bs, ps) = (files(dir.path(), "b", &b), files(dir.path(), "p", &p));
    let v: serde_json::Value =
        serde_json::from_str(&compare_out(dir.path(), &bs, &ps, "json")).unwrap();
    assert!(v["design"].is_null());
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("unpaired: 1 of 8 runs were not made by a campaign step")),
        "{notes:?}"
    );
    assert_eq!(row(&v, "pipe")["estimate"]["method"], "welch");
    assert!(row(&v, "pipe").get("paired").is_none());
    // The rounds renderer says there are none.
    let base = Side::new(
        "b",
        b.into_iter()
            .enumerate()
            .map(|(i, r)| (i.to_string(), r))
            .collect(),
    );
    let c = compare::compare(&base, &base, &Default::default()).unwrap();
    assert!(patchbench::report::campaign_rounds::render(&c, &[]).contains("not paired"));
}
