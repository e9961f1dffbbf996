#!/usr/bin/python3
"""test_history_bad_rows.py — no row out of its range is stored, and one stored never stops the
history:

  Refused   `import` of a file holding one row that no run can make (a negative epoch time,
            throughput or speedup, an efficiency that is not the speedup over K, K of 0, a share
            below 0, NaN, a steal above 100%, a commit id that is none) among good rows: one line
            naming the file, line and field, exit 2, and the store's bytes unchanged — none of
            the file's good rows either (all or nothing).
  Held      a store that already holds bad runs (written into the file by hand, as an older
            dpscale let through): `show`, `changes`, `html` and `export` run, each bad run is
            named once in a warning on stderr and left out with the A/B pairs it is half of, and
            the good runs give what they give without it.
"""
import hashlib
import json
import math
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True
import synth  # noqa: E402
from synth import dpscale  # noqa: E402


def edited(row, path, value):
    """A copy of `row` with the field at `path` (dotted) set to `value`."""
    r = json.loads(json.dumps(row))
    *parents, last = path.split(".")
    obj = r
    for p in parents:
        obj = obj[p]
    obj[last] = value
    return r


# Each bad row: the field, its value, and the words the refusal must hold.
BAD = [
    ("metrics.epoch_s", -1.0, "metrics.epoch_s must be a positive number (got -1.0)"),
    ("metrics.throughput", 0.0, "metrics.throughput must be a positive number (got 0.0)"),
    ("metrics.speedup", -1.0, "metrics.speedup must be a positive number (got -1.0)"),
    ("metrics.efficiency", 0.9, "metrics.efficiency 0.9 is not metrics.speedup"),
    ("metrics.comm_share", -0.1, "metrics.comm_share must be a non-negative number (got -0.1)"),
    ("metrics.overlap_pct", 140.0, "metrics.overlap_pct must be a non-negative number up to 100 (got 140.0)"),
    ("metrics.run_delay_share", float("nan"), "metrics.run_delay_share must be a non-negative number (got nan)"),
    ("point.world_size", 0, "point.world_size must be at least 1 (got 0)"),
    ("point.mode", "", "'mode' must be one line of text"),
    ("state.steal_pct", 150.0, "state.steal_pct must be a non-negative number up to 100 (got 150.0)"),
    ("run.repeat", -1, "run.repeat must not be negative (got -1)"),
    ("revision.commit_id", "HEAD", "revision.commit_id 'HEAD' is not a full git commit id"),
    ("revision.name", "a b", "revision.name 'a b' is not one word"),
    ("describe", "two\nlines", "'describe' must be one line of text"),
]


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.db = self.dir / "h.sqlite"

    def runs(self):
        with sqlite3.connect(self.db) as c:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]


class Refused(Scratch):
    def test_each_bad_row_is_refused_before_the_store_is_touched(self):
        synth.write_rows(self.dir / "held.jsonl", [synth.row("naive", synth.revision(0), 1.5, run=j) for j in range(3)])
        r = dpscale("history", "import", self.dir / "held.jsonl", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        before = synth.digest(self.db)
        good = synth.row("naive", synth.revision(1), 1.4)
        self.assertIsNotNone(good["state"])  # the template carries the machine's state
        for field, value, words in BAD:
            with self.subTest(field=field):
                p = self.dir / "bad.jsonl"
                # The bad row third, between good ones of another revision: all or nothing.
                rows = [synth.row("naive", synth.revision(1), 1.4, run=j) for j in range(2)]
                rows += [edited(good, field, value)]
                rows += [synth.row("bucketed", synth.revision(1), 1.6, run=j) for j in range(2)]
                synth.write_rows(p, rows)
                r = dpscale("history", "import", p, "--db", self.db)
                self.assertEqual(r.returncode, 2, r.stderr)
                lines = [l for l in r.stderr.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(f"{p}:3: ", lines[0])
                self.assertIn(words, lines[0])
                self.assertEqual(synth.digest(self.db), before, "the store was touched")
        self.assertEqual(self.runs(), 3)

    def test_a_good_row_of_every_kind_is_taken(self):
        # Control: the same rows, none edited, go in, and at the edges of the ranges.
        rows = [synth.row(m, synth.revision(1), 1.4, run=j) for m in ("single", "naive", "bucketed") for j in range(2)]
        rows.append(edited(edited(synth.row("naive", synth.revision(2), 1.4), "metrics.overlap_pct", 100.0),
                           "metrics.comm_share", 0.0))
        synth.write_rows(self.dir / "ok.jsonl", rows)
        r = dpscale("history", "import", self.dir / "ok.jsonl", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.runs(), 7)


class Held(Scratch):
    def poisoned(self):
        """A history of 20 revisions (naive 1.5, bucketed 1.6, a 10% loss of naive from rev012),
        three runs each, then two of naive's runs at rev003 and one at rev015 made negative in
        the file itself; returns the bad runs' keys."""
        rows = synth.step_history(20, 12, 1.5, 1.35)
        rows += [synth.row("bucketed", synth.revision(i), 1.6, run=j) for i in range(20) for j in range(3)]
        synth.write_rows(self.dir / "rows.jsonl", rows)
        r = dpscale("history", "import", self.dir / "rows.jsonl", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        bad = [synth.row("naive", synth.revision(3), 1, run=0)["run_key"],
               synth.row("naive", synth.revision(3), 1, run=1)["run_key"],
               synth.row("naive", synth.revision(15), 1, run=2)["run_key"]]
        with sqlite3.connect(self.db) as c:
            for k in bad:
                self.assertEqual(c.execute("UPDATE runs SET speedup = -1.0, efficiency = -0.5, epoch_s = -2.0 "
                                           "WHERE run_key = ?", (k,)).rowcount, 1)
        return bad

    def warned(self, r, bad):
        """The warnings: one per bad run, each naming it."""
        lines = [l for l in r.stderr.splitlines() if l.startswith("dpscale: warning: ")]
        self.assertEqual(len(lines), len(bad), r.stderr)
        for k in bad:
            self.assertEqual(sum(k in l for l in lines), 1, (k, r.stderr))
        self.assertTrue(all("left out" in l and str(self.db) in l for l in lines), lines)
        self.assertIn("small naive K=2 50:300 at rev003", r.stderr)

    def test_show_changes_html_and_export_run_without_the_bad_runs(self):
        bad = self.poisoned()
        r = dpscale("history", "show", "--db", self.db, "--format", "json", "--mode", "naive")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.warned(r, bad)
        [s] = json.loads(r.stdout)["series"]
        runs = {st["revision"]: st["runs"] for st in s["steps"]}
        self.assertEqual((runs["rev003"], runs["rev015"], runs["rev004"]), (1, 2, 3))
        self.assertTrue(all(v > 0 for st in s["steps"] for v in st["values"]))

        r = dpscale("history", "changes", "--db", self.db, "--format", "json")
        self.assertEqual(r.returncode, 1, r.stderr)  # naive's loss at rev012 is still found
        self.warned(r, bad)
        out = json.loads(r.stdout)
        self.assertEqual([(c["revision"], c["direction"]) for c in out["changes"]], [("rev012", "regression")])
        self.assertAlmostEqual(out["changes"][0]["effect_pct"], -10.0, delta=0.6)

        r = dpscale("history", "html", self.dir / "page", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.warned(r, bad)
        self.assertEqual((self.dir / "page" / "index.html").read_text().count('<figure class="series"'), 2)

        r = dpscale("history", "export", "--db", self.db, "--out", self.dir / "export.jsonl")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.warned(r, bad)
        exported = [json.loads(l) for l in (self.dir / "export.jsonl").read_text().splitlines()]
        self.assertEqual(len(exported), 120 - 3)
        self.assertFalse({row["run_key"] for row in exported} & set(bad))
        # What export writes, import takes: the bad runs do not travel.
        r = dpscale("history", "import", self.dir / "export.jsonl", "--db", self.dir / "copy.sqlite")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_many_bad_runs_are_counted_past_the_first_ten(self):
        self.poisoned()
        with sqlite3.connect(self.db) as c:
            c.execute("UPDATE runs SET throughput = 0 WHERE run_key IN (SELECT r.run_key FROM runs r "
                      "JOIN points p ON p.id = r.point_id WHERE p.mode = 'bucketed')")
        r = dpscale("history", "show", "--db", self.db, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.startswith("dpscale: warning: ")]
        self.assertEqual(len(lines), 11, r.stderr)
        self.assertEqual(lines[-1], f"dpscale: warning: {self.db}: 53 more left out")  # 60 + 3 bad, 10 named
        self.assertEqual([s["describe"] for s in json.loads(r.stdout)["series"]], ["small naive K=2 50:300"])

    def test_a_pair_with_a_bad_half_is_left_out(self):
        rows_a = [synth.row("naive", {"name": "anchor", "commit_id": None, "commit_time": "2025-12-31T00:00:00Z"},
                            1.5, run=j) for j in range(3)]
        rows_b = [synth.row("naive", synth.revision(1), 1.5, run=j) for j in range(3)]
        for r in rows_b:
            r["run_key"] = hashlib.sha256(("b" + r["run_key"]).encode()).hexdigest()[:16]
        pa, pb = self.dir / "a.jsonl", self.dir / "b.jsonl"
        synth.write_rows(pa, rows_a)
        synth.write_rows(pb, rows_b)
        r = subprocess.run(["/usr/bin/python3", str(synth.SRC / "harness" / "history" / "history.py"), "add", "--db",
                            str(self.db), "--rows", str(pa), "--b-rows", str(pb)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with sqlite3.connect(self.db) as c:
            c.execute("UPDATE runs SET epoch_s = -1 WHERE run_key = ?", (rows_b[1]["run_key"],))
            c.execute("UPDATE pairs SET throughput_ratio = -2 WHERE pair_key = ?",
                      (rows_a[2]["run_key"] + rows_b[2]["run_key"],))
        r = dpscale("history", "show", "--db", self.db, "--format", "json", "--metric", "throughput")
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = [l for l in r.stderr.splitlines() if l.startswith("dpscale: warning: ")]
        self.assertEqual(len(warnings), 3, r.stderr)  # the run, its pair, the pair of a bad ratio
        self.assertIn("one of its runs is left out", warnings[1])
        self.assertIn("throughput_ratio must be a positive number (got -2.0)", warnings[2])
        [s] = [x for x in json.loads(r.stdout)["series"] if x["anchor"]]
        self.assertEqual(s["steps"][0]["runs"], 1)
        self.assertTrue(math.isclose(s["steps"][0]["median"], 1.0))


if __name__ == "__main__":
    unittest.main()
