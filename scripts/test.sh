#!/usr/bin/env bash
# The test command: installs whatever the tests need that this machine lacks (Debian's
# packages, with apt-get, as root), then runs every test binary. A test that cannot run fails
# with the reason rather than passing, so the set-up is done here, once, before any test.
#
#   scripts/test.sh                 install what is missing, then every test binary, three
#                                   at a time (scripts/test_lanes.py; logs in target/test-logs/),
#                                   and the real-data calibration optimised
#   scripts/test.sh --one-lane      the same, one binary at a time
#   scripts/test.sh --calib         the real-data calibration alone, optimised, its tables printed
#   scripts/test.sh -- ARGS         install, then `cargo test --no-fail-fast ARGS` (e.g.
#                                   `--test vm`, or `--test vm NAME` for one test)
#   scripts/test.sh --install-only  install what is missing, run nothing
#   scripts/test.sh --dry-run       say what would be installed; install and run nothing
#
# A failing binary never stops the others: every one runs, and the exit status says whether
# all passed (with `-- ARGS`, cargo's `--no-fail-fast` does the same).
#
# What needs what:
# - the build: Rust 1.89 or later (rustup; Debian 12's cargo is too old), a C compiler, and
#   OpenSSL's headers through pkg-config for the PostgreSQL client's TLS (libssl-dev,
#   pkg-config);
# - the UnixBench tests: /bin/sh and the shell pipeline's utilities (coreutils, grep), gcc and dc
#   for the looper tests, python3 for will-it-scale's own way of reading our CSV;
# - the HTML report's browser test: Debian's chromium;
# - the profile test (tests/why.rs, run --profile): Debian's linux-perf;
# - the exec tests (tests/exec.rs): the tools they run: stress-ng, rt-tests (hackbench), fio,
#   sysbench, iperf3;
# - the store tests: a real PostgreSQL server (postgresql: initdb, pg_ctl) and openssl for a
#   test certificate;
# - the vm and kexec tests: QEMU (TCG), a static busybox for the guest's initramfs, mkfs.ext4
#   (e2fsprogs), depmod (kmod), and apt's package lists to download Debian's kernel package
#   (apt-get download linux-image-<release>-amd64; unpacked, never installed);
# - the kernel-build tests (tests/build.rs, tests/campaign_build.rs): Debian's kernel source
#   (linux-source-6.1, unpacked as a git tree) built with the tiny config: git, make, bc, flex
#   and bison for kconfig, xz to unpack, the libelf headers (libelf-dev) for objtool;
# - the full-disk, namespace and unprivileged-user tests: root (mount, unshare, setpriv,
#   runuser: util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

mode=test
lanes=3
cargo_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) mode=dry-run ;;
    --install-only) mode=install ;;
    --one-lane) lanes=1 ;;
    --calib) lanes=calib ;;
    --) shift; cargo_args=("$@"); break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/test.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

has() { command -v "$1" >/dev/null 2>&1; }
# A program found on PATH or in the sbin directories a non-login root shell may lack.
has_sbin() { has "$1" || [ -x "/sbin/$1" ] || [ -x "/usr/sbin/$1" ]; }

packages=()
for tool in sort od grep tee wc rm; do
  has "$tool" || { packages+=(coreutils grep); break; }
done
# gcc: the C test's compiler, and the build's and the overhead benchmark's cc.
has gcc || packages+=(gcc)
# perf: the profiles' test (run --profile).
has perf || packages+=(linux-perf)
has stress-ng || packages+=(stress-ng)
has hackbench || packages+=(rt-tests)
has fio || packages+=(fio)
has sysbench || packages+=(sysbench)
has iperf3 || packages+=(iperf3)
has dc || packages+=(dc)
has python3 || packages+=(python3)
has chromium || has chromium-browser || [ -n "${PATCHBENCH_CHROMIUM:-}" ] || packages+=(chromium)
has qemu-system-x86_64 || packages+=(qemu-system-x86)
busybox=$(command -v busybox 2>/dev/null || true)
# A static busybox: ldd finds no dynamic section in it.
{ [ -n "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1; } || packages+=(busybox-static)
has_sbin mkfs.ext4 || packages+=(e2fsprogs)
has_sbin depmod || packages+=(kmod)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || packages+=(postgresql)
has openssl || packages+=(openssl)
{ has pkg-config && pkg-config --exists openssl 2>/dev/null; } || packages+=(libssl-dev pkg-config)
for tool in mount unshare setpriv setarch runuser; do
  has_sbin "$tool" || { packages+=(util-linux); break; }
done
[ -f /usr/src/linux-source-6.1.tar.xz ] || packages+=(linux-source-6.1)
for tool in git make bc flex bison; do
  has "$tool" || packages+=("$tool")
done
has xz || packages+=(xz-utils)
[ -f /usr/include/gelf.h ] || packages+=(libelf-dev)
# Debian's kernel package is downloaded by the vm tests: the package lists must be there.
lists_missing=false
apt-cache show linux-image-amd64 >/dev/null 2>&1 || lists_missing=true

rust_problem=""
if ! has cargo; then
  rust_problem="no cargo: install Rust 1.89 or later (https://rustup.rs)"
else
  v=$(rustc --version 2>/dev/null | awk '{print $2}')
  if [ "$(printf '%s\n1.89.0\n' "$v" | sort -V | head -1)" != "1.89.0" ]; then
    rust_problem="rustc $v is older than 1.89: rustup update (or install Rust 1.89 or later)"
  fi
fi

if [ "$mode" = dry-run ]; then
  if [ ${#packages[@]} -gt 0 ]; then
    echo "would install: ${packages[*]}"
  else
    echo "would install: nothing"
  fi
  $lists_missing && echo "would run: apt-get update (no package lists for linux-image-amd64)"
  [ -n "$rust_problem" ] && echo "would stop: $rust_problem"
  exit 0
fi

if [ ${#packages[@]} -gt 0 ] || $lists_missing; then
  if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: the tests need root (mounts, namespaces, other users), and these" \
      "packages are missing: ${packages[*]:-none}; run it as root (sudo scripts/test.sh)" >&2
    exit 1
  fi
  if ! has apt-get; then
    echo "scripts/test.sh: missing: ${packages[*]:-the package lists of apt}; install them" \
      "(this script knows Debian's apt-get only)" >&2
    exit 1
  fi
  apt-get update -qq
  if [ ${#packages[@]} -gt 0 ]; then
    echo "installing: ${packages[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
  fi
fi
if [ -n "$rust_problem" ]; then
  echo "scripts/test.sh: $rust_problem" >&2
  exit 1
fi
[ "$mode" = install ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "scripts/test.sh: the tests need root (tmpfs mounts, mount namespaces, other users):" \
    "run it as root (sudo scripts/test.sh)" >&2
  exit 1
fi
cargo --version
if [ ${#cargo_args[@]} -gt 0 ]; then
  exec cargo test --locked --no-fail-fast "${cargo_args[@]}"
fi
# Every test binary once, in three lanes side by side (scripts/test_lanes.py: the binaries
# that boot guests or build kernels; the real-data calibration (tests/corpus_calibration.rs),
# which resamples thousands of A/A tables of 400-row runs through `compare`, minutes
# unoptimised, so it is ignored in a debug build and run here built optimised: the dev
# profile with the patchbench package optimised, reusing the debug build's dependencies; and
# the rest). Most binaries wait half their time, so the lanes overlap what `cargo test` would
# run one after the other.
if [ "$lanes" = calib ]; then
  exec python3 scripts/test_lanes.py --calib
fi
exec python3 scripts/test_lanes.py --lanes "$lanes"
