//! The clocksource: with `tsc` (or a VM's `kvm-clock`, arm's `arch_sys_counter`) the vDSO
//! reads the clock without entering the kernel; with `hpet` or `acpi_pm` every clock read is
//! a slow device access, which changes what syscall- and timer-heavy tests measure (the
//! kernel falls back to them when it finds the TSC unstable).

use super::sysfs::Root;
use super::{Finding, Kind};

const SLOW: &[&str] = &["hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"];
const BASE: &str = "/sys/devices/system/clocksource/clocksource0";

pub fn clocksource(root: &Root) -> Finding {
    let (id, source) = ("clocksource", "clocksource");
    let Some(current) = root.read_trimmed(&format!("{BASE}/current_clocksource")) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no /sys/devices/system/clocksource/clocksource0",
        );
    };
    let available = root
        .read_trimmed(&format!("{BASE}/available_clocksource"))
        .unwrap_or_default();
    let value = if available.is_empty() {
        current.clone()
    } else {
        format!("{current} (available: {available})")
    };
    if SLOW.contains(&current.as_str()) {
        let fix = if available.split_whitespace().any(|c| c == "tsc") {
            "as root: echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource \
             (and see dmesg for why the kernel left it)"
                .to_string()
        } else {
            "see dmesg for 'clocksource' messages: the kernel found the TSC unusable".to_string()
        };
        Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("{value}: every clock read is a slow device access"),
            fix,
        )
    } else {
        Finding::ok(id, source, Kind::Setting, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    #[test]
    fn tsc_is_fine_and_hpet_warns() {
        // This project's VM has only tsc.
        let (_d, root) = sample_root(&[
            (&format!("{BASE}/current_clocksource"), "tsc\n"),
            (&format!("{BASE}/available_clocksource"), "tsc \n"),
        ]);
        let f = clocksource(&root);
        assert_eq!(
            (f.status, f.value.as_str()),
            (Status::Ok, "tsc (available: tsc)")
        );
        let (_d, root) = sample_root(&[
            (&format!("{BASE}/current_clocksource"), "hpet\n"),
            (
                &format!("{BASE}/available_clocksource"),
                "tsc hpet acpi_pm \n",
            ),
        ]);
        let f = clocksource(&root);
        assert_eq!(f.status, Status::Warn);
        assert!(f.fix.unwrap().starts_with("as root: echo tsc"));
        let (_d, root) = sample_root(&[]);
        assert_eq!(clocksource(&root).status, Status::NotExposed);
    }
}
