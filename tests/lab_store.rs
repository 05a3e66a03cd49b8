//! A lab's shared PostgreSQL store, tested on a real server (`common::pg_server`): `push`
//! (twice stores once; cut by SIGKILL, then repeated, completes), credentials (a password in
//! the URL appears in no output, error, log or stored row; `PGPASSWORD` and `~/.pgpass` work),
//! a server that cannot be reached or does not answer (exit 2 within the connect timeout),
//! URLs of schemes this build does not know (refused, never a file), TLS (`sslmode`), and the
//! least privileges of an agent role (docs/lab.md).

mod common;

use common::pg_server::{PgServer, Setup, ADMIN, PASSWORD_ROLE};
use common::{fixture, sample_record};
use patchbench::record::RunRecord;
use patchbench::store::db::Store;
use patchbench::store::{Access, Location};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// A local SQLite store holding `n` complete runs (and `incomplete` interrupted ones).
fn local_store(dir: &Path, n: usize, incomplete: usize) -> std::path::PathBuf {
    let path = dir.join("local.db");
    let mut s = common::create_store(&path);
    let mut records: Vec<RunRecord> = (0..n + incomplete)
        .map(|i| {
            let mut r = sample_record("base", &[("pipe", 1000.0 + i as f64), ("spawn", 50.0)]);
            r.uuid = None;
            r.incomplete = i >= n;
            r
        })
        .collect();
    for chunk in records.chunks_mut(1000) {
        s.insert_all(chunk).unwrap();
    }
    path
}

fn count(server: &PgServer, db: &str, sql: &str) -> i64 {
    server.admin(db).query_one(sql, &[]).unwrap().get(0)
}

fn push(local: &Path, to: &str) -> std::process::Output {
    common::patchbench()
        .args(["push", "--to", to, "--store"])
        .arg(local)
        .output()
        .unwrap()
}

#[test]
fn pushing_twice_stores_once() {
    let server = PgServer::shared();
    let db = server.database();
    let url = server.socket_url(ADMIN, &db);
    let dir = tempfile::tempdir().unwrap();
    let local = local_store(dir.path(), 500, 1);
    let first = push(&local, &url);
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        text.contains("pushed 500 runs to")
            && text.contains("(0 already there)")
            && text.contains("1 incomplete run not pushed"),
        "{text}"
    );
    let second = push(&local, &url);
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(
        text.contains("pushed 0 runs") && text.contains("(500 already there)"),
        "{text}"
    );
    assert_eq!(count(server, &db, "SELECT count(*) FROM runs"), 500);
    assert_eq!(
        count(server, &db, "SELECT count(DISTINCT uuid) FROM runs"),
        500
    );
    assert_eq!(count(server, &db, "SELECT count(*) FROM metrics"), 1000);
    // The pushed runs are the local ones, UUID for UUID, and read back whole.
    let s = common::open_store(&local);
    let mine = s.get(1).unwrap().unwrap();
    let shared = Store::open(&Location::parse(url.as_ref()).unwrap(), Access::Read, None)
        .unwrap()
        .get(1)
        .unwrap()
        .unwrap();
    assert_eq!((shared.uuid, shared.metrics), (mine.uuid, mine.metrics));
    // Another store file is a target too.
    let other = dir.path().join("other.db");
    let out = push(&local, other.to_str().unwrap());
    assert!(String::from_utf8_lossy(&out.stdout).contains("pushed 500 runs"));
    let out = push(&local, local.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2), "pushing a store into itself");
    drop(s);
}

#[test]
fn a_push_cut_by_sigkill_completes_when_repeated() {
    let server = PgServer::shared();
    let db = server.database();
    let url = server.socket_url(ADMIN, &db);
    let dir = tempfile::tempdir().unwrap();
    let local = local_store(dir.path(), 2000, 0);
    let mut child = common::std_patchbench()
        .args(["push", "--to", &url, "--store"])
        .arg(&local)
        .env("PATCHBENCH_PUSH_PAUSE_MS", "400")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tables = |db: &str| {
        count(
            server,
            db,
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'",
        )
    };
    common::wait_until(
        Duration::from_secs(120),
        "the first batch committed",
        || tables(&db) == 1 && count(server, &db, "SELECT count(*) FROM runs") >= 500,
    );
    common::signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let cut = count(server, &db, "SELECT count(*) FROM runs");
    assert!(
        (500..2000).contains(&cut) && cut % 500 == 0,
        "{cut} runs after the kill"
    );
    let again = push(&local, &url);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{text}");
    assert!(
        text.contains(&format!("pushed {} runs", 2000 - cut))
            && text.contains(&format!("({cut} already there)")),
        "{text}"
    );
    assert_eq!(
        count(server, &db, "SELECT count(DISTINCT uuid) FROM runs"),
        2000
    );
    assert_eq!(count(server, &db, "SELECT count(*) FROM metrics"), 4000);
}

/// Every output of `args` (exit status ignored), stdout and stderr together.
fn outputs(store: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = common::patchbench();
    c.env("PATCHBENCH_STORE", store).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_password_in_the_url_appears_nowhere() {
    let server = PgServer::shared();
    let db = server.database();
    let password = server.password();
    let plain = server.socket_url(PASSWORD_ROLE, &db);
    let with_password = plain.replacen(
        &format!("{PASSWORD_ROLE}@"),
        &format!("{PASSWORD_ROLE}:{password}@"),
        1,
    );
    let wrong = plain.replacen(
        &format!("{PASSWORD_ROLE}@"),
        &format!("{PASSWORD_ROLE}:Wr0ng-guess-77@"),
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let local = local_store(dir.path(), 3, 0);
    let mut seen = String::new();
    let ub = fixture("ub60-base-1.txt");
    for args in [
        &["import", "--label", "base", &ub][..],
        &["import", "--label", "patched", &ub],
        &["runs"],
        &["runs", "--format", "json"],
        &["show", "1"],
        &["show", "99"],
        &["compare", "base", "patched"],
        &["compare", "base", "nosuch"],
        &["rm", "42"],
        &["export", "1"],
        &[
            "run",
            "syscall",
            "--duration",
            "0.2",
            "--passes",
            "1",
            "--no-settle",
            "--copies",
            "1",
        ],
        &[
            "push",
            "--to",
            &with_password,
            "--store",
            local.to_str().unwrap(),
        ],
        &["import", "--label", "x", "/nonexistent/file"],
    ] {
        let out = outputs(&with_password, args, &[]);
        assert!(!out.contains("error: unexpected"), "{args:?}: {out}");
        seen.push_str(&out);
    }
    assert!(seen.contains("imported"), "{seen}");
    assert!(
        seen.contains("saved as run 3 in postgres://pwuser@"),
        "a measuring run: {seen}"
    );
    // A wrong password, and URLs refused before connecting.
    let refused = outputs(&wrong, &["runs"], &[]);
    assert!(
        refused.contains("password authentication failed"),
        "{refused}"
    );
    assert!(!refused.contains("Wr0ng-guess-77"), "{refused}");
    seen.push_str(&refused);
    let bad = with_password.replace("postgres://", "mysql://");
    seen.push_str(&outputs(&bad, &["runs"], &[]));
    seen.push_str(&outputs(
        &format!("{with_password}?sslmode=bogus"),
        &["runs"],
        &[],
    ));
    seen.push_str(&outputs(&with_password, &["run", "--help"], &[]));
    assert!(
        !seen.contains(password),
        "the password was printed:\n{seen}"
    );
    // Nor is it stored, nor in the server's log.
    let mut admin = server.admin(&db);
    for sql in [
        "SELECT coalesce(string_agg(coalesce(r.source, '') || coalesce(r.label, ''), ''), '') FROM runs r",
        "SELECT coalesce(string_agg(params_json || title || samples_json, ''), '') FROM metrics",
        "SELECT coalesce(string_agg(params_json::text || title || unit, ''), '') FROM metric_descs",
    ] {
        let text: String = admin.query_one(sql, &[]).unwrap().get(0);
        assert!(!text.is_empty() || sql.contains("metrics"));
        assert!(!text.contains(password), "stored: {sql}");
    }
    // The records themselves, in their packed parts.
    let records = common::pg_server::records_text(&mut admin);
    assert!(!records.is_empty());
    assert!(!records.contains(password), "stored in a run's record");
    assert!(!server.log().contains(password), "in the server's log");
    // PGPASSWORD and the password file give it too.
    let out = outputs(&plain, &["runs"], &[("PGPASSWORD", password)]);
    assert!(out.contains("base"), "{out}");
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    std::fs::write(
        &pgpass,
        format!("localhost:*:{db}:{PASSWORD_ROLE}:{password}\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let home_env = [("HOME", home.path().to_str().unwrap())];
    let out = outputs(&plain, &["runs"], &home_env);
    assert!(out.contains("base"), "{out}");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = outputs(&plain, &["runs"], &home_env);
    assert!(
        out.contains("group or world access") && !out.contains(password),
        "{out}"
    );
}

/// A server that accepts connections and never answers.
fn silent_server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            match listener.accept() {
                Ok((s, _)) => held.push(s),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
            if held.len() >= 6 {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(20));
    });
    (port, handle)
}

#[test]
fn an_unreachable_store_is_said_in_one_line_within_the_timeout() {
    // Nothing listens.
    let closed = common::pg_server::free_port();
    let url = format!("postgres://u@127.0.0.1:{closed}/db");
    let t = Instant::now();
    let out = common::patchbench()
        .args(["runs", "--store", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot reach store {url}")), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(t.elapsed() < Duration::from_secs(20));
    // Something listens and says nothing: each way of giving the timeout bounds the wait.
    let (port, _server) = silent_server();
    let url = format!("postgres://u@127.0.0.1:{port}/db");
    for (args, env) in [
        (
            vec!["runs", "--connect-timeout", "1", "--store", url.as_str()],
            None,
        ),
        (
            vec!["runs", "--store", url.as_str()],
            Some(("PGCONNECT_TIMEOUT", "1")),
        ),
    ] {
        let mut c = common::patchbench();
        c.args(&args);
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let t = Instant::now();
        let out = c.timeout(Duration::from_secs(30)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("no answer from") && err.contains("within 1 s"),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    }
    let in_url = format!("{url}?connect_timeout=1");
    let t = Instant::now();
    let out = common::patchbench()
        .args(["run", "syscall", "--no-settle", "--store", &in_url])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("Benchmark Run"),
        "the run started without its store"
    );
}

#[test]
fn a_url_is_never_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    for store in ["mysql://u@h/db", "sqlite://x.db", "https://example/x"] {
        let out = common::patchbench()
            .current_dir(dir.path())
            .args(["import", &fixture("ub60-base-1.txt"), "--store", store])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("file path or a postgres:// URL"), "{err}");
        assert_eq!(err.trim().lines().count(), 1);
    }
    let out = common::patchbench()
        .current_dir(dir.path())
        .args([
            "runs",
            "--connect-timeout",
            "2",
            "--store",
            "postgres://u@127.0.0.1:1/db",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::walk(dir.path()).is_empty(),
        "{:?}",
        common::walk(dir.path())
    );
    // A file whose name has "://" in it is still reachable as a path.
    let out = common::patchbench()
        .current_dir(dir.path())
        .args([
            "import",
            &fixture("ub60-base-1.txt"),
            "--store",
            "./odd://name.db",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("odd:/name.db").is_file());
}

#[test]
fn an_agent_role_works_with_only_its_grants() {
    let server = PgServer::shared();
    let db = server.database();
    // The admin (the owner) creates the schema and a campaign.
    let admin_url = server.socket_url(ADMIN, &db);
    let mut admin = Store::open(
        &Location::parse(admin_url.as_ref()).unwrap(),
        Access::Create,
        None,
    )
    .unwrap();
    let role = format!("agent_{}", std::process::id());
    let grants = patchbench::store::schema::AGENT_GRANTS.replace("ROLE", &role);
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/lab.md")).unwrap();
    assert!(
        docs.contains(&patchbench::store::schema::AGENT_GRANTS.replace("ROLE", "agent")),
        "docs/lab.md shows the agent's grants as the code has them"
    );
    server.admin_sql(&db, &format!("CREATE ROLE {role} LOGIN; {grants}"));
    let spec: patchbench::record::campaign::spec::CampaignSpec =
        serde_json::from_value(serde_json::json!({
            "name": "lab", "sides": [{"name": "base"}, {"name": "patched"}],
            "workload": ["run", "pipe"], "schedule": {"rounds": {"rounds": 1}},
            "order": "abba", "seed": 1, "executor": "local", "step_timeout_s": 60.0,
            "confidence": 0.9, "program": "/bin/true", "started_on": "x"
        }))
        .unwrap();
    let steps = vec![
        patchbench::record::campaign::plan::PlannedStep {
            round: 1,
            slot: 0,
            side: "base".into(),
            r#box: String::new(),
        },
        patchbench::record::campaign::plan::PlannedStep {
            round: 1,
            slot: 1,
            side: "patched".into(),
            r#box: String::new(),
        },
    ];
    let id = admin.create_campaign(&spec, 1, &steps).unwrap();
    // The agent: claims, renews, finishes (run + metrics), hands back, reads.
    let agent_url = server.socket_url(&role, &db);
    let agent_location = Location::parse(agent_url.as_ref()).unwrap();
    let mut agent = Store::open(&agent_location, Access::Write, None).unwrap();
    let step = agent.claim_step(id, "box1", 60.0, None).unwrap().unwrap();
    assert!(agent.renew_lease(step.id, "box1", 60.0).unwrap());
    let run = sample_record("lab/base", &[("pipe", 5.0)]);
    let run_id = agent.finish_step(step.id, "box1", &run).unwrap().unwrap();
    let other = agent.claim_step(id, "box1", 60.0, None).unwrap().unwrap();
    assert!(agent.release_step(other.id, "box1").unwrap());
    assert_eq!(agent.list(None).unwrap().len(), 1);
    assert!(agent.get(run_id).unwrap().is_some());
    // ...and can do nothing else.
    let e = agent.delete(run_id).unwrap_err().to_string();
    assert!(
        e.contains("permission denied") && e.contains("docs/lab.md"),
        "{e}"
    );
    let mut other_spec = spec.clone();
    other_spec.name = "not-the-agents".into();
    let e = agent
        .create_campaign(&other_spec, 1, &steps)
        .unwrap_err()
        .to_string();
    assert!(e.contains("permission denied"), "{e}");
    let mut raw = postgres::Config::new()
        .host_path(&server.socket_dir)
        .port(server.port)
        .user(&role)
        .dbname(&db)
        .connect(postgres::NoTls)
        .unwrap();
    for sql in [
        "DROP TABLE runs",
        "DELETE FROM metrics",
        "UPDATE runs SET label = 'x'",
        "CREATE TABLE t (x int)",
        "DELETE FROM campaigns",
        "DELETE FROM campaign_steps",
        "UPDATE campaigns SET spec_json = '{}'",
    ] {
        assert!(raw.batch_execute(sql).is_err(), "{sql} was allowed");
    }
    // A store whose schema is not there yet is the admin's to create.
    let fresh = server.database();
    server.admin_sql(&fresh, &format!("GRANT USAGE ON SCHEMA public TO {role};"));
    let out = common::patchbench()
        .args([
            "import",
            &fixture("ub60-base-1.txt"),
            "--store",
            &server.socket_url(&role, &fresh),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("may not change the schema") && err.contains("owner"),
        "{err}"
    );
}

#[test]
fn sslmode_is_honoured() {
    let server = PgServer::start(Setup {
        tcp: true,
        tls: true,
    });
    let port = server.tcp_port.unwrap();
    let db = server.database();
    let cert = server.cert.clone().unwrap();
    let url = |mode: &str| format!("postgres://{ADMIN}@localhost:{port}/{db}?sslmode={mode}");
    let import = |u: &str| {
        common::patchbench()
            .args(["import", &fixture("ub60-base-1.txt"), "--store", u])
            .output()
            .unwrap()
    };
    for mode in ["require", "prefer"] {
        let out = import(&url(mode));
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let verified = format!("{}&sslrootcert={}", url("verify-full"), cert.display());
    let out = import(&verified);
    assert!(
        out.status.success(),
        "verify-full: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without TLS the server (hostssl only) refuses; a certificate from another authority
    // fails verification.
    let out = import(&url("disable"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("no pg_hba.conf entry") || err.contains("no encryption"),
        "{err}"
    );
    let other = PgServer::start(Setup {
        tcp: true,
        tls: true,
    });
    let wrong = format!(
        "{}&sslrootcert={}",
        url("verify-full"),
        other.cert.clone().unwrap().display()
    );
    let out = import(&wrong);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot reach store"), "{err}");
    // The server saw the connections encrypted.
    let mut log = String::new();
    std::fs::File::open(server.dir.join("server.log"))
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(log.contains("SSL enabled"), "{log}");
}

#[test]
fn a_push_to_a_missing_directory_or_of_an_unknown_label_is_one_line_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let local = local_store(dir.path(), 3, 0);
    let missing = dir.path().join("no/such/dir/x.db");
    let out = push(&local, missing.to_str().unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!dir.path().join("no").exists(), "no directory was made");
    let target = dir.path().join("target.db");
    let out = common::patchbench()
        .args(["push", "--label", "nope", "--to"])
        .arg(&target)
        .arg("--store")
        .arg(&local)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no run labelled nope") && err.contains("labels there: base"),
        "{err}"
    );
    assert!(!target.exists(), "no store was made");
    // The label that is there is pushed.
    let out = common::patchbench()
        .args(["push", "--label", "base", "--to"])
        .arg(&target)
        .arg("--store")
        .arg(&local)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("pushed 3 runs"));
}

#[test]
fn the_agent_command_a_lab_start_suggests_is_one_shell_word_for_its_url() {
    let server = PgServer::shared();
    let db = server.database();
    // A URL with a query string: `?` and `&` must not reach a shell unquoted.
    let url = format!(
        "{}?application_name=pb&connect_timeout=5",
        server.socket_url(ADMIN, &db)
    );
    let out = common::patchbench()
        .args(["campaign", "start", "hint", "--boxes", "1", "--store", &url])
        .args(["--", "run", "syscall", "--duration", "0.3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let shown = patchbench::store::Location::parse(url.as_ref())
        .unwrap()
        .shown();
    let suggested = format!("`patchbench agent --store '{shown}'`");
    assert!(err.contains(&suggested), "{err}");
    // Pasted into a shell, it is the URL again.
    let echo = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf %s '{shown}'"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&echo.stdout), shown);
}
