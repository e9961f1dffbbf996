#!/usr/bin/python3
"""test_history_cli.py — `dpscale history` through the real binary:

  Store     add is idempotent (the same file twice, or a copy of it, is one row per run), and so
            is add of a `dpscale ab --out` directory, whose a.jsonl and b.jsonl go under
            --rev-a and --rev-b; rows
            of one revision added under another time are refused; export then import into a
            fresh store gives the same export (no duplicates when imported twice); a store of
            schema 1 is migrated keeping its rows; show prints each series in commit order; a
            transformer's sweep is kept and --model filters it by its preset or spec.
  Changes   a history whose newest change is a 10% regression exits 1 naming the revision, an
            improvement exits 0, a regression below --min-effect exits 0, disturbed runs are left
            out (a disturbed dip is no change), one machine's runs never join another's series.
  BadInput  a missing store, a bad row file, a non-commit --rev without --rev-time, an A/B
            directory without both files or without a revision for each half: one line, exit 2.
"""
import json
import os
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

sys.path.insert(0, str(synth.SRC / "harness" / "history"))
from dpscale_history import store as storemod  # noqa: E402


def ab_dir(parent):
    """An A/B session's --out directory: a.jsonl the CI baseline, b.jsonl the same runs started an
    hour later (other runs: the run key holds the start time)."""
    d = Path(parent) / "ab"
    d.mkdir()
    shutil.copy(synth.BASELINE, d / "a.jsonl")
    with open(synth.BASELINE) as f:
        texts = f.read().splitlines()
    lines = []
    for text in texts:
        j = json.loads(text)
        j["run"]["start_time"] = j["run"]["start_time"].replace("T19:", "T20:").replace("T18:", "T21:")
        j["timestamp"] = str(j.get("timestamp")) + "-b"
        lines.append(json.dumps(j))
    (d / "b.jsonl").write_text("\n".join(lines) + "\n")
    return d


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.db = self.dir / "h.sqlite"

    def count(self, db=None):
        with sqlite3.connect(db or self.db) as c:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]

    def import_rows(self, rows, db=None):
        p = self.dir / "rows.jsonl"
        synth.write_rows(p, rows)
        r = dpscale("history", "import", p, "--db", db or self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def one_line_exit_2(self, r):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("dpscale: "), lines[0])
        return lines[0]


class Store(Scratch):
    def test_add_twice_and_a_copy_are_one_row_per_run(self):
        r = dpscale("history", "add", synth.BASELINE, "--rev", "b1", "--rev-time", "2026-01-01T00:00:00Z", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        n = self.count()
        self.assertGreater(n, 60)  # the baseline's runs (reruns of disturbed runs replace the lines they rerun)
        self.assertIn(f"{n} run(s) added", r.stderr)
        copy = self.dir / "copy.jsonl"
        shutil.copy(synth.BASELINE, copy)
        r = dpscale("history", "add", copy, synth.BASELINE, "--rev", "b1", "--rev-time", "2026-01-01T00:00:00Z", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"0 run(s) added to {self.db}, {2 * n} already held", r.stderr)
        self.assertEqual(self.count(), n)

    def test_add_of_an_ab_directory_files_each_half_under_its_revision(self):
        d = ab_dir(self.dir)
        args = ("history", "add", d, "--rev-a", "base", "--rev-a-time", "2026-01-01T00:00:00Z",
                "--rev-b", "cand", "--rev-b-time", "2026-01-02T00:00:00Z", "--db", self.db)
        r = dpscale(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        n = self.count()
        self.assertGreater(n, 120)
        self.assertEqual(n % 2, 0)
        self.assertIn(f"{n} run(s) added", r.stderr)
        exported = dpscale("history", "export", "--db", self.db)
        rows = [json.loads(l) for l in exported.stdout.splitlines()]
        by_rev = {}
        for row in rows:
            by_rev.setdefault(row["revision"]["name"], set()).add(row["source"])
        self.assertEqual(sorted(by_rev), ["base", "cand"])
        self.assertEqual(by_rev["base"], {str(d / "a.jsonl")})
        self.assertEqual(by_rev["cand"], {str(d / "b.jsonl")})
        self.assertEqual(sum(1 for row in rows if row["revision"]["name"] == "base"), n // 2)
        # Idempotent as the single-file add: the directory again adds nothing.
        r = dpscale(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"0 run(s) added to {self.db}, {n} already held", r.stderr)
        self.assertEqual(self.count(), n)
        # Control: the halves' revisions swapped, into a fresh store: a.jsonl is then filed under
        # cand (the flags decide, not the files' names).
        other = self.dir / "other.sqlite"
        r = dpscale("history", "add", d, "--rev-a", "cand", "--rev-a-time", "2026-01-02T00:00:00Z",
                    "--rev-b", "base", "--rev-b-time", "2026-01-01T00:00:00Z", "--db", other)
        self.assertEqual(r.returncode, 0, r.stderr)
        swapped = [json.loads(l) for l in dpscale("history", "export", "--db", other).stdout.splitlines()]
        self.assertEqual({row["source"] for row in swapped if row["revision"]["name"] == "cand"}, {str(d / "a.jsonl")})

    def test_add_makes_the_store_and_its_directories(self):
        # A fresh checkout may have no results/ yet: the store's directories are made, as a sweep's --out.
        db = self.dir / "a" / "b" / "h.sqlite"
        r = dpscale("history", "add", synth.BASELINE, "--rev", "b1", "--rev-time", "2026-01-01T00:00:00Z", "--db", db)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = dpscale("history", "export", "--db", db, "--out", self.dir / "c" / "rows.jsonl")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(len((self.dir / "c" / "rows.jsonl").read_text().splitlines()), 60)

    def test_a_revision_held_with_another_time_is_refused(self):
        self.import_rows([synth.row("naive", synth.revision(0), 1.0)])
        moved = synth.revision(0)
        moved["commit_time"] = "2030-01-01T00:00:00Z"
        p = self.dir / "moved.jsonl"
        synth.write_rows(p, [synth.row("naive", moved, 1.0, run=1)])
        line = self.one_line_exit_2(dpscale("history", "import", p, "--db", self.db))
        self.assertIn("revision rev000 is held with time", line)
        self.assertEqual(self.count(), 1)

    def test_export_import_round_trip_without_duplicates(self):
        rows = synth.step_history(8, 4, 1.0, 0.9, modes=("single", "naive", "bucketed"))
        self.import_rows(rows)
        first = dpscale("history", "export", "--db", self.db)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(len(first.stdout.splitlines()), len(rows))
        (self.dir / "export.jsonl").write_text(first.stdout)
        other = self.dir / "other.sqlite"
        for _ in range(2):
            r = dpscale("history", "import", self.dir / "export.jsonl", "--db", other)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.count(other), len(rows))
        again = dpscale("history", "export", "--db", other)
        self.assertEqual(again.stdout, first.stdout)

    def test_schema_1_is_migrated_keeping_its_rows(self):
        # A store as the first schema made it: only MIGRATIONS[0], user_version 1.
        c = sqlite3.connect(self.db)
        for s in storemod.MIGRATIONS[0]:
            c.execute(s)
        c.execute(f"PRAGMA application_id = {storemod.APPLICATION_ID}")
        c.execute("PRAGMA user_version = 1")
        c.commit()
        c.close()
        self.import_rows(synth.step_history(4, 2, 1.0, 1.0))
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA user_version").fetchone()[0], storemod.SCHEMA_VERSION)
            cols = [r[1] for r in c.execute("PRAGMA table_info(runs)")]
        self.assertIn("run_delay_share", cols)
        self.assertEqual(self.count(), 12)

    def test_show_lists_revisions_in_commit_order(self):
        rows = synth.step_history(5, 3, 1.2, 1.0)
        rows.reverse()  # added newest first: the order is commit time's, not the adding's
        self.import_rows(rows)
        r = dpscale("history", "show", "--db", self.db, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        series = json.loads(r.stdout)["series"]
        self.assertEqual(len(series), 1)
        self.assertEqual([s["revision"] for s in series[0]["steps"]], [f"rev{i:03d}" for i in range(5)])
        self.assertAlmostEqual(series[0]["steps"][0]["median"], 1.2, delta=0.01)
        self.assertAlmostEqual(series[0]["steps"][4]["median"], 1.0, delta=0.01)
        md = dpscale("history", "show", "--db", self.db, "--mode", "naive")
        self.assertIn("| rev004 |", md.stdout)
        none = dpscale("history", "show", "--db", self.db, "--mode", "bucketed")
        self.assertIn("no series match", none.stdout)


    def test_a_transformer_sweep_is_kept_and_filtered_by_its_model(self):
        # The transformer's sweep (gpt-tiny and a gpt:... spec): --model takes either name as the
        # trainers do (it was checked as an MLP's and refused both); an unknown one is refused.
        gpt = synth.SRC / "experiments" / "transformer" / "data" / "gpt-cpu.jsonl"
        r = dpscale("history", "add", gpt, "--rev", "gptrev", "--rev-time", "2026-01-01T00:00:00Z", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        for model, series in (("gpt-tiny", 5), ("gpt:layers=4,dim=256,heads=4,vocab=8192,context=128", 5)):
            with self.subTest(model=model):
                r = dpscale("history", "show", "--db", self.db, "--model", model, "--format", "json")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(len(json.loads(r.stdout)["series"]), series)
        self.one_line_exit_2(dpscale("history", "show", "--db", self.db, "--model", "gpt-huge"))

    def test_points_that_describe_alike_are_series_told_apart(self):
        # The baseline as measured, and a copy whose runs were given --samples 16384 (an option
        # that is no sweep axis, so Point::describe does not show it): two points per mode.
        lines = []
        for text in open(synth.BASELINE):
            j = json.loads(text)
            argv = j["run"]["argv"]
            argv[argv.index("--samples") + 1] = "16384"
            lines.append(json.dumps(j))
        (self.dir / "more.jsonl").write_text("\n".join(lines) + "\n")
        for f in (synth.BASELINE, self.dir / "more.jsonl"):
            r = dpscale("history", "add", f, "--rev", "b", "--rev-time", "2026-01-01T00:00:00Z", "--db", self.db)
            self.assertEqual(r.returncode, 0, r.stderr)
        shown = json.loads(dpscale("history", "show", "--db", self.db, "--format", "json", "--mode", "naive").stdout)
        self.assertEqual(sorted(s["label"] for s in shown["series"]),
                         ["small naive K=2 50:300 (samples=16384)", "small naive K=2 50:300 (samples=8192)"])
        self.assertEqual(len({s["point_key"] for s in shown["series"]}), 2)


class Changes(Scratch):
    def changes(self, *extra):
        r = dpscale("history", "changes", "--db", self.db, "--format", "json", *extra)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return r.returncode, json.loads(r.stdout)

    def test_a_newest_regression_exits_1_naming_its_revision(self):
        self.import_rows(synth.step_history(20, 14, 1.5, 1.35, modes=("naive", "bucketed")))
        code, out = self.changes()
        self.assertEqual(code, 1)
        self.assertEqual(len(out["changes"]), 2)
        for c in out["changes"]:
            self.assertEqual((c["revision"], c["direction"]), ("rev014", "regression"))
            self.assertAlmostEqual(c["effect_pct"], -10.0, delta=0.6)
            self.assertLessEqual(c["interval_pct"][0], c["effect_pct"])
            self.assertGreaterEqual(c["interval_pct"][1], c["effect_pct"])
            self.assertLessEqual(c["p"], 0.01)
        self.assertEqual(len(out["failing"]), 2)
        md = dpscale("history", "changes", "--db", self.db)
        self.assertEqual(md.returncode, 1)
        self.assertIn("its newest change, at rev014, is -10.0%", md.stdout)
        # Below the minimum effect the same change is listed and does not fail.
        code, out = self.changes("--min-effect", "12")
        self.assertEqual((code, len(out["changes"]), out["failing"]), (0, 2, []))

    def test_an_improvement_exits_0(self):
        self.import_rows(synth.step_history(20, 10, 1.35, 1.5))
        code, out = self.changes()
        self.assertEqual(code, 0)
        self.assertEqual([(c["revision"], c["direction"]) for c in out["changes"]], [("rev010", "improvement")])

    def test_a_recovered_regression_passes(self):
        rows = [synth.row("naive", synth.revision(i), (1.5 if i < 8 or i >= 16 else 1.3) * (1 + 0.002 * (i % 3)), run=j)
                for i in range(24) for j in range(3)]
        self.import_rows(rows)
        code, out = self.changes()
        self.assertEqual([c["revision"] for c in out["changes"]], ["rev008", "rev016"])
        self.assertEqual(code, 0)  # the newest change is the recovery

    def test_disturbed_runs_are_left_out(self):
        rows = synth.step_history(20, 99, 1.5, 1.5)
        # Revisions 12..19 measured only beside a busy neighbour: far slower, but disturbed.
        rows = [r for r in rows if r["revision"]["name"] < "rev012"]
        rows += [synth.row("naive", synth.revision(i), 1.1, run=j, disturbed="round 1: others 1.0 CPU")
                 for i in range(12, 20) for j in range(3)]
        self.import_rows(rows)
        code, out = self.changes()
        self.assertEqual((code, out["changes"]), (0, []))
        # Negative control: counted as undisturbed (--include-disturbed), the same runs are a regression.
        r = dpscale("history", "changes", "--db", self.db, "--include-disturbed")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("its newest change, at rev012", r.stdout)
        self.assertIn("disturbed runs included", r.stdout)

    def test_machines_are_series_of_their_own(self):
        rows = synth.step_history(20, 99, 1.5, 1.5)
        rows += [synth.row("naive", synth.revision(i), 1.2, run=j, machine="Other CPU x8 CPUs, no GPU")
                 for i in range(10, 20) for j in range(3)]
        self.import_rows(rows)
        code, out = self.changes()
        self.assertEqual((code, out["changes"], out["series"]), (0, [], 2))


class BadInput(Scratch):
    def test_missing_store(self):
        for cmd in ("show", "changes", "export"):
            # Checked as the command line is parsed, as every dpscale option that names a file to read.
            line = self.one_line_exit_2(dpscale("history", cmd, "--db", self.dir / "none.sqlite"))
            self.assertIn("--db: cannot open", line)
            self.assertIn("none.sqlite", line)
        self.assertFalse((self.dir / "none.sqlite").exists())

    def test_bad_row_file_names_its_line(self):
        p = self.dir / "rows.jsonl"
        good = synth.row("naive", synth.revision(0), 1.0)
        bad = dict(good, metrics=dict(good["metrics"], speedup="fast"))
        synth.write_rows(p, [good, bad])
        line = self.one_line_exit_2(dpscale("history", "import", p, "--db", self.db))
        self.assertIn(f"{p}:2: metrics: 'speedup' has the wrong type", line)
        self.assertFalse(self.db.exists())  # checked before the store is made

    def test_rev_not_a_commit_needs_its_time(self):
        line = self.one_line_exit_2(dpscale("history", "add", synth.BASELINE, "--rev", "no-such-rev-xyz", "--db", self.db))
        self.assertIn("--rev no-such-rev-xyz is not a commit of the repository here: give its time with --rev-time", line)
        line = self.one_line_exit_2(dpscale("history", "add", synth.BASELINE, "--rev", "x", "--rev-time", "soon",
                                            "--db", self.db))
        self.assertIn("--rev-time: 'soon' is not an ISO 8601 time", line)
        self.assertFalse(self.db.exists())

    def test_ab_directory_needs_both_files_and_both_revisions(self):
        d = ab_dir(self.dir)
        revs = ["--rev-a", "a1", "--rev-a-time", "2026-01-01T00:00:00Z", "--rev-b", "b1", "--rev-b-time", "2026-01-02T00:00:00Z"]
        line = self.one_line_exit_2(dpscale("history", "add", d, "--rev-a", "a1", "--rev-a-time", "2026-01-01T00:00:00Z",
                                            "--db", self.db))
        self.assertIn("--rev-b is required with an A/B directory", line)
        line = self.one_line_exit_2(dpscale("history", "add", d, "--rev-a", "no-such-rev-xyz", "--rev-b", "b1",
                                            "--rev-b-time", "2026-01-02T00:00:00Z", "--db", self.db))
        self.assertIn("--rev-a no-such-rev-xyz is not a commit of the repository here: give its time with --rev-a-time", line)
        line = self.one_line_exit_2(dpscale("history", "add", d, "--rev", "x", "--rev-time", "2026-01-01T00:00:00Z",
                                            "--db", self.db))
        self.assertIn("name its two builds' revisions with --rev-a and --rev-b", line)
        line = self.one_line_exit_2(dpscale("history", "add", d, synth.BASELINE, *revs, "--db", self.db))
        self.assertIn("add it alone", line)
        line = self.one_line_exit_2(dpscale("history", "add", synth.BASELINE, *revs, "--db", self.db))
        self.assertIn("--rev-a and --rev-b go with a directory of dpscale ab", line)
        (d / "b.jsonl").unlink()
        line = self.one_line_exit_2(dpscale("history", "add", d, *revs, "--db", self.db))
        self.assertIn("holds no b.jsonl", line)
        self.assertFalse(self.db.exists())

    def test_bad_options(self):
        for args in (["changes", "--alpha", "2"], ["changes", "--min-effect", "0"], ["show", "--metric", "joy"],
                     ["changes", "--permutations", "5"], ["add", str(synth.BASELINE)], ["html"],
                     ["show", "--mode", "naiv"]):
            with self.subTest(args=args):
                self.one_line_exit_2(dpscale("history", *args, "--db", self.db))
        self.assertFalse(self.db.exists())

    def test_a_results_file_that_is_not_one(self):
        p = self.dir / "x.jsonl"
        p.write_text('{"hello": 1}\n')
        self.one_line_exit_2(dpscale("history", "add", p, "--rev", "x", "--rev-time", "2026-01-01T00:00:00Z", "--db", self.db))
        self.assertFalse(self.db.exists())


if __name__ == "__main__":
    unittest.main()
