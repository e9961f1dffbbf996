#!/usr/bin/env python3
"""test_experiments.py — every experiment is one folder that says what it asks and what it found:
each folder under experiments/ has a README.md with a "**What it asks.**" and a "**What it
found.**" paragraph and a "**Files.**" paragraph naming what is in the folder, and
experiments/README.md's index lists exactly the folders there are. (That the README's tables are
what its scripts print from its data/ is test_doc_tables.py's check; that the paths it names
exist, test_doc_paths.py's.)

Run by CTest (label ci), or by hand from the source tree:
    python3 tests/ci/test_experiments.py
"""
import os
import re
import tempfile
import unittest

import ci_tree
from ci_tree import ROOT

PARAGRAPHS = ("**What it asks.**", "**What it found.**", "**Files.**")
INDEX_ROW = re.compile(r"^\| \[([\w.-]+)\]\(\1/README\.md\) \|")


def problems(root):
    top = os.path.join(root, "experiments")
    bad = []
    folders = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)))
    for d in folders:
        readme = os.path.join(top, d, "README.md")
        if not os.path.isfile(readme):
            bad.append(f"experiments/{d}: no README.md")
            continue
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        for p in PARAGRAPHS:
            if not any(line.startswith(p) for line in text.splitlines()):
                bad.append(f"experiments/{d}/README.md: no paragraph opening {p}")
    index = os.path.join(top, "README.md")
    if not os.path.isfile(index):
        return bad + ["experiments/README.md: no index"]
    with open(index, encoding="utf-8") as f:
        listed = [m.group(1) for m in map(INDEX_ROW.match, f.read().splitlines()) if m]
    for d in sorted(set(folders) - set(listed)):
        bad.append(f"experiments/README.md: experiments/{d} is not in the index")
    for d in sorted(set(listed) - set(folders)):
        bad.append(f"experiments/README.md: the index lists experiments/{d}, which is not there")
    for d in sorted({d for d in listed if listed.count(d) > 1}):
        bad.append(f"experiments/README.md: experiments/{d} is listed twice")
    return bad


class NegativeControl(unittest.TestCase):
    """A complete tree passes; a folder without its README or a paragraph, an unlisted folder and
    a listed folder that is gone each fail, named."""

    def tree(self, d, readmes, index_rows):
        for name, text in readmes.items():
            os.makedirs(os.path.join(d, "experiments", name))
            if text is not None:
                with open(os.path.join(d, "experiments", name, "README.md"), "w") as f:
                    f.write(text)
        with open(os.path.join(d, "experiments", "README.md"), "w") as f:
            f.write("# experiments\n\n| experiment | what it asks |\n|---|---|\n")
            f.write("".join(f"| [{n}]({n}/README.md) | why |\n" for n in index_rows))

    def test_complete_tree_passes_and_each_gap_is_named(self):
        good = "# x\n\n**What it asks.** Q?\n\n**What it found.** A.\n\n**Files.** `run.sh`.\n"
        with tempfile.TemporaryDirectory() as d:
            self.tree(d, {"a": good, "b": good}, ["a", "b"])
            self.assertEqual(problems(d), [])
        with tempfile.TemporaryDirectory() as d:
            self.tree(d, {"a": good, "b": None, "c": good.replace("**What it found.** A.\n", ""),
                          "e": good}, ["a", "b", "c", "d", "a"])
            got = problems(d)
            self.assertEqual(got, [
                "experiments/b: no README.md",
                "experiments/c/README.md: no paragraph opening **What it found.**",
                "experiments/README.md: experiments/e is not in the index",
                "experiments/README.md: the index lists experiments/d, which is not there",
                "experiments/README.md: experiments/a is listed twice",
            ])


class Tree(unittest.TestCase):
    def test_each_experiment_is_one_described_folder(self):
        ci_tree.assert_none_found(self, problems(ROOT))


if __name__ == "__main__":
    ci_tree.main()
