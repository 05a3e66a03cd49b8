//! The iperf3 reader: the client's command line (`iperf3 -c HOST ...`) as the user types it,
//! `-J` added for its JSON (unless given), and, when HOST is this machine's loopback, the
//! server started for each invocation and stopped after it (`iperf3 -s -1` bound to that
//! address, on the user's `-p` port or a free one patchbench adds), as iperf3 needs one. The
//! server starts before the timed window and is listening before the client is spawned; a
//! server on another host is the user's to run.
//!
//! Metrics, named as LKP names its iperf test's: over TCP `iperf.tcp.sender.bps` and
//! `iperf.tcp.receiver.bps` (`end.sum_sent` and `end.sum_received`'s `bits_per_second`,
//! bit/s, higher is better) and `iperf.tcp.retransmits` (`end.sum_sent.retransmits`, lower
//! is better; Linux reports it); over UDP (`-u`) `iperf.udp.bps` (bit/s), `iperf.udp.jitter_ms`
//! and `iperf.udp.lost_percent` (lower is better), from `end.sum`. With `-R` the server sends:
//! the names stay those of the data's sender and receiver.
//!
//! iperf3 3.12 exits 0 with `-J` when it cannot reach its server, and says so in the JSON's
//! `error`: such an output fails the run, as does one without its figures. Checked against
//! Debian 12's iperf3 3.12, whose real outputs are kept in `tests/fixtures/exec/`.

use super::Value;
use crate::error::RunFailed;
use crate::proc::signals::Signals;
use crate::proc::supervise::Supervised;
use crate::record::Direction;
use serde_json::Value as Json;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the client's command line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The server's address (`-c`).
    pub host: String,
    /// `-p`, when given.
    pub port: Option<u16>,
    /// `-J`/`--json` given.
    pub json: bool,
}

/// Reads the client's options; refuses a server's command line or one that names no server.
pub fn client(args: &[String]) -> Result<Client, String> {
    let mut host = None;
    let mut port = None;
    let mut json = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("iperf3's {what} needs a value"))
        };
        match name {
            "-s" | "--server" => {
                return Err(
                    "give iperf3's client command line (`iperf3 -c 127.0.0.1 -t 5`): \
                            patchbench starts the server on this machine's loopback itself"
                        .to_string(),
                )
            }
            "-c" | "--client" => host = Some(value("-c")?),
            "-p" | "--port" => {
                let v = value("-p")?;
                port = Some(v.parse::<u16>().map_err(|_| {
                    format!("iperf3's -p {} is not a port", crate::safe_text::field(&v))
                })?);
            }
            "-J" | "--json" => json = true,
            _ => {}
        }
    }
    let host = host.ok_or(
        "give iperf3 the server to measure against with -c (`iperf3 -c 127.0.0.1 -t 5`: \
         on this machine's loopback patchbench starts the server)",
    )?;
    Ok(Client { host, port, json })
}

/// The address a server for `host` binds when it is this machine's loopback.
pub fn loopback(host: &str) -> Option<&str> {
    if host == "localhost" {
        return Some("127.0.0.1");
    }
    host.parse::<std::net::IpAddr>()
        .ok()
        .filter(|ip| ip.is_loopback())
        .map(|_| host)
}

/// The arguments to add to the client's: `-J` unless given, and `-p PORT` when patchbench
/// chose the server's port.
pub fn additions(client: &Client, chosen_port: Option<u16>) -> Vec<String> {
    let mut add = Vec::new();
    if !client.json {
        add.push("-J".to_string());
    }
    if let (None, Some(p)) = (client.port, chosen_port) {
        add.extend(["-p".to_string(), p.to_string()]);
    }
    add
}

/// A number at `path` of the JSON, checked finite and not negative.
fn number(doc: &Json, path: &[&str]) -> Result<f64, String> {
    let mut at = doc;
    for key in path {
        at = at
            .get(key)
            .ok_or_else(|| format!("its JSON has no {}", path.join(".")))?;
    }
    at.as_f64()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("its JSON's {} is not a number ≥ 0", path.join(".")))
}

fn value(name: &str, title: &str, unit: &str, direction: Direction, v: f64) -> Value {
    Value::new(
        format!("iperf.{name}"),
        format!("iperf3 {title}"),
        unit,
        direction,
        v,
    )
}

/// The metrics of one output of the client's `-J`.
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    let doc: Json = serde_json::from_str(text)
        .map_err(|e| format!("it printed no JSON iperf3 writes ({e})"))?;
    if let Some(e) = doc.get("error").and_then(Json::as_str) {
        return Err(format!("iperf3 says: {}", crate::safe_text::field(e)));
    }
    let higher = Direction::HigherIsBetter;
    let lower = Direction::LowerIsBetter;
    let protocol = doc
        .pointer("/start/test_start/protocol")
        .and_then(Json::as_str)
        .unwrap_or("TCP");
    if protocol == "UDP" {
        return Ok(vec![
            value(
                "udp.bps",
                "UDP bit/s",
                "bit/s",
                higher,
                number(&doc, &["end", "sum", "bits_per_second"])?,
            ),
            value(
                "udp.jitter_ms",
                "UDP jitter",
                "ms",
                lower,
                number(&doc, &["end", "sum", "jitter_ms"])?,
            ),
            value(
                "udp.lost_percent",
                "UDP datagrams lost",
                "%",
                lower,
                number(&doc, &["end", "sum", "lost_percent"])?,
            ),
        ]);
    }
    let mut out = vec![
        value(
            "tcp.sender.bps",
            "TCP sender bit/s",
            "bit/s",
            higher,
            number(&doc, &["end", "sum_sent", "bits_per_second"])?,
        ),
        value(
            "tcp.receiver.bps",
            "TCP receiver bit/s",
            "bit/s",
            higher,
            number(&doc, &["end", "sum_received", "bits_per_second"])?,
        ),
    ];
    if let Ok(r) = number(&doc, &["end", "sum_sent", "retransmits"]) {
        out.push(value(
            "tcp.retransmits",
            "TCP retransmits",
            "count",
            lower,
            r,
        ));
    }
    Ok(out)
}

/// The server the client needs when it names this machine's loopback: `iperf3 -s -1` (the
/// program at `program`) bound there, on the client's port or a free one, its output in
/// `out`, started before the timed window and listening before this returns (at most 5 s).
/// None for a server on another host. Dropping the server stops what is left of it.
pub fn start_server(
    program: &Path,
    client: &Client,
    out: &Path,
    signals: &Signals,
) -> anyhow::Result<Option<(Supervised, u16)>> {
    let Some(address) = loopback(&client.host) else {
        return Ok(None);
    };
    let port = match client.port {
        Some(p) => p,
        None => free_port(address).map_err(RunFailed)?,
    };
    let file = std::fs::File::create(out)
        .map_err(|e| anyhow::anyhow!("cannot make {} ({e})", out.display()))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(["-s", "-1", "-B", address, "-p", &port.to_string()]);
    let mut server = Supervised::spawn_stdout_to(cmd, file)
        .map_err(|e| RunFailed(format!("iperf3's server could not be started: {e}")))?;
    let until = Instant::now() + Duration::from_secs(5);
    while !listening(port) {
        signals.check()?;
        if server.has_ended() || Instant::now() > until {
            let said = super::read_lossy(out);
            return Err(RunFailed(format!(
                "iperf3's server on {address} port {port} did not listen{}",
                super::last_words(said.lines(), "")
            ))
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(Some((server, port)))
}

/// A free TCP port on `address` (asked of the kernel, then let go).
pub fn free_port(address: &str) -> Result<u16, String> {
    std::net::TcpListener::bind((address, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port on {address} for iperf3's server ({e})"))
}

/// Whether something listens on TCP `port` (from /proc/net/tcp and tcp6: a socket in state
/// LISTEN, `0A`, whose local port is `port`). No connection is made: iperf3's one-off server
/// would take a probe for its one client.
pub fn listening(port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&want) && cols[3] == "0A"
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_client_line_names_its_server_port_and_json() {
        let c = client(&args(&["-c", "127.0.0.1", "-t", "5", "--port=6000", "-J"])).unwrap();
        assert_eq!(
            c,
            Client {
                host: "127.0.0.1".into(),
                port: Some(6000),
                json: true
            }
        );
        assert!(additions(&c, Some(7000)).is_empty());
        let c = client(&args(&["--client", "localhost", "-u"])).unwrap();
        assert_eq!(additions(&c, Some(7000)), args(&["-J", "-p", "7000"]));
        assert_eq!(loopback(&c.host), Some("127.0.0.1"));
        assert_eq!(loopback("::1"), Some("::1"));
        assert_eq!(loopback("192.168.1.5"), None);
        assert!(client(&args(&["-s"]))
            .unwrap_err()
            .contains("client command line"));
        assert!(client(&args(&["-t", "5"])).unwrap_err().contains("-c"));
        assert!(client(&args(&["-c", "h", "-p", "x"]))
            .unwrap_err()
            .contains("not a port"));
    }

    #[test]
    fn real_tcp_and_udp_outputs_are_read_and_an_error_fails_the_run() {
        let tcp = parse(include_str!("../../tests/fixtures/exec/iperf3-tcp.json")).unwrap();
        let names: Vec<&str> = tcp.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "iperf.tcp.sender.bps",
                "iperf.tcp.receiver.bps",
                "iperf.tcp.retransmits"
            ]
        );
        assert!((tcp[0].value - 62_064_344_539.176_45).abs() < 1.0);
        assert_eq!(tcp[2].direction, Direction::LowerIsBetter);
        let udp = parse(include_str!("../../tests/fixtures/exec/iperf3-udp.json")).unwrap();
        let names: Vec<&str> = udp.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "iperf.udp.bps",
                "iperf.udp.jitter_ms",
                "iperf.udp.lost_percent"
            ]
        );
        let e = parse(include_str!(
            "../../tests/fixtures/exec/iperf3-refused.json"
        ))
        .unwrap_err();
        assert!(e.contains("Connection refused"), "{e}");
        assert!(parse("{}").unwrap_err().contains("end.sum_sent"));
        assert!(parse("not json").is_err());
    }
}
