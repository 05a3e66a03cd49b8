//! The boot hook: a systemd unit that runs `patchbench campaign resume --boot --store STORE`
//! once per boot, after the system is up (`campaign install-hook` writes and enables it,
//! `campaign remove-hook` disables and removes it). Without systemd, the same command goes in
//! rc.local, an init script or a cron `@reboot` line (docs/campaign.md).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The unit's name.
pub const UNIT: &str = "patchbench-campaign.service";
/// Where it is written.
pub const UNIT_DIR: &str = "/etc/systemd/system";

/// The unit's text for `program` and `store`.
pub fn unit_text(program: &Path, store: &Path) -> String {
    format!(
        "# Written by `patchbench campaign install-hook`; `patchbench campaign remove-hook` \
         removes it.\n\
         [Unit]\n\
         Description=patchbench: the step of a kexec campaign this boot is for\n\
         After=multi-user.target network-online.target\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         TimeoutStartSec=infinity\n\
         ExecStart={} campaign resume --boot --store {}\n\
         StandardOutput=journal+console\n\
         StandardError=journal+console\n\
         \n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        quote(program),
        quote(store)
    )
}

/// A path as one word of a systemd command line.
fn quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Refuses when systemd is not this system's init.
pub fn need_systemd(what: &str) -> Result<(), String> {
    if super::load::systemd_is_init() {
        Ok(())
    } else {
        Err(format!(
            "{what} needs systemd, which does not run this system (no /run/systemd/system): \
             run `patchbench campaign resume --boot --store STORE` once per boot from rc.local, \
             an init script or a cron @reboot line instead (docs/campaign.md)"
        ))
    }
}

/// Writes the unit (atomically) and enables it.
pub fn install(program: &Path, store: &Path) -> Result<PathBuf, String> {
    need_systemd("campaign install-hook")?;
    let path = Path::new(UNIT_DIR).join(UNIT);
    let tmp = Path::new(UNIT_DIR).join(format!(".{UNIT}.tmp"));
    std::fs::write(&tmp, unit_text(program, store))
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    systemctl(&["daemon-reload"])?;
    systemctl(&["enable", UNIT])?;
    Ok(path)
}

/// Disables and removes the unit; false when it was not there.
pub fn remove() -> Result<bool, String> {
    need_systemd("campaign remove-hook")?;
    let path = Path::new(UNIT_DIR).join(UNIT);
    if !path.exists() {
        return Ok(false);
    }
    systemctl(&["disable", UNIT])?;
    std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
    systemctl(&["daemon-reload"])?;
    Ok(true)
}

fn systemctl(args: &[&str]) -> Result<(), String> {
    let out = Command::new("systemctl")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run systemctl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "systemctl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_the_hook_once_per_boot_with_the_store() {
        let t = unit_text(
            Path::new("/usr/local/bin/patchbench"),
            Path::new("/var/lib/my results/r.db"),
        );
        assert!(t.contains(
            "ExecStart=/usr/local/bin/patchbench campaign resume --boot --store \
             \"/var/lib/my results/r.db\"\n"
        ));
        assert!(t.contains("Type=oneshot\n") && t.contains("WantedBy=multi-user.target\n"));
    }
}
