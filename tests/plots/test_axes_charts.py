#!/usr/bin/python3
"""test_axes_charts.py — charts 11 (2-byte gradients), 12 (accumulation) and 13 (all-reduce busbw
per bucket size) on the committed axis sweeps (experiments/axes/data/): each is drawn from the file that
varies its option and skipped, with a note naming the option, from a file that does not; the
numbers printed on them are the report's.

    DPSCALE_SOURCE_DIR=. DPSCALE_BIN=build/bin/dpscale /usr/bin/python3 tests/plots/test_axes_charts.py
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
AXES = SOURCE / "experiments" / "axes" / "data"

from dpscale_plots.style import fmt_rate  # noqa: E402


def plot(results, out):
    # SVG only: the text the tests read, at half the drawing time of PNG + SVG.
    return subprocess.run([str(DPSCALE), "plot", str(results), "--out", str(out), "--python", sys.executable,
                           "--format", "svg"], capture_output=True, text=True, timeout=300)


def report(results):
    out = subprocess.run([str(DPSCALE), "report", str(results), "--format", "json"], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return json.loads(out)


def svg_text(path):
    return " ".join(ET.parse(path).getroot().itertext())


def point(rep, mode, **settings):
    hits = [p for p in rep["points"] if p["point"]["mode"] == mode
            and all(p["point"]["settings"].get(k) == v for k, v in settings.items())]
    assert len(hits) == 1, f"{mode} {settings}: {len(hits)} points"
    return hits[0]


class AxesCharts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dpscale-axes-plots-"))
        cls.runs = {}
        for name in ("grad-comm-50-300", "accum-steps", "allreduce-algos"):
            src = AXES / f"{name}.jsonl"
            cls.runs[name] = (src, plot(src, cls.tmp / name), report(src))
        cls.fixture = plot(FIXTURE, cls.tmp / "fixture")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def written(self, name, chart):
        src, proc, _ = self.runs[name]
        self.assertEqual(proc.returncode, 0, proc.stderr)
        path = self.tmp / name / f"{chart}.svg"
        self.assertIn(str(path), proc.stdout.split())
        return svg_text(path)

    def test_charts_1_to_6_look_up_the_plain_run_of_an_axis_sweep(self):
        # A file that sweeps grad_comm holds three naive points at each K (fp32, bf16, fp16), in
        # the order its config listed them. Charts 1-6 must get the one at the point schema's
        # default (fp32) in any order: here the report's points reversed, so a first match (the
        # lookup before) is a 2-byte point. Negative control: with fp32's points left out the
        # lookup gives a point off the default (the check can fail).
        from dpscale_plots.load import load_report
        from dpscale_plots.points import Results
        path = self.tmp / "grad-comm-report.json"
        path.write_text(json.dumps(self.runs["grad-comm-50-300"][2]))
        rep = load_report(str(path))
        rep.points.reverse()
        results = Results(rep, "grad-comm-50-300")
        model, k = results.models[0], results.ks()[0]
        first = next(p["point"]["settings"]["grad_comm"] for p in rep.points
                     if (p["point"]["model"], p["point"]["mode"], p["point"]["world_size"]) == (model, "naive", k))
        self.assertNotEqual(first, "fp32", "the first listed must be a 2-byte point, or the test proves little")
        got = results.get(model, "naive", k)
        self.assertEqual(got.key.setting("grad_comm"), "fp32")
        self.assertNotIn("grad_comm", got.key.off_default)
        rep.points = [p for p in rep.points if p["point"]["settings"].get("grad_comm") != "fp32"]
        other = Results(rep, "grad-comm-50-300").get(model, "naive", k)
        self.assertNotEqual(other.key.setting("grad_comm"), "fp32")
        self.assertIn("grad_comm", other.key.off_default)

    def test_grad_comm_prints_the_reports_ratios_and_accuracies(self):
        text = self.written("grad-comm-50-300", "chart11_grad_comm")
        rep = self.runs["grad-comm-50-300"][2]
        for mode in ("naive", "bucketed"):
            base = point(rep, mode, grad_comm="fp32")["avg_epoch_s"]["median"]
            for fmt in ("bf16", "fp16"):
                p = point(rep, mode, grad_comm=fmt)
                self.assertIn(f"{p['avg_epoch_s']['median'] / base:.2f}×", text, f"{mode} {fmt}")
                self.assertIn(f"{100 * p['test_accuracy']['median']:.1f}%", text, f"{mode} {fmt}")

    def test_accum_prints_the_reports_throughput_at_the_largest_n(self):
        text = self.written("accum-steps", "chart12_accum_steps")
        rep = self.runs["accum-steps"][2]
        for mode in ("naive", "bucketed"):
            p = point(rep, mode, accum_steps="8")
            self.assertIn(fmt_rate(p["throughput_samples_per_s"]["median"]), text, mode)

    def test_busbw_chart_has_one_panel_per_k(self):
        text = self.written("allreduce-algos", "chart13_allreduce_busbw")
        ks = sorted({p["point"]["world_size"] for p in self.runs["allreduce-algos"][2]["points"]})
        self.assertGreaterEqual(len(ks), 2)
        for k in ks:
            self.assertIn(f"K = {k}", text)
        for algo in ("native", "ring", "star"):
            self.assertIn(algo, text)

    def test_each_chart_is_skipped_where_its_option_does_not_vary(self):
        _, proc, _ = self.runs["grad-comm-50-300"]
        self.assertIn("chart12_accum_steps skipped: the file's data-parallel runs do not differ in accum_steps",
                      proc.stderr)
        self.assertIn("chart13_allreduce_busbw skipped", proc.stderr)
        _, proc, _ = self.runs["accum-steps"]
        self.assertIn("chart11_grad_comm skipped: the file's data-parallel runs do not differ in grad_comm",
                      proc.stderr)
        self.assertEqual(self.fixture.returncode, 0, self.fixture.stderr)
        for chart in ("chart11_grad_comm", "chart12_accum_steps", "chart13_allreduce_busbw"):
            self.assertIn(f"{chart} skipped", self.fixture.stderr)
            self.assertFalse((self.tmp / "fixture" / f"{chart}.svg").exists())


if __name__ == "__main__":
    unittest.main()
