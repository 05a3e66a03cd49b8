#!/bin/sh
# Real-machine calibration of `patchbench compare` (issue #13), for a QUIET machine.
#
#   scripts/compare-calibration.sh aa    [RUNS]   # A/A: RUNS interleaved runs per side, same build
#   scripts/compare-calibration.sh shift [RUNS]   # known shift: the B side under a CPU quota
#
# Each run is `patchbench run --quick --copies 1` of $TESTS (default: the 12 index tests). The
# sides are interleaved (A1 A2 A1 A2 ...) so that slow drifts of the machine hit both. The
# shifted side runs inside a cgroup whose CPU quota is $QUOTA % of one CPU (default 95), via
# cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us); this needs root.
#
# Output: the comparison (unixbench layout, with intervals, MDEs and the plan), then the exit
# status of `compare --fail-on-regression 2` (0 expected for aa, 1 for shift), and the store
# path, so the runs can be compared again (e.g. `--format csv`).
#
# Environment: PATCHBENCH (default target/release/patchbench; build with cargo build
# --release), STORE (default: a new temporary file), TESTS, QUOTA.
set -eu

mode=${1:-aa}
runs=${2:-6}
pb=${PATCHBENCH:-target/release/patchbench}
tests=${TESTS:-index}
quota=${QUOTA:-95}
store=${STORE:-$(mktemp -d /tmp/pb-calibration.XXXXXX)/results.db}

[ -x "$pb" ] || { echo "no $pb: build it (cargo build --release) or set PATCHBENCH" >&2; exit 2; }

one_run() { # label [cgroup-dir]
    if [ -n "${2:-}" ]; then
        # Move a subshell into the cgroup, then exec the run from it: its children inherit it.
        sh -c 'echo $$ > "$1/cgroup.procs" 2>/dev/null || echo $$ > "$1/tasks"; shift; exec "$@"' \
            sh "$2" "$pb" run "$tests" --quick --copies 1 --label "$1" --store "$store" >/dev/null
    else
        "$pb" run "$tests" --quick --copies 1 --label "$1" --store "$store" >/dev/null
    fi
}

make_cgroup() {
    period=100000
    max=$((period * quota / 100))
    if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        dir=/sys/fs/cgroup/patchbench-quota.$$
        mkdir "$dir"
        echo "$max $period" > "$dir/cpu.max"
    elif [ -d /sys/fs/cgroup/cpu ]; then
        dir=/sys/fs/cgroup/cpu/patchbench-quota.$$
        mkdir "$dir"
        echo "$period" > "$dir/cpu.cfs_period_us"
        echo "$max" > "$dir/cpu.cfs_quota_us"
    else
        echo "no cgroup cpu controller found" >&2
        exit 2
    fi
    echo "$dir"
}

case "$mode" in
aa)
    a=A1; b=A2; cg=""
    ;;
shift)
    a=B-full; b=B-quota$quota
    cg=$(make_cgroup)
    # Only the directory we made is removed (it must be empty of tasks by then).
    trap 'rmdir "$cg" 2>/dev/null || true' EXIT
    ;;
*)
    echo "usage: $0 aa|shift [RUNS]" >&2
    exit 2
    ;;
esac

echo "store: $store; $runs interleaved runs per side of: $pb run $tests --quick --copies 1" >&2
i=1
while [ "$i" -le "$runs" ]; do
    echo "run $i/$runs: $a" >&2
    one_run "$a"
    echo "run $i/$runs: $b" >&2
    one_run "$b" "$cg"
    i=$((i + 1))
done

"$pb" compare "$a" "$b" --store "$store" --format unixbench
set +e
"$pb" compare "$a" "$b" --store "$store" --fail-on-regression 2 >/dev/null
echo "compare --fail-on-regression 2: exit $?"
echo "store: $store"
