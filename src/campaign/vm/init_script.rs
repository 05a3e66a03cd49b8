//! The guest's `/init`, run by busybox as PID 1 from the initramfs: it loads the modules the
//! initramfs carries (in the order of `/modules/order`), mounts the host's `/` read-only over
//! 9p at `/newroot`, puts tmpfs on the places a system writes (`/tmp`, `/run`, `/var/tmp`,
//! `/root`), mounts `/proc`, `/sys`, `/dev` (and `/dev/pts`, `/dev/shm`, cgroup2) there, the
//! side's modules at `/lib/modules/RELEASE` (so `modprobe` in the guest finds this kernel's
//! modules), the step's result directory (read-write 9p, `cache=mmap`: SQLite's WAL maps its
//! `-shm` file shared, which 9p allows only so; a kexec campaign's store lives there in the
//! tests) at `/run/patchbench`, and with a
//! scratch file system a fresh one made on the RAM disk (`mkfs` from the host's root) at
//! `/run/patchbench-scratch`; then it runs the step's script (written by the host into the
//! result directory) chrooted into the host's root, writes its exit status next to it, and
//! powers the guest off. Anything that goes wrong before the step says one
//! `patchbench-guest:` line on the console and powers off, so the host sees a guest that never
//! reached the workload.
//!
//! `/etc/patchbench.conf` in the initramfs sets `RELEASE`, `MODULES_DIR` (the modules'
//! directory on the host, or empty), `SCRATCH_FS` (empty: no scratch) and `PROGRAM_DIR` (where
//! patchbench's programs are on the host: when a tmpfs above hides them, as for a build under
//! `/root` or `/tmp`, that directory is bound back at its own path).

/// Where the result directory is mounted in the guest (the step script's `$R`).
pub const RESULT_MOUNT: &str = "/run/patchbench";
/// Where the scratch file system is mounted in the guest.
pub const SCRATCH_MOUNT: &str = "/run/patchbench-scratch";
/// The 9p mount tags of the host's root and of the result directory.
pub const ROOT_TAG: &str = "hostroot";
pub const RESULT_TAG: &str = "patchbench-result";
/// The name of the duet's barrier port (virtio-serial).
pub const BARRIER_PORT: &str = "patchbench.barrier";
/// The directories of the host's root the guest covers with an empty tmpfs (the init's
/// `for d in` line): what the host has there is not in the guest, but for patchbench's own
/// programs (`PROGRAM_DIR`).
pub const TMPFS_DIRS: [&str; 4] = ["/tmp", "/var/tmp", "/run", "/root"];

/// The line every message of the init starts with.
pub const SAYS: &str = "patchbench-guest:";

/// The text of `/init`.
pub fn text() -> String {
    format!(
        r#"#!/bin/busybox sh
# patchbench's guest init (see src/campaign/vm/init_script.rs).
/bin/busybox --install -s /bin
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() {{ echo "{SAYS} $*"; }}
off() {{ sync; poweroff -f; sleep 10; }}
die() {{ say "$*"; off; }}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
. /etc/patchbench.conf
while read -r file kind args; do
  [ -n "$file" ] || continue
  if ! insmod "/modules/$file" $args; then
    [ "$kind" = optional ] || die "cannot load module $file"
  fi
done < /modules/order
R=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 {ROOT_TAG} $R \
  || die "cannot mount the host's root over 9p"
if [ -n "$MODULES_DIR" ] && [ -d "$R$MODULES_DIR" ] && [ -d "$R/lib/modules" ]; then
  mkdir -p /mods && mount --bind "$R$MODULES_DIR" /mods \
    && mount -t tmpfs -o mode=755 tmpfs "$R/lib/modules" \
    && mkdir "$R/lib/modules/$RELEASE" && mount --move /mods "$R/lib/modules/$RELEASE" \
    || die "cannot put the kernel's modules at /lib/modules/$RELEASE"
fi
prog=
if [ -n "$PROGRAM_DIR" ] && [ -d "$R$PROGRAM_DIR" ]; then
  mkdir -p /prog && mount --bind "$R$PROGRAM_DIR" /prog || die "cannot bind $PROGRAM_DIR"
  prog=bound
fi
for d in /tmp:1777 /var/tmp:1777 /run:755 /root:700; do
  [ -d "$R${{d%:*}}" ] || continue
  mount -t tmpfs -o "mode=${{d#*:}}" tmpfs "$R${{d%:*}}" || die "cannot mount a tmpfs on ${{d%:*}}"
done
if [ -n "$prog" ]; then
  # A tmpfs above hid patchbench's programs: put them back at their own path.
  if [ -d "$R$PROGRAM_DIR" ]; then
    umount /prog
  else
    mkdir -p "$R$PROGRAM_DIR" && mount --move /prog "$R$PROGRAM_DIR" \
      || die "cannot put patchbench's programs back at $PROGRAM_DIR"
  fi
fi
mount -t proc proc $R/proc && mount -t sysfs sysfs $R/sys && mount -t devtmpfs devtmpfs $R/dev \
  || die "cannot mount /proc, /sys and /dev"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
[ -d $R/sys/fs/cgroup ] && mount -t cgroup2 cgroup2 $R/sys/fs/cgroup
mkdir -p $R{RESULT_MOUNT} \
  && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=mmap {RESULT_TAG} $R{RESULT_MOUNT} \
  || die "cannot mount the result directory over 9p"
if [ -n "$SCRATCH_FS" ]; then
  case "$SCRATCH_FS" in ext*) force=-F ;; *) force=-f ;; esac
  chroot $R mkfs.$SCRATCH_FS -q $force /dev/ram0 || die "mkfs.$SCRATCH_FS /dev/ram0 failed"
  mkdir -p $R{SCRATCH_MOUNT} && mount -t $SCRATCH_FS /dev/ram0 $R{SCRATCH_MOUNT} \
    || die "cannot mount the scratch file system"
  say "scratch: $SCRATCH_FS on /dev/ram0 ($(cat /sys/block/ram0/size) sectors)"
fi
for p in /sys/class/virtio-ports/*; do
  [ -r "$p/name" ] && [ "$(cat "$p/name")" = {BARRIER_PORT} ] && export PATCHBENCH_BARRIER="/dev/${{p##*/}}"
done
say "running the step"
chroot $R /bin/sh {RESULT_MOUNT}/step.sh
status=$?
echo "$status" > $R{RESULT_MOUNT}/exit_status
say "the step ended with status $status"
[ -n "$SCRATCH_FS" ] && umount $R{SCRATCH_MOUNT}
umount $R{RESULT_MOUNT}
off
"#
    )
}

/// The text of `/etc/patchbench.conf`.
pub fn conf(
    release: &str,
    modules_dir: Option<&str>,
    scratch_fs: Option<&str>,
    program_dir: Option<&str>,
) -> String {
    use super::sh_quote::quote;
    format!(
        "RELEASE={}\nMODULES_DIR={}\nSCRATCH_FS={}\nPROGRAM_DIR={}\n",
        quote(release),
        quote(modules_dir.unwrap_or("")),
        quote(scratch_fs.unwrap_or("")),
        quote(program_dir.unwrap_or(""))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_is_valid_shell_and_names_its_mounts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("init");
        std::fs::write(&file, text()).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-n")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = text();
        for needed in [
            ROOT_TAG,
            RESULT_TAG,
            RESULT_MOUNT,
            SCRATCH_MOUNT,
            BARRIER_PORT,
        ] {
            assert!(t.contains(needed), "{needed}");
        }
        let covered = t.lines().find(|l| l.starts_with("for d in /tmp")).unwrap();
        for d in TMPFS_DIRS {
            assert!(covered.contains(&format!(" {d}:")), "{d}: {covered}");
        }
        let conf_file = dir.path().join("conf");
        std::fs::write(
            &conf_file,
            conf("6.1.0-1-amd64", Some("/a b/lib"), None, Some("/tmp/x")),
        )
        .unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(". \"$1\"; printf '%s|%s|%s' \"$RELEASE\" \"$MODULES_DIR\" \"$SCRATCH_FS\"")
            .arg("sh")
            .arg(&conf_file)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "6.1.0-1-amd64|/a b/lib|"
        );
    }
}
