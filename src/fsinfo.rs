//! The filesystem under a `--dir`: type, mount point, mount and superblock options (from
//! /proc/self/mountinfo) and the statfs numbers. tmpfs, ext4 on a ramdisk and a real disk give
//! very different AIM7 and file-copy scores, so every result records this.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a result records about one `--dir`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FsInfo {
    pub dir: String,
    pub fs_type: String,
    pub source: String,
    pub mount_point: String,
    pub mount_options: String,
    pub super_options: String,
    /// statfs f_type, in hex (0x01021994 is tmpfs, 0xef53 ext2/3/4).
    pub statfs_magic: String,
    pub block_size: u64,
    pub free_bytes: u64,
    pub free_inodes: u64,
    pub read_only: bool,
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub mount_point: String,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Ok(v) = u8::from_str_radix(s.get(i + 1..i + 4).unwrap_or(""), 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line: `id parent maj:min root mountpoint options [optional...] - type
/// source superoptions`.
pub fn parse_mount(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    Some(Mount {
        mount_point: unescape(l[4]),
        mount_options: l[5].to_string(),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r[2].to_string(),
    })
}

/// The mount that holds `path` (canonical): the longest mount point that is a prefix of it,
/// the later line winning when one is mounted over another.
pub fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// Reads what a result records about `dir`.
pub fn collect(dir: &Path) -> FsInfo {
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts: Vec<Mount> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(parse_mount)
        .collect();
    let m = mount_of(&mounts, &canonical).cloned();
    let unknown = || "unknown".to_string();
    let vfs = nix::sys::statvfs::statvfs(&canonical).ok();
    let magic = nix::sys::statfs::statfs(&canonical)
        .map(|s| format!("{:#x}", s.filesystem_type().0))
        .unwrap_or_else(|_| unknown());
    FsInfo {
        dir: canonical.display().to_string(),
        fs_type: m
            .as_ref()
            .map(|m| m.fs_type.clone())
            .unwrap_or_else(unknown),
        source: m.as_ref().map(|m| m.source.clone()).unwrap_or_else(unknown),
        mount_point: m
            .as_ref()
            .map(|m| m.mount_point.clone())
            .unwrap_or_else(unknown),
        mount_options: m
            .as_ref()
            .map(|m| m.mount_options.clone())
            .unwrap_or_else(unknown),
        super_options: m
            .as_ref()
            .map(|m| m.super_options.clone())
            .unwrap_or_else(unknown),
        statfs_magic: magic,
        block_size: vfs.as_ref().map(|v| v.fragment_size()).unwrap_or(0),
        free_bytes: vfs
            .as_ref()
            .map(|v| v.blocks_available() * v.fragment_size())
            .unwrap_or(0),
        free_inodes: vfs.as_ref().map(|v| v.files_available()).unwrap_or(0),
        read_only: vfs
            .as_ref()
            .map(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
            .unwrap_or(false),
    }
}

impl FsInfo {
    /// `tmpfs (rw,relatime; size=24684092k) on /dev/shm`.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}; {}) mounted on {}",
            self.fs_type, self.mount_options, self.super_options, self.mount_point
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k
30 25 0:27 / /dev/shm rw,nosuid shared:5 - tmpfs tmpfs rw,size=1024k
41 27 7:0 / /mnt/my\\040disk rw - ext4 /dev/loop0 rw,data=ordered";

    #[test]
    fn parses_real_mountinfo_lines() {
        let m: Vec<Mount> = SAMPLE.lines().filter_map(parse_mount).collect();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/vda");
        assert_eq!(m[2].mount_options, "rw,nosuid");
        assert_eq!(m[2].super_options, "rw,size=1024k");
        assert_eq!(m[3].mount_point, "/mnt/my disk");
        assert!(parse_mount("garbage").is_none());
    }

    #[test]
    fn picks_the_deepest_and_latest_mount() {
        let m: Vec<Mount> = SAMPLE.lines().filter_map(parse_mount).collect();
        assert_eq!(
            mount_of(&m, Path::new("/dev/shm/x")).unwrap().super_options,
            "rw,size=1024k"
        );
        assert_eq!(mount_of(&m, Path::new("/home/u")).unwrap().fs_type, "ext4");
        assert_eq!(
            mount_of(&m, Path::new("/mnt/my disk/a")).unwrap().source,
            "/dev/loop0"
        );
        // /dev/shmx is not under /dev/shm.
        assert_eq!(
            mount_of(&m, Path::new("/dev/shmx")).unwrap().mount_point,
            "/"
        );
    }

    #[test]
    fn collects_the_temp_dir() {
        let info = collect(&std::env::temp_dir());
        assert_ne!(info.fs_type, "");
        assert!(info.statfs_magic.starts_with("0x"));
    }
}
