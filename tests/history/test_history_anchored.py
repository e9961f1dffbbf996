#!/usr/bin/python3
"""test_history_anchored.py — the anchored series of `dpscale history`: an A/B session's pairs
(B's run over A's of the same round) and the series "METRIC vs ANCHOR" made of them.

  Pairs      adding a `dpscale ab --out` directory stores one pair per round and point, once (the
             directory again adds none); a store of schema 2 is migrated to the current one keeping its rows.
  Values     a revision's value is the median of its sessions' log ratios, pooled over sessions
             (numbers worked by hand, an even count's middle two taken geometrically), each
             anchor a series of its own; a pair
             with a disturbed half is left out (and counted with --include-disturbed); speedup's
             ratio is B's paired speedup over A's.
  Changes    a 10% loss of B against the anchor, under session drift of ±15% that moves both
             builds alike, is found at its revision by `changes` on the anchored series; the same
             history without the loss has no anchored change; the page draws the anchored series.
"""
import hashlib
import json
import math
import os
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
from test_history_cli import ab_dir  # noqa: E402

sys.path.insert(0, str(synth.SRC / "harness" / "history"))
from dpscale_history import store as storemod  # noqa: E402

HISTORY_PY = synth.SRC / "harness" / "history" / "history.py"
ANCHOR = {"name": "anchor", "commit_id": None, "commit_time": "2025-12-31T00:00:00Z"}


def half(session, side, rev, thr, speedup=None, mode="naive", disturbed=None):
    """The rows of one build of one session: round i has throughput thr[i] (and speedup[i])."""
    rows = []
    for i, t in enumerate(thr):
        r = synth.row(mode, rev, 1.0, run=i, disturbed=disturbed.get(i) if disturbed else None)
        r["metrics"]["throughput"] = t
        if speedup is not None:
            r["metrics"]["speedup"] = speedup[i]
            r["metrics"]["efficiency"] = speedup[i] / r["point"]["world_size"]
        r["source"] = f"/sessions/{session}/{side}.jsonl"
        r["run_key"] = hashlib.sha256(f"{session}|{side}|{mode}|{i}".encode()).hexdigest()[:16]
        rows.append(r)
    return rows


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.db = self.dir / "h.sqlite"
        self.n = 0

    def add_session(self, a_rows, b_rows):
        self.n += 1
        pa, pb = self.dir / f"a{self.n}.jsonl", self.dir / f"b{self.n}.jsonl"
        synth.write_rows(pa, a_rows)
        synth.write_rows(pb, b_rows)
        r = subprocess.run(["/usr/bin/python3", str(HISTORY_PY), "add", "--db", str(self.db), "--rows", str(pa),
                            "--b-rows", str(pb)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stderr

    def pairs(self, db=None):
        with sqlite3.connect(db or self.db) as c:
            return c.execute("SELECT count(*) FROM pairs").fetchone()[0]

    def anchored(self, *extra, metric="throughput"):
        r = dpscale("history", "show", "--db", self.db, "--format", "json", "--metric", metric, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [s for s in json.loads(r.stdout)["series"] if s["anchor"]]


class Pairs(Scratch):
    def test_an_ab_directory_stores_its_pairs_once(self):
        d = ab_dir(self.dir)
        args = ("history", "add", d, "--rev-a", "base", "--rev-a-time", "2026-01-01T00:00:00Z",
                "--rev-b", "cand", "--rev-b-time", "2026-01-02T00:00:00Z", "--db", self.db)
        r = dpscale(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = sqlite3.connect(self.db).execute("SELECT count(*) FROM runs").fetchone()[0]
        # b.jsonl is a.jsonl started later: every B run pairs with A's of its round and point.
        self.assertEqual(self.pairs(), runs // 2)
        self.assertIn(f"; {runs // 2} A/B pair(s) added", r.stderr)
        with sqlite3.connect(self.db) as c:
            ratios = [v for (v,) in c.execute("SELECT throughput_ratio FROM pairs")]
            revs = c.execute("SELECT DISTINCT a.name, b.name FROM pairs q JOIN revisions a ON a.id = q.anchor_id "
                             "JOIN revisions b ON b.id = q.revision_id").fetchall()
        self.assertEqual(set(ratios), {1.0})  # the same throughputs: B over A is 1 in every round
        self.assertEqual(revs, [("base", "cand")])
        r = dpscale(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("; 0 A/B pair(s) added", r.stderr)
        self.assertEqual(self.pairs(), runs // 2)
        # Results files added with --rev store runs and no pairs (control).
        other = self.dir / "other.sqlite"
        r = dpscale("history", "add", d / "a.jsonl", "--rev", "x", "--rev-time", "2026-01-01T00:00:00Z", "--db", other)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.pairs(other), 0)

    def test_schema_2_is_migrated_keeping_its_rows(self):
        c = sqlite3.connect(self.db)
        for step in storemod.MIGRATIONS[:2]:
            for s in step:
                c.execute(s)
        c.execute(f"PRAGMA application_id = {storemod.APPLICATION_ID}")
        c.execute("PRAGMA user_version = 2")
        c.commit()
        c.close()
        p = self.dir / "old.jsonl"
        synth.write_rows(p, synth.step_history(4, 2, 1.0, 1.0))
        # Written at schema 2 by hand: the rows go in through the schema-2 tables only.
        c = sqlite3.connect(self.db)
        self.assertNotIn("pairs", [r[0] for r in c.execute("SELECT name FROM sqlite_master")])
        c.close()
        r = dpscale("history", "import", p, "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], storemod.SCHEMA_VERSION)
            self.assertEqual(storemod.SCHEMA_VERSION, 4)
            self.assertEqual(c.execute("SELECT count(*) FROM runs").fetchone()[0], 12)
            self.assertEqual(c.execute("SELECT count(*) FROM pairs").fetchone()[0], 0)
        self.add_session(half(1, "a", ANCHOR, [100.0]), half(1, "b", synth.revision(9), [90.0]))
        self.assertEqual(self.pairs(), 1)


class Values(Scratch):
    def test_the_value_is_the_median_of_the_log_ratios_pooled_over_sessions(self):
        rev = synth.revision(1)
        # Session 1: ratios 1.1, 0.9, 1.2 -> median 1.1.
        self.add_session(half(1, "a", ANCHOR, [100.0, 200.0, 100.0]), half(1, "b", rev, [110.0, 180.0, 120.0]))
        [s] = self.anchored()
        self.assertEqual(s["quantity"], "throughput vs anchor")
        self.assertEqual(len(s["steps"]), 1)
        self.assertAlmostEqual(s["steps"][0]["median"], 1.1, places=12)
        # Session 2 of the same revision: ratio 1.0 -> pooled 0.9, 1.0, 1.1, 1.2: the middle two's
        # logs averaged, sqrt(1.0 * 1.1) (the arithmetic median would be 1.05).
        self.add_session(half(2, "a", ANCHOR, [50.0]), half(2, "b", rev, [50.0]))
        [s] = self.anchored()
        self.assertEqual(s["steps"][0]["runs"], 4)
        self.assertAlmostEqual(s["steps"][0]["median"], math.sqrt(1.1), places=12)
        # The plain series is B's throughput itself, untouched: median of 110, 180, 120, 50.
        r = dpscale("history", "show", "--db", self.db, "--format", "json", "--metric", "throughput")
        plain = [x for x in json.loads(r.stdout)["series"] if not x["anchor"]]
        self.assertEqual([st["median"] for st in plain[0]["steps"]], [100.0, 115.0])

    def test_each_anchor_is_a_series_of_its_own(self):
        # Catches the anchored series keyed without their anchor (machine and point alone): the
        # two anchors' pairs then merge into one series of 4 pairs, its value 0.95.
        rev = synth.revision(1)
        other = {"name": "anchor2", "commit_id": None, "commit_time": "2025-12-30T00:00:00Z"}
        self.add_session(half(1, "a", ANCHOR, [100.0, 200.0, 100.0]), half(1, "b", rev, [110.0, 180.0, 120.0]))
        self.add_session(half(2, "a", other, [100.0]), half(2, "b", rev, [80.0]))
        got = sorted((s["quantity"], s["anchor"]["revision"], s["steps"][0]["runs"], round(s["steps"][0]["median"], 12))
                     for s in self.anchored())
        self.assertEqual(got, [("throughput vs anchor", "anchor", 3, 1.1), ("throughput vs anchor2", "anchor2", 1, 0.8)])
        # Against each anchor its own changes: a loss against anchor2 alone is no loss against anchor.
        r = dpscale("history", "show", "--db", self.db, "--metric", "throughput")
        self.assertEqual(r.stdout.count("— throughput vs anchor2 —"), 1)
        self.assertEqual(r.stdout.count("— throughput vs anchor —"), 1)

    def test_a_disturbed_half_leaves_its_pair_out(self):
        rev = synth.revision(1)
        self.add_session(half(1, "a", ANCHOR, [100.0, 100.0, 100.0], disturbed={2: "round 3: load"}),
                         half(1, "b", rev, [90.0, 95.0, 150.0]))
        [s] = self.anchored()
        st = s["steps"][0]
        self.assertEqual((st["runs"], st["disturbed"]), (2, 1))
        self.assertAlmostEqual(st["median"], math.sqrt(0.90 * 0.95), places=12)
        [s] = self.anchored("--include-disturbed")
        self.assertAlmostEqual(s["steps"][0]["median"], 0.95, places=12)

    def test_speedup_ratio_is_b_speedup_over_a_speedup(self):
        rev = synth.revision(1)
        self.add_session(half(1, "a", ANCHOR, [100.0, 100.0, 100.0], speedup=[1.5, 1.6, 1.4]),
                         half(1, "b", rev, [100.0, 100.0, 100.0], speedup=[1.2, 1.76, 1.54]))
        [s] = self.anchored(metric="speedup")
        self.assertEqual(s["quantity"], "speedup vs anchor")
        self.assertAlmostEqual(s["steps"][0]["median"], 1.1, places=12)  # ratios 0.8, 1.1, 1.1
        [t] = self.anchored(metric="throughput")
        self.assertAlmostEqual(t["steps"][0]["median"], 1.0, places=12)
        self.assertEqual(self.anchored(metric="epoch_s"), [])


class Changes(Scratch):
    def history(self, loss):
        """12 B revisions, one session each, 3 rounds; the session moves both builds by a drift of
        up to ±15% (the machine hours apart), B loses `loss` from revision 6 on."""
        for i in range(12):
            drift = 1.0 + 0.15 * math.sin(2.3 * i + 0.7)
            b_factor = (1.0 - loss) if i >= 6 else 1.0
            wobble = [1.0, 1.002, 0.998]
            a = half(i, "a", ANCHOR, [1000.0 * drift * w for w in wobble])
            b = half(i, "b", synth.revision(i), [1000.0 * drift * b_factor * w * (1 + 0.003 * ((i % 3) - 1))
                                                  for w in wobble])
            self.add_session(a, b)

    def changes(self):
        r = dpscale("history", "changes", "--db", self.db, "--metric", "throughput", "--format", "json")
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return r.returncode, json.loads(r.stdout)

    def test_a_loss_against_the_anchor_is_found_at_its_revision(self):
        self.history(0.10)
        rc, out = self.changes()
        anchored = [c for c in out["changes"] if "vs anchor" in c["label"]]
        self.assertEqual(len(anchored), 1, out)
        self.assertEqual(anchored[0]["revision"], "rev006")
        self.assertAlmostEqual(anchored[0]["effect_pct"], -10.0, delta=1.0)
        self.assertEqual(anchored[0]["direction"], "regression")
        self.assertEqual(rc, 1)
        # B's own throughput series, drift and loss together, shows nothing: what the anchor buys.
        self.assertEqual([c for c in out["changes"] if "vs anchor" not in c["label"]], [])
        # The page draws it as a series of its own, its change line at rev006.
        r = dpscale("history", "html", self.dir / "page", "--db", self.db, "--metric", "throughput")
        self.assertEqual(r.returncode, 0, r.stderr)
        page = (self.dir / "page" / "index.html").read_text()
        self.assertRegex(page, r'data-series="[^"]*— throughput vs anchor"[^>]*data-changes="rev006"')

    def test_a_flat_anchored_history_has_no_change(self):
        self.history(0.0)
        rc, out = self.changes()
        self.assertEqual([c for c in out["changes"] if "vs anchor" in c["label"]], [])


if __name__ == "__main__":
    unittest.main()
