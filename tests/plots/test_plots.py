#!/usr/bin/python3
"""test_plots.py — tests of the plotter, plots/plot_results.py, run by CTest (tests/plots/CMakeLists.txt):

    /usr/bin/python3 tests/plots/test_plots.py -v                 # all
    /usr/bin/python3 tests/plots/test_plots.py -v FixtureCharts   # one group

The plotter draws the report JSON of `dpscale report --format json`; `dpscale plot` makes it from
a results file and hands it over. So the results-file tests run `dpscale plot` (the binary:
$DPSCALE_BIN, which CTest sets, else build/bin/dpscale), and the report tests run the script.
The fixture (fixture.jsonl, written by make_fixture.py) holds 2 models x single/naive/interleaved/
bucketed at K = 1, 2, 4, repeats, a bucket-cap sweep, a failed run and a truncated last line, so
it supports all 8 charts. Exit 77 (CTest's skip code here) when matplotlib is not installed.
"""
import copy
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("DPSCALE_SOURCE_DIR", HERE.parent.parent))
PLOT = SOURCE / "plots" / "plot_results.py"
DPSCALE = Path(os.environ.get("DPSCALE_BIN", SOURCE / "build" / "bin" / "dpscale"))
FIXTURE = HERE / "fixture.jsonl"
CHARTS = ["chart1_epoch_time", "chart2_speedup", "chart3_naive_comm_split",
          "chart4_overlap_vs_naive", "chart5_loss_convergence", "chart6_throughput",
          "chart7_bucket_cap_sweep", "chart8_efficiency_knee"]
# A word from each chart's title: proves the SVG holds that chart, not just some SVG.
TITLE_WORD = dict(zip(CHARTS, ["Epoch time", "speedup", "communication per epoch",
                               "time saved by overlap", "Loss convergence", "throughput",
                               "bucket cap", "Scaling efficiency"]))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 30_000   # a 150-dpi chart with bars, lines and text; an empty figure is ~5 KB


def run_plot(results, out, *extra):
    """`dpscale plot RESULTS --out OUT`, as a user runs it; returns CompletedProcess (text)."""
    return subprocess.run([str(DPSCALE), "plot", str(results), "--out", str(out),
                           "--python", sys.executable, *extra],
                          capture_output=True, text=True, timeout=300)


def run_plotter(report, out, *extra):
    """plot_results.py on a report JSON file, as `dpscale plot` calls it."""
    return subprocess.run([sys.executable, str(PLOT), str(report), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=300)


def report_of(results):
    """`dpscale report RESULTS --format json`, parsed."""
    proc = subprocess.run([str(DPSCALE), "report", str(results), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"dpscale report {results} failed: {proc.stderr}")
    return json.loads(proc.stdout)


def fixture_lines():
    """The fixture's complete lines as dicts (the truncated last one left out)."""
    out = []
    for line in FIXTURE.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def write_jsonl(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def write_json(path, obj):
    path.write_text(json.dumps(obj))
    return path


def svg_text(path):
    return " ".join(ET.parse(path).getroot().itertext())


class TempDirCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dpscale-plots-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


class FixtureCharts(TempDirCase):
    """The full fixture: all 8 charts, PNG and SVG, nothing else, input untouched."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = (FIXTURE.read_bytes(), FIXTURE.stat().st_mtime_ns)
        cls.out = cls.tmp / "out"
        cls.proc = run_plot(FIXTURE, cls.out)
        cls.after = (FIXTURE.read_bytes(), FIXTURE.stat().st_mtime_ns)

    def test_exit_status_zero(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_exactly_the_supported_charts_are_written(self):
        expected = {f"{c}.{fmt}" for c in CHARTS for fmt in ("png", "svg")}
        self.assertEqual({p.name for p in self.out.iterdir()}, expected)

    def test_stdout_lists_every_file_written(self):
        listed = self.proc.stdout.split()
        self.assertEqual(len(listed), 16)
        self.assertEqual({Path(p).resolve() for p in listed},
                         {p.resolve() for p in self.out.iterdir()})

    def test_png_files_are_real_charts(self):
        for chart in CHARTS:
            data = (self.out / f"{chart}.png").read_bytes()
            self.assertEqual(data[:8], PNG_SIGNATURE, chart)
            self.assertGreater(len(data), MIN_PNG_BYTES, chart)
            width = int.from_bytes(data[16:20], "big")   # IHDR: width, height
            height = int.from_bytes(data[20:24], "big")
            self.assertGreaterEqual(width, 900, chart)
            self.assertGreaterEqual(height, 500, chart)

    def test_svg_files_parse_and_hold_their_chart(self):
        for chart in CHARTS:
            path = self.out / f"{chart}.svg"
            root = ET.parse(path).getroot()
            self.assertTrue(root.tag.endswith("svg"), chart)
            text = " ".join(t for t in root.itertext())
            self.assertIn(TITLE_WORD[chart], text, chart)

    def test_workshop_names_appear(self):
        text = " ".join(ET.parse(self.out / "chart1_epoch_time.svg").getroot().itertext())
        for name in ("Single", "Naive DP", "Interleaved", "Bucketed DDP", "Small (1.5M)",
                     "Large (35.2M)"):
            self.assertIn(name, text)

    def test_notes_on_stderr(self):
        err = self.proc.stderr
        # The harness reads the results file now; its warning travels in the report JSON.
        self.assertIn(":32: truncated line skipped", err)
        self.assertIn("1 failed run(s) skipped", err)
        for chart in CHARTS:  # none of these skipped (the diagnosis charts 9-10 need fields the fixture lacks)
            self.assertNotIn(f"{chart} skipped", err)

    def test_input_file_untouched(self):
        self.assertEqual(self.before[0], self.after[0])
        self.assertEqual(self.before[1], self.after[1])

    def test_same_input_same_svg(self):
        again = run_plot(FIXTURE, self.tmp / "again", "--format", "svg")
        self.assertEqual(again.returncode, 0, again.stderr)
        for chart in CHARTS:
            self.assertEqual((self.out / f"{chart}.svg").read_bytes(),
                             (self.tmp / "again" / f"{chart}.svg").read_bytes(), chart)

    def test_plotter_on_the_report_draws_the_same_charts(self):
        # The documented direct way: dpscale report --format json, then the script.
        report = write_json(self.tmp / "fixture-report.json", report_of(FIXTURE))
        proc = run_plotter(report, self.tmp / "direct", "--format", "svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(":32: truncated line skipped", proc.stderr)
        for chart in CHARTS:
            self.assertEqual((self.out / f"{chart}.svg").read_bytes(),
                             (self.tmp / "direct" / f"{chart}.svg").read_bytes(), chart)


class MissingData(TempDirCase):
    """Charts the file cannot support are skipped with a note, not an error."""

    def written(self, proc):
        return sorted(Path(p).stem for p in proc.stdout.split() if p.endswith(".png"))

    def test_no_bucket_sweep_skips_chart7_only(self):
        lines = [o for o in fixture_lines()
                 if o["point"]["mode"] != "bucketed" or o["point"]["bucket_cap_mb"] == 25]
        src = write_jsonl(self.tmp / "no-sweep.jsonl", lines)
        proc = run_plot(src, self.tmp / "no-sweep")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.written(proc), [c for c in CHARTS if c != "chart7_bucket_cap_sweep"])
        self.assertIn("chart7_bucket_cap_sweep skipped", proc.stderr)

    def test_single_device_only_skips_scaling_charts(self):
        lines = [o for o in fixture_lines() if o["point"]["world_size"] == 1]
        src = write_jsonl(self.tmp / "k1.jsonl", lines)
        proc = run_plot(src, self.tmp / "k1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.written(proc), ["chart1_epoch_time", "chart5_loss_convergence",
                                              "chart6_throughput"])
        for chart in ("chart2_speedup", "chart3_naive_comm_split", "chart4_overlap_vs_naive",
                      "chart7_bucket_cap_sweep", "chart8_efficiency_knee"):
            self.assertIn(f"{chart} skipped", proc.stderr)

    def test_truncated_line_mid_file_after_resume(self):
        # `dpscale sweep --resume` starts a new line after a cut-off one and appends: the cut
        # line now sits mid-file and is skipped the same way.
        lines = FIXTURE.read_text().split("\n")
        cut, complete = lines[-1], lines[:-1]
        text = "\n".join(complete[:10] + [cut] + complete[10:])
        src = self.tmp / "resumed.jsonl"
        src.write_text(text)
        proc = run_plot(src, self.tmp / "resumed")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(":11: truncated line skipped", proc.stderr)
        self.assertEqual(len(self.written(proc)), 8)

    def test_diverged_loss_written_as_null(self):
        # nlohmann::json prints NaN as null: the report's median curve of a point whose repeats
        # all diverged holds null there, and must plot, not be "bad input".
        report = report_of(FIXTURE)
        large = [p for p in report["points"] if p["point"]["model"] == "large"]
        large[0]["loss_global"][-1] = None   # chart 5 shows the largest model
        large[1]["loss_rank0"][-2:] = [None, None]
        src = write_json(self.tmp / "nan.json", report)
        proc = run_plotter(src, self.tmp / "nan", "--format", "png")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("chart5_loss_convergence", self.written(proc))

    def test_format_option_limits_outputs(self):
        proc = run_plot(FIXTURE, self.tmp / "svg-only", "--format", "svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({p.suffix for p in (self.tmp / "svg-only").iterdir()}, {".svg"})


class BadInputCase(TempDirCase):
    RUN = staticmethod(run_plot)
    # Who refuses it, by the start of its one line: the harness reads a results file, the
    # script a report (or its own options).
    REFUSED_BY = r"^(dpscale: |plot_results: error: )"

    def assert_bad(self, path, *extra):
        """Exit 2, exactly one line on stderr, nothing on stdout, no chart written."""
        out = self.tmp / "out-bad"
        proc = self.RUN(path, out, *extra)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertRegex(proc.stderr, self.REFUSED_BY)
        self.assertEqual(proc.stdout, "")
        self.assertFalse(out.exists() and any(out.iterdir()))
        return proc.stderr

    def file(self, name, text):
        path = self.tmp / name
        path.write_text(text)
        return path


class BadInput(BadInputCase):
    """A bad results file given to `dpscale plot`: refused by the harness before any drawing."""

    def test_missing_file(self):
        self.assertIn("no such file", self.assert_bad(self.tmp / "nope.jsonl"))

    def test_empty_file(self):
        self.assert_bad(self.file("empty.jsonl", ""))

    def test_not_jsonl(self):
        self.assertIn(":1:", self.assert_bad(self.file("t.csv", "model,mode\nsmall,naive\n")))

    def test_pretty_printed_json(self):
        good = fixture_lines()[0]
        self.assert_bad(self.file("pretty.json", json.dumps(good, indent=2) + "\n"))

    def test_corrupt_line_in_the_middle(self):
        lines = FIXTURE.read_text().splitlines()
        corrupt = lines[3].replace('"mode":', '"mode" ', 1)  # complete, but not JSON
        text = "\n".join(lines[:3] + [corrupt] + lines[4:10]) + "\n"
        self.assertIn(":4:", self.assert_bad(self.file("mid.jsonl", text)))

    def test_corrupt_last_line(self):
        lines = FIXTURE.read_text().splitlines()[:5]
        lines[-1] = lines[-1].replace(",", ";", 3)
        self.assertIn(":5:", self.assert_bad(self.file("last.jsonl", "\n".join(lines))))

    def test_foreign_lines(self):
        text = json.dumps({"name": "bench", "time_ms": 3.2}) + "\n"
        # the harness's words for it (harness/results/results_file.cpp)
        self.assertIn("not a results line", self.assert_bad(self.file("foreign.jsonl", text)))

    def test_foreign_line_among_good_ones(self):
        lines = FIXTURE.read_text().splitlines()[:5] + ['{"event": "start"}']
        self.assert_bad(self.file("mixed.jsonl", "\n".join(lines) + "\n"))

    def test_other_schema(self):
        rec = dict(fixture_lines()[0], schema="dpscale.result/2")
        self.assertIn("schema", self.assert_bad(write_jsonl(self.tmp / "v2.jsonl", [rec])))

    def test_record_missing_a_field(self):
        rec = dict(fixture_lines()[0])
        del rec["avg_epoch_s"]
        self.assertIn("avg_epoch_s", self.assert_bad(write_jsonl(self.tmp / "f.jsonl", [rec])))

    def test_only_failed_runs(self):
        failed = [o for o in fixture_lines() if o["status"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertIn("no successful runs", self.assert_bad(write_jsonl(self.tmp / "x.jsonl",
                                                                        failed)))

    def test_json_array(self):
        self.assert_bad(self.file("arr.jsonl", "[1, 2, 3]\n"))

    def test_directory(self):
        self.assert_bad(self.tmp)

    def test_bad_format_option(self):
        self.assert_bad(FIXTURE, "--format", "png,gif")


class ReportBadInput(BadInputCase):
    """A bad report given to the script directly: its own checks (plots/dpscale_plots/load.py)."""
    RUN = staticmethod(run_plotter)
    REFUSED_BY = r"^plot_results: error: "

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.good = report_of(FIXTURE)

    def report(self, change):
        r = copy.deepcopy(self.good)
        change(r)
        return write_json(self.tmp / "bad-report.json", r)

    def test_a_good_report_plots(self):  # the control: the changes below are what is refused
        proc = run_plotter(write_json(self.tmp / "good.json", self.good), self.tmp / "good",
                           "--format", "svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_missing_file(self):
        self.assertIn("no such file", self.assert_bad(self.tmp / "nope.json"))

    def test_directory(self):
        self.assertIn("directory", self.assert_bad(self.tmp))

    def test_empty_file(self):
        self.assertIn("empty", self.assert_bad(self.file("empty.json", "")))

    def test_not_json(self):
        self.assertIn(":2:", self.assert_bad(self.file("t.json", '{"schema":\n  oops}')))

    def test_results_file_given_directly(self):
        # A results file is the harness's to read: the message says what to run instead.
        err = self.assert_bad(FIXTURE)
        self.assertIn("dpscale plot", err)
        one = write_jsonl(self.tmp / "one.jsonl", fixture_lines()[:1])  # one line: one object
        self.assertIn("dpscale plot", self.assert_bad(one))

    def test_not_a_report(self):
        self.assertIn("not a dpscale report", self.assert_bad(self.file("x.json", "{}")))
        self.assertIn("JSON array", self.assert_bad(self.file("a.json", "[1, 2]")))

    def test_other_schema(self):
        def change(r):
            r["schema"] = "dpscale.report/1"  # before the point had one object and schema
        self.assertIn("schema", self.assert_bad(self.report(change)))

    def test_nan_is_not_json(self):
        text = json.dumps(self.good).replace('"gamma": null', '"gamma": NaN', 1)
        self.assertIn("NaN", self.assert_bad(self.file("nan.json", text)))

    def test_point_missing_a_field(self):
        def change(r):
            del r["points"][3]["gamma"]
        err = self.assert_bad(self.report(change))
        self.assertIn("point 4", err)
        self.assertIn("gamma", err)

    def test_field_of_the_wrong_shape(self):
        def change(r):
            r["points"][0]["avg_epoch_s"] = 0.5  # a number where a median/min/max belongs
        self.assertIn("avg_epoch_s", self.assert_bad(self.report(change)))

        def change_setup(r):
            r["points"][0]["setup"]["global_batch"] = "1024"
        self.assertIn("global_batch", self.assert_bad(self.report(change_setup)))

    def test_unknown_mode(self):
        def change(r):
            r["points"][1]["point"]["mode"] = "zero"
        self.assertIn("point.mode: 'zero' is not one of", self.assert_bad(self.report(change)))

    def test_point_against_its_schema(self):
        # The point's key is checked against the report's own point_schema: a setting its mode
        # does not take, a value of the wrong type, a missing field are each one line.
        def naive_cap(r):
            p = next(p for p in r["points"] if p["point"]["mode"] == "naive")
            p["point"]["settings"]["bucket_cap_mb"] = "25"
        self.assertIn("bucket_cap_mb", self.assert_bad(self.report(naive_cap)))

        def number_setting(r):
            r["points"][0]["point"]["settings"]["epochs"] = 3
        self.assertIn("point.settings.epochs: 3 is not of type 'string'", self.assert_bad(self.report(number_setting)))

        def no_world_size(r):
            del r["points"][0]["point"]["world_size"]
        self.assertIn("'world_size' is a required property", self.assert_bad(self.report(no_world_size)))

        def bad_schema(r):
            r["point_schema"]["type"] = 7
        self.assertIn("'point_schema' is not a JSON Schema", self.assert_bad(self.report(bad_schema)))

    def test_no_points(self):
        def change(r):
            r["points"] = []
        self.assertIn("no successful runs", self.assert_bad(self.report(change)))

    def test_no_option_defaults(self):
        # The defaults (the display cap's) are the report's to give: none is refused, not guessed.
        def change(r):
            del r["option_defaults"]
        self.assertIn("option_defaults", self.assert_bad(self.report(change)))

        def change_cap(r):
            del r["option_defaults"]["bucket_cap_mb"]
        self.assertIn("bucket_cap_mb", self.assert_bad(self.report(change_cap)))


class Arithmetic(TempDirCase):
    """The numbers behind the charts, as the charts read them from the report: medians of
    repeats, speedup, E, gamma, knee, cap choice."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        sys.path.insert(0, str(SOURCE / "plots"))
        sys.dont_write_bytecode = True
        from dpscale_plots import charts_scaling, load, points
        cls.cs, cls.load, cls.points = charts_scaling, load, points
        cls.report_json = report_of(FIXTURE)
        cls.loaded = load.load_report(str(write_json(cls.tmp / "r.json", cls.report_json)))
        cls.res = points.Results(cls.loaded, FIXTURE.name)

    def test_counts(self):
        self.assertEqual(sum(p["runs"] for p in self.loaded.points), 30)
        self.assertEqual(self.loaded.n_failed, 1)
        self.assertEqual(len(self.loaded.warnings), 1)

    def test_median_of_repeats(self):
        p = self.res.get("large", "naive", 4)
        self.assertEqual(p.n, 3)
        self.assertAlmostEqual(p.median("avg_epoch_s"), 0.2143, places=6)
        lo, hi = p.spread("avg_epoch_s")
        self.assertAlmostEqual(lo, 0.2143 * 0.97, places=5)
        self.assertAlmostEqual(hi, 0.2143 * 1.04, places=5)

    def test_speedup_against_single(self):
        s, _ = self.res.speedup(self.res.get("small", "bucketed", 4))
        self.assertAlmostEqual(s, 0.0361 / 0.0482, places=3)   # the workshop's 0.75x
        s, _ = self.res.speedup(self.res.get("large", "naive", 4))
        self.assertAlmostEqual(s, 0.4112 / 0.2143, places=3)   # 1.92x

    def test_bucketed_cap_shown_in_charts_1_to_6(self):
        # The trainers' default cap, as the report gives it (option_defaults), not a copy here:
        # a report whose default is another swept cap shows that one.
        self.assertEqual(self.report_json["option_defaults"]["bucket_cap_mb"], 25.0)
        self.assertEqual(self.res.display_cap("large", 4), 25.0)
        other = copy.deepcopy(self.report_json)
        other["option_defaults"]["bucket_cap_mb"] = 4.0
        res = self.points.Results(self.load.load_report(str(write_json(self.tmp / "o.json", other))), "o")
        self.assertEqual(res.display_cap("large", 4), 4.0)
        self.assertEqual(self.res.sweeps(), [("large", 2), ("large", 4)])
        self.assertEqual(self.res.caps("large", 4), [0.5, 1.0, 2.0, 4.0, 8.0, 25.0])

    def test_gamma_and_knee(self):
        g = dict(self.cs._gamma_series(self.res, "small"))
        self.assertAlmostEqual(g[2], 0.0284 / (0.0602 - 0.0284), places=3)
        self.assertGreater(g[4], 1.0)
        k, text = self.cs.gamma_knee(sorted(g.items()))
        self.assertTrue(2 < k < 4, k)
        self.assertIn("γ = 1", text)
        k, text = self.cs.gamma_knee(self.cs._gamma_series(self.res, "large"))
        self.assertIsNone(k)
        self.assertIn("no knee", text)

    def test_crossing_interpolates_in_log2_k(self):
        k, _ = self.cs.crossing([(2, 0.5), (8, 1.5)], 1.0, rising=True)
        self.assertAlmostEqual(k, 4.0)   # halfway in log2 between 2 and 8
        k, _ = self.cs.crossing([(1, 1.0), (2, 0.9), (4, 0.7)], 0.8, rising=False)
        self.assertAlmostEqual(k, 2 ** 1.5)

    def test_the_plotters_field_list_is_the_reports(self):
        # load.py checks what the charts read; the harness writes the report. Same fields,
        # both ways, so neither side grows or loses one unnoticed.
        for p in self.report_json["points"]:
            self.assertEqual(set(p), set(self.load.POINT_FIELDS) | set(self.load.OPTIONAL_POINT_FIELDS),
                             p["point"]["mode"])
            self.assertEqual(set(p["setup"]), set(self.load.SETUP_FIELDS))


class GammaAgreement(TempDirCase):
    """Chart 8's gamma is the report's gamma on a results file with repeats.

    Three repeats of small naive K=2 whose comm/compute splits differ: gamma per run is 0.2,
    0.43 and 3.0, so the report's gamma (the median of each run's) is 0.43, while the ratio of
    the median comm to the median compute, which chart 8 used to draw, is 0.60. The chart's
    label is read back from its SVG (the annotation carries the id gamma-<model>-k<K>)."""

    # (avg epoch s, naive comm s) per repeat
    REPEATS = [(0.06, 0.01), (0.10, 0.03), (0.08, 0.06)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lines = [o for o in fixture_lines() if o["status"] == "ok" and o["model"] == "small"
                 and o["mode"] == "single"]
        naive = next(o for o in fixture_lines() if o["status"] == "ok"
                     and (o["model"], o["mode"], o["world_size"]) == ("small", "naive", 2))
        samples = naive["steps"] * naive["global_batch"]
        for r, (epoch, comm) in enumerate(cls.REPEATS):
            o = copy.deepcopy(naive)
            o["point"]["repeat"] = r
            o["run"]["run_id"] = f"gamma/small-naive-k2-r{r}"
            o["epoch_times_s"] = [epoch] * naive["epochs"]
            o.update(avg_epoch_s=epoch, comm_s=comm, compute_s=epoch - comm,
                     throughput_samples_per_s=samples / (epoch * naive["epochs"]))
            lines.append(o)
        cls.src = write_jsonl(cls.tmp / "repeats.jsonl", lines)
        cls.proc = run_plot(cls.src, cls.tmp / "out", "--format", "svg")
        cls.report = report_of(cls.src)

    def report_gamma(self):
        (p,) = [p for p in self.report["points"] if p["point"]["mode"] == "naive"]
        self.assertEqual(p["runs"], 3)
        return p["gamma"]

    def chart_gamma_label(self):
        root = ET.parse(self.tmp / "out" / "chart8_efficiency_knee.svg").getroot()
        found = [e for e in root.iter() if e.get("id") == "gamma-small-k2"]
        self.assertEqual(len(found), 1, "chart 8 has one gamma label for small K=2")
        return "".join(found[0].itertext()).strip()

    def test_the_report_takes_the_median_of_each_runs_gamma(self):
        per_run = [c / (e - c) for e, c in self.REPEATS]
        self.assertAlmostEqual(self.report_gamma(), statistics.median(per_run), places=9)

    def test_chart8_draws_the_reports_gamma(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertEqual(self.chart_gamma_label(), f"{self.report_gamma():.2f}")

    def test_the_file_tells_the_two_definitions_apart(self):
        # Negative control: had the chart divided median comm by median compute, its label
        # would differ from the report's, and the test above would fail.
        ratio = (statistics.median(c for _, c in self.REPEATS)
                 / statistics.median(e - c for e, c in self.REPEATS))
        self.assertNotEqual(f"{ratio:.2f}", f"{self.report_gamma():.2f}")
        self.assertNotEqual(f"{ratio:.2f}", self.chart_gamma_label())

    def test_the_charts_series_is_the_reports_number(self):
        sys.path.insert(0, str(SOURCE / "plots"))
        from dpscale_plots import charts_scaling, load, points
        res = points.Results(load.load_report(str(write_json(self.tmp / "r.json", self.report))),
                             "repeats.jsonl")
        self.assertEqual(charts_scaling._gamma_series(res, "small"), [(2, self.report_gamma())])


class Legibility(TempDirCase):
    """The charts' labels can be read (no overlapping or clipped text), on the fixture, on the
    run the README shows (docs/figures/cpu-run.jsonl) and on the transformer's sweep
    (experiments/transformer/data/gpt-cpu.jsonl, its models titled by preset or shape): no label within 3 px (at 100 dpi) of
    another, no line through a label without a white box behind it, "1.0 s" beside "0.78 s",
    one line style per mode in chart 5's legend, chart 7's interleaved line named per tensor."""

    MIN_AIR_PX = 3

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        sys.path.insert(0, str(SOURCE / "plots"))
        from dpscale_plots import CHARTS, load, points
        from dpscale_plots.style import Skip
        cls.Skip = Skip
        cls.charts = dict(CHARTS)
        cls.results = {}
        for src in (FIXTURE, SOURCE / "docs" / "figures" / "cpu-run.jsonl",
                    SOURCE / "experiments" / "transformer" / "data" / "gpt-cpu.jsonl"):
            path = write_json(cls.tmp / f"{src.stem}.json", report_of(src))
            cls.results[src.name] = points.Results(load.load_report(str(path)), src.name)

    def draw(self, name, results):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        fig = self.charts[name](results)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return fig, canvas.get_renderer()

    def test_a_transformer_is_titled_by_its_preset_or_shape(self):
        from dpscale_plots.style import model_label
        results = self.results["gpt-cpu.jsonl"]
        self.assertEqual(model_label(results, "gpt-tiny"), "gpt-tiny (0.1M)")
        # Not "MLP gpt:layers=4-dim=256-...": the spec's commas are not a custom MLP's widths.
        self.assertEqual(model_label(results, "gpt:layers=4,dim=256,heads=4,vocab=8192,context=128"),
                         "GPT L4 d256 h4 V8192 (5.3M)")
        self.assertEqual(model_label(results, "784,256,10"), "MLP 784-256-10 (0k)")

    def test_labels_keep_apart_and_no_line_crosses_a_bare_label(self):
        from matplotlib.transforms import Bbox
        for src, results in self.results.items():
            for name in self.charts:
                try:
                    fig, r = self.draw(name, results)
                except self.Skip:
                    continue  # charts 9-10 need the diagnosis fields, which these files lack
                for ax in fig.axes:
                    texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
                    ext = {id(t): t.get_window_extent(r) for t in texts}
                    for a in texts:
                        box = a.get_bbox_patch()
                        cover = Bbox.union([ext[id(a)], box.get_window_extent(r)]) if box \
                            else ext[id(a)]
                        for b in texts:
                            self.assertFalse(
                                b is not a and cover.padded(self.MIN_AIR_PX).overlaps(ext[id(b)]),
                                f"{src} {name}: {a.get_text()!r} and {b.get_text()!r} collide")
                        if box:
                            continue  # its white box hides what passes behind it
                        for line in ax.lines:
                            path = line.get_transform().transform_path(line.get_path())
                            self.assertFalse(path.intersects_bbox(ext[id(a)], filled=False),
                                             f"{src} {name}: a line crosses {a.get_text()!r}")

    def test_saved_time_keeps_two_significant_digits(self):
        fig, _ = self.draw("chart4_overlap_vs_naive", self.results["cpu-run.jsonl"])
        seconds = [t.get_text().split("\n")[1] for t in fig.axes[0].texts]
        self.assertIn("1.0 s", seconds)   # 1.048 s; it used to read "1 s" beside "0.78 s"
        self.assertIn("0.78 s", seconds)
        for label in seconds:
            digits = label.split()[0].lstrip("\u2212").replace(".", "").lstrip("0")
            self.assertGreaterEqual(len(digits), 2, label)

    def test_each_mode_has_its_own_line_style_in_chart5(self):
        from dpscale_plots.style import MODE_LABEL
        fig, _ = self.draw("chart5_loss_convergence", self.results["fixture.jsonl"])
        (legend,) = fig.legends  # legendHandles: Debian 12's matplotlib 3.6 name
        styles = {t.get_text(): h.get_linestyle()
                  for t, h in zip(legend.get_texts(), legend.legendHandles)
                  if t.get_text() in MODE_LABEL.values()}
        self.assertEqual(len(styles), 4, styles)
        self.assertEqual(len(set(styles.values())), 4, styles)

    def test_chart7_names_interleaved_per_tensor(self):
        fig, _ = self.draw("chart7_bucket_cap_sweep", self.results["fixture.jsonl"])
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        self.assertIn("Interleaved (one all-reduce per tensor), same K", texts)


if __name__ == "__main__":
    missing = [m for m in ("matplotlib", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIP: no {', '.join(missing)} in {sys.executable} (install Debian's "
              "python3-matplotlib)", file=sys.stderr)
        sys.exit(77)
    unittest.main()
