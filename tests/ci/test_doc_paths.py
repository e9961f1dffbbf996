#!/usr/bin/env python3
"""test_doc_paths.py — every path of this tree that a page names exists: a file or folder
written out in README.md, docs/, experiments/, configs/ or bench/ Markdown (`results/…`,
`experiments/…`, `scripts/…`, `configs/…`, `docs/…`, `tests/…`, `.ci/…`, `bench/…`), and each
relative Markdown link's target (with its #anchor, a heading of the page it names). A page that
moves a file along with its experiment and forgets one mention fails here, naming the page, line
and path.

An experiment's data/ folder is not read (its Markdown is what its runs wrote). A path that stands
for something not in the tree is left alone: a pattern or placeholder
(`<config>`, `*`, `{a,b}`, `N`, `OUT`, `$VAR`, `...`), and users' output, a file directly in
`results/` (`results/x.jsonl`, `results/history.sqlite`: results/ is where sweeps write, and holds
nothing committed).

Run by CTest (label ci), or by hand from the source tree:
    python3 tests/ci/test_doc_paths.py
"""
import os
import re
import tempfile
import unittest

import ci_tree
from ci_tree import ROOT

PATH = re.compile(r"(?<![\w./~$-])(?:results|experiments|scripts|configs|docs|tests|\.ci|bench)/[^\s`'\"()\[\]|,;:]*")
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|…|(?:^|/|-)(?:N|NN|OUT|DIR|FILE|X|PCT|NAME|name|K)(?:[/.-]|$)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def pages(root):
    """The Markdown pages the check reads."""
    out = [os.path.join(root, "README.md")]
    for top in ("docs", "experiments", "configs", "bench"):
        for d, dirs, names in os.walk(os.path.join(root, top)):
            # An experiment's data/ is what its runs wrote, paths of their day included.
            dirs[:] = sorted(x for x in dirs if not (top == "experiments" and x == "data"))
            out += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    return [p for p in out if os.path.isfile(p)]


def anchors(path):
    """The GitHub anchors of a page's headings."""
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#+\s+(.*)", line)
            if m:
                t = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
                out.add(t.replace(" ", "-"))
    return out


def stands_for_output(p):
    """Users' output or a pattern, not a file of the tree."""
    if PLACEHOLDER.search(p):
        return True
    return p.startswith("results/") and p.count("/") == 1


def problems(root, paths=None):
    bad = []
    for page in paths if paths is not None else pages(root):
        rel = os.path.relpath(page, root)
        with open(page, encoding="utf-8") as f:
            lines = f.read().splitlines()
        in_code = False
        for n, line in enumerate(lines, 1):
            if FENCE.match(line):
                in_code = not in_code
            for m in PATH.finditer(line):
                p = m.group(0).split("#")[0].rstrip(".")
                if not p or p.endswith("/") and p.count("/") == 1:
                    continue  # a top folder alone
                if stands_for_output(p):
                    continue
                if not os.path.exists(os.path.join(root, p)):
                    bad.append(f"{rel}:{n}: no {p}")
            if in_code:
                continue
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(full):
                    bad.append(f"{rel}:{n}: a link to no file: {target}")
                elif anchor and full.endswith(".md") and anchor not in anchors(full):
                    bad.append(f"{rel}:{n}: a link to no heading: {target}")
    return bad


class NegativeControl(unittest.TestCase):
    """A page naming a moved file or a missing heading fails; patterns and users' output pass."""

    def test_missing_paths_and_links_are_found(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "experiments", "ab", "data"))
            with open(os.path.join(d, "experiments", "ab", "data", "runs.jsonl"), "w") as f:
                f.write("{}\n")
            with open(os.path.join(d, "other.md"), "w") as f:
                f.write("# A heading\n")
            page = os.path.join(d, "page.md")
            with open(page, "w") as f:
                f.write("Data in `experiments/ab/data/runs.jsonl`, written to `results/x.jsonl` or\n"
                        "`results/ab-<config>/`, sessions `OUT/sessions/idle-N`, `experiments/ab/data/idle-N.jsonl`.\n"
                        "[ok](other.md#a-heading) [ok](experiments/ab/data/)\n"
                        "Moved: `results/ab/runs.jsonl`. [gone](missing.md) [no anchor](other.md#nothing)\n"
                        "```\nexperiments/ab/gone.sh  [not a link](nowhere.md)\n```\n")
            got = problems(d, [page])
            self.assertEqual(len(got), 4, got)
            self.assertIn("page.md:4: no results/ab/runs.jsonl", got[0])
            self.assertIn("no file: missing.md", got[1])
            self.assertIn("no heading: other.md#nothing", got[2])
            self.assertIn("page.md:6: no experiments/ab/gone.sh", got[3])


class Tree(unittest.TestCase):
    def test_every_named_path_exists(self):
        bad = problems(ROOT)
        ci_tree.assert_none_found(self, bad, f"{len(bad)} path(s) or link(s) name nothing in the tree")


if __name__ == "__main__":
    ci_tree.main(problems)
