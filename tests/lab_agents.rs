//! Lab agents on a real PostgreSQL server (`common::pg_server`): 8 agents (local executor, a
//! one-test workload of about 0.3 s) drain a campaign of 2 boxes x 10 rounds x 2 sides, every
//! step recorded exactly once, while two of them are killed with SIGKILL mid-step (their steps
//! go back to the queue when the lease runs out and are run once by others); two agents on
//! one box never run two steps at once (the second is told the box is busy and waits); agents whose
//! server is stopped for 10 s mid-campaign keep the runs of the steps they finish meanwhile in
//! their spool, reconnect, and upload them: nothing lost, nothing twice.

mod common;

use common::pg_server::{PgServer, Setup, ADMIN};
use patchbench::record::campaign::state::StepState;
use patchbench::store::db::Store;
use patchbench::store::{Access, Location};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The workload of every step: one test, about 0.3 s.
const WORKLOAD: [&str; 9] = [
    "run",
    "syscall",
    "--duration",
    "0.3",
    "--passes",
    "1",
    "--no-settle",
    "--copies",
    "1",
];

/// Agents that are stopped (SIGKILL) when the test ends, however it ends.
struct Agents(Vec<Child>);

impl Drop for Agents {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Agents {
    /// Stops every agent still running with SIGTERM; each must exit 0. Returns their stderr.
    fn stop_all(&mut self) -> Vec<String> {
        let mut errs = Vec::new();
        for c in &mut self.0 {
            if c.try_wait().unwrap().is_none() {
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(c.id() as i32),
                    nix::sys::signal::Signal::SIGTERM,
                )
                .unwrap();
            }
        }
        for c in &mut self.0 {
            let status = c.wait().unwrap();
            let mut err = String::new();
            if let Some(mut e) = c.stderr.take() {
                use std::io::Read;
                e.read_to_string(&mut err).unwrap();
            }
            errs.push(format!("[{status}] {err}"));
        }
        errs
    }
}

/// A lab campaign of 2 boxes tagged `lab`, `rounds` rounds.
fn start_campaign(url: &str, name: &str, rounds: u32) {
    let rounds = rounds.to_string();
    start_with(
        url,
        name,
        &["--boxes", "2", "--tag", "lab", "--rounds", &rounds],
    );
}

/// `campaign start NAME OPTIONS --store URL -- WORKLOAD`, which must succeed.
fn start_with(url: &str, name: &str, options: &[&str]) {
    let out = common::std_patchbench()
        .args(["campaign", "start", name])
        .args(options)
        .args(["--store", url, "--"])
        .args(WORKLOAD)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn agent(url: &str, box_name: &str, spool: &Path, lease: &str) -> Child {
    common::std_patchbench()
        .args(["agent", "--box", box_name, "--tag", "lab", "--tag", "x86"])
        .args(["--lease", lease, "--poll", "1", "--connect-timeout", "2"])
        .arg("--spool")
        .arg(spool)
        .args(["--store", url])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn open(url: &str) -> Store {
    Store::open(&Location::parse(url.as_ref()).unwrap(), Access::Read, None).unwrap()
}

/// Waits (at most `limit`) until `done` says so, polling the store.
fn wait_until(url: &str, limit: Duration, what: &str, done: impl Fn(&Store) -> bool) {
    let started = Instant::now();
    loop {
        if let Ok(s) = Store::open(&Location::parse(url.as_ref()).unwrap(), Access::Read, None) {
            if done(&s) {
                return;
            }
        }
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every step done and holding exactly one run: one per (round, side, box), two boxes, and
/// the runs of the campaign are exactly the steps' runs.
fn assert_exactly_once(store: &Store, name: &str, rounds: u32) {
    let c = store.campaign(name).unwrap().unwrap();
    let steps = store.steps(c.id).unwrap();
    assert_eq!(steps.len(), (rounds * 2 * 2) as usize);
    for s in &steps {
        assert_eq!(s.state, StepState::Done, "{s:?}");
        assert!(s.run_uuid.is_some(), "{s:?}");
    }
    let boxes: BTreeSet<&str> = steps.iter().map(|s| s.r#box.as_str()).collect();
    assert_eq!(boxes, BTreeSet::from(["alpha", "beta"]));
    let keys: BTreeSet<(u32, &str, &str)> = steps
        .iter()
        .map(|s| (s.round, s.side.as_str(), s.r#box.as_str()))
        .collect();
    assert_eq!(keys.len(), steps.len());
    let runs = store.campaign_runs(c.id).unwrap();
    assert_eq!(runs.len(), steps.len(), "one run per step");
    let labelled = store.ids_with_label(&format!("{name}/base")).unwrap().len()
        + store
            .ids_with_label(&format!("{name}/patched"))
            .unwrap()
            .len();
    assert_eq!(
        labelled,
        steps.len(),
        "no run stored beside the steps' runs"
    );
    let uuids: BTreeSet<String> = runs.iter().filter_map(|(_, r)| r.uuid.clone()).collect();
    assert_eq!(uuids.len(), steps.len());
    for (_, r) in &runs {
        let info = r.campaign.as_ref().unwrap();
        let step = steps
            .iter()
            .find(|s| s.run_uuid == r.uuid)
            .expect("the run is a step's run");
        assert_eq!(
            (info.round, info.side.as_str(), info.r#box.as_str()),
            (step.round, step.side.as_str(), step.r#box.as_str())
        );
    }
}

#[test]
fn eight_agents_drain_a_two_box_campaign_once_though_two_are_killed_mid_step() {
    let server = PgServer::shared();
    let url = server.socket_url(ADMIN, &server.database());
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool.db");
    start_campaign(&url, "drain", 10);
    let mut agents = Agents(
        (0..8)
            .map(|i| {
                let b = if i % 2 == 0 { "alpha" } else { "beta" };
                agent(&url, b, &spool, "5")
            })
            .collect(),
    );
    // Kill two agents, each while it runs a step: the step it holds when it dies is the one
    // left to the lease. (A box runs one step at a time, so the victims are the agents that
    // run a step now; a kill that lands between two steps abandons none: another victim.)
    let running_owners = |s: &Store| -> Vec<(i64, String)> {
        let c = s.campaign("drain").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .into_iter()
            .filter(|st| st.state == StepState::Running)
            .filter_map(|st| Some((st.id, st.owner?)))
            .collect()
    };
    let mut killed = Vec::new();
    let mut victims = Vec::new();
    let mut tries = 0;
    while killed.len() < 2 {
        assert!(tries < 6, "could not kill two agents mid-step");
        tries += 1;
        let mut pick = None;
        wait_until(&url, Duration::from_secs(120), "a running step", |s| {
            !running_owners(s).is_empty()
        });
        for (_, owner) in running_owners(&open(&url)) {
            pick = agents.0.iter().position(|a| {
                owner.contains(&format!(":{}:", a.id())) && !victims.contains(&a.id())
            });
            if pick.is_some() {
                break;
            }
        }
        let Some(v) = pick else { continue };
        let pid = agents.0[v].id();
        agents.0[v].kill().unwrap();
        agents.0[v].wait().unwrap();
        victims.push(pid);
        killed.extend(
            running_owners(&open(&url))
                .into_iter()
                .filter(|(_, o)| o.contains(&format!(":{pid}:")))
                .map(|(id, _)| id),
        );
    }
    wait_until(&url, Duration::from_secs(600), "every step done", |s| {
        let c = s.campaign("drain").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .iter()
            .all(|st| st.state == StepState::Done)
    });
    let errs = agents.stop_all();
    let store = open(&url);
    assert_exactly_once(&store, "drain", 10);
    let c = store.campaign("drain").unwrap().unwrap();
    let steps = store.steps(c.id).unwrap();
    for id in &killed {
        let s = steps.iter().find(|s| s.id == *id).unwrap();
        // Claimed by the killed agent, then once more by another after the lease ran out.
        assert_eq!(s.attempts, 2, "{s:?}");
        assert!(s.owner.is_none(), "a done step has no owner: {s:?}");
    }
    let retried = steps.iter().filter(|s| s.attempts > 1).count();
    assert_eq!(
        retried,
        killed.len(),
        "only the killed agents' steps ran twice"
    );
    // The agents left stop cleanly on SIGTERM.
    for (i, e) in errs.iter().enumerate() {
        if victims.contains(&agents.0[i].id()) {
            continue;
        }
        assert!(e.starts_with("[exit status: 0]"), "agent {i}: {e}");
        assert!(e.contains("stopped by SIGTERM"), "agent {i}: {e}");
    }
    // Each box registered with its tags.
    let boxes = store.boxes().unwrap();
    let names: Vec<&str> = boxes.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert!(boxes
        .iter()
        .all(|b| b.tags == ["lab", "x86"] && b.executors == ["local"]));
    // status shows each box.
    let out = common::std_patchbench()
        .args(["campaign", "status", "drain", "--store", &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("box alpha: 10 of 10 rounds complete")
            && text.contains("box beta: 10 of 10 rounds complete"),
        "{text}"
    );
}

#[test]
fn a_server_away_for_ten_seconds_loses_nothing_and_stores_nothing_twice() {
    // A server of its own: stopping the shared one would stop the other test's.
    let server = PgServer::start(Setup::default());
    let url = server.socket_url(ADMIN, &server.database());
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool.db");
    start_campaign(&url, "outage", 6);
    let mut agents = Agents(
        (0..4)
            .map(|i| agent(&url, ["alpha", "beta"][i % 2], &spool, "30"))
            .collect(),
    );
    // Stop the server while steps run (and after some are done).
    wait_until(&url, Duration::from_secs(300), "steps running", |s| {
        let c = s.campaign("outage").unwrap().unwrap();
        let steps = s.steps(c.id).unwrap();
        steps
            .iter()
            .filter(|st| st.state == StepState::Done)
            .count()
            >= 4
            && steps.iter().any(|st| st.state == StepState::Running)
    });
    server.stop();
    std::thread::sleep(Duration::from_secs(10));
    server.restart();
    wait_until(&url, Duration::from_secs(600), "every step done", |s| {
        let c = s.campaign("outage").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .iter()
            .all(|st| st.state == StepState::Done)
    });
    // Let the agents upload what they still hold, then stop them.
    std::thread::sleep(Duration::from_secs(3));
    let errs = agents.stop_all();
    let all = errs.join("\n");
    for (i, e) in errs.iter().enumerate() {
        assert!(e.starts_with("[exit status: 0]"), "agent {i}: {e}");
    }
    assert!(all.contains("waits in spool"), "no run was spooled:\n{all}");
    assert!(
        all.contains("the store is back"),
        "no agent reconnected:\n{all}"
    );
    assert!(
        all.contains("stored as run"),
        "no spooled run was uploaded:\n{all}"
    );
    assert!(!all.contains("still wait in spool"), "{all}");
    let store = open(&url);
    assert_exactly_once(&store, "outage", 6);
    // The spool is empty.
    let mut spooled = patchbench::store::spool::Spool::open(&spool).unwrap();
    assert_eq!(spooled.count(&store.location().shown()).unwrap(), 0);
}

#[test]
fn an_agent_with_only_the_documented_grants_runs_an_until_campaign_to_its_end() {
    let server = PgServer::shared();
    let db = server.database();
    let admin_url = server.socket_url(ADMIN, &db);
    start_with(
        &admin_url,
        "least",
        &["--boxes", "1", "--until", "50", "--max-rounds", "3"],
    );
    let role = format!("agent_least_{}", std::process::id());
    let grants = patchbench::store::schema::AGENT_GRANTS.replace("ROLE", &role);
    server.admin_sql(&db, &format!("CREATE ROLE {role} LOGIN; {grants}"));
    let url = server.socket_url(&role, &db);
    let dir = tempfile::tempdir().unwrap();
    let mut agents = Agents(vec![agent(
        &url,
        "solo",
        &dir.path().join("spool.db"),
        "10",
    )]);
    wait_until(
        &admin_url,
        Duration::from_secs(300),
        "the campaign's end",
        |s| {
            s.campaign("least").unwrap().unwrap().state
                == patchbench::record::campaign::state::CampaignState::Finished
        },
    );
    let errs = agents.stop_all();
    assert!(errs[0].starts_with("[exit status: 0]"), "{}", errs[0]);
    assert!(!errs[0].contains("permission denied"), "{}", errs[0]);
    let store = open(&admin_url);
    let c = store.campaign("least").unwrap().unwrap();
    assert!(c.decision.is_some(), "the pilot's decision was recorded");
    let steps = store.steps(c.id).unwrap();
    assert_eq!(steps.len(), 6);
    assert!(steps
        .iter()
        .all(|s| s.state == StepState::Done && s.r#box == "solo"));
}

#[test]
fn an_agents_password_appears_nowhere() {
    use common::pg_server::PASSWORD_ROLE;
    let server = PgServer::shared();
    let db = server.database();
    let admin_url = server.socket_url(ADMIN, &db);
    start_campaign(&admin_url, "secret", 1);
    let grants = patchbench::store::schema::AGENT_GRANTS.replace("ROLE", PASSWORD_ROLE);
    server.admin_sql(&db, &grants);
    let password = server.password();
    let url = server.socket_url(PASSWORD_ROLE, &db).replacen(
        &format!("{PASSWORD_ROLE}@"),
        &format!("{PASSWORD_ROLE}:{password}@"),
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool.db");
    let mut seen = String::new();
    for _ in 0..2 {
        let out = common::std_patchbench()
            .args(["agent", "--once", "--box", "alpha", "--tag", "lab"])
            .arg("--spool")
            .arg(&spool)
            .args(["--store", &url])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        seen.push_str(&err);
        seen.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    assert!(seen.contains("stored as run"), "{seen}");
    assert!(seen.contains(PASSWORD_ROLE), "the URL is named: {seen}");
    assert!(!seen.contains(password), "{seen}");
    let spool_bytes = std::fs::read(&spool).unwrap();
    assert!(!String::from_utf8_lossy(&spool_bytes).contains(password));
    // Nothing stored holds it: every table's rows, as text.
    let mut admin = server.admin(&db);
    for table in [
        "boxes",
        "campaigns",
        "campaign_steps",
        "runs",
        "metric_descs",
        "metrics",
    ] {
        let rows = admin
            .query(&format!("SELECT CAST(t AS TEXT) FROM {table} t"), &[])
            .unwrap();
        assert!(!rows.is_empty() || table == "metrics", "{table} is empty");
        for r in rows {
            let text: String = r.get(0);
            assert!(!text.contains(password), "{table}: {text}");
        }
    }
    let records = common::pg_server::records_text(&mut admin);
    assert!(!records.is_empty());
    assert!(!records.contains(password), "stored in a run's record");
}

#[test]
fn a_box_gone_for_good_is_released_and_another_box_finishes_its_rounds() {
    let server = PgServer::shared();
    let url = server.socket_url(ADMIN, &server.database());
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool.db");
    start_with(&url, "lost", &["--boxes", "1", "--rounds", "2"]);
    let once = |b: &str| {
        common::std_patchbench()
            .args(["agent", "--once", "--box", b, "--store", &url])
            .arg("--spool")
            .arg(&spool)
            .output()
            .unwrap()
    };
    // Box "ghost" runs the first step of round 1, then is gone.
    assert!(once("ghost").status.success());
    let release = |b: &str| {
        common::std_patchbench()
            .args(["campaign", "release-box", "lost", b, "--store", &url])
            .output()
            .unwrap()
    };
    let out = release("nobody");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ghost"));
    let out = release("ghost");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("1 round(s) it had not begun go to place #1")
            && err.contains("1 step(s) of rounds it left half done are recorded as failed"),
        "{err}"
    );
    // Box "fresh" takes the place and finishes round 2.
    for _ in 0..3 {
        assert!(once("fresh").status.success());
    }
    let store = open(&url);
    let c = store.campaign("lost").unwrap().unwrap();
    assert_eq!(
        c.state,
        patchbench::record::campaign::state::CampaignState::Finished
    );
    let steps = store.steps(c.id).unwrap();
    let by = |b: &str, st: StepState| {
        steps
            .iter()
            .filter(|s| s.r#box == b && s.state == st)
            .map(|s| s.round)
            .collect::<Vec<_>>()
    };
    assert_eq!(by("ghost", StepState::Done), [1]);
    assert_eq!(by("ghost", StepState::Failed), [1]);
    assert_eq!(by("fresh", StepState::Done), [2, 2]);
    assert_eq!(steps.len(), 4);
}

#[test]
fn two_agents_on_one_box_never_run_steps_at_once() {
    let server = PgServer::shared();
    let url = server.socket_url(ADMIN, &server.database());
    let dir = tempfile::tempdir().unwrap();
    start_with(
        &url,
        "solo",
        &["--boxes", "1", "--tag", "lab", "--rounds", "3"],
    );
    let mut agents = Agents(
        (0..2)
            .map(|i| agent(&url, "one", &dir.path().join(format!("spool{i}.db")), "10"))
            .collect(),
    );
    wait_until(&url, Duration::from_secs(300), "every step done", |s| {
        let c = s.campaign("solo").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .iter()
            .all(|st| st.state == StepState::Done)
    });
    let errs = agents.stop_all();
    let store = open(&url);
    let c = store.campaign("solo").unwrap().unwrap();
    let mut times: Vec<(String, String)> = store
        .campaign_runs(c.id)
        .unwrap()
        .into_iter()
        .map(|(_, r)| (r.started_at, r.finished_at))
        .collect();
    assert_eq!(times.len(), 6, "one run per step");
    times.sort();
    for w in times.windows(2) {
        let gap = patchbench::clock::secs_between(&w[0].1, &w[1].0).unwrap();
        assert!(gap >= 0.0, "two steps of one box at once: {w:?}");
    }
    // The agent that found the box busy said so and waited.
    assert!(
        errs.iter()
            .any(|e| e.contains("box one is busy: process") && e.contains("this agent waits")),
        "{errs:?}"
    );
    for e in &errs {
        assert!(e.starts_with("[exit status: 0]"), "{e}");
    }
}

/// A TCP proxy that can freeze: while frozen it forwards nothing in either direction and
/// closes nothing (a dead route, or a NAT that dropped its mapping, looks so: no reset), and
/// the connections it accepts meanwhile reach the server only once it thaws.
struct Proxy {
    port: u16,
    frozen: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    fn to(upstream: u16) -> Proxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = std::sync::Arc::new(AtomicBool::new(false));
        let f = frozen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let f = f.clone();
                std::thread::spawn(move || {
                    while f.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                        return;
                    };
                    let pump = |mut from: std::net::TcpStream, mut to: std::net::TcpStream| {
                        let f = f.clone();
                        std::thread::spawn(move || {
                            use std::io::{Read, Write};
                            from.set_read_timeout(Some(Duration::from_millis(50)))
                                .unwrap();
                            let mut buf = [0u8; 16384];
                            loop {
                                while f.load(Ordering::SeqCst) {
                                    std::thread::sleep(Duration::from_millis(20));
                                }
                                match from.read(&mut buf) {
                                    Ok(0) => break,
                                    Ok(n) => {
                                        // Read just before a freeze: held until the thaw.
                                        while f.load(Ordering::SeqCst) {
                                            std::thread::sleep(Duration::from_millis(20));
                                        }
                                        if to.write_all(&buf[..n]).is_err() {
                                            break;
                                        }
                                    }
                                    Err(e)
                                        if matches!(
                                            e.kind(),
                                            std::io::ErrorKind::WouldBlock
                                                | std::io::ErrorKind::TimedOut
                                        ) => {}
                                    Err(_) => break,
                                }
                            }
                            let _ = to.shutdown(std::net::Shutdown::Write);
                        });
                    };
                    pump(client.try_clone().unwrap(), server.try_clone().unwrap());
                    pump(server, client);
                });
            }
        });
        Proxy { port, frozen }
    }

    fn freeze(&self, on: bool) {
        self.frozen.store(on, std::sync::atomic::Ordering::SeqCst);
    }
}

/// An agent whose stderr lines are kept with the time each came.
struct Watched {
    child: Child,
    lines: std::sync::Arc<std::sync::Mutex<Vec<(Instant, String)>>>,
}

impl Watched {
    fn start(url: &str, spool: &Path, store_timeout: &str) -> Watched {
        let mut child = common::std_patchbench()
            .args(["agent", "--box", "far", "--tag", "lab"])
            .args(["--lease", "10", "--poll", "1", "--connect-timeout", "2"])
            .arg("--spool")
            .arg(spool)
            .args(["--store", url])
            .env("PATCHBENCH_STORE_TIMEOUT", store_timeout)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (err, keep) = (child.stderr.take().unwrap(), lines.clone());
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                keep.lock().unwrap().push((Instant::now(), l));
            }
        });
        Watched { child, lines }
    }

    /// When a line containing `what` came (waiting at most `limit` for it).
    fn when(&self, what: &str, limit: Duration) -> Instant {
        let end = Instant::now() + limit;
        loop {
            if let Some((t, _)) = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .find(|(_, l)| l.contains(what))
            {
                return *t;
            }
            assert!(
                Instant::now() < end,
                "no {what:?} within {limit:?}:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn text(&self) -> String {
        let l = self.lines.lock().unwrap();
        l.iter()
            .map(|(_, s)| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// SIGTERM; how long it took to exit, and its status.
    fn term(&mut self) -> (Duration, std::process::ExitStatus) {
        let t = Instant::now();
        common::signal(&self.child, libc::SIGTERM);
        let status = common::wait_with_timeout(&mut self.child, Duration::from_secs(60));
        (t.elapsed(), status)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_agent_behind_a_frozen_connection_spools_reconnects_and_honours_sigterm() {
    let server = PgServer::start(Setup {
        tcp: true,
        tls: false,
    });
    let db = server.database();
    let direct = server.socket_url(ADMIN, &db);
    let proxy = Proxy::to(server.tcp_port.unwrap());
    let far = format!(
        "postgres://{ADMIN}@127.0.0.1:{}/{db}?sslmode=disable",
        proxy.port
    );
    let dir = tempfile::tempdir().unwrap();
    let out = common::std_patchbench()
        .args([
            "campaign", "start", "cut", "--boxes", "1", "--tag", "lab", "--rounds", "3",
        ])
        .args(["--store", &direct, "--"])
        .args([
            "run",
            "syscall",
            "--duration",
            "3",
            "--passes",
            "1",
            "--no-settle",
        ])
        .args(["--copies", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let running = |s: &Store| {
        let c = s.campaign("cut").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .iter()
            .any(|st| st.state == StepState::Running)
    };
    let done = |s: &Store| {
        let c = s.campaign("cut").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .iter()
            .filter(|st| st.state == StepState::Done)
            .count()
    };
    const BOUND: f64 = 2.0;
    // 1. Frozen mid-step: the step's run goes to the spool within the bound of its end, the
    //    agent reconnects when the connection thaws, the run is stored once.
    let mut a = Watched::start(&far, &dir.path().join("spool-a.db"), "2");
    wait_until(&direct, Duration::from_secs(120), "a running step", running);
    let frozen_at = Instant::now();
    proxy.freeze(true);
    let spooled = a.when("waits in spool", Duration::from_secs(60));
    let took = (spooled - frozen_at).as_secs_f64();
    eprintln!("spooled {took:.1} s after the freeze (step of about 3.5 s, bound {BOUND} s)");
    assert!(
        took <= 3.5 + BOUND + 2.0,
        "spooled {took:.1} s after the freeze"
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        done(&open(&direct)),
        0,
        "nothing reached the server meanwhile"
    );
    proxy.freeze(false);
    a.when("the store is back", Duration::from_secs(30));
    a.when("stored as run", Duration::from_secs(30));
    // 2. SIGTERM while frozen mid-step.
    wait_until(&direct, Duration::from_secs(120), "the next step", |s| {
        running(s) && done(s) >= 1
    });
    proxy.freeze(true);
    std::thread::sleep(Duration::from_millis(500));
    let (took, status) = a.term();
    eprintln!("SIGTERM mid-step behind a frozen connection: exited in {took:.1?}");
    assert!(took <= Duration::from_secs(5), "{took:?}:\n{}", a.text());
    assert!(status.success(), "{status}:\n{}", a.text());
    assert!(a.text().contains("stopped by SIGTERM"), "{}", a.text());
    proxy.freeze(false);
    // 3. SIGTERM while a store call waits (a long bound: only the signal cuts it short).
    let mut b = Watched::start(&far, &dir.path().join("spool-b.db"), "120");
    b.when("serves store", Duration::from_secs(30));
    proxy.freeze(true);
    std::thread::sleep(Duration::from_secs(5));
    let (took, status) = b.term();
    eprintln!("SIGTERM in a store call behind a frozen connection: exited in {took:.1?}");
    assert!(took <= Duration::from_secs(5), "{took:?}:\n{}", b.text());
    assert!(status.success(), "{status}:\n{}", b.text());
    proxy.freeze(false);
    // The campaign ends with every step stored exactly once (the step the SIGTERM left
    // behind goes back to the queue when its lease runs out, or at once when handed back).
    let mut c = Watched::start(&direct, &dir.path().join("spool-c.db"), "30");
    wait_until(&direct, Duration::from_secs(300), "every step done", |s| {
        done(s) == 6
    });
    c.term();
    let store = open(&direct);
    let camp = store.campaign("cut").unwrap().unwrap();
    let runs = store.campaign_runs(camp.id).unwrap();
    assert_eq!(runs.len(), 6);
    assert_eq!(store.list(None).unwrap().len(), 6, "no run stored twice");
}
