#!/usr/bin/env python3
"""Runs every test binary of the suite in a few lanes at once (scripts/test.sh calls it).

`cargo test` runs its test binaries one after the other, and most of ours spend half their
time waiting (a measured window, a guest's boot, a PostgreSQL server, a signal's delivery):
on two CPUs about 40 % of the machine is idle during the debug suite. The binaries are
independent processes, each with its own private directories, stores, servers and measurement
lock, so they can run side by side. Three lanes, each running its binaries one after the other:

- guests: the binaries that boot QEMU guests or build kernels (CPU-bound, one vCPU each);
- calib: the optimised build of the real-data calibration, then its run (`calib_lane`);
- rest: every other binary, the library's unit tests included, longest first.

A lane that has run its own binaries takes the next of the rest, then the next guest binary
not yet started, so the lanes end together rather than one after the others.

Before the lanes, alone: the binaries that change or sample the whole machine (tests/why.rs:
THP switched system-wide, a CPU quota's throttling, `perf record -a`), whose assertions
another binary's load would break.

Each binary's output goes to target/test-logs/<name>.log; a line is printed as each one
ends, the whole log of a failed one, and a table of every binary's time at the end. The exit
status is 0 only if every binary passed.

Usage: scripts/test_lanes.py [--lanes 1|3]   (1: one lane, the binaries in order)
       scripts/test_lanes.py --calib          (the optimised calibration alone, its tables printed)
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time

# Longest first (2026-12-07, seconds on a fresh clone: 198, 91, 78, 73, 21).
GUESTS = ["bisect", "vm", "campaign_build", "campaign_kexec", "build"]
# Run alone, before the lanes.
ALONE = ["why"]
# The longest of the rest (2026-12-07, seconds): started first, so the lanes end together.
LONG = ["campaign", "run", "lab_agents", "scale", "registry", "fidelity", "aim7", "exec"]
LOGS = os.path.join("target", "test-logs")
# Run optimised in its own lane; its debug binary only says "ignored", so it is not run.
CALIB = "corpus_calibration"
# The optimised calibration's own target directory, seeded from the debug build's (calib_lane).
CALIB_DIR = os.path.join("target", "calib-dev")
# The patchbench package alone optimised, in the dev profile whose dependencies are already
# optimised (Cargo.toml), and without debug assertions (the test is ignored where they are on).
CALIB_OPT = {"opt-level": "3", "debug": "false", "debug-assertions": "false", "overflow-checks": "false"}


def seed_calib_dir():
    """Gives CALIB_DIR the debug build's compiled dependencies, so only patchbench is compiled.

    A separate profile (or `--release`) compiles every dependency again, about 5 CPU-minutes
    on a fresh clone. The dev profile's dependencies are already optimised; changing only the
    patchbench package's settings changes only its own artifacts' hashes, so cargo takes the
    dependencies as they are. They are hard links (no copy of gigabytes), added where missing:
    files cargo writes for patchbench get new names and never touch the debug build's. The
    build scripts' outputs and the fingerprints are copied, since a build script that runs
    again writes into its own directory.
    """
    src = os.path.join("target", "debug")
    dst = os.path.join(CALIB_DIR, "debug")
    for sub, link in (("deps", True), ("build", False), (".fingerprint", False)):
        top = os.path.join(src, sub)
        for root, _dirs, files in os.walk(top):
            to = os.path.join(dst, os.path.relpath(root, src))
            os.makedirs(to, exist_ok=True)
            for f in files:
                target = os.path.join(to, f)
                if os.path.lexists(target):
                    continue
                source = os.path.join(root, f)
                if link:
                    os.link(source, target)
                else:
                    shutil.copy2(source, target, follow_symlinks=False)


def calib_lane():
    """The command that builds tests/corpus_calibration.rs optimised and runs it, its table
    printed (in its log in the lanes)."""
    cmd = ["cargo", "test", "--locked", "--test", CALIB]
    for k, v in CALIB_OPT.items():
        cmd += ["--config", f"profile.dev.package.patchbench.{k}={v}"]
    return cmd + ["--", "--nocapture"]


def calib_env():
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = CALIB_DIR
    # Incremental compilation is for edits; at optimisation it only costs.
    env["CARGO_INCREMENTAL"] = "0"
    return env


def test_binaries():
    """Builds every test target (debug) and lists (name, executable) from cargo's messages."""
    cmd = ["cargo", "test", "--locked", "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"test_lanes: `{' '.join(cmd)}` failed (exit {proc.returncode})")
    out = []
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        name = "lib" if "lib" in target["kind"] else target["name"]
        out.append((name, [msg["executable"]]))
    return out


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.rows = []

    def add(self, name, code, secs, cpu, log):
        with self.lock:
            self.rows.append((name, code, secs, cpu))
            summary = ""
            with open(log, errors="replace") as f:
                text = f.read()
            for line in text.splitlines():
                if line.startswith("test result:"):
                    summary = line[len("test result: "):]
            word = "ok" if code == 0 else f"FAILED (exit {code})"
            print(f"test_lanes: {name}: {word} in {secs:.1f} s ({cpu:.1f} s of CPU)  {summary}",
                  flush=True)
            if code != 0:
                print(f"---- {log} ----\n{text}---- end of {name} ----", flush=True)


def run_one(cmd, log, env):
    """Runs cmd with its output in log: (exit status, CPU seconds of it and what it reaped)."""
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def run_lane(queues, results):
    """Runs the binaries of `queues` (shared lists), each queue emptied before the next."""
    while True:
        with results.lock:
            queue = next((q for q in queues if q), None)
            if queue is None:
                return
            name, cmd, *env = queue.pop(0)
        log = os.path.join(LOGS, f"{name}.log")
        started = time.monotonic()
        code, cpu = run_one(cmd, log, env[0] if env else None)
        results.add(name, code, time.monotonic() - started, cpu, log)


def main():
    lanes = 3
    args = sys.argv[1:]
    if args == ["--calib"]:
        debug = ["cargo", "test", "--locked", "--no-run", "--test", CALIB]
        if subprocess.call(debug) != 0:
            sys.exit(f"test_lanes: `{' '.join(debug)}` failed")
        seed_calib_dir()
        return subprocess.call(calib_lane(), env=calib_env())
    if args[:1] == ["--lanes"] and len(args) == 2 and args[1] in ("1", "3"):
        lanes = int(args[1])
    elif args:
        sys.exit("test_lanes: usage: scripts/test_lanes.py [--lanes 1|3 | --calib]")
    os.makedirs(LOGS, exist_ok=True)
    binaries = [b for b in test_binaries() if b[0] != CALIB]
    seed_calib_dir()
    missing = [g for g in GUESTS + ALONE if g not in {n for n, _ in binaries}]
    if missing:
        sys.exit(f"test_lanes: no test binary named {', '.join(missing)} (tests/ renamed?)")
    calib = [(f"{CALIB} (optimised)", calib_lane(), calib_env())]
    results = Results()
    started = time.monotonic()
    if lanes == 1:
        plan = [[binaries + calib]]
    else:
        run_lane([[b for b in binaries if b[0] in ALONE]], results)
        order = {n: i for i, n in enumerate(LONG)}
        rest = [b for b in binaries if b[0] not in GUESTS + ALONE]
        rest.sort(key=lambda b: order.get(b[0], len(LONG)))
        guests = sorted((b for b in binaries if b[0] in GUESTS), key=lambda b: GUESTS.index(b[0]))
        plan = [[guests, rest], [calib, rest, guests], [rest, guests]]
    threads = [threading.Thread(target=run_lane, args=(lane, results)) for lane in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    rows = sorted(results.rows, key=lambda r: -r[2])
    cpu = sum(r[3] for r in rows)
    print(f"\ntest_lanes: {len(rows)} binaries in {lanes} lane(s), {wall:.0f} s of wall time, "
          f"{cpu:.0f} s of CPU")
    print("     wall      CPU  binary")
    for name, code, secs, cpu in rows:
        print(f"  {secs:7.1f}  {cpu:7.1f}  {name}{'' if code == 0 else '  FAILED'}")
    failed = [r[0] for r in rows if r[1] != 0]
    if failed:
        print(f"test_lanes: failed: {', '.join(failed)} (logs in {LOGS}/)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
