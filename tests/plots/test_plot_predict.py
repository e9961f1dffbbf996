#!/usr/bin/python3
"""test_plot_predict.py — plots/plot_predict.py on real predict JSON (CTest: plot_predict).

`dpscale predict` (the binary: $DPSCALE_BIN) predicts from docs/figures/cpu-run.jsonl and
validates against it; the plotter must write both charts as PNG and SVG with their titles, the
knee marker where a row names a knee, one measured dot per validated point, and refuse bad input
with exit 2 and one line. Exit 77 (skip) without matplotlib.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("DPSCALE_SOURCE_DIR", HERE.parent.parent))
PLOT = SOURCE / "plots" / "plot_predict.py"
DPSCALE = Path(os.environ.get("DPSCALE_BIN", SOURCE / "build" / "bin" / "dpscale"))
RUN = SOURCE / "docs" / "figures" / "cpu-run.jsonl"


def dpscale_json(args, path):
    out = subprocess.run([str(DPSCALE), "predict", *args, "--format", "json"], capture_output=True,
                         text=True, check=True).stdout
    path.write_text(out)
    return json.loads(out)


class PlotPredict(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        t = Path(cls.tmp.name)
        cls.pred = dpscale_json(["--from", str(RUN)], t / "pred.json")
        cls.val = dpscale_json(["--validate", str(RUN)], t / "val.json")
        cls.caps = dpscale_json(["--recommend-cap", "--from", str(RUN), "--models", "medium,large"],
                                t / "caps.json")
        cls.out = t / "charts"
        cls.proc = subprocess.run(
            [sys.executable, str(PLOT), "--predict", str(t / "pred.json"), "--validate", str(t / "val.json"),
             "--caps", str(t / "caps.json"), "--caps-validate", str(t / "val.json"), "--out", str(cls.out)],
            capture_output=True, text=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_both_charts_written(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        for stem, word in [("predict_scaling", "efficiency E(K)"), ("predict_caps", "Bucket cap")]:
            png = (self.out / f"{stem}.png").read_bytes()
            self.assertTrue(png.startswith(b"\x89PNG") and len(png) > 30_000, stem)
            self.assertIn(word, (self.out / f"{stem}.svg").read_text(), stem)
        self.assertEqual(sorted(Path(p).name for p in self.proc.stdout.split()),
                         sorted(["predict_scaling.png", "predict_scaling.svg", "predict_caps.png",
                                 "predict_caps.svg"]))

    def test_inputs_hold_what_is_drawn(self):
        # The knee and the measured points come from predict's JSON: at least one knee to mark,
        # one measured point per validated DP point, and caps rows with exactly one best per series.
        self.assertTrue(any(r["knee"] is not None for r in self.pred))
        self.assertEqual(len(self.val["points"]), 15)
        for model in ("medium", "large"):
            self.assertEqual(sum(r["best"] for r in self.caps if r["model"] == model), 1)

    def test_chart7_draws_the_predicted_curve(self):
        # plot_results.py --predict-caps: the model's curve on chart 7 beside the fixture's sweep.
        fixture = HERE / "fixture.jsonl"
        with tempfile.TemporaryDirectory() as t:
            t = Path(t)
            report = subprocess.run([str(DPSCALE), "report", str(fixture), "--format", "json"],
                                    capture_output=True, text=True, check=True).stdout
            (t / "report.json").write_text(report)
            dpscale_json(["--recommend-cap", "--from", str(fixture), "--models", "large", "--link", "pcie4",
                          "--world-sizes", "2,4"], t / "caps.json")
            label = "predicted (dpscale predict)"
            for extra, want in ((["--predict-caps", str(t / "caps.json")], True), ([], False)):
                out = t / ("with" if want else "without")
                r = subprocess.run([sys.executable, str(SOURCE / "plots" / "plot_results.py"), str(t / "report.json"),
                                    "--out", str(out), "--format", "svg", *extra], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                svg = (out / "chart7_bucket_cap_sweep.svg").read_text()
                self.assertEqual(label in svg, want)

    def test_bad_input_is_one_line_exit_2(self):
        with tempfile.TemporaryDirectory() as t:
            bad = Path(t) / "bad.json"
            bad.write_text("[]")
            for args in (["--predict", str(bad)], ["--predict", str(Path(t) / "missing.json")], []):
                r = subprocess.run([sys.executable, str(PLOT), *args, "--out", t], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib not installed: skipping", file=sys.stderr)
        sys.exit(77)
    sys.path.insert(0, str(SOURCE / "plots"))
    unittest.main()
