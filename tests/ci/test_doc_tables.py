#!/usr/bin/env python3
"""test_doc_tables.py — every table in the docs that says where it comes from still comes from
there: the numbers in it are what the command it names prints today, from the committed file it
names.

A table names its source with a marker comment on the line before it:

    <!-- rendered by: dpscale report experiments/cluster/data/cluster-ring.jsonl -->
    | Model | Mode | ...

The command runs from the source tree (no shell; `dpscale` is the built binary, `python3` this
interpreter, every other word as written), and every row of the table — the table and code-block
lines after the marker, up to the first line that is neither (blank lines between two tables
included) — must be a line of its output, compared with runs of spaces made one. A doc may leave
rows out (a table trimmed to the rows it discusses); it may not change one. The markdown's own
`|---|` separator rows and the code fences are skipped.

Run by CTest (label ci), or by hand from the source tree:
    DPSCALE_BIN=build/bin/dpscale python3 tests/ci/test_doc_tables.py
    python3 tests/ci/test_doc_tables.py --list       # the markers and their tables' sizes
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("DPSCALE_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))
DPSCALE = os.environ.get("DPSCALE_BIN", os.path.join(ROOT, "build", "bin", "dpscale"))

MARKER = re.compile(r"^<!-- rendered by: (.+?) -->\s*$")
SEPARATOR = re.compile(r"^\|[\s:|-]+\|$")  # |---|--:|


def docs(root):
    """The Markdown files the check reads: README.md, bench/README.md, configs/README.md and
    everything under docs/ and experiments/ (each experiment's README renders its tables from its
    own data)."""
    out = [os.path.join(root, p) for p in ("README.md", "bench/README.md", "configs/README.md")]
    for top in ("docs", "experiments"):
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            out += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    return [p for p in out if os.path.isfile(p)]


def normal(line):
    return " ".join(line.split())


def marked_tables(path):
    """[(line number of the marker, command, [table rows])] of one Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        rows, in_code = [], False
        for line in lines[i + 1:]:
            s = line.strip()
            if s.startswith("```"):
                if in_code:
                    in_code = False
                    continue
                in_code = True
                continue
            if in_code:
                if s:
                    rows.append(s)
                continue
            if s.startswith("|"):
                rows.append(s)
            elif s:
                break
        found.append((i + 1, m.group(1), [r for r in rows if not SEPARATOR.match(r)]))
    return found


def render(command, root, dpscale):
    """The command's output lines (normalised), run from `root`; raises on a failed command."""
    argv = shlex.split(command)
    if argv and argv[0] == "dpscale":
        argv[0] = dpscale
    elif argv and argv[0] == "python3":
        argv[0] = sys.executable
    r = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"`{command}` exited {r.returncode}: {r.stderr.strip()[:300]}")
    return {normal(l) for l in r.stdout.splitlines()}


def mismatches(root, dpscale, paths=None):
    """['FILE:LINE: ...'] for every marked table row the named command does not print."""
    bad = []
    for path in paths if paths is not None else docs(root):
        rel = os.path.relpath(path, root)
        for line, command, rows in marked_tables(path):
            if not rows:
                bad.append(f"{rel}:{line}: the marker for `{command}` is followed by no table")
                continue
            try:
                printed = render(command, root, dpscale)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
                bad.append(f"{rel}:{line}: {e}")
                continue
            for row in rows:
                if normal(row) not in printed:
                    bad.append(f"{rel}:{line}: `{command}` prints no row {row[:140]}")
    return bad


class NegativeControl(unittest.TestCase):
    """A table copied from the command passes; one changed number, a missing file or a marker
    without a table fails."""

    def test_a_changed_number_is_found(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "rows.txt"), "w") as f:
                f.write("| a | 1.00 |\n| b |  2.50 |\n")
            good = os.path.join(d, "good.md")
            bad = os.path.join(d, "bad.md")
            cmd = "python3 -c \"print(open('rows.txt').read(), end='')\""
            with open(good, "w") as f:
                f.write(f"text\n<!-- rendered by: {cmd} -->\n| a | 1.00 |\n|---|---|\n\n| b | 2.50 |\nafter\n")
            with open(bad, "w") as f:
                f.write(f"<!-- rendered by: {cmd} -->\n| a | 1.00 |\n| b | 2.51 |\n")
            self.assertEqual(mismatches(d, DPSCALE, [good]), [])
            got = mismatches(d, DPSCALE, [bad])
            self.assertEqual(len(got), 1)
            self.assertIn("2.51", got[0])
            gone = os.path.join(d, "gone.md")
            with open(gone, "w") as f:
                f.write("<!-- rendered by: python3 no_such_script.py -->\n| a |\n<!-- rendered by: python3 -c 1 -->\nno table\n")
            got = mismatches(d, DPSCALE, [gone])
            self.assertEqual(len(got), 2)
            self.assertIn("exited", got[0])
            self.assertIn("no table", got[1])


class Tree(unittest.TestCase):
    def test_every_marked_table_is_what_its_command_prints(self):
        if not os.access(DPSCALE, os.X_OK):
            self.skipTest(f"no dpscale at {DPSCALE} (set DPSCALE_BIN)")
        n = sum(len(marked_tables(p)) for p in docs(ROOT))
        self.assertGreaterEqual(n, 7, "the docs' tables have lost their markers")
        bad = mismatches(ROOT, DPSCALE)
        for line in bad:
            print(line)
        self.assertEqual(bad, [], f"{len(bad)} table row(s) differ from what their command prints")


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        for p in docs(ROOT):
            for line, command, rows in marked_tables(p):
                print(f"{os.path.relpath(p, ROOT)}:{line}: {len(rows)} rows: {command}")
        sys.exit(0)
    unittest.main(verbosity=2)
