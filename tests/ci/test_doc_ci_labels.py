#!/usr/bin/env python3
"""test_doc_ci_labels.py — the pages that say which test labels CI requires to run name exactly
the labels `.ci/run` passes to scripts/ctest_skips.py's --must-run.

A page names them as a list of backticked CTest labels (`twonode`, `slurm` or `install`) in a
sentence that says "must"; every such list of three or more labels in docs/testing.md and
docs/ARCHITECTURE.md must hold the whole set and nothing else, and each page must have one. The
labels are those the tests' CMake files give (LABELS ...), so a list of option names is not read as
one, and a list in a sentence about something else (which labels are long) is left alone.

Run by CTest (label ci), or by hand from the source tree:
    python3 tests/ci/test_doc_ci_labels.py
"""
import os
import re
import tempfile
import unittest

import ci_tree
from ci_tree import ROOT

PAGES = ("docs/testing.md", "docs/ARCHITECTURE.md")

MUST_RUN = re.compile(r"--must-run\s+([a-z0-9_,]+)")
LABELS = re.compile(r"\bLABELS\s+\"?([a-z0-9_; ]+)")
# Three or more backticked words joined by commas, "or" or "and".
LIST = re.compile(r"`[a-z0-9_]+`(?:(?:,\s*|,?\s+(?:or|and)\s+)`[a-z0-9_]+`){2,}")


def must_run(root):
    """The --must-run labels of .ci/run, as a set; raises when there is no such option."""
    with open(os.path.join(root, ".ci", "run"), encoding="utf-8") as f:
        m = MUST_RUN.search(f.read())
    if not m:
        raise AssertionError(".ci/run passes no --must-run")
    return {l for l in m.group(1).split(",") if l}


def ctest_labels(root):
    """Every label a test's CMake file gives."""
    out = set()
    for d, _, names in os.walk(os.path.join(root, "tests")):
        if "CMakeLists.txt" in names:
            with open(os.path.join(d, "CMakeLists.txt"), encoding="utf-8") as f:
                for m in LABELS.finditer(f.read()):
                    out |= {w for w in re.split(r"[; ]+", m.group(1)) if w}
    return out


def label_lists(text, labels):
    """Every list of backticked CTest labels in a sentence of `text` that says "must", as sets
    (lists of other words left out)."""
    found = []
    for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z`(])", " ".join(text.split())):
        if "must" not in sentence:
            continue
        for m in LIST.finditer(sentence):
            words = set(re.findall(r"`([a-z0-9_]+)`", m.group(0)))
            if words <= labels:
                found.append(words)
    return found


def problems(root, pages=PAGES):
    want, labels = must_run(root), ctest_labels(root)
    bad = []
    for page in pages:
        with open(os.path.join(root, page), encoding="utf-8") as f:
            lists = label_lists(f.read(), labels)
        if not lists:
            bad.append(f"{page}: names no list of the must-run labels ({', '.join(sorted(want))})")
        for l in lists:
            if l != want:
                missing, extra = sorted(want - l), sorted(l - want)
                bad.append(f"{page}: a list of must-run labels lacks {missing} and adds {extra}")
    return bad


class NegativeControl(unittest.TestCase):
    """A page naming six of seven labels, or one more, fails; the seven in another order pass."""

    def tree(self, d, page_text):
        os.makedirs(os.path.join(d, ".ci"))
        os.makedirs(os.path.join(d, "tests", "a"))
        with open(os.path.join(d, ".ci", "run"), "w") as f:
            f.write("step x python3 scripts/ctest_skips.py build --must-run twonode,slurm,kit\n")
        with open(os.path.join(d, "tests", "a", "CMakeLists.txt"), "w") as f:
            f.write('set_tests_properties(a PROPERTIES LABELS "twonode;mpi")\n'
                    "set_tests_properties(b PROPERTIES LABELS slurm)\nset_tests_properties(c PROPERTIES LABELS kit)\n"
                    "set_tests_properties(d PROPERTIES LABELS long)\n")
        with open(os.path.join(d, "page.md"), "w") as f:
            f.write(page_text)

    def check(self, text):
        with tempfile.TemporaryDirectory() as d:
            self.tree(d, text)
            return problems(d, ("page.md",))

    def test_the_set_in_any_order_passes(self):
        self.assertEqual(self.check("It must fail when `kit`, `twonode` or\n`slurm` skipped; options `--a`, `--b`, `--c`. "
                                    "The long ones: `twonode`, `slurm`, `long`."), [])

    def test_one_missing_fails(self):
        got = self.check("These must run: `twonode` and `slurm`, or `mpi`, `twonode`, `slurm`.")
        self.assertEqual(len(got), 1)
        self.assertIn("lacks ['kit'] and adds ['mpi']", got[0])

    def test_one_more_fails(self):
        got = self.check("the must-run labels (`twonode`, `slurm`, `kit`, `long`)")
        self.assertEqual(len(got), 1)
        self.assertIn("adds ['long']", got[0])

    def test_no_list_fails(self):
        got = self.check("nothing about labels")
        self.assertEqual(len(got), 1)
        self.assertIn("names no list", got[0])


class Tree(unittest.TestCase):
    def test_the_pages_name_the_must_run_labels(self):
        ci_tree.assert_none_found(self, problems(ROOT))


if __name__ == "__main__":
    ci_tree.main()
