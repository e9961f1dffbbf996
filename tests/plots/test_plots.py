#!/usr/bin/python3
"""test_plots.py — tests of plots/plot_results.py, run by CTest (tests/plots/CMakeLists.txt):

    /usr/bin/python3 tests/plots/test_plots.py -v                 # all
    /usr/bin/python3 tests/plots/test_plots.py -v FixtureCharts   # one group

The fixture (fixture.jsonl, written by make_fixture.py) holds 2 models x single/naive/interleaved/
bucketed at K = 1, 2, 4, repeats, a bucket-cap sweep, a failed run and a truncated last line, so
it supports all 8 charts. Exit 77 (CTest's skip code here) when matplotlib is not installed.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("DPSCALE_SOURCE_DIR", HERE.parent.parent))
PLOT = SOURCE / "plots" / "plot_results.py"
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
    """plot_results.py as the harness calls it; returns CompletedProcess (text)."""
    return subprocess.run([sys.executable, str(PLOT), str(results), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=300)


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
        for name in ("Single", "Naive DP", "Interleaved DP", "Bucketed (DDP)", "Small (1.5M)",
                     "Large (35.2M)"):
            self.assertIn(name, text)

    def test_notes_on_stderr(self):
        err = self.proc.stderr
        self.assertIn("line 32 is truncated", err)
        self.assertIn("1 failed run(s) skipped", err)
        self.assertNotIn("skipped:", err)  # no chart skipped

    def test_input_file_untouched(self):
        self.assertEqual(self.before[0], self.after[0])
        self.assertEqual(self.before[1], self.after[1])

    def test_same_input_same_svg(self):
        again = run_plot(FIXTURE, self.tmp / "again", "--format", "svg")
        self.assertEqual(again.returncode, 0, again.stderr)
        for chart in CHARTS:
            self.assertEqual((self.out / f"{chart}.svg").read_bytes(),
                             (self.tmp / "again" / f"{chart}.svg").read_bytes(), chart)


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
        self.assertIn("line 11 is truncated", proc.stderr)
        self.assertEqual(len(self.written(proc)), 8)

    def test_diverged_loss_written_as_null(self):
        # nlohmann::json prints NaN as null: a diverged run must plot, not be "bad input".
        lines = fixture_lines()
        large = [o for o in lines if o["point"]["model"] == "large" and o["status"] == "ok"]
        large[0]["loss_global"][-1] = None   # chart 5 shows the largest model
        large[1]["loss_rank0"][-2:] = [None, None]
        src = write_jsonl(self.tmp / "nan.jsonl", lines)
        proc = run_plot(src, self.tmp / "nan", "--format", "png")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("chart5_loss_convergence", self.written(proc))

    def test_format_option_limits_outputs(self):
        proc = run_plot(FIXTURE, self.tmp / "svg-only", "--format", "svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({p.suffix for p in (self.tmp / "svg-only").iterdir()}, {".svg"})


class BadInput(TempDirCase):
    """Bad input: exit 2, exactly one line on stderr, nothing on stdout, no chart written."""

    def assert_bad(self, path, *extra):
        out = self.tmp / "out-bad"
        proc = run_plot(path, out, *extra)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("error", proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertFalse(out.exists() and any(out.iterdir()))
        return proc.stderr

    def file(self, name, text):
        path = self.tmp / name
        path.write_text(text)
        return path

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
        self.assertIn("not a dpscale", self.assert_bad(self.file("foreign.jsonl", text)))

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


class Arithmetic(unittest.TestCase):
    """The numbers behind the charts: medians of repeats, speedup, E, gamma, knee, cap choice."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(SOURCE / "plots"))
        sys.dont_write_bytecode = True
        from dpscale_plots import aggregate, charts_scaling, load
        cls.cs = charts_scaling
        cls.loaded = load.load_results(str(FIXTURE))
        cls.res = aggregate.Results(cls.loaded.runs, FIXTURE.name)

    def test_counts(self):
        self.assertEqual(len(self.loaded.runs), 30)
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
        self.assertEqual(self.res.display_cap("large", 4), 25.0)
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

    def test_every_prefix_of_a_line_counts_as_truncated(self):
        from dpscale_plots.load import is_cut_short
        line = FIXTURE.read_text().splitlines()[0]
        for n in range(1, len(line)):
            with self.assertRaises(json.JSONDecodeError) as cm:
                json.loads(line[:n])
            self.assertTrue(is_cut_short(line[:n], cm.exception), line[max(0, n - 30):n])

    def test_corrupt_lines_are_not_truncated(self):
        from dpscale_plots.load import is_cut_short
        line = FIXTURE.read_text().splitlines()[0]
        for bad in (line.replace(":", " ", 1), line + "x", line[:-1] + "]", "not json",
                    line.replace('"mode"', "'mode'", 1)):
            with self.assertRaises(json.JSONDecodeError) as cm:
                json.loads(bad)
            self.assertFalse(is_cut_short(bad, cm.exception), bad[:40])

    def test_crossing_interpolates_in_log2_k(self):
        k, _ = self.cs.crossing([(2, 0.5), (8, 1.5)], 1.0, rising=True)
        self.assertAlmostEqual(k, 4.0)   # halfway in log2 between 2 and 8
        k, _ = self.cs.crossing([(1, 1.0), (2, 0.9), (4, 0.7)], 0.8, rising=False)
        self.assertAlmostEqual(k, 2 ** 1.5)


if __name__ == "__main__":
    missing = [m for m in ("matplotlib", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"SKIP: no {', '.join(missing)} in {sys.executable} (install Debian's "
              "python3-matplotlib)", file=sys.stderr)
        sys.exit(77)
    unittest.main()
