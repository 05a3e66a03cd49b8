//! The directory the file tests write in (`--dir`, default the temp directory): memory
//! (tmpfs), a ramdisk, a disk, or a network or user-space filesystem. They give very different
//! file-test and AIM7 numbers, and a network filesystem's add the network's noise.

use super::sysfs::Root;
use super::{Finding, Kind};
use crate::fsinfo::FsInfo;

const NETWORK: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "9p",
    "virtiofs",
    "ceph",
    "glusterfs",
    "afs",
    "lustre",
];

/// Less free space than this is a warning (AIM7's disk jobs and the file copies need room).
const MIN_FREE: u64 = 1 << 30;

/// Whether the block device behind `source` (`/dev/vda`, `/dev/nvme0n1p2`) rotates.
pub fn rotational(root: &Root, source: &str) -> Option<bool> {
    let name = source.strip_prefix("/dev/")?.rsplit('/').next()?;
    let disk = format!("/sys/class/block/{name}/queue/rotational");
    // A partition's queue is its disk's: class/block/sda1 links into block/sda/sda1.
    let part = format!("/sys/class/block/{name}/../queue/rotational");
    let v = root
        .read_trimmed(&disk)
        .or_else(|| root.read_trimmed(&part))?;
    Some(v == "1")
}

fn is_ramdisk(source: &str) -> bool {
    ["/dev/ram", "/dev/zram", "/dev/pmem"].iter().any(|p| {
        source
            .strip_prefix(p)
            .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// What the file tests' directory is on.
pub fn directory(info: &FsInfo, rotational: Option<bool>) -> Finding {
    let (id, source) = ("dir", "file tests' directory");
    if info.fs_type == "unknown" {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            format!("{}: not found in /proc/self/mountinfo", info.dir),
        );
    }
    let fs = &info.fs_type;
    let network = NETWORK.contains(&fs.as_str()) || fs.starts_with("fuse");
    let what = if fs == "tmpfs" || fs == "ramfs" {
        format!("memory ({fs})")
    } else if is_ramdisk(&info.source) {
        format!("ramdisk ({fs} on {})", info.source)
    } else if network {
        format!("network or user-space filesystem ({fs} {})", info.source)
    } else if fs == "overlay" {
        "overlay (a container's layers)".to_string()
    } else {
        let kind = match rotational {
            Some(true) => ", rotational",
            Some(false) => ", non-rotational",
            None => "",
        };
        format!("disk ({fs} on {}{kind})", info.source)
    };
    // Free space is shown only when it is short: the value is a setting compare diffs.
    let value = format!("{}: {what}", info.dir);
    if info.read_only {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("{value}, read-only"),
            "give --dir a writable directory",
        )
    } else if network {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            value,
            "give --dir a local filesystem (or tmpfs) unless the filesystem is what you measure",
        )
    } else if info.free_bytes < MIN_FREE && info.block_size > 0 {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            format!(
                "{value}, only {:.2} GiB free",
                info.free_bytes as f64 / (1u64 << 30) as f64
            ),
            "free space or give --dir a directory with at least 1 GiB free",
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

    fn info(fs_type: &str, source: &str, free_bytes: u64) -> FsInfo {
        FsInfo {
            dir: "/tmp".into(),
            fs_type: fs_type.into(),
            source: source.into(),
            mount_point: "/".into(),
            mount_options: "rw,relatime".into(),
            super_options: "rw".into(),
            statfs_magic: "0xef53".into(),
            block_size: 4096,
            free_bytes,
            free_inodes: 1000,
            read_only: false,
        }
    }

    #[test]
    fn disk_memory_ramdisk_and_network() {
        let f = directory(&info("ext4", "/dev/vda", 60 << 30), Some(false));
        assert_eq!(
            (f.status, f.value.as_str()),
            (Status::Ok, "/tmp: disk (ext4 on /dev/vda, non-rotational)")
        );
        assert!(directory(&info("tmpfs", "tmpfs", 4 << 30), None)
            .value
            .contains("memory (tmpfs)"));
        assert!(directory(&info("ext4", "/dev/ram0", 4 << 30), None)
            .value
            .contains("ramdisk (ext4 on /dev/ram0)"));
        assert!(directory(&info("ext4", "/dev/random-name", 4 << 30), None)
            .value
            .contains("disk ("));
        assert_eq!(
            directory(&info("nfs4", "srv:/export", 4 << 30), None).status,
            Status::Warn
        );
        assert_eq!(
            directory(&info("fuse.sshfs", "me@host:", 4 << 30), None).status,
            Status::Warn
        );
        let low = directory(&info("ext4", "/dev/vda", 100 << 20), None);
        assert_eq!(low.status, Status::Warn);
        assert!(low.value.ends_with("only 0.10 GiB free"), "{}", low.value);
        let mut ro = info("ext4", "/dev/vda", 60 << 30);
        ro.read_only = true;
        assert_eq!(directory(&ro, None).status, Status::Warn);
        assert_eq!(
            directory(&info("unknown", "unknown", 0), None).status,
            Status::NotExposed
        );
    }

    #[test]
    fn rotational_of_a_disk_and_a_partition() {
        let (dir, root) = sample_root(&[
            ("/sys/class/block/vda/queue/rotational", "0\n"),
            ("/sys/devices/pci0000:00/block/sda/queue/rotational", "1\n"),
            ("/sys/devices/pci0000:00/block/sda/sda1/partition", "1\n"),
        ]);
        // As in sysfs: class/block/sda1 is a link into its disk's directory.
        std::os::unix::fs::symlink(
            "../../devices/pci0000:00/block/sda/sda1",
            dir.path().join("sys/class/block/sda1"),
        )
        .unwrap();
        assert_eq!(rotational(&root, "/dev/vda"), Some(false));
        assert_eq!(rotational(&root, "/dev/sda1"), Some(true));
        assert_eq!(rotational(&root, "/dev/nvme0n1"), None);
        assert_eq!(rotational(&root, "tmpfs"), None);
    }

    #[test]
    fn the_temp_dir_here_is_described() {
        let i = crate::fsinfo::collect(&std::env::temp_dir());
        let f = directory(&i, None);
        assert_ne!(f.status, Status::NotExposed, "{f:?}");
    }
}
