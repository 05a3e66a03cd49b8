//! The words a kexec campaign puts on a kernel command line, and reading them back at boot.
//!
//! A step's boot carries `patchbench.campaign=NAME patchbench.step=ID patchbench.via=kexec`
//! after the words of the command line the campaign started from (less the boot loader's
//! `BOOT_IMAGE=` and any earlier `patchbench.*` word) and the side's own words; a side word
//! `key=value` replaces a word of the same key (`pti=on` replaces `pti=off`). The user ends a
//! campaign at a boot by adding `patchbench.stop` to its command line (in the boot loader).

/// The prefix of every word of ours.
pub const PREFIX: &str = "patchbench.";
/// The word that ends a campaign at this boot.
pub const STOP_WORD: &str = "patchbench.stop";

/// What this boot's command line says about a campaign.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markers {
    /// `patchbench.campaign=NAME`.
    pub campaign: Option<String>,
    /// `patchbench.step=ID`.
    pub step: Option<i64>,
    /// `patchbench.via=kexec|firmware`: how the boot was asked for.
    pub via: Option<String>,
    /// `patchbench.stop` is there.
    pub stop: bool,
}

impl Markers {
    /// Reads the markers of a command line.
    pub fn parse(cmdline: &str) -> Markers {
        let mut m = Markers::default();
        for w in cmdline.split_whitespace() {
            if w == "--" {
                // What follows goes to init, not to the kernel.
                break;
            }
            let Some(rest) = w.strip_prefix(PREFIX) else {
                continue;
            };
            match rest.split_once('=') {
                Some(("campaign", v)) if !v.is_empty() => m.campaign = Some(v.to_string()),
                Some(("step", v)) => m.step = v.parse().ok(),
                Some(("via", v)) => m.via = Some(v.to_string()),
                None if rest == "stop" => m.stop = true,
                _ => {}
            }
        }
        m
    }

    /// How this boot came about, for the run's record: `kexec`, `firmware`, or `unknown`.
    pub fn boot_via(&self) -> &str {
        match self.via.as_deref() {
            Some("kexec") => "kexec",
            Some("firmware") => "firmware",
            _ if self.campaign.is_none() => "firmware",
            _ => "unknown",
        }
    }
}

/// The command line without patchbench's words and the boot loader's `BOOT_IMAGE=` (the
/// command line a campaign starts from, and returns to).
pub fn without_ours(cmdline: &str) -> String {
    let (kernel, init) = split_init(cmdline);
    let words: Vec<&str> = kernel
        .split_whitespace()
        .filter(|w| !w.starts_with(PREFIX) && !w.starts_with("BOOT_IMAGE="))
        .collect();
    join(&words, init)
}

/// The command line of a step's boot: `base` (already without our words), the side's words
/// (each replacing a word of the same key), and the markers of `campaign`'s step `step`.
pub fn for_step(base: &str, side_words: &[String], campaign: &str, step: i64) -> String {
    let (kernel, init) = split_init(base);
    let key = |w: &str| w.split_once('=').map_or(w, |(k, _)| k).to_string();
    let replaced: Vec<String> = side_words.iter().map(|w| key(w)).collect();
    let mut words: Vec<String> = kernel
        .split_whitespace()
        .filter(|w| !replaced.contains(&key(w)))
        .map(str::to_string)
        .collect();
    words.extend(side_words.iter().cloned());
    words.push(format!("{PREFIX}campaign={campaign}"));
    words.push(format!("{PREFIX}step={step}"));
    words.push(format!("{PREFIX}via=kexec"));
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    join(&refs, init)
}

/// The kernel's part and init's part (after ` -- `, kept as it was).
fn split_init(cmdline: &str) -> (&str, Option<&str>) {
    let t = cmdline.trim();
    if t.starts_with("-- ") || t == "--" {
        return ("", Some(&t[2..]));
    }
    match t
        .find(" -- ")
        .or_else(|| t.ends_with(" --").then(|| t.len() - 3))
    {
        Some(i) => (&t[..i], Some(&t[i + 3..])),
        None => (t, None),
    }
}

fn join(words: &[&str], init: Option<&str>) -> String {
    let mut s = words.join(" ");
    if let Some(rest) = init {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str("--");
        let rest = rest.trim();
        if !rest.is_empty() {
            s.push(' ');
            s.push_str(rest);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_line_replaces_keys_and_carries_the_markers() {
        let start = "BOOT_IMAGE=/boot/vmlinuz-6.1 root=/dev/sda1 ro pti=on quiet \
                     patchbench.campaign=old patchbench.step=3";
        let base = without_ours(start);
        assert_eq!(base, "root=/dev/sda1 ro pti=on quiet");
        let line = for_step(&base, &["pti=off".into(), "nosmt".into()], "c1", 7);
        assert_eq!(
            line,
            "root=/dev/sda1 ro quiet pti=off nosmt patchbench.campaign=c1 patchbench.step=7 \
             patchbench.via=kexec"
        );
        let m = Markers::parse(&line);
        assert_eq!(m.campaign.as_deref(), Some("c1"));
        assert_eq!(m.step, Some(7));
        assert_eq!(m.boot_via(), "kexec");
        assert!(!m.stop);
        assert!(Markers::parse(&format!("{line} patchbench.stop")).stop);
        assert_eq!(without_ours(&line), "root=/dev/sda1 ro quiet pti=off nosmt");
    }

    #[test]
    fn init_arguments_after_dashes_are_kept_and_not_read() {
        let start = "console=ttyS0 rdinit=/init -- --flag patchbench.stop";
        let line = for_step(&without_ours(start), &["pti=off".into()], "c", 1);
        assert_eq!(
            line,
            "console=ttyS0 rdinit=/init pti=off patchbench.campaign=c patchbench.step=1 \
             patchbench.via=kexec -- --flag patchbench.stop"
        );
        assert!(!Markers::parse(start).stop);
        assert_eq!(Markers::parse("root=/dev/sda").boot_via(), "firmware");
        assert_eq!(without_ours("-- x"), "-- x");
    }
}
