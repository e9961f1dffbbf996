"""charts_axes.py — charts of the option axes a sweep can vary (the point's `settings`):
11 the gradients' wire format (`grad_comm`): step time and what it costs in loss;
12 gradient accumulation (`accum_steps`): throughput and comm share;
13 the all-reduce algorithm (`allreduce`): bus bandwidth in training per bucket size.

Each is drawn only when the report's points differ in that option; the numbers are the report's
(medians over repeats, min..max), as everywhere else in this package.
"""
from collections import defaultdict

from matplotlib.lines import Line2D

from .style import (LABEL_BOX, MODE_COLOR, MODE_LABEL, MUTED, Skip, fmt_rate,
                    model_label, new_figure, time_unit)

FORMAT_ORDER = ["fp32", "bf16", "fp16"]
FORMAT_HATCH = {"fp32": "", "bf16": "//", "fp16": ".."}
ALGO_COLORS = {"native": "#3b3b3b", "ring": "#1f77b4", "star": "#d62728", "hier": "#2ca02c"}


def setting(point, key):
    """The point's value of option KEY (text, as the report keeps it), or None where its mode
    does not take it."""
    return point.key.setting(key)


def _varying(points, key):
    return sorted({setting(p, key) for p in points if setting(p, key) is not None})


def _dp_points(results):
    return [p for p in results.points if p.mode != "single"]


# --- 11: 2-byte gradients ----------------------------------------------------------------------

def chart11_grad_comm(results):
    dp = _dp_points(results)
    formats = [f for f in FORMAT_ORDER if f in _varying(dp, "grad_comm")]
    if len(formats) < 2:
        raise Skip("the file's data-parallel runs do not differ in grad_comm")
    models = [m for m in results.models if any(p.model == m for p in dp)]
    fig, axes = new_figure(
        results, "2-byte gradients — what they save in time, what they cost in loss",
        "left: average epoch per mode and wire format (single device: dashed)\n"
        "right: final loss − fp32's median final loss (grey band: fp32's own run-to-run spread, "
        "min..max); labels: test accuracy",
        ncols=2, nrows=len(models), width=11.0, height=3.8,
        legend=[_format_patch(f) for f in formats])
    for row, model in enumerate(models):
        pts = [p for p in dp if p.model == model]
        modes = [m for m in MODE_LABEL if any(p.mode == m for p in pts)]
        _grad_comm_time(axes[row][0], results, model, pts, modes, formats)
        _grad_comm_loss(axes[row][1], pts, modes, formats)
        axes[row][0].set_title(f"{model_label(results, model)}: epoch time")
        axes[row][1].set_title(f"{model_label(results, model)}: final loss against fp32")
    return fig


def _format_patch(fmt):
    from matplotlib.patches import Patch
    return Patch(facecolor="white", edgecolor="black", hatch=FORMAT_HATCH[fmt], label=fmt)


def _pick(pts, mode, key, value):
    return next((p for p in pts if p.mode == mode and setting(p, key) == value), None)


def _bars(ax, modes, formats, value_of, color_of):
    """Grouped bars: one group per mode, one bar per format. value_of(mode, fmt) ->
    (value, (lo, hi) or None) or None. Returns [(x, value, mode, fmt)] of the bars drawn."""
    width = 0.8 / len(formats)
    drawn = []
    for i, mode in enumerate(modes):
        for j, fmt in enumerate(formats):
            got = value_of(mode, fmt)
            if got is None or got[0] is None:
                continue
            v, spread = got
            x = i + (j - (len(formats) - 1) / 2) * width
            err = None if spread is None else [[v - spread[0]], [spread[1] - v]]
            ax.bar(x, v, width * 0.92, color=color_of(mode), edgecolor="black", linewidth=0.6,
                   hatch=FORMAT_HATCH[fmt], yerr=err, capsize=3, ecolor="#333333")
            drawn.append((x, v, mode, fmt))
    ax.set_xticks(range(len(modes)), [MODE_LABEL[m] for m in modes])
    return drawn


def _grad_comm_time(ax, results, model, pts, modes, formats):
    vals = [p.median("avg_epoch_s") for p in pts]
    single = results.single(model)
    if single:
        vals.append(single.median("avg_epoch_s"))
    scale, unit = time_unit(vals)

    def value_of(mode, fmt):
        p = _pick(pts, mode, "grad_comm", fmt)
        if p is None:
            return None
        v, s = p.stat("avg_epoch_s")
        return v * scale, None if s is None else (s[0] * scale, s[1] * scale)

    for x, v, mode, fmt in _bars(ax, modes, formats, value_of, lambda m: MODE_COLOR[m]):
        base = value_of(mode, formats[0])
        label = f"{v:.3g}" if fmt == formats[0] or base is None else f"{v / base[0]:.2f}×"
        ax.text(x, v, label, ha="center", va="bottom", fontsize=7.5, bbox=LABEL_BOX)
    if single:
        ax.axhline(single.median("avg_epoch_s") * scale, color=MODE_COLOR["single"],
                   linestyle="--", linewidth=1)
    ax.set_ylabel(f"average epoch ({unit}); labels: × of fp32")


def _grad_comm_loss(ax, pts, modes, formats):
    ax.axhline(0, color="black", linewidth=0.8)
    spreads = []
    for i, mode in enumerate(modes):
        ref = _pick(pts, mode, "grad_comm", "fp32")
        if ref is None or ref.median("final_loss") is None:
            continue
        med, s = ref.median("final_loss"), ref.spread("final_loss")
        if s is not None:
            spreads.append(s[1] - s[0])
            ax.fill_between([i - 0.45, i + 0.45], s[0] - med, s[1] - med, color="#bbbbbb",
                            alpha=0.6, linewidth=0)

    def value_of(mode, fmt):
        p, ref = _pick(pts, mode, "grad_comm", fmt), _pick(pts, mode, "grad_comm", "fp32")
        if p is None or ref is None or p.median("final_loss") is None or ref.median("final_loss") is None:
            return None
        v, s = p.stat("final_loss")
        base = ref.median("final_loss")
        return v - base, None if s is None else (s[0] - base, s[1] - base)

    drawn = _bars(ax, modes, formats, value_of, lambda m: MODE_COLOR[m])
    lo = min([0.0] + [v for _, v, _, _ in drawn])
    hi = max([0.0] + [v for _, v, _, _ in drawn])
    pad = 0.25 * ((hi - lo) or 1e-6)
    ax.set_ylim(lo - pad, hi + pad)
    for x, v, mode, fmt in drawn:
        acc = _pick(pts, mode, "grad_comm", fmt).median("test_accuracy")
        if acc is not None:  # the test accuracy beyond the bar's end
            ax.text(x, v, f"{100 * acc:.1f}%", ha="center", va="top" if v < 0 else "bottom",
                    fontsize=7.5, bbox=LABEL_BOX)
    if spreads and max(spreads) == 0:
        # Same seed, same data order, same arithmetic: repeats agree to the last bit, so the
        # difference is the wire format's alone, not noise.
        ax.text(0.99, 0.02, "fp32's repeats: the same loss to the last bit", ha="right",
                va="bottom", transform=ax.transAxes, fontsize=7.5, color=MUTED)
    ax.set_ylabel("final loss − fp32's median; labels: test accuracy")
    ax.ticklabel_format(axis="y", useOffset=False, style="sci", scilimits=(-3, 3))


# --- 12: accumulation -------------------------------------------------------------------------

def chart12_accum_steps(results):
    steps = sorted(int(s) for s in _varying(_dp_points(results), "accum_steps"))
    if len(steps) < 2:
        raise Skip("the file's data-parallel runs do not differ in accum_steps")
    models = [m for m in results.models if any(p.model == m for p in _dp_points(results))]
    fig, axes = new_figure(
        results, "Gradient accumulation — one all-reduce per N micro-batches",
        "left: throughput against accum_steps (single device: dashed, the ceiling)\n"
        "right: the share of the epoch the all-reduce shows (naive: blocking; bucketed: exposed)",
        ncols=2, nrows=len(models), width=11.0, height=3.8)
    for row, model in enumerate(models):
        pts = [p for p in results.points if p.model == model]
        ax_t, ax_c = axes[row]
        for mode in MODE_LABEL:
            series = sorted(((int(setting(p, "accum_steps")), p) for p in pts
                             if p.mode == mode and setting(p, "accum_steps") is not None),
                            key=lambda t: t[0])
            if not series:
                continue
            xs = [n for n, _ in series]
            style = dict(color=MODE_COLOR[mode], marker="o", label=MODE_LABEL[mode])
            if mode == "single":
                style.update(linestyle="--", marker=None)
            thr = [p.stat("throughput_samples_per_s") for _, p in series]
            err = [[v - (s or (v, v))[0] for v, s in thr], [(s or (v, v))[1] - v for v, s in thr]]
            ax_t.errorbar(xs, [v for v, _ in thr], yerr=err, capsize=3, **style)
            if mode != "single":
                ax_t.annotate(fmt_rate(thr[-1][0]), (xs[-1], thr[-1][0]), fontsize=7.5,
                              xytext=(4, 0), textcoords="offset points", va="center")
                frac = [p.value("comm_fraction") for _, p in series]
                ax_c.plot(xs, [None if f is None else 100 * f for f in frac], **style)
        for ax in (ax_t, ax_c):
            ax.set_xscale("log", base=2)
            ax.set_xticks(steps, [str(s) for s in steps])
            ax.set_xlabel("accum_steps (micro-batches per optimizer step)")
        ax_t.set_ylabel("samples/s")
        ax_c.set_ylabel("comm % of the epoch")
        ax_c.set_ylim(bottom=0)
        ax_t.set_title(f"{model_label(results, model)}: throughput")
        ax_c.set_title(f"{model_label(results, model)}: comm share")
        ax_t.legend(loc="best")
    return fig


# --- 13: all-reduce algorithms ------------------------------------------------------------------

def chart13_allreduce_busbw(results):
    dp = [p for p in _dp_points(results) if (p.d.get("diagnosis") or {}).get("bucket_busbw_gbps")]
    algos = _varying(dp, "allreduce")
    if len(algos) < 2:
        raise Skip("the file's data-parallel runs with per-bucket busbw do not differ in allreduce")
    ks = sorted({p.k for p in dp})
    fig, axes = new_figure(
        results, "All-reduce algorithms in training — bus bandwidth per bucket size",
        "each all-reduce of a step: its size and its median busbw = 2(K−1)/K · bytes / time "
        "(medians over repeats); colour: algorithm, one panel per K",
        ncols=len(ks), width=max(6.5, 5.0 * len(ks)), height=4.0, sharey=True,
        legend=[Line2D([], [], color=ALGO_COLORS.get(a, MUTED), marker="o", linestyle="-",
                       label=a) for a in algos])
    for ax, k in zip(axes[0], ks):
        for algo in algos:
            by_size = defaultdict(list)
            for p in dp:
                if p.k != k or setting(p, "allreduce") != algo:
                    continue
                d = p.d["diagnosis"]
                for b, bw in zip(d.get("allreduce_unit_bytes") or [], d["bucket_busbw_gbps"]):
                    if b and bw is not None and bw > 0:
                        by_size[b].append(bw)
            if not by_size:
                continue
            xs = sorted(by_size)
            ys = [sorted(by_size[x])[len(by_size[x]) // 2] for x in xs]
            ax.plot(xs, ys, color=ALGO_COLORS.get(algo, MUTED), marker="o", markersize=4,
                    linewidth=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("all-reduce size (bytes)")
        ax.set_title(f"K = {k}")
    axes[0][0].set_ylabel("busbw (GB/s, in the run's own time)")
    return fig
