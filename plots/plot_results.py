#!/usr/bin/python3
"""plot_results.py — the workshop's charts from a dpscale report.

    build/bin/dpscale plot results/cpu-XXXX.jsonl --out plots/out          # the usual way
    build/bin/dpscale report results/cpu-XXXX.jsonl --format json > report.json
    /usr/bin/python3 plots/plot_results.py report.json --out plots/out [--format png,svg]

Reads the report JSON of `dpscale report --format json` (docs/RESULTS_FORMAT.md, "The report
JSON"), which `dpscale plot` makes from a results file and hands over, and saves, as PNG and SVG
in --out: 1 epoch time, 2 speedup vs K, 3 naive compute/comm split, 4 overlap saving vs naive,
5 loss convergence, 6 throughput (the workshop's six), 7 the bucket-cap sweep and 8 efficiency
E(K) and gamma(K) with the knee, and, where the file has their data, 9-13 (the diagnosis and the
option axes) and 14 memory per rank against K (sharded runs). Every number drawn is the report's
(medians of repeats, with min..max as error bars): this script computes no statistic, so a chart
and the report agree.
Needs Debian's python3-matplotlib, hence /usr/bin/python3.

stdout: the files written, one per line. stderr: notes (failed runs, skipped charts, truncated
lines of a killed sweep). Exit 0 when the report was plotted (even if some charts had no data),
2 for bad input or usage (one line on stderr), 1 when the charts could not be written.
The input file is only ever read.
"""
import argparse
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree from a plain run

from pathlib import Path  # noqa: E402

from dpscale_plots import CHARTS  # noqa: E402
from dpscale_plots.load import BadInput, load_report  # noqa: E402
from dpscale_plots.points import Results  # noqa: E402
from dpscale_plots.style import Skip, save  # noqa: E402

PROG = "plot_results"
FORMATS = ("png", "svg", "pdf")


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line, like every other bad input (argparse prints the usage too)."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def parse_args(argv):
    ap = OneLineParser(prog="plot_results.py", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", help="report JSON: `dpscale report FILE.jsonl --format json`")
    ap.add_argument("--out", required=True, help="directory for the charts (created if missing)")
    ap.add_argument("--format", default="png,svg",
                    help=f"comma-separated formats, of {', '.join(FORMATS)} (default png,svg)")
    # Chart 7 draws the step model's curve beside the measured sweep.
    ap.add_argument("--predict-caps", help="`dpscale predict --recommend-cap --format json` rows: "
                    "chart 7 draws their predicted exposed comm (dashed)")
    args = ap.parse_args(argv)
    fmts = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if not fmts or bad:
        ap.error(f"--format: {', '.join(bad) or 'empty'} not one of {', '.join(FORMATS)}")
    args.formats = list(dict.fromkeys(fmts))  # de-duplicated, order kept
    return args


def note(kind, msg):
    print(f"{PROG}: {kind}: {msg}", file=sys.stderr)


def describe_input(report, results):
    for w in report.warnings:
        note("warning", w)
    if report.n_failed:
        note("note", f"{report.n_failed} failed run(s) skipped (status \"failed\")")
    for n in results.notes:
        note("note", n)
    for model, k in results.sweeps():
        note("note", f"{model} K={k}: charts 1-6 show the bucketed run at "
                     f"{results.display_cap(model, k):g} MiB; chart 7 shows all "
                     f"{len(results.caps(model, k))} caps")


def draw_all(results, out_dir, formats, input_path):
    written = []
    for name, draw in CHARTS:
        try:
            fig = draw(results)
        except Skip as e:
            note("note", f"{name} skipped: {e}")
            continue
        paths = [out_dir / f"{name}.{f}" for f in formats]
        # Belt and braces: an output name must never land on the input file.
        if any(p.exists() and p.samefile(input_path) for p in paths):
            raise OSError(f"{name} would overwrite the input file")
        written += save(fig, out_dir, name, formats)
    return written


def main(argv=None):
    args = parse_args(argv)
    try:
        report = load_report(args.report)
    except BadInput as e:
        note("error", str(e))
        return 2
    # The foot of each chart names the results file the numbers come from, not the report.
    results = Results(report, Path(report.file).name)
    if args.predict_caps:
        try:
            results.predicted_caps = json.loads(Path(args.predict_caps).read_text())
            assert isinstance(results.predicted_caps, list)
        except (OSError, ValueError, AssertionError):
            note("error", f"--predict-caps: '{args.predict_caps}' is not readable `dpscale predict --recommend-cap --format json` output")
            return 2
    describe_input(report, results)
    out_dir = Path(args.out)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written = draw_all(results, out_dir, args.formats, Path(args.report))
    except OSError as e:
        note("error", f"cannot write charts to {out_dir}: {e.strerror or e}")
        return 1
    for path in written:
        print(path)
    if not written:
        note("note", "no chart could be drawn from this file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
