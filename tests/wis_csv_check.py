#!/usr/bin/env python3
"""Reads `patchbench scale --csv DIR` output the way will-it-scale's own tools read theirs.

For every <base>.csv in DIR (as will-it-scale's postprocess.py does: the files of the folder
ending in .csv, base = the name before its first dot) it needs <base>.title and takes its first
line, stripped, as the plot title; it reads the CSV with Python's csv module in the 'excel'
dialect; and it checks the values as runtest.py writes them and LKP's will-it-scale parser
reads them: the exact header, a first row 0,0,100,0,100,0, six fields per row, tasks /
processes / threads / linear as integers, the two idle columns as numbers with two decimals.
Then it derives what LKP reports (per_process_ops, per_thread_ops: the mean over rows of the
result divided by tasks, rows with both results 0 left out) and prints one line per testcase.
Exit status 0 when every file passed, 1 with the reason otherwise.

Usage: wis_csv_check.py DIR
"""

import csv
import os
import re
import sys

HEADER = ["tasks", "processes", "processes_idle", "threads", "threads_idle", "linear"]
FIRST_ROW = ["0", "0", "100", "0", "100", "0"]
INTEGER = re.compile(r"^(0|[1-9][0-9]*)$")
PERCENT = re.compile(r"^[0-9]+\.[0-9]{2}$")


class Bad(Exception):
    pass


def integer(field, what):
    if not INTEGER.match(field):
        raise Bad(f"{what} {field!r} is not an integer as runtest.py's %d writes it")
    return int(field)


def percent(field, what):
    if not PERCENT.match(field):
        raise Bad(f"{what} {field!r} is not a number as runtest.py's %0.2f writes it")
    value = float(field)
    if not 0.0 <= value <= 100.0:
        raise Bad(f"{what} {field!r} is not a percentage")
    return value


def check(folder, base):
    title_path = os.path.join(folder, base + ".title")
    if not os.path.exists(title_path):
        raise Bad(f"{base}.title is missing (postprocess.py reads the plot title from it)")
    with open(title_path) as f:
        title = f.readline().strip()
    if not title:
        raise Bad(f"{base}.title is empty")
    with open(os.path.join(folder, base + ".csv"), newline="") as f:
        rows = list(csv.reader(f, dialect="excel"))
    if not rows or rows[0] != HEADER:
        raise Bad(f"header is {rows[:1]!r}, not {HEADER!r}")
    if len(rows) < 2 or rows[1] != FIRST_ROW:
        raise Bad(f"first row is {rows[1:2]!r}, not {FIRST_ROW!r}")
    per_process, per_thread = [], []
    for n, row in enumerate(rows[2:], start=3):
        if len(row) != 6:
            raise Bad(f"row {n} has {len(row)} fields, not 6")
        where = f"row {n}:"
        tasks = integer(row[0], f"{where} tasks")
        processes = integer(row[1], f"{where} processes")
        percent(row[2], f"{where} processes_idle")
        threads = integer(row[3], f"{where} threads")
        percent(row[4], f"{where} threads_idle")
        integer(row[5], f"{where} linear")
        if tasks < 1:
            raise Bad(f"{where} tasks is {tasks}")
        if processes == 0 and threads == 0:
            continue
        per_process.append(processes / tasks)
        per_thread.append(threads / tasks)
    if not per_process:
        raise Bad("no result rows")
    mean = lambda v: sum(v) / len(v)
    return (
        f"{base}: {title}: {len(rows) - 2} rows, per_process_ops={mean(per_process):.0f} "
        f"per_thread_ops={mean(per_thread):.0f}"
    )


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    folder = sys.argv[1]
    bases = sorted(f.split(".", 1)[0] for f in os.listdir(folder) if f.endswith(".csv"))
    if not bases:
        print(f"no .csv files in {folder}", file=sys.stderr)
        return 1
    for base in bases:
        try:
            print(check(folder, base))
        except Bad as e:
            print(f"{base}.csv: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
