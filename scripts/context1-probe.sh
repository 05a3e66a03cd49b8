#!/usr/bin/env bash
# Why does context1 at 1 copy score differently under patchbench than under UnixBench?
# For ROUNDS rounds, runs one copy of context1 for SECS seconds four ways, adjacent:
#   C       the C reference (benches/c/context1.c, UnixBench's flags) under /bin/sh, as Run does
#   worker  patchbench-worker alone under /bin/sh (no runner around it)
#   run     patchbench run context1 (the runner polls its workers' pipes every 250 ms)
# and prints per way: the rate, context switches and CPU migrations (perf software counters,
# all processes of the way), and where each process the way forked was placed (sched_wakeup_new
# in the forking task, for the last fork of the way: context1's child).
# Needs perf (apt-get install linux-perf), root for the tracepoints, and a release build.
# Usage: scripts/context1-probe.sh [SECS=5] [ROUNDS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}; ROUNDS=${2:-5}
PB=target/release/patchbench; WORKER=target/release/patchbench-worker
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cc -Wall -pedantic -O3 -ffast-math -march=native -mtune=native -DTIME -o "$TMP/context1" benches/c/context1.c
perf_run() { # command...
  perf record -q -e sched:sched_wakeup_new -o "$TMP/rec" -- \
    perf stat -x, -e context-switches,cpu-migrations -o "$TMP/stat" -- "$@" \
    > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; exit 1; }
  local cs mig place
  cs=$(grep context-switches "$TMP/stat" | cut -d, -f1)
  mig=$(grep cpu-migrations "$TMP/stat" | cut -d, -f1)
  place=$(perf script -i "$TMP/rec" 2>/dev/null | awk '
    /wakeup_new/ { for (i = 1; i <= NF; i++) { if ($i ~ /^\[[0-9]+\]$/) c = substr($i, 2, length($i) - 2) + 0; if ($i ~ /^target_cpu=/) t = substr($i, 12) + 0 }
                   last = sprintf("child forked on cpu%d, placed on cpu%d", c, t) }
    END { print last }')
  echo "cs $cs migrations $mig $place"
}
for r in $(seq "$ROUNDS"); do
  echo "== round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  s=$(perf_run /bin/sh -c "'$TMP/context1' $SECS 2>'$TMP/c.err' >> /dev/null")
  n=$(tail -1 "$TMP/c.err" | cut -d'|' -f2); echo "C       $(python3 -c "print(round($n / $SECS))") lps (count/duration)  $s"
  s=$(perf_run /bin/sh -c "echo | '$WORKER' context1 $SECS > '$TMP/w.out'")
  echo "worker  $(python3 -c "
d = dict(l.split('|')[:2] for l in open('$TMP/w.out') if '|' in l); print(round(float(d['COUNT']) / float(d['WALL'])))") lps  $s"
  s=$(perf_run "$PB" run context1 --copies 1 --duration "$SECS" --passes 1 --no-settle --no-store --json "$TMP/r.json")
  echo "run     $(python3 -c "import json; print(round(json.load(open('$TMP/r.json'))['tests'][0]['score']))") lps  $s"
done
