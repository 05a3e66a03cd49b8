//! The user's files a build reads (patches, configs, fragments): regular files only, bounded
//! in size, never a read that blocks. A FIFO with no writer would hang the command beyond
//! SIGINT's reach and `/dev/zero` would fill memory; both are refused by name at once.

use crate::error::Usage;
use std::io::Read;
use std::path::Path;

/// The most bytes a patch (an mbox of a whole series included) may have.
pub const PATCH_LIMIT: u64 = 64 << 20;
/// The most bytes a config or a fragment may have (a distribution's config is about 300 KB).
pub const CONFIG_LIMIT: u64 = 16 << 20;

/// Reads the user's `what` file at `path`: a regular file (a link to one is followed) of at
/// most `limit` bytes; anything else is bad input, with the reason.
pub fn read_bounded(what: &str, path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = || crate::safe_text::field(&path.display().to_string());
    let cannot = |e: std::io::Error| Usage(format!("cannot read the {what} {}: {e}", shown()));
    // Checked before opening: opening a FIFO without a writer blocks.
    let kind = std::fs::metadata(path).map_err(cannot)?;
    refuse_unless_file(what, &shown(), &kind, limit)?;
    // Non-blocking, and checked again on what was opened (the path may have changed since).
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    refuse_unless_file(what, &shown(), &file.metadata().map_err(cannot)?, limit)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(what, &shown(), limit).into());
    }
    Ok(bytes)
}

fn refuse_unless_file(
    what: &str,
    shown: &str,
    meta: &std::fs::Metadata,
    limit: u64,
) -> anyhow::Result<()> {
    if !meta.is_file() {
        let kind = {
            use std::os::unix::fs::FileTypeExt;
            let t = meta.file_type();
            if t.is_dir() {
                "a directory"
            } else if t.is_fifo() {
                "a FIFO"
            } else if t.is_char_device() || t.is_block_device() {
                "a device"
            } else if t.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            }
        };
        return Err(Usage(format!(
            "the {what} {shown} is {kind}: give a regular file (save a stream to a file first)"
        ))
        .into());
    }
    if meta.len() > limit {
        return Err(too_big(what, shown, limit).into());
    }
    Ok(())
}

fn too_big(what: &str, shown: &str, limit: u64) -> Usage {
    Usage(format!(
        "the {what} {shown} is larger than {} MiB, more than any {what} needs: is it the \
         right file?",
        limit >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_directories_and_big_files_are_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("p.fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // No writer: refused without blocking.
        let e = read_bounded("patch", &fifo, PATCH_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a FIFO: give a regular file"), "{e}");
        let e = read_bounded("patch", Path::new("/dev/zero"), PATCH_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a device"), "{e}");
        let e = read_bounded("config", d.path(), CONFIG_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory"), "{e}");
        let big = d.path().join("big");
        std::fs::write(&big, vec![b'x'; 2 << 20]).unwrap();
        let e = read_bounded("config", &big, 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let ok = d.path().join("ok.diff");
        std::fs::write(&ok, b"diff\n").unwrap();
        let link = d.path().join("link.diff");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert_eq!(
            read_bounded("patch", &link, PATCH_LIMIT).unwrap(),
            b"diff\n"
        );
        let e = read_bounded("patch", &d.path().join("none"), PATCH_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read the patch"), "{e}");
    }
}
