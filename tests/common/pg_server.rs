//! A real PostgreSQL server for the tests: Debian's `postgresql` binaries (`initdb`, `pg_ctl`,
//! `postgres`), a cluster in a temp dir owned by an unprivileged user (`initdb` refuses root:
//! as root the server runs as `nobody` through `runuser`), listening on a Unix socket in that
//! dir only, or also on a free loopback port (with TLS when asked). One cluster per test
//! process ([`PgServer::shared`]), a fresh database per test ([`PgServer::database`]). A
//! watchdog process stops the server and removes its dir when the test process is gone,
//! however it ended. If the server cannot start, the test FAILS with the reason (never
//! skipped).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The superuser of a test cluster (trusted on the socket).
pub const ADMIN: &str = "postgres";
/// A role that must give its password (SCRAM), on the socket and on TCP.
pub const PASSWORD_ROLE: &str = "pwuser";

/// A running test cluster.
pub struct PgServer {
    pub dir: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
    /// The loopback TCP port, when it listens there.
    pub tcp_port: Option<u16>,
    /// The server's certificate (PEM), when TLS is on.
    pub cert: Option<PathBuf>,
    bin: PathBuf,
    next_db: AtomicUsize,
}

/// How a cluster is set up.
#[derive(Debug, Clone, Copy, Default)]
pub struct Setup {
    /// Listen on a free loopback port too.
    pub tcp: bool,
    /// TLS on (a self-signed certificate for `localhost`); TCP connections must use it.
    pub tls: bool,
}

fn fail(what: &str) -> ! {
    panic!("cannot start the test PostgreSQL server: {what}")
}

/// The directory of Debian's PostgreSQL server binaries (the newest installed).
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").exists() && p.join("pg_ctl").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().unwrap_or_else(|| {
        fail(
            "no initdb/pg_ctl under /usr/lib/postgresql/*/bin; install Debian's postgresql \
             package (.ci/run does: apt-get install postgresql)",
        )
    })
}

fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// `cmd` run as the cluster's owner (nobody when we are root).
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run_checked(mut c: Command, what: &str) {
    let out = c
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| fail(&format!("{what}: cannot run it: {e}")));
    if !out.status.success() {
        fail(&format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

impl PgServer {
    /// The test process's cluster (socket only), started on first use.
    pub fn shared() -> &'static PgServer {
        static SERVER: OnceLock<PgServer> = OnceLock::new();
        SERVER.get_or_init(|| PgServer::start(Setup::default()))
    }

    /// A new cluster set up as `setup` says, stopped when the test process ends.
    pub fn start(setup: Setup) -> PgServer {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("patchbench-pg-")
            .tempdir()
            .unwrap_or_else(|e| fail(&format!("temp dir: {e}")))
            .keep();
        let socket_dir = dir.join("sock");
        let data = dir.join("data");
        std::fs::create_dir(&socket_dir).unwrap_or_else(|e| fail(&format!("{e}")));
        if is_root() {
            run_checked(
                {
                    let mut c = Command::new("chown");
                    c.arg("-R").arg("nobody:nogroup").arg(&dir);
                    c
                },
                "chown of the cluster's dir to nobody",
            );
        }
        let mut initdb = as_owner(&bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", ADMIN, "--auth=trust", "-E", "UTF8", "--no-sync"]);
        run_checked(initdb, "initdb");
        let port = 5432;
        let tcp_port = setup.tcp.then(free_port);
        let mut cert = None;
        let mut conf = String::from("fsync = off\nmax_connections = 60\n");
        conf.push_str(&format!(
            "unix_socket_directories = '{}'\nport = {}\nlog_connections = on\n",
            socket_dir.display(),
            tcp_port.unwrap_or(port)
        ));
        conf.push_str(match setup.tcp {
            true => "listen_addresses = '127.0.0.1'\n",
            false => "listen_addresses = ''\n",
        });
        if setup.tls {
            let crt = data.join("server.crt");
            let key = data.join("server.key");
            let mut openssl = Command::new("openssl");
            openssl
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args([
                    "-subj",
                    "/CN=localhost",
                    "-addext",
                    "subjectAltName=DNS:localhost",
                ])
                .arg("-keyout")
                .arg(&key)
                .arg("-out")
                .arg(&crt);
            run_checked(openssl, "openssl req (the test server's certificate)");
            if is_root() {
                let mut c = Command::new("chown");
                c.arg("nobody:nogroup").arg(&crt).arg(&key);
                run_checked(c, "chown of the certificate");
            }
            std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap_or_else(|e| fail(&format!("chmod key: {e}")));
            conf.push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
            cert = Some(crt);
        }
        let tcp_lines = match (setup.tcp, setup.tls) {
            (false, _) => "",
            (true, false) => {
                "host all pwuser 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n"
            }
            (true, true) => {
                "hostssl all pwuser 127.0.0.1/32 scram-sha-256\nhostssl all all 127.0.0.1/32 trust\n"
            }
        };
        let hba =
            format!("local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n{tcp_lines}");
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap_or_else(|e| fail(&format!("{e}")));
        let auto = data.join("postgresql.auto.conf");
        std::fs::write(&auto, conf).unwrap_or_else(|e| fail(&format!("{e}")));
        let log = dir.join("server.log");
        let started = pg_ctl_start(&bin, &data, &log);
        // The watchdog is started even when the start failed, so the dir goes away.
        watchdog(&bin, &dir, &data);
        if !started {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            fail(&format!(
                "pg_ctl start failed; server log:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        let server = PgServer {
            dir,
            socket_dir,
            port: tcp_port.unwrap_or(port),
            tcp_port,
            cert,
            bin,
            next_db: AtomicUsize::new(0),
        };
        server.admin_sql(
            "postgres",
            &format!("CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD 'Tr0ub4dor-secret-9x';"),
        );
        server
    }

    /// The password of [`PASSWORD_ROLE`].
    pub fn password(&self) -> &'static str {
        "Tr0ub4dor-secret-9x"
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// A URL for `user` and database `db` over the Unix socket.
    pub fn socket_url(&self, user: &str, db: &str) -> String {
        format!(
            "postgres://{user}@{}:{}/{db}",
            self.socket_dir.display().to_string().replace('/', "%2F"),
            self.port
        )
    }

    /// A fresh, empty database; returns its name.
    pub fn database(&self) -> String {
        let n = self.next_db.fetch_add(1, Ordering::Relaxed);
        let name = format!("t{}_{n}", std::process::id());
        self.admin_sql("postgres", &format!("CREATE DATABASE {name};"));
        self.admin_sql(
            &name,
            &format!("GRANT ALL ON SCHEMA public TO {PASSWORD_ROLE};"),
        );
        name
    }

    /// A connection to database `db` as the superuser.
    pub fn admin(&self, db: &str) -> postgres::Client {
        postgres::Config::new()
            .host_path(&self.socket_dir)
            .port(self.port)
            .user(ADMIN)
            .dbname(db)
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("connect to the test server as {ADMIN}: {e}"))
    }

    /// Runs SQL as the superuser in database `db`.
    pub fn admin_sql(&self, db: &str, sql: &str) {
        self.admin(db)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Starts the server again after [`PgServer::stop`] (same data, socket and port).
    pub fn restart(&self) {
        let log = self.dir.join("server.log");
        let started = pg_ctl_start(&self.bin, &self.dir.join("data"), &log);
        assert!(started, "pg_ctl start (again) failed: {}", self.log());
    }

    /// Stops the server now (the tests of a server that went away).
    pub fn stop(&self) {
        let mut c = as_owner(&self.bin.join("pg_ctl"));
        c.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "-w", "stop"]);
        run_checked(c, "pg_ctl stop");
    }
}

/// `pg_ctl start` of the cluster in `data`, logging to `log`; true when it started.
fn pg_ctl_start(bin: &Path, data: &Path, log: &Path) -> bool {
    let mut pg_ctl = as_owner(&bin.join("pg_ctl"));
    pg_ctl
        .arg("-D")
        .arg(data)
        .arg("-l")
        .arg(log)
        .args(["-w", "-t", "120", "start"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A process that waits for this test process to end, then stops the server and removes its
/// dir (as root, so the dir owned by nobody can go). It is never waited for: it outlives us.
#[allow(clippy::zombie_processes)]
fn watchdog(bin: &Path, dir: &Path, data: &Path) {
    use std::os::unix::process::CommandExt;
    let pg_ctl = bin.join("pg_ctl");
    let stop = if is_root() {
        format!(
            "runuser -u nobody -- '{}' -D '{}' -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    } else {
        format!(
            "'{}' -D '{}' -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop}; rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display()
    );
    let mut c = Command::new("sh");
    c.args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; the watchdog must outlive our process group.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    c.spawn()
        .unwrap_or_else(|e| fail(&format!("cannot start the watchdog: {e}")));
}

/// The text of every run's record as its packed parts hold it (the lines each part inserts),
/// for a test that looks for what must never be stored.
pub fn records_text(admin: &mut postgres::Client) -> String {
    let mut text = String::new();
    for row in admin.query("SELECT body FROM run_parts", &[]).unwrap() {
        let part = patchbench::store::packed::decode(row.get::<_, &[u8]>(0)).unwrap();
        for s in &part.lines {
            text.extend(s.insert.iter().map(String::as_str));
        }
    }
    text
}
