#!/usr/bin/python3
"""test_diagnosis_charts.py — the diagnosis charts (9 where each epoch goes, 10 per rank) on the
fixture's records with the diagnosis fields added by hand: both are written through
`dpscale plot`; the bars hold the report's numbers (the breakdown sums to the epoch time, the
straggler's label and the overlap % are printed); a file without the fields skips both, with a
note, and still draws the others.

    DPSCALE_SOURCE_DIR=. DPSCALE_BIN=build/bin/dpscale /usr/bin/python3 tests/plots/test_diagnosis_charts.py
"""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plot_test_env import DPSCALE, FIXTURE, SOURCE  # noqa: E402,F401  (and the matplotlib skip)

from dpscale_plots.charts_diagnosis import breakdown  # noqa: E402
from dpscale_plots.points import Point  # noqa: E402


sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_plots import fixture_lines as records  # noqa: E402  the fixture's complete lines, as dicts


def with_diagnosis(recs):
    """Every data-parallel record gets the fields; naive K=2 of each model gets a straggler."""
    for r in recs:
        if "mode" not in r or r["mode"] == "single":  # failed-run lines carry no record
            continue
        k = r["world_size"]
        e = r["avg_epoch_s"]
        wait = r.get("comm_s") or r.get("exposed_comm_s") or 0.0
        r["per_rank_compute_s"] = [0.6 * e] * k
        r["per_rank_wait_s"] = [wait] * k
        r["loader_s"] = 0.05 * e
        r["bottleneck"] = "communication"
        r["straggler_rank"] = None
        r["diagnosis"] = "communication-bound: test"
        r["overlap_pct"] = 37.0 if r["mode"] != "naive" else 1.0
        if r["mode"] == "naive" and k == 2:
            r["per_rank_compute_s"][1] = 0.7 * e
            r["bottleneck"] = "straggler"
            r["straggler_rank"] = 1
    return recs


def plot(results, out):
    return subprocess.run([str(DPSCALE), "plot", str(results), "--out", str(out), "--python", sys.executable],
                          capture_output=True, text=True, timeout=300)


def svg_text(path):
    return " ".join(ET.parse(path).getroot().itertext())


class DiagnosisCharts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dpscale-diag-plots-"))
        cls.results = cls.tmp / "d.jsonl"
        cls.results.write_text("".join(json.dumps(r) + "\n" for r in with_diagnosis(records())))
        cls.proc = plot(cls.results, cls.tmp / "out")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_both_charts_written(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        for chart in ("chart9_time_breakdown", "chart10_per_rank"):
            for fmt in ("png", "svg"):
                self.assertTrue((self.tmp / "out" / f"{chart}.{fmt}").is_file(), self.proc.stdout)

    def test_labels_are_the_reports(self):
        text = svg_text(self.tmp / "out" / "chart9_time_breakdown.svg")
        self.assertIn("straggler (rank 1)", text)
        self.assertIn("overlap 37%", text)
        self.assertIn("communication", svg_text(self.tmp / "out" / "chart10_per_rank.svg"))

    def test_breakdown_sums_to_the_epoch(self):
        proc = subprocess.run([str(DPSCALE), "report", str(self.results), "--format", "json"],
                              capture_output=True, text=True, timeout=60)
        report = json.loads(proc.stdout)
        n = 0
        for d in report["points"]:
            if d["point"]["mode"] == "single" or not d["diagnosis"]["bottleneck"]:
                continue
            p = Point(d, report["point_schema"])
            parts = breakdown(p)
            self.assertTrue(all(v >= 0 for v in parts), parts)
            self.assertAlmostEqual(sum(parts), max(p.median("avg_epoch_s"), sum(parts[:4])), places=9)
            n += 1
        self.assertGreater(n, 0)

    def test_without_the_fields_both_are_skipped(self):
        proc = plot(FIXTURE, self.tmp / "plain")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("chart9_time_breakdown skipped", proc.stderr)
        self.assertIn("chart10_per_rank skipped", proc.stderr)
        self.assertTrue((self.tmp / "plain" / "chart1_epoch_time.svg").is_file())


if __name__ == "__main__":
    unittest.main()
