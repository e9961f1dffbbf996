#!/usr/bin/python3
"""plot_predict.py — the charts of `dpscale predict`: predicted scaling to K = 256 with the
measured points and the knee, and predicted exposed comm against the bucket cap beside a
measured bucket sweep (chart 7's question, answered by the model).

    dpscale predict --from R.jsonl --format json > pred.json
    dpscale predict --validate R.jsonl --format json > val.json
    dpscale predict --recommend-cap --from C.jsonl --format json > caps.json
    dpscale predict --validate C.jsonl --format json > capsval.json
    dpscale schema --format json > schema.json
    /usr/bin/python3 plots/plot_predict.py --predict pred.json --validate val.json \\
        --caps caps.json --caps-validate capsval.json --schema schema.json --out docs/predict

Writes predict_scaling.{png,svg} (per model: speedup and E(K), lines predicted per mode, dots
measured, the knee marked where E first falls below 0.8) and predict_caps.{png,svg} (predicted
exposed comm per epoch against the cap, measured points over it, the best cap starred). Every
number drawn is in the JSON `dpscale predict` wrote: this script computes none (a measured E is
the measured speedup divided by K). stdout: the files written. Bad input: one line, exit 2.
"""
import argparse
import json
import sys

sys.dont_write_bytecode = True

from pathlib import Path  # noqa: E402

from dpscale_plots.point import PointKey  # noqa: E402
from dpscale_plots.style import MODE_COLOR, MODE_LABEL, MUTED, K_COLORS, save, use_modes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PROG = "plot_predict"
KNEE_E = 0.8


def fail(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(2)


def read_json(path, what):
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        fail(f"cannot read {what} '{path}': {e.strerror}")
    except ValueError:
        fail(f"{what} '{path}' is not JSON")


def check_rows(rows, path, keys):
    if not isinstance(rows, list) or not rows:
        fail(f"'{path}' is not a non-empty list of rows (want `dpscale predict --format json`)")
    for r in rows:
        missing = [k for k in keys if k not in r]
        if missing:
            fail(f"'{path}': a row lacks {', '.join(missing)}")


def read_measured(path):
    """The validated points of `dpscale predict --validate --format json`, each as (its key, the
    point): the key read through the point schema the file carries, as the plotter reads a report's."""
    val = read_json(path, "validation")
    if not isinstance(val, dict) or "point_schema" not in val or not isinstance(val.get("points"), list):
        fail(f"'{path}' has no points or no point_schema (want `dpscale predict --validate R --format json`)")
    try:
        return [(PointKey(m["point"], val["point_schema"]), m) for m in val["points"]]
    except (KeyError, TypeError):
        fail(f"'{path}': a point has no 'point' key (want `dpscale predict --validate R --format json`)")


def scaling_chart(rows, measured, out, formats):
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig = Figure(figsize=(5.2 * len(models), 7.0), layout="constrained")
    axes = fig.subplots(2, len(models), squeeze=False)
    fig.suptitle("dpscale predict: speedup and efficiency E(K) to K = 256\n"
                 "lines predicted from the single-device epoch · dots measured · ▼ knee (E < 0.8)")
    for col, model in enumerate(models):
        top, bottom = axes[0][col], axes[1][col]
        mine = [r for r in rows if r["model"] == model]
        ks = sorted({r["world_size"] for r in mine})
        for mode in dict.fromkeys(r["mode"] for r in mine):
            pts = sorted((r for r in mine if r["mode"] == mode), key=lambda r: r["world_size"])
            color = MODE_COLOR.get(mode, MUTED)
            xs = [r["world_size"] for r in pts]
            cap = pts[0]["bucket_cap_mb"]
            label = MODE_LABEL.get(mode, mode) + (f" {cap:g} MiB" if cap is not None else "")
            top.plot(xs, [r["speedup"] for r in pts], color=color, label=label)
            bottom.plot(xs, [r["efficiency"] for r in pts], color=color)
            knee = pts[0]["knee"]
            if knee is not None:
                e = next(r["efficiency"] for r in pts if r["world_size"] == knee)
                bottom.plot([knee], [e], marker="v", markersize=9, color=color, linestyle="none")
            for key, m in measured:
                if key.model == model and key.mode == mode and (cap is None or key.cap == cap):
                    k = key.k
                    top.plot([k], [m["measured_speedup"]], marker="o", color=color, linestyle="none")
                    bottom.plot([k], [m["measured_speedup"] / k], marker="o", color=color,
                                linestyle="none")
        top.plot(ks, ks, color=MUTED, linestyle="--", linewidth=1, label="ideal")
        bottom.axhline(KNEE_E, color=MUTED, linestyle=":", linewidth=1)
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.minorticks_off()
        top.set_yscale("log", base=2)
        top.set_title(model)
        top.set_ylabel("speedup vs one device")
        bottom.set_ylabel("efficiency E = S / K")
        bottom.set_xlabel("world size K (log scale)")
        bottom.set_ylim(0, 1.1)
        if col == 0:
            top.legend(loc="upper left")
    return save(fig, out, "predict_scaling", formats)


def caps_chart(caps, measured, out, formats):
    series = list(dict.fromkeys((r["model"], r["world_size"]) for r in caps))
    fig = Figure(figsize=(8.5, 4.8), layout="constrained")
    ax = fig.subplots()
    fig.suptitle("Bucket cap: predicted exposed comm (line) and a measured bucket sweep (dots)\n"
                 "★ the predicted best cap")
    for i, (model, k) in enumerate(series):
        color = K_COLORS[(i + 1) % len(K_COLORS)]
        pts = sorted((r for r in caps if r["model"] == model and r["world_size"] == k),
                     key=lambda r: r["bucket_cap_mb"])
        ax.plot([r["bucket_cap_mb"] for r in pts], [r["exposed_comm_s"] for r in pts], color=color,
                label=f"{model} K={k} predicted")
        best = next(r for r in pts if r["best"])
        ax.plot([best["bucket_cap_mb"]], [best["exposed_comm_s"]], marker="*", markersize=14,
                color=color, linestyle="none")
        ms = sorted(((key, m) for key, m in measured if key.model == model and key.k == k
                     and key.cap is not None), key=lambda km: km[0].cap)
        if ms:
            ax.plot([key.cap for key, _ in ms], [m["measured_comm_s"] for _, m in ms],
                    marker="o", color=color, linestyle=":", label=f"{model} K={k} measured")
    caps_all = sorted({r["bucket_cap_mb"] for r in caps})
    ax.set_xscale("log", base=2)
    ax.set_xticks(caps_all, [f"{c:g}" for c in caps_all])
    ax.minorticks_off()
    ax.set_xlabel("bucket cap (MiB, log scale)")
    ax.set_ylabel("exposed comm per epoch (s)")
    ax.legend()
    return save(fig, out, "predict_caps", formats)


def main(argv):
    ap = argparse.ArgumentParser(prog="plot_predict.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--predict", help="`dpscale predict --format json` rows")
    ap.add_argument("--validate", help="`dpscale predict --validate R --format json` (measured points)")
    ap.add_argument("--caps", help="`dpscale predict --recommend-cap --format json` rows")
    ap.add_argument("--caps-validate", help="--validate JSON of the measured bucket sweep")
    ap.add_argument("--out", required=True)
    ap.add_argument("--format", default="png,svg")
    ap.add_argument("--schema", help="`dpscale schema --format json`: the modes' labels (without it, their names)")
    a = ap.parse_args(argv)
    if not a.predict and not a.caps:
        fail("give --predict and/or --caps")
    if a.schema:
        schema = read_json(a.schema, "schema")
        modes = schema.get("modes") if isinstance(schema, dict) else None
        if not isinstance(modes, list) or not all(isinstance(m, dict) and {"name", "label", "data_parallel"} <= m.keys()
                                                  for m in modes):
            fail(f"'{a.schema}' has no mode table (want `dpscale schema --format json`)")
        use_modes(modes)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    formats = [f for f in a.format.split(",") if f]
    written = []
    if a.predict:
        rows = read_json(a.predict, "predictions")
        check_rows(rows, a.predict, ["model", "mode", "world_size", "bucket_cap_mb", "speedup",
                                     "efficiency", "knee"])
        measured = read_measured(a.validate) if a.validate else []
        written += scaling_chart(rows, measured, out, formats)
    if a.caps:
        caps = read_json(a.caps, "cap advice")
        check_rows(caps, a.caps, ["model", "world_size", "bucket_cap_mb", "exposed_comm_s", "best"])
        measured = read_measured(a.caps_validate) if a.caps_validate else []
        written += caps_chart(caps, measured, out, formats)
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
