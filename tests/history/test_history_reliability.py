#!/usr/bin/python3
"""test_history_reliability.py — the store under the ways CI treats it, through `dpscale history`:

  Concurrent   4 processes add at once to one new store (four slices of the CI baseline, each
               overlapping the next): every run is there once, as the four added one by one to
               stores of their own hold them, and PRAGMA integrity_check is ok.
  Killed       `kill -9` of an add midway (DPSCALE_TEST_HISTORY_PAUSE holds it inside its
               transaction, half the rows written): integrity_check ok, none of that file's rows
               there; the same add afterwards puts all of them there. (With a commit per row
               instead of one transaction the test fails: the killed add leaves half.) And the
               kill of an A/B session's add after its runs, before its pairs
               (DPSCALE_TEST_HISTORY_PAUSE_AT=pairs): neither runs nor pairs there; added again,
               all of both.
  Refused      a corrupt file, a text file, random bytes, another program's SQLite database and a
               history of a newer schema, as --db of add, show and changes: one line, exit 2,
               the file's bytes unchanged.
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True
import synth  # noqa: E402
from synth import dpscale  # noqa: E402
from test_history_cli import ab_dir  # noqa: E402

sys.path.insert(0, str(synth.SRC / "harness" / "history"))
from dpscale_history import store as storemod  # noqa: E402


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.db = self.dir / "h.sqlite"

    def keys(self, db=None):
        with sqlite3.connect(db or self.db) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            return [r[0] for r in c.execute("SELECT run_key FROM runs")]


class Concurrent(Base):
    def test_four_adds_at_once_keep_every_run_once(self):
        # Four results files cut from the CI baseline, each overlapping the next by ten lines
        # (the same runs, so the same run keys), added at once to one new store.
        lines = synth.BASELINE.read_text().splitlines(keepends=True)
        files = []
        for w in range(4):
            p = self.dir / f"w{w}.jsonl"
            p.write_text("".join(lines[w * 20:w * 20 + 30]))
            files.append(p)
        rev = ["--rev", "b1", "--rev-time", "2026-01-01T00:00:00Z"]
        # What each file holds, added alone to a store of its own.
        expected = set()
        for w, p in enumerate(files):
            r = dpscale("history", "add", p, *rev, "--db", self.dir / f"alone{w}.sqlite")
            self.assertEqual(r.returncode, 0, r.stderr)
            expected |= set(self.keys(self.dir / f"alone{w}.sqlite"))
        procs = [subprocess.Popen([synth.BIN, "history", "add", str(p), *rev, "--db", str(self.db)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in files]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        keys = self.keys()
        self.assertEqual(len(keys), len(set(keys)), "a run stored twice")
        self.assertEqual(set(keys), expected)
        # Every run counted once across the four: the runs added sum to the runs held.
        added = sum(int(err.split(" run(s)")[0].split()[-1]) for _, err in outs)
        self.assertEqual(added, len(expected))
        self.assertGreater(sum("already held" in err for _, err in outs), 0)  # the overlaps met


class Killed(Base):
    def rows_file(self, n_revs=40):
        rows = [synth.row(mode, synth.revision(i), 1.2, run=j)
                for i in range(n_revs) for mode in ("naive", "interleaved", "bucketed") for j in range(4)]
        p = self.dir / "big.jsonl"
        synth.write_rows(p, rows)
        return p, rows

    def test_kill_9_midway_leaves_all_or_none(self):
        self.assertEqual(subprocess.run([synth.BIN, "history", "import", str(self.rows_file(2)[0]), "--db",
                                         str(self.db)], capture_output=True).returncode, 0)
        before = set(self.keys())
        path, rows = self.rows_file()
        written = self.kill_at_pause([synth.BIN, "history", "import", str(path), "--db", str(self.db)], {},
                                     "its midpoint")
        # The hook holds the add midway: some of its rows written inside its transaction, not all.
        self.assertTrue(0 < written < len(rows), written)
        self.assertEqual(set(self.keys()), before, "a killed add left some of its rows")
        r = dpscale("history", "import", path, "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(set(self.keys()), before | {r["run_key"] for r in rows})


    def kill_at_pause(self, args, env_extra, where):
        """Runs `args` with the history's pause hook, SIGKILLs dpscale where the hook holds it, and
        returns how many rows the add had written inside its transaction by then."""
        marker = self.dir / "paused"
        env = dict(os.environ, DPSCALE_TEST_HISTORY_PAUSE=str(marker), **env_extra)
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while not marker.exists() and time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        self.assertTrue(marker.exists(), f"the add never reached {where}")
        time.sleep(0.2)  # the marker's text is written just after it is made
        python_pid, written = map(int, marker.read_text().split())
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        for _ in range(100):  # the Python child dies with dpscale (its guard's death signal)
            try:
                os.kill(python_pid, 0)
                time.sleep(0.1)
            except ProcessLookupError:
                break
        else:
            self.fail("the Python side outlived a killed dpscale")
        return written

    def pairs(self):
        with sqlite3.connect(self.db) as c:
            return c.execute("SELECT count(*) FROM pairs").fetchone()[0]

    def test_kill_9_between_the_runs_and_the_pairs_leaves_none(self):
        # Catches a session's pairs stored after its transaction's commit instead of inside it:
        # the kill then leaves every run of the session and none of its pairs.
        d = ab_dir(self.dir)
        args = [synth.BIN, "history", "add", str(d), "--rev-a", "base", "--rev-a-time", "2026-01-01T00:00:00Z",
                "--rev-b", "cand", "--rev-b-time", "2026-01-02T00:00:00Z", "--db", str(self.db)]
        runs_written = self.kill_at_pause(args, {"DPSCALE_TEST_HISTORY_PAUSE_AT": "pairs"}, "its pairs")
        self.assertGreater(runs_written, 120)  # every run of both halves written, in the transaction
        self.assertEqual((len(self.keys()), self.pairs()), (0, 0), "a killed add left runs without their pairs")
        r = subprocess.run(args[:-2] + ["--db", str(self.db)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((len(self.keys()), self.pairs()), (runs_written, runs_written // 2))


class Refused(Base):
    def other_program_db(self):
        p = self.dir / "other.sqlite"
        c = sqlite3.connect(p)
        c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        c.execute("INSERT INTO notes (text) VALUES ('not yours')")
        c.commit()
        c.close()
        return p, "an SQLite database of another program"

    def healthy_history(self, name):
        """A history of 300 runs in one file (WAL folded in), to be damaged."""
        p = self.dir / name
        rows = [synth.row("naive", synth.revision(i), 1.1, run=j) for i in range(30) for j in range(10)]
        synth.write_rows(self.dir / "r.jsonl", rows)
        self.assertEqual(dpscale("history", "import", self.dir / "r.jsonl", "--db", p).returncode, 0)
        with sqlite3.connect(p) as c:
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.execute("PRAGMA journal_mode = DELETE")
        return p

    def damaged_history(self):
        p = self.healthy_history("damaged.sqlite")
        data = bytearray(p.read_bytes())
        page = int.from_bytes(data[16:18], "big")
        self.assertGreater(len(data), 6 * page)
        for k in (2, 3, 4, 5):  # the b-tree page headers of four pages
            data[k * page:k * page + 12] = bytes(random.Random(k).randrange(256) for _ in range(12))
        p.write_bytes(bytes(data))
        return p, "a damaged database"

    def newer_history(self):
        p = self.dir / "newer.sqlite"
        synth.write_rows(self.dir / "r1.jsonl", [synth.row("naive", synth.revision(0), 1.1)])
        self.assertEqual(dpscale("history", "import", self.dir / "r1.jsonl", "--db", p).returncode, 0)
        with sqlite3.connect(p) as c:
            c.execute(f"PRAGMA user_version = {storemod.SCHEMA_VERSION + 1}")
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return p, f"history schema {storemod.SCHEMA_VERSION + 1} is newer than this dpscale reads"

    def text_file(self):
        p = self.dir / "notes.txt"
        p.write_text("a shopping list\n")
        return p, "not an SQLite database"

    def random_bytes(self):
        p = self.dir / "noise.bin"
        p.write_bytes(bytes(random.Random(2).randrange(256) for _ in range(8192)))
        return p, "not an SQLite database"

    def truncated_history(self):
        p = self.healthy_history("truncated.sqlite")
        data = p.read_bytes()
        p.write_bytes(data[:len(data) // 3])
        return p, "dpscale history"  # damaged or unreadable: either words name the file

    def test_each_is_one_line_exit_2_and_left_as_it_was(self):
        rows = self.dir / "add.jsonl"
        synth.write_rows(rows, [synth.row("naive", synth.revision(0), 1.0)])
        for make in (self.text_file, self.random_bytes, self.other_program_db, self.damaged_history,
                     self.newer_history, self.truncated_history):
            path, words = make()
            before = synth.digest(path)
            for args in (["import", rows], ["add", synth.BASELINE, "--rev", "x", "--rev-time", "2026-01-01T00:00:00Z"],
                         ["show"], ["changes"], ["export"]):
                with self.subTest(file=make.__name__, cmd=args[0]):
                    r = dpscale("history", *args, "--db", path)
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    lines = [l for l in r.stderr.splitlines() if l.strip()]
                    self.assertEqual(len(lines), 1, r.stderr)
                    self.assertIn(str(path), lines[0])
                    if make != self.truncated_history:
                        self.assertIn(words, lines[0])
                    self.assertEqual(synth.digest(path), before, "the file was changed")


if __name__ == "__main__":
    unittest.main()
