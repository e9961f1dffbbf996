#!/usr/bin/python3
"""test_memory_chart.py — chart 14 (memory per rank and speedup against K, bucketed DDP beside
each sharded stage) on a small synthetic report: the bars it stacks are each series' counted
bytes at each K, the peak-RSS markers the report's measured median, the speedup lines the
report's speedups; it is skipped for a file without sharded runs (the plotter fixture), and the
report JSON's peak_rss_bytes is the median of the repeats that read it.

    DPSCALE_SOURCE_DIR=. DPSCALE_BIN=build/bin/dpscale /usr/bin/python3 tests/plots/test_memory_chart.py
"""
import copy
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
PLOT = SOURCE / "plots" / "plot_results.py"

from dpscale_plots.charts_memory import (chart14_memory_per_rank, memory_rows,  # noqa: E402
                                         speedup_rows)
from dpscale_plots.load import load_report  # noqa: E402
from dpscale_plots.points import Results  # noqa: E402
from dpscale_plots.style import Skip  # noqa: E402

MIB = 1024 * 1024
SERIES = ["bucketed", "stage1", "stage2", "stage3"]
# Per (series, K): (parameter, gradient, optimizer-state MiB, peak RSS MiB or 0 = unread,
# speedup). Each a different number, so a bar drawn from the wrong series, K or field shows.
TABLE = {
    ("bucketed", 2): (100, 101, 200, 450, 1.50), ("bucketed", 4): (100, 102, 201, 455, 2.50),
    ("stage1", 2): (100, 103, 100, 350, 1.40), ("stage1", 4): (100, 104, 50, 0, 2.30),
    ("stage2", 2): (100, 51, 99, 300, 1.45), ("stage2", 4): (100, 26, 49, 280, 2.40),
    ("stage3", 2): (50, 52, 98, 230, 1.20), ("stage3", 4): (25, 27, 48, 160, 2.00),
}


def report_of(results):
    proc = subprocess.run([str(DPSCALE), "report", str(results), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"dpscale report {results}: {proc.stderr}")
    return json.loads(proc.stdout)


def synthetic_report(fixture_report, with_single=True):
    """The fixture's report cut to the large model's single run and its bucketed runs at the
    default cap, with sharded points at stages 1-3 made from them, each with TABLE's numbers;
    plus a stage-3 run off its defaults (prefetch_units 0) that the chart must not pick."""
    rep = copy.deepcopy(fixture_report)
    cap = str(rep["option_defaults"]["bucket_cap_mb"]).rstrip("0").rstrip(".")
    pts = [p for p in rep["points"] if p["point"]["model"] == "large"]
    single = next(p for p in pts if p["point"]["mode"] == "single")
    bucketed = {p["point"]["world_size"]: p for p in pts if p["point"]["mode"] == "bucketed"
                and p["point"]["settings"]["bucket_cap_mb"] == cap}
    out = [single] if with_single else []
    for (series, k), (pm, gm, om, rss, s) in TABLE.items():
        p = copy.deepcopy(bucketed[k])
        if series != "bucketed":
            p["point"]["mode"] = "sharded"
            p["point"]["settings"].update(shard_stage=series[5:], prefetch_units="1")
        p["memory_per_rank"] = {"param_bytes": pm * MIB, "grad_bytes": gm * MIB, "optim_bytes": om * MIB,
                                "peak_device_bytes": 0, "peak_rss_bytes": rss * MIB}
        p["speedup"] = {"median": s, "min": s - 0.1, "max": s + 0.1} if with_single else None
        out.append(p)
        if series == "stage3" and k == 2:
            off = copy.deepcopy(p)
            off["point"]["settings"]["prefetch_units"] = "0"
            off["memory_per_rank"] = {k2: 7 * MIB for k2 in off["memory_per_rank"]}
            off["speedup"] = {"median": 0.5, "min": 0.5, "max": 0.5} if with_single else None
            out.append(off)
    rep["points"] = out
    return rep


def load(tmp, rep, name):
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(rep))
    report = load_report(str(path))
    return Results(report, name), path


def bars(fig):
    """{gid: (bottom, height)} of every bar the figure draws with a chart-14 gid."""
    out = {}
    for ax in fig.axes:
        for patch in ax.patches:
            gid = patch.get_gid()
            if gid and gid.startswith("mem-"):
                out[gid] = (patch.get_y(), patch.get_height())
    return out


def lines(fig, prefix):
    return {ln.get_gid(): list(zip(ln.get_xdata(), ln.get_ydata()))
            for ax in fig.axes for ln in ax.lines if (ln.get_gid() or "").startswith(prefix)}


class MemoryChart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dpscale-memory-chart-"))
        cls.fixture_report = report_of(FIXTURE)
        cls.results, cls.path = load(cls.tmp, synthetic_report(cls.fixture_report), "synthetic")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_panel_data_is_each_series_numbers_at_each_k(self):
        rows = memory_rows(self.results, "large")
        self.assertEqual(sorted(rows), [2, 4])
        for k in (2, 4):
            self.assertEqual(list(rows[k]), SERIES)
            for series in SERIES:
                pm, gm, om, rss, _ = TABLE[(series, k)]
                got = rows[k][series]
                self.assertEqual((got["param"], got["grad"], got["optim"]), (pm, gm, om), (series, k))
                self.assertEqual(got["peak_rss"], rss or None, (series, k))

    def test_the_bars_stack_parameters_gradients_and_optimizer_state(self):
        drawn = bars(chart14_memory_per_rank(self.results))
        self.assertEqual(len(drawn), len(TABLE) * 3, sorted(drawn))
        for (series, k), (pm, gm, om, _, _) in TABLE.items():
            at = f"mem-large-{series}-k{k}"
            self.assertEqual(drawn[f"{at}-param"], (0, pm))
            self.assertEqual(drawn[f"{at}-grad"], (pm, gm))
            self.assertEqual(drawn[f"{at}-optim"], (pm + gm, om))

    def test_peak_rss_markers_where_measured_only(self):
        drawn = lines(chart14_memory_per_rank(self.results), "rss-")
        want = {f"rss-large-{s}-k{k}": rss for (s, k), (_, _, _, rss, _) in TABLE.items() if rss}
        self.assertEqual(sorted(drawn), sorted(want))
        for gid, rss in want.items():
            self.assertEqual(drawn[gid][0][1], rss, gid)

    def test_the_speedup_lines_leave_from_the_single_run(self):
        drawn = lines(chart14_memory_per_rank(self.results), "speedup-")
        self.assertEqual(sorted(drawn), sorted(f"speedup-large-{s}" for s in SERIES))
        for s in SERIES:
            self.assertEqual(drawn[f"speedup-large-{s}"], [(1, 1.0), (2, TABLE[(s, 2)][4]), (4, TABLE[(s, 4)][4])])

    def test_no_single_run_no_speedup_but_memory_still(self):
        results, _ = load(self.tmp, synthetic_report(self.fixture_report, with_single=False), "no-single")
        self.assertEqual(speedup_rows(results, "large"), {})
        fig = chart14_memory_per_rank(results)
        self.assertEqual(lines(fig, "speedup-"), {})
        self.assertEqual(len(bars(fig)), len(TABLE) * 3)

    def test_the_plotter_writes_it_with_the_bars_named_in_the_svg(self):
        out = self.tmp / "out"
        proc = subprocess.run([sys.executable, str(PLOT), str(self.path), "--out", str(out), "--format", "svg"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        svg = out / "chart14_memory_per_rank.svg"
        self.assertIn(str(svg), proc.stdout.split())
        ids = {e.get("id") for e in ET.parse(svg).getroot().iter()}
        self.assertTrue({f"mem-large-{s}-k{k}-param" for s, k in TABLE} <= ids)

    def test_skipped_for_a_file_without_sharded_runs(self):
        results, path = load(self.tmp, self.fixture_report, "fixture")
        with self.assertRaisesRegex(Skip, "no sharded runs"):
            chart14_memory_per_rank(results)
        out = self.tmp / "fixture-out"
        proc = subprocess.run([sys.executable, str(PLOT), str(path), "--out", str(out), "--format", "svg"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("chart14_memory_per_rank skipped: the file holds no sharded runs", proc.stderr)
        self.assertFalse((out / "chart14_memory_per_rank.svg").exists())


class PeakRssInReport(unittest.TestCase):
    """The report JSON carries each point's measured peak RSS: the median over the repeats that
    read it (0, unread, left out), 0 where none did."""

    def test_median_of_the_repeats_that_read_it(self):
        lines_ = []
        for line in FIXTURE.read_text().splitlines():
            try:
                lines_.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # the fixture's truncated last line
        given = {("bucketed", "25"): [300, 100, 200], ("naive", None): [0, 100, 400]}
        seen = {key: 0 for key in given}
        for rec in lines_:
            if rec.get("status") != "ok" or rec["model"] != "large" or rec["world_size"] != 4:
                continue
            key = (rec["mode"], "25" if rec["mode"] == "bucketed" else None)
            if key in given and (rec["mode"] != "bucketed" or rec.get("bucket_cap_mb") == 25):
                rec["peak_rss_bytes"] = given[key][seen[key]] * MIB
                seen[key] += 1
        self.assertEqual(seen, {key: 3 for key in given}, "the fixture's repeats at large K=4 changed")
        tmp = Path(tempfile.mkdtemp(prefix="dpscale-peak-rss-"))
        try:
            path = tmp / "rss.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in lines_))
            rep = report_of(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        got = {(p["point"]["mode"], p["point"]["settings"].get("bucket_cap_mb")): p["memory_per_rank"]["peak_rss_bytes"]
               for p in rep["points"] if p["point"]["model"] == "large" and p["point"]["world_size"] == 4}
        self.assertEqual(got[("bucketed", "25")], 200 * MIB)
        self.assertEqual(got[("naive", None)], 250 * MIB)  # 0 is unread: the median of 100 and 400
        self.assertEqual(got[("interleaved", None)], 0)    # no repeat read it


if __name__ == "__main__":
    unittest.main()
