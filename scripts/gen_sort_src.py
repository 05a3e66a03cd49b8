#!/usr/bin/env python3
"""Writes src/workloads/data/sort.src: the shell tests' input, our own text with the shape of
UnixBench's testdir/sort.src (an old shell script), which is what sort, od and grep see:

  362 lines, 1200 words, 8546 bytes, 35 lines containing "the", 273 distinct lines;
  line lengths by tens (0-9, 10-19, ...): 116, 80, 61, 29, 29, 27, 16, 3, 1, longest 82;
  1 line of 1 character, 51 of 2, 3 of 3, 31 of 4, 3 of 5, 9 of 6, 10 of 7.

Deterministic (fixed seed); the unit test in src/workloads/shell_scripts.rs checks the counts.
Usage: python3 scripts/gen_sort_src.py [OUTPUT]
"""
import random
import sys

LINES, WORDS, BYTES, THE_LINES, DISTINCT = 362, 1200, 8546, 35, 273
BUCKETS = [116, 80, 61, 29, 29, 27, 16, 3, 1]
LONGEST = 82

# The short lines (length 0-9), as a shell script has them: (text, how many).
SHORT = [
    ("", 4), ("}", 1),
    ("fi", 40), (";;", 7), ("\t}", 2), ("*)", 2),
    ("\tfi", 2), ("\t;;", 1),
    ("done", 16), ("else", 8), ("esac", 3), ("wait", 2), ("\t\tfi", 2),
    ("\tdone", 2), ("\telse", 1),
    ("exit 0", 3), ("exit 1", 2), ("\t\tdone", 2), ("\t\telse", 2),
    ("\texit 1", 4), ("\texit 0", 3), ("shift 2", 2), ("exit $?", 1),
    ("\tshift 2", 1), ("cd $HOME", 1),
    ("\tcd $HOME", 1), ("umask 022", 1),
]

# Words of the long lines: none contains "the"; THE_WORDS all do.
VOCAB = """lockfile datafile logfile errfile tmpfile pidfile workdir spool backup archive
compress summary monthly yearly weekly daily record report status value number table field
remote device memory swap purge rotate install update remove create copy move link chmod
chown chgrp mkdir rmdir touch cat echo printf read test expr sed awk cut paste join split
sort uniq grep tee wc od head tail find xargs tar cpio dd sync sleep kill trap wait exec
eval set shift exit return case esac while until for done if elif else fi do in local
export readonly unset umask ulimit true false and or not only once each every first last
next prev count total limit size owner group mode user host name path file dir list line
word char byte block page queue job task cron mail print spooler daemon signal flag option
usage error warning notice debug verbose quiet force dry run old new tmp var etc bin lib
home src doc man info log out in err null zero one two three four five six seven eight
nine ten""".split()
THE_WORDS = ["the", "then", "other", "there", "either", "whether", "them", "these"]
OPERATORS = ["=", "|", ">", "<", ">>", "&&", "||", "2>&1", "-f", "-d", "-s", "-eq", "-gt",
             "$1", "$2", "$#", "$$", "$?", "[", "]", ";"]


def lengths(rng):
    """Target lengths of the long lines (buckets 10-19 and up), summing to what is left."""
    out = []
    for tens, n in enumerate(BUCKETS[1:], start=1):
        if tens * 10 <= LONGEST < tens * 10 + 10 and n == 1:
            out.append(LONGEST)
            continue
        out.extend(tens * 10 + (i * 10) // n for i in range(n))
    short_bytes = sum(len(t) * k for t, k in SHORT)
    want = BYTES - LINES - short_bytes
    i = 0
    while sum(out) < want:
        j = i % len(out)
        if out[j] % 10 < 9 and out[j] != LONGEST and out[j] + 1 < LONGEST:
            out[j] += 1
        i += 7
    while sum(out) > want:
        j = i % len(out)
        if out[j] % 10 > 0 and out[j] != LONGEST:
            out[j] -= 1
        i += 7
    rng.shuffle(out)
    return out


def word_counts(lens):
    short_words = sum(len(t.split()) * k for t, k in SHORT)
    want = WORDS - short_words
    counts = [max(1, round(n / 7.3)) for n in lens]
    i = 0
    while sum(counts) != want:
        j = i % len(counts)
        step = 1 if sum(counts) < want else -1
        w = counts[j] + step
        if 1 <= w and 2 * w - 1 + 1 <= lens[j] and 15 * w + 1 >= lens[j]:
            counts[j] = w
        i += 5
    return counts


def by_length(words):
    table = {}
    for w in words:
        table.setdefault(len(w), []).append(w)
    return table


PLAIN = by_length(VOCAB + list("axyni") + ["ls", "cp", "mv", "rm", "ln", "wc", "od", "dd"])
WITH_THE = by_length(THE_WORDS)


def word_of(rng, n, table):
    """A word of exactly n characters from `table`, or two joined by '.' or '/'."""
    if n in table:
        return rng.choice(table[n])
    for _ in range(100):
        a = rng.randrange(1, n - 1)
        if a in table:
            return rng.choice(table[a]) + rng.choice("./_") + word_of(rng, n - 1 - a, PLAIN)
    return "x" * n


def make_line(rng, length, words, with_the):
    """One line of exactly `length` characters and `words` words."""
    for _ in range(1000):
        indent = "\t" * rng.choice([0, 0, 0, 1, 1, 2]) if length > 12 else ""
        room = length - len(indent) - (words - 1)
        if room < words:
            indent, room = "", length - (words - 1)
        # Split `room` into `words` lengths around the mean, then pick words of those lengths.
        sizes = [room // words + (1 if k < room % words else 0) for k in range(words)]
        for _ in range(words):
            a, b = rng.randrange(words), rng.randrange(words)
            d = rng.randint(0, 3)
            if sizes[a] - d >= 1 and sizes[b] + d <= 24:
                sizes[a] -= d
                sizes[b] += d
        the_at = rng.randrange(words) if with_the else -1
        if with_the and sizes[the_at] < 3:
            continue
        picks = []
        for k, n in enumerate(sizes):
            if k == the_at:
                word = word_of(rng, n, WITH_THE) if n < 6 or n in WITH_THE else (
                    "the" + rng.choice("._/") + word_of(rng, n - 4, PLAIN))
            elif k == 0 and n == 1 and rng.random() < 0.5:
                word = "#"
            elif k > 0 and n <= 4 and rng.random() < 0.3:
                ops = [o for o in OPERATORS if len(o) == n]
                word = rng.choice(ops) if ops else word_of(rng, n, PLAIN)
            else:
                word = word_of(rng, n, PLAIN)
            picks.append(word)
        line = indent + " ".join(picks)
        if len(line) == length and len(line.split()) == words and ("the" in line) == with_the:
            return line
    raise SystemExit(f"cannot make a line of {length} chars and {words} words")


def main():
    rng = random.Random(1991)
    lens = lengths(rng)
    counts = word_counts(lens)
    the_lines = set(rng.sample(range(len(lens)), THE_LINES))
    long_lines, seen = [], set()
    for i, (n, w) in enumerate(zip(lens, counts)):
        line = make_line(rng, n, w, i in the_lines)
        while line in seen:
            line = make_line(rng, n, w, i in the_lines)
        seen.add(line)
        long_lines.append(line)
    short_lines = [t for t, k in SHORT for _ in range(k)]
    # Interleave as a script would: short closing lines spread among the long ones.
    lines = long_lines[:]
    for t in short_lines:
        lines.insert(rng.randrange(len(lines) + 1), t)
    text = "".join(line + "\n" for line in lines)

    assert len(lines) == LINES
    assert len(text.split()) == WORDS, len(text.split())
    assert len(text.encode()) == BYTES, len(text.encode())
    assert sum("the" in line for line in lines) == THE_LINES
    assert len(set(lines)) == DISTINCT, len(set(lines))
    hist = [0] * len(BUCKETS)
    for line in lines:
        hist[len(line) // 10] += 1
    assert hist == BUCKETS, hist
    assert max(len(line) for line in lines) == LONGEST
    out = sys.argv[1] if len(sys.argv) > 1 else "src/workloads/data/sort.src"
    with open(out, "w", encoding="ascii") as f:
        f.write(text)


if __name__ == "__main__":
    main()
