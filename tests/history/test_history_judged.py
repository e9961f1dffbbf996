#!/usr/bin/python3
"""test_history_judged.py — what `dpscale history changes` fails on: what is new.

  Record   CI's loop replayed through the real binary, one revision a run (import, then
           `changes --record`, as scripts/ci-history.sh): a 10% loss fails the one run that
           finds it, the runs after pass with the change listed as reported, and a second loss
           later fails once more. Without the marks (deleted from a copy) the same store still
           fails: the rule that kept CI red.
  Accept   `accept --rev REV` marks the series that hold REV: `changes` then passes, lists the change
           as accepted, and a loss after REV fails again; a commit id's prefix names its
           revision. An unknown revision, an ambiguous prefix, or a filter that leaves no series
           holding REV: one line, exit 2, the store unchanged.
"""
import hashlib
import json
import shutil
import sqlite3
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True
import synth  # noqa: E402
from synth import dpscale  # noqa: E402


def level(i, steps):
    """The speedup at revision i: 1.5, less 10% from each revision in `steps`."""
    return 1.5 * 0.9 ** sum(1 for s in steps if i >= s)


def revision_rows(i, steps, rev=None):
    rev = rev or synth.revision(i)
    return [synth.row("naive", rev, level(i, steps) * (1 + 0.002 * ((i + j) % 3)), run=j) for j in range(3)]


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.db = self.dir / "h.sqlite"

    def load(self, rows):
        p = self.dir / "rows.jsonl"
        synth.write_rows(p, rows)
        r = dpscale("history", "import", p, "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)

    def changes(self, *extra, db=None):
        r = dpscale("history", "changes", "--db", db or self.db, "--format", "json", *extra)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return r.returncode, json.loads(r.stdout), r.stderr

    def one_line_exit_2(self, r):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        return lines[0]


class Record(Scratch):
    def test_a_change_fails_the_run_that_found_it_and_then_stands(self):
        steps = (5, 12)
        codes, failed_at = [], []
        for i in range(18):
            self.load(revision_rows(i, steps))
            code, out, err = self.changes("--record")
            codes.append(code)
            if code:
                failed_at.append((i, [(f["revision"], f["direction"]) for f in out["failing"]]))
                self.assertIn("1 regression(s) recorded", err)
        # Each loss fails one run, the first that finds it (at least 3 revisions after it,
        # --min-size; when is the permutation test's), and no run after it.
        self.assertEqual([f for _, f in failed_at], [[("rev005", "regression")], [("rev012", "regression")]])
        self.assertEqual(codes.count(1), 2)
        self.assertTrue(7 <= failed_at[0][0] < 12 + 2 <= failed_at[1][0], failed_at)
        # The last run lists both changes, each as reported, and fails on neither.
        self.assertEqual([(c["revision"], c["marks"]) for c in out["changes"]],
                         [("rev005", ["reported"]), ("rev012", ["reported"])])
        self.assertEqual(out["failing"], [])
        # Control: the same store without its marks fails on the newest change, as before.
        copy = self.dir / "copy.sqlite"
        shutil.copy(self.db, copy)
        with sqlite3.connect(copy) as c:
            c.execute("DELETE FROM marks")
        code, out, _ = self.changes(db=copy)
        self.assertEqual((code, [f["revision"] for f in out["failing"]]), (1, ["rev012"]))

    def test_without_record_nothing_is_marked(self):
        self.load([r for i in range(16) for r in revision_rows(i, (5,))])
        for _ in range(2):
            code, out, _ = self.changes()
            self.assertEqual((code, [f["revision"] for f in out["failing"]]), (1, ["rev005"]))
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM marks").fetchone()[0], 0)


class Accept(Scratch):
    def test_an_accepted_change_stands_and_a_later_one_fails(self):
        self.load([r for i in range(16) for r in revision_rows(i, (5,))])
        self.assertEqual(self.changes()[0], 1)
        r = dpscale("history", "accept", "--rev", "rev005", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("rev005 accepted in 1 speedup series", r.stderr)
        code, out, _ = self.changes()
        self.assertEqual((code, out["failing"]), (0, []))
        self.assertEqual([(c["revision"], c["marks"]) for c in out["changes"]], [("rev005", ["accepted"])])
        md = dpscale("history", "changes", "--db", self.db)
        self.assertIn("| regression (accepted) |", md.stdout)
        # Accepted for speedup, not for throughput: that series still fails.
        self.assertEqual(self.changes("--metric", "throughput")[0], 1)
        # A loss after the accepted change is judged against the new level.
        self.load([r for i in range(16, 28) for r in revision_rows(i, (5, 20))])
        code, out, _ = self.changes()
        self.assertEqual((code, [(f["revision"], f["judged_from"]) for f in out["failing"]]),
                         (1, [("rev020", {"revision": "rev005", "kind": "accepted"})]))
        md = dpscale("history", "changes", "--db", self.db)
        self.assertIn("its newest change since rev005 (accepted), at rev020, is -10.0%", md.stdout)

    def test_a_commit_id_prefix_names_its_revision(self):
        rows = []
        for i in range(16):
            rev = dict(synth.revision(i), commit_id=hashlib.sha1(f"c{i}".encode()).hexdigest())
            rows += revision_rows(i, (5,), rev=rev)
        self.load(rows)
        cid = hashlib.sha1(b"c5").hexdigest()
        self.assertEqual(self.changes()[0], 1)
        r = dpscale("history", "accept", "--rev", cid[:8], "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("rev005 accepted in 1 speedup series", r.stderr)
        self.assertEqual(self.changes()[0], 0)

    def test_what_names_no_one_revision_is_refused(self):
        rows = []
        for i in range(8):
            # Two commit ids that share their first 8 digits.
            cid = ("abcdef12" + f"{i:032x}") if i in (2, 3) else hashlib.sha1(f"c{i}".encode()).hexdigest()
            rows += revision_rows(i, (), rev=dict(synth.revision(i), commit_id=cid))
        self.load(rows)
        before = synth.digest(self.db)
        line = self.one_line_exit_2(dpscale("history", "accept", "--rev", "nosuch", "--db", self.db))
        self.assertIn("no revision nosuch in the history", line)
        line = self.one_line_exit_2(dpscale("history", "accept", "--rev", "abcdef12", "--db", self.db))
        self.assertIn("abcdef12 names 2 revisions (rev002, rev003): give more of the commit id", line)
        line = self.one_line_exit_2(dpscale("history", "accept", "--rev", "rev004", "--mode", "bucketed", "--db", self.db))
        self.assertIn("no speedup series that the filters select holds revision rev004", line)
        self.assertEqual(synth.digest(self.db), before)


if __name__ == "__main__":
    unittest.main()
