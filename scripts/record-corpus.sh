#!/bin/sh
# Records the A/A corpus `tests/corpus_calibration.rs` and `patchbench calibrate`'s docs rest on:
# real runs of several workloads, the same kernel throughout, every monitor row (the
# defaults), written as one gzip-compressed JSON-lines file of `patchbench.run/2` documents
# (what `--json FILE` writes and `patchbench import` reads) per workload, plus a README.md
# saying what was recorded, when, on what, and how big it is.
#
#   scripts/record-corpus.sh [--quick] OUTDIR     # e.g. tests/fixtures/corpus
#
# Workloads (files <name>.jsonl.gz):
#   syscall, pipe, spawn, fsbuffer   `run TEST --copies 1 --duration 1 --passes 1 --no-settle`
#   aim7-creat-clo                   `aim7 creat-clo --load 2 --no-start-delay`
#   scale-page_fault1                `scale page_fault1 --mode process --tasks 1 --duration 1
#                                     --warmup 0`
#     RUNS runs each (default 40; --quick 6), interleaved (one of each workload per lap), so a
#     slow drift of the machine reaches every workload's runs alike;
#   campaign-syscall, campaign-pipe, campaign-spawn
#     a local A/A campaign each (`campaign start --executor local --rounds ROUNDS`, no setup
#     on either side, so both sides run this kernel), ROUNDS rounds (default 20; --quick 4);
#     its runs are exported from the campaign's store with `patchbench export ID`, campaign
#     section included, so `compare` pairs them by round.
#
# Environment: PATCHBENCH (default target/release/patchbench, built first with
# `cargo build --release`), RUNS, ROUNDS, DIR (scratch directory for the workloads' files,
# default the system temp directory). Needs jq or python3 (to write each document on one
# line) and gzip. Run it on a quiet machine: nothing else should run meanwhile.
set -eu

quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--quick] OUTDIR" >&2
    exit 2
fi
out=$1
given=$1
if [ "$quick" = 1 ]; then
    runs=${RUNS:-6}
    rounds=${ROUNDS:-4}
else
    runs=${RUNS:-40}
    rounds=${ROUNDS:-20}
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${PATCHBENCH:-}" ]; then
    echo "building the release binary (cargo build --release)" >&2
    (cd "$root" && cargo build --release >&2)
    pb=${CARGO_TARGET_DIR:-$root/target}/release/patchbench
else
    pb=$PATCHBENCH
fi
[ -x "$pb" ] || { echo "no $pb: build it (cargo build --release) or set PATCHBENCH" >&2; exit 2; }
if command -v jq >/dev/null 2>&1; then
    compact() { jq -c . "$1"; }
    ids_of() { jq -r '.runs[].id' "$1"; }
elif command -v python3 >/dev/null 2>&1; then
    compact() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":"), ensure_ascii=False))' "$1"; }
    ids_of() { python3 -c 'import json,sys; [print(r["id"]) for r in json.load(open(sys.argv[1]))["runs"]]' "$1"; }
else
    echo "needs jq or python3 to write one document a line" >&2
    exit 2
fi
command -v gzip >/dev/null 2>&1 || { echo "needs gzip" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pb-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
dir=${DIR:-${TMPDIR:-/tmp}}
short="--copies 1 --duration 1 --passes 1 --no-settle"
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }

# One run of a workload, appended to its JSON-lines file. $1: name, the rest: the command.
record() {
    name=$1
    shift
    "$pb" "$@" --no-store --json "$work/doc.json" >"$work/last.log" 2>&1 || {
        echo "failed: $pb $* (log below)" >&2
        cat "$work/last.log" >&2
        exit 1
    }
    compact "$work/doc.json" >>"$work/$name.jsonl"
    rm -f "$work/doc.json"
}

plain="syscall pipe spawn fsbuffer aim7-creat-clo scale-page_fault1"
total=$((runs * 6))
n=0
lap=1
while [ "$lap" -le "$runs" ]; do
    for w in $plain; do
        n=$((n + 1))
        echo "[$n/$total] $w run $lap/$runs ($(elapsed) s so far)" >&2
        case "$w" in
        aim7-creat-clo) record "$w" aim7 creat-clo --load 2 --no-start-delay --dir "$dir" ;;
        scale-page_fault1)
            record "$w" scale page_fault1 --mode process --tasks 1 --duration 1 --warmup 0 --dir "$dir" ;;
        *) record "$w" run "$w" $short --dir "$dir" ;;
        esac
    done
    if [ "$lap" = 1 ]; then
        lap_s=$(elapsed)
        # Then the other laps, and the campaigns: 3 x 2 x ROUNDS short runs of about 2 s.
        echo "the first lap took $lap_s s: about $(((lap_s * runs + 12 * rounds + 59) / 60)) min in all" >&2
    fi
    lap=$((lap + 1))
done

store="$work/campaigns.db"
for w in syscall pipe spawn; do
    name=aa-$w
    echo "campaign $name: $rounds rounds of run $w, both sides this kernel ($(elapsed) s so far)" >&2
    "$pb" campaign start "$name" --executor local --rounds "$rounds" --store "$store" \
        -- run "$w" $short --dir "$dir" >"$work/last.log" 2>&1 || {
        echo "campaign $name failed (log below)" >&2
        cat "$work/last.log" >&2
        exit 1
    }
    for side in base patched; do
        "$pb" runs --label "$name/$side" --format json --store "$store" >"$work/runs.json"
        for id in $(ids_of "$work/runs.json"); do
            "$pb" export "$id" --format json --store "$store" >"$work/doc.json"
            compact "$work/doc.json" >>"$work/campaign-$w.jsonl"
        done
    done
done

total_s=$(elapsed)
for f in "$work"/*.jsonl; do
    gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done

kernel=$(uname -r)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || echo unknown)
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || echo '?')
{
    echo "# A/A corpus"
    echo
    echo "Real runs of one kernel, recorded by \`scripts/record-corpus.sh$([ "$quick" = 1 ] && echo ' --quick') $given\`"
    echo "on $(date -u +%Y-%m-%d) in $total_s s, for \`tests/corpus_calibration.rs\` (the false-alarm rates"
    echo "of \`compare\` on real data) and \`patchbench calibrate\`'s docs. Every file is one"
    echo "gzip-compressed JSON-lines file: one \`patchbench.run/2\` document a line, as \`--json FILE\`"
    echo "writes it and \`patchbench import\` reads it, nothing stripped."
    echo
    echo "- machine: $cpu, $cpus CPUs, $mem; kernel $kernel; patchbench $("$pb" --version 2>/dev/null | awk '{print $2}')"
    if [ "$quick" = 1 ]; then
        echo "- a --quick corpus: a few runs each, for development only"
    fi
    echo "- plain runs, interleaved (one of each workload per lap), $runs each, every monitor row:"
    echo "  \`run TEST $short\` for syscall, pipe, spawn, fsbuffer;"
    echo "  \`aim7 creat-clo --load 2 --no-start-delay\`;"
    echo "  \`scale page_fault1 --mode process --tasks 1 --duration 1 --warmup 0\`"
    echo "- campaign-syscall, -pipe, -spawn: \`campaign start aa-TEST --executor local --rounds $rounds"
    echo "  -- run TEST $short\` (no setup: both sides ran this kernel), exported with"
    echo "  \`patchbench export ID\`"
    echo
    echo "| file | runs | bytes |"
    echo "|---|---|---|"
    for f in "$out"/*.jsonl.gz; do
        echo "| $(basename "$f") | $(gzip -dc "$f" | wc -l | tr -d ' ') | $(wc -c <"$f" | tr -d ' ') |"
    done
    echo
    echo "Re-record (on a quiet machine; the release binary is built first):"
    echo
    echo "    scripts/record-corpus.sh tests/fixtures/corpus"
    echo
    echo "then \`scripts/test.sh --calib\` prints the rates."
} >"$out/README.md"
echo "done: $out ($(ls "$out"/*.jsonl.gz | wc -l) files) in $total_s s" >&2
