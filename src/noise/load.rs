//! How busy the machine is: the load average (the recent past) and CPU pressure (PSI: the
//! share of the sample in which some runnable task waited for a CPU). The sample's busiest
//! processes and stolen time come from [`super::activity`].

use super::activity::Activity;
use super::sysfs::Root;
use super::{Finding, Kind};

/// `/proc/loadavg`: the 1, 5 and 15 minute averages.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut f = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([f.next()??, f.next()??, f.next()??])
}

/// The `total=` (µs) of the `some` line of `/proc/pressure/cpu`.
pub fn parse_pressure_some_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

pub fn read_pressure(root: &Root) -> Option<u64> {
    parse_pressure_some_total(&root.read("/proc/pressure/cpu")?)
}

/// A load average of 1 or more is about one CPU's worth of other runnable work over the last
/// minute. It is a warning only if the sample saw other processes still using the CPU (or
/// there was no sample): the load a previous benchmark left behind decays for a minute after
/// it ended and is no noise.
pub fn load_average(root: &Root, cpus: usize, sample: Option<&Activity>) -> Finding {
    let (id, source) = ("load", "load average");
    let Some([l1, l5, l15]) = root.read("/proc/loadavg").and_then(|t| parse_loadavg(&t)) else {
        return Finding::not_exposed(id, source, Kind::Activity, "no /proc/loadavg");
    };
    let value = format!("{l1:.2} {l5:.2} {l15:.2} (1, 5, 15 min) on {cpus} CPUs");
    if l1 < 1.0 {
        return Finding::ok(id, source, Kind::Activity, value);
    }
    match sample {
        Some(a) if a.other_cpu_pct < 25.0 => Finding::ok(
            id,
            source,
            Kind::Activity,
            format!(
                "{value}; but other processes used only {:.0}% of a CPU during the sample \
                 (work that just ended, such as a previous run)",
                a.other_cpu_pct
            ),
        ),
        _ => Finding::warn(
            id,
            source,
            Kind::Activity,
            value,
            "stop other jobs or wait until they finish (the busiest are listed under other \
             processes)",
        ),
    }
}

/// CPU pressure over the sample: warn at 5 % or more of the time.
pub fn pressure(before: Option<u64>, after: Option<u64>, window_secs: f64) -> Finding {
    let (id, source) = ("cpu_pressure", "CPU pressure (PSI)");
    let (Some(b), Some(a)) = (before, after) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Activity,
            "no /proc/pressure/cpu (kernel without PSI, or psi=0)",
        );
    };
    if window_secs <= 0.0 {
        return Finding::ok(id, source, Kind::Activity, "not measured (no sample)");
    }
    // Ticks and microseconds are read a moment apart: keep the share within 100 %.
    let pct = (100.0 * a.saturating_sub(b) as f64 / (window_secs * 1e6)).min(100.0);
    let value = format!("some task waited for a CPU {pct:.1}% of the {window_secs:.2} s sample");
    if pct >= 5.0 {
        Finding::warn(
            id,
            source,
            Kind::Activity,
            value,
            "more runnable tasks than CPUs: stop other jobs before measuring",
        )
    } else {
        Finding::ok(id, source, Kind::Activity, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    /// From this project's VM.
    const LOADAVG: &str = "0.66 4.14 3.60 1/103 10713\n";
    /// The format of Documentation/accounting/psi.rst (cpu's "full" line is there since 5.13).
    const PRESSURE: &str = "some avg10=1.52 avg60=0.80 avg300=0.31 total=5231234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";

    fn quiet(other_cpu_pct: f64) -> Activity {
        Activity {
            window_secs: 1.0,
            cpus: 2,
            steal_pct: 0.0,
            steal_ticks: 0,
            total_ticks: 200,
            other_cpu_pct,
            busiest: vec![],
            busy_threshold_pct: 10.0,
            steal_threshold_pct: 1.0,
            throttle_events: None,
        }
    }

    #[test]
    fn parses_loadavg_and_pressure() {
        assert_eq!(parse_loadavg(LOADAVG), Some([0.66, 4.14, 3.60]));
        assert_eq!(parse_loadavg("x"), None);
        assert_eq!(parse_pressure_some_total(PRESSURE), Some(5231234));
        assert_eq!(parse_pressure_some_total("full total=1"), None);
    }

    #[test]
    fn load_warns_only_when_the_sample_is_busy_too() {
        let (_d, root) = sample_root(&[("/proc/loadavg", "1.50 1.20 0.80 3/120 999\n")]);
        assert_eq!(
            load_average(&root, 2, Some(&quiet(80.0))).status,
            Status::Warn
        );
        assert_eq!(load_average(&root, 2, None).status, Status::Warn);
        let f = load_average(&root, 2, Some(&quiet(3.0)));
        assert_eq!(f.status, Status::Ok);
        assert!(f.value.contains("only 3% of a CPU"), "{}", f.value);
        let (_d, root) = sample_root(&[("/proc/loadavg", LOADAVG)]);
        let f = load_average(&root, 2, None);
        assert_eq!(
            (f.status, f.value.as_str()),
            (Status::Ok, "0.66 4.14 3.60 (1, 5, 15 min) on 2 CPUs")
        );
    }

    #[test]
    fn pressure_over_the_sample() {
        // 80 ms of waiting in a 1 s sample.
        let f = pressure(Some(1_000_000), Some(1_080_000), 1.0);
        assert_eq!(f.status, Status::Warn);
        assert_eq!(
            f.value,
            "some task waited for a CPU 8.0% of the 1.00 s sample"
        );
        assert_eq!(pressure(Some(5), Some(1005), 1.0).status, Status::Ok);
        assert_eq!(pressure(None, None, 1.0).status, Status::NotExposed);
    }
}
