//! Quoting one word for `sh`, for the scripts and configuration the host writes for a guest
//! (the guest's `/etc/patchbench.conf`, each step's script).

/// A word for `sh`, in single quotes.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_shell() {
        for w in ["plain", "it's", "a b", "$HOME", "\"q\"", "back\\slash", ""] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", quote(w)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), w);
        }
    }
}
