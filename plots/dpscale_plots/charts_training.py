"""charts_training.py — chart 5 (loss convergence: the workshop's logging artifact) and chart 7
(the bucket-cap sweep: throughput and exposed comm vs cap). The loss curves are the report's
per-epoch medians over repeats; chart 7's numbers its medians, min..max and bucket counts.
"""
import math

from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy
from matplotlib.ticker import EngFormatter

from .style import (K_COLORS, LABEL_BOX, MODE_LABEL, MUTED, Skip, fmt_rate, model_label,
                    new_figure, time_unit)

# In chart 5 colour is K (the curves cluster by K) and line style is the mode (which must not
# matter): one curve per mode at a K overlaps into one line, which is the point. The styles are
# this plotter's look, given in the report's mode order (MODE_LABEL), so the legend names each.
LINE_STYLES = ["-", "-.", "--", ":", (0, (1, 3)), (0, (5, 1))]


def _mode_style(mode):
    return LINE_STYLES[list(MODE_LABEL).index(mode) % len(LINE_STYLES)]
SWEEP_COLORS = ["#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]


def _k_color(k, ks):
    return K_COLORS[ks.index(k) % len(K_COLORS)]


def _loss_points(results, model):
    pts = []
    for k in results.ks(model, parallel_only=False):
        for mode in results.modes_at(model, k):
            p = results.get(model, mode, k)
            if p.curve("loss_global") or p.curve("loss_rank0"):
                pts.append(p)
    return pts


def chart5_loss(results):
    # The workshop shows its biggest model; so do we (the first with loss curves from the top).
    model = next((m for m in reversed(results.models) if _loss_points(results, m)), None)
    if model is None:
        raise Skip("no run has per-epoch loss_global or loss_rank0")
    pts = _loss_points(results, model)
    ks = sorted({p.k for p in pts})
    modes = [m for m in MODE_LABEL if any(p.mode == m for p in pts)]
    legend = ([Line2D([], [], color=_k_color(k, ks), linewidth=2.5, label=f"K={k}") for k in ks]
              + [Line2D([], [], color="black", linestyle=_mode_style(m), label=MODE_LABEL[m])
                 for m in modes])
    fig, axes = new_figure(
        results, f"Loss convergence — {model_label(results, model)}",
        "left: the loss rank 0 computes on its own 1/K shard (what the workshop logged) — "
        "curves split by K\nright: the all-reduced loss of the whole global batch — every mode "
        "and K trains the same model, so the curves coincide",
        ncols=2, width=11.0, height=4.2, legend=legend, sharey=True)
    titles = {"loss_rank0": "loss_rank0 — rank 0's shard (logging artifact)",
              "loss_global": "loss_global — true global-batch loss"}
    for ax, field in zip(axes[0], ("loss_rank0", "loss_global")):
        curves = [(p, p.curve(field)) for p in pts if p.curve(field)]
        for p, curve in curves:
            ax.plot(range(1, len(curve) + 1), curve, color=_k_color(p.k, ks),
                    linestyle=_mode_style(p.mode), marker=".", markersize=5,
                    linewidth=_nested_width(field, p.k, ks))
        if curves:
            _gap_note(ax, [c for _, c in curves])
        else:
            ax.text(0.5, 0.5, f"no {field} in this file", transform=ax.transAxes,
                    ha="center", color=MUTED)
        ax.set_title(titles[field])
        ax.set_xlabel("epoch")
        ax.xaxis.get_major_locator().set_params(integer=True)
        # Losses of short runs differ in the 4th decimal: print them whole rather than as an
        # offset ("+2.302") that lands on the panel title.
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    axes[0][0].set_ylabel("training loss (cross-entropy)")
    return fig


def _nested_width(field, k, ks):
    # On the global panel the curves lie on top of one another; drawing small K wide and large
    # K thin leaves every colour visible, nested, instead of only the last one drawn.
    if field != "loss_global":
        return 1.8
    return 1.6 + 2.2 * (len(ks) - 1 - ks.index(k))


def _gap_note(ax, curves):
    """How far apart the curves of a panel are at the last epoch: a number for 'they coincide'."""
    n = min(len(c) for c in curves)
    last = [c[n - 1] for c in curves if not math.isnan(c[n - 1])]
    spread = f"{max(last) - min(last):.3g}" if last else "n/a"
    ax.text(0.98, 0.97, f"{len(curves)} runs · spread at epoch {n}: {spread}",
            transform=ax.transAxes, ha="right", va="top", fontsize=8, color="#333333")


def chart7_bucket_sweep(results):
    sweeps = results.sweeps()
    if not sweeps:
        raise Skip("no bucketed runs at two or more bucket caps (no bucket-cap sweep)")
    series = [(model, k, SWEEP_COLORS[i % len(SWEEP_COLORS)])
              for i, (model, k) in enumerate(sweeps)]
    legend = [Line2D([], [], color=c, marker="o", label=f"{model_label(results, m)} K={k}")
              for m, k, c in series]
    legend.append(Line2D([], [], color=MUTED, linestyle=":",
                         label=f"{MODE_LABEL['interleaved']} (one all-reduce per tensor), same K"))
    if getattr(results, "predicted_caps", None):
        legend.append(Line2D([], [], color=MUTED, linestyle="--", label="predicted (dpscale predict)"))
    fig, axes = new_figure(
        results, f"{MODE_LABEL['bucketed']}: throughput and exposed communication vs bucket cap",
        "small caps pay a per-call latency on many all-reduces; large caps start the first "
        "all-reduce late and overlap less\n★ best cap · numbers on the lower panel: buckets "
        "(all-reduce calls) per step",
        nrows=2, width=9.0, height=3.0, legend=legend, sharex=True)
    top, bottom = axes[0][0], axes[1][0]
    # The report's comm_s of an overlapped mode is its exposed comm: what finish() waited.
    scale, unit = time_unit(results.get(m, "bucketed", k, c).median("comm_s")
                            for m, k, _ in series for c in results.caps(m, k))
    all_caps = set()
    bucket_labels = []
    for model, k, color in series:
        caps = results.caps(model, k)
        all_caps.update(caps)
        pts = [results.get(model, "bucketed", k, c) for c in caps]
        _sweep_throughput(top, caps, pts, color)
        bucket_labels += _sweep_exposed(bottom, caps, pts, color, scale)
        ref = results.get(model, "interleaved", k)
        if ref is not None:
            top.axhline(ref.median("throughput_samples_per_s"), color=color, linestyle=":",
                        linewidth=1.2)
            if ref.median("comm_s") is not None:
                bottom.axhline(ref.median("comm_s") * scale, color=color,
                               linestyle=":", linewidth=1.2)
    _predicted_exposed(bottom, results, series, scale)
    caps = sorted(all_caps)
    bottom.set_xscale("log", base=2)
    bottom.set_xticks(caps, [f"{c:g}" for c in caps])
    bottom.minorticks_off()
    bottom.set_xlabel("bucket cap (MiB, log scale)")
    top.set_ylabel("throughput (samples/s)")
    top.yaxis.set_major_formatter(EngFormatter(sep=""))  # 1.05k, not three ticks of "1.1k"
    top.set_title("throughput — higher is better", fontsize=10)
    bottom.set_ylabel(f"exposed comm per epoch ({unit})")
    bottom.set_title("communication not hidden behind backward — lower is better", fontsize=10)
    bottom.set_ylim(0, bottom.get_ylim()[1] * 1.1)
    _bucket_count_labels(bottom, bucket_labels)
    lo, hi = top.get_ylim()
    top.set_ylim(lo, hi + 0.12 * (hi - lo))  # room for the best-cap label
    return fig


def _predicted_exposed(ax, results, series, scale):
    """`dpscale predict --recommend-cap` rows (plot_results.py --predict-caps), dashed
    over the measured exposed comm of the same (model, K); the numbers are predict's."""
    rows = getattr(results, "predicted_caps", None) or []
    for model, k, color in series:
        pts = sorted((r for r in rows if r.get("model") == model and r.get("world_size") == k),
                     key=lambda r: r["bucket_cap_mb"])
        if pts:
            ax.plot([r["bucket_cap_mb"] for r in pts], [r["exposed_comm_s"] * scale for r in pts],
                    color=color, linestyle="--", linewidth=1.2)


def _sweep_throughput(ax, caps, pts, color):
    ys = [p.median("throughput_samples_per_s") for p in pts]
    ax.plot(caps, ys, color=color, marker="o", linewidth=1.8)
    for c, p, y in zip(caps, pts, ys):
        spread = p.spread("throughput_samples_per_s")
        if spread:
            ax.errorbar(c, y, yerr=[[y - spread[0]], [spread[1] - y]], fmt="none", ecolor=color,
                        elinewidth=1, capsize=2.5)
    best = max(range(len(ys)), key=lambda i: ys[i])
    ax.plot(caps[best], ys[best], marker="*", markersize=15, color=color,
            markeredgecolor="black", markeredgewidth=0.6, zorder=4)
    # Centred over the star, except at either end of the axis where it would run off.
    ha = "left" if best == 0 and len(caps) > 1 else "right" if best == len(caps) - 1 else "center"
    ax.annotate(f"{fmt_rate(ys[best])}/s at {caps[best]:g} MiB", (caps[best], ys[best]),
                xytext=(0, 9), textcoords="offset points", ha=ha, va="bottom",
                fontsize=8, color=color, fontweight="bold")


def _sweep_exposed(ax, caps, pts, color, scale):
    """The exposed-comm curve of one series; returns its bucket-count labels to place,
    [(cap, y, text, color)], placed once every series is drawn (they share x positions)."""
    ys = [p.median("comm_s") for p in pts]
    keep = [(c, y * scale, p) for c, y, p in zip(caps, ys, pts) if y is not None]
    if not keep:
        return []
    ax.plot([c for c, _, _ in keep], [y for _, y, _ in keep], color=color, marker="o",
            linewidth=1.8)
    labels = []
    for c, y, p in keep:
        spread = p.spread("comm_s")
        if spread:
            ax.errorbar(c, y, yerr=[[y - spread[0] * scale], [spread[1] * scale - y]], fmt="none",
                        ecolor=color, elinewidth=1, capsize=2.5)
        nb = p.value("n_buckets")
        if nb is not None:
            labels.append((c, y, f"{nb:.0f}", color))
    return labels


def _bucket_count_labels(ax, labels):
    """Bucket counts beside their points (left of them at the largest cap, where the axis
    ends, else right), so no label covers a marker; where series meet at one cap, the labels
    are moved apart vertically, in the order of their points, so none prints over another."""
    lo, hi = ax.get_ylim()
    gap = 0.07 * (hi - lo)  # one label's height, in data units, with a little air
    last = max(c for c, _, _, _ in labels) if labels else None
    by_cap = {}
    for c, y, text, color in labels:
        by_cap.setdefault(c, []).append((y, text, color))
    for c, group in by_cap.items():
        group.sort()
        ys = [y for y, _, _ in group]
        for i in range(1, len(ys)):  # push up what sits too close above its neighbour
            ys[i] = max(ys[i], ys[i - 1] + gap)
        # then centre the stack on the points, so it strays from them as little as it can
        shift = (sum(y for y, _, _ in group) - sum(ys)) / len(ys)
        left = c == last
        # data coordinates moved sideways by a few points: clear of the marker at any scale
        beside = offset_copy(ax.transData, fig=ax.figure, x=-7 if left else 7, units="points")
        for ly, (y, text, color) in zip(ys, group):
            ax.annotate(text, (c, y), xytext=(c, ly + shift), textcoords=beside,
                        ha="right" if left else "left", va="center", fontsize=7.5,
                        color=color, bbox=LABEL_BOX, annotation_clip=False)
