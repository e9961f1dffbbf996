"""charts_bars.py — the workshop's bar charts: 1 epoch time, 3 naive compute/comm split,
4 overlap saving vs naive, 6 throughput.

Charts 1 and 6 give each model its own panel: epoch times differ 10x between models, and on one
shared axis the small model's bars (where parallelism loses) would be too short to read.
Every number is the report's (load.py): medians of repeats, min..max, comm fraction, the saving
against naive.
"""
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import EngFormatter

from .style import (DP_MODES, LABEL_BOX, MODE_COLOR, MODE_LABEL, MUTED, Skip, fmt_rate, fmt_sig,
                    fmt_time, model_label, new_figure, shade, time_unit)

BAR_W = 0.29


def mode_handles(modes):
    return [Patch(color=MODE_COLOR[m], label=MODE_LABEL[m]) for m in modes]


def _modes_in_file(results):
    return [m for m in MODE_LABEL if any(p.mode == m for p in results.points)]


def _bars_by_k(ax, results, model, field, scale, label_fmt):
    """One panel: a group of bars per world size K, one bar per mode present at that K, each
    with its value on top and min..max of the repeats as an error bar."""
    ks = results.ks(model, parallel_only=False)
    top = 0.0
    for gi, k in enumerate(ks):
        modes = results.modes_at(model, k)
        for j, mode in enumerate(modes):
            p = results.get(model, mode, k)
            x = gi + (j - (len(modes) - 1) / 2) * BAR_W
            y = p.median(field) * scale
            color = shade(MODE_COLOR[mode], k, ks)
            ax.bar(x, y, BAR_W * 0.92, color=color, edgecolor="white", linewidth=0.5)
            spread = p.spread(field)
            hi = y
            if spread:
                lo, hi = spread[0] * scale, spread[1] * scale
                ax.errorbar(x, y, yerr=[[y - lo], [hi - y]], fmt="none", ecolor="black",
                            elinewidth=0.8, capsize=2)
            ax.annotate(label_fmt(y), (x, hi), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7.5, bbox=LABEL_BOX, zorder=4)
            top = max(top, hi)
    ax.set_xticks(range(len(ks)), [f"K={k}" for k in ks])
    ax.set_xlim(-0.6, len(ks) - 0.4)
    ax.grid(axis="x", visible=False)
    return ks, top


def _baseline(ax, y):
    """A dashed line across the panel at the single-device value. Named in the legend, not on
    the line: a label there sits where a bar as tall as the single run puts its value."""
    ax.axhline(y, color=MUTED, linestyle="--", linewidth=1, zorder=0)


def _per_model_bars(results, field, title, subtitle, ylabel, scale, label_fmt, baseline_label,
                    extra=None, yfmt=None):
    models = results.models
    legend = mode_handles(_modes_in_file(results)) + [
        Line2D([], [], color=MUTED, linestyle="--", linewidth=1, label=baseline_label)]
    fig, axes = new_figure(results, title, subtitle, ncols=len(models), legend=legend)
    for ax, model in zip(axes[0], models):
        ks, top = _bars_by_k(ax, results, model, field, scale, label_fmt)
        single = results.single(model)
        if single is not None:
            _baseline(ax, single.median(field) * scale)
        if extra:
            top = max(top, extra(ax, model, ks) or 0)
        ax.set_ylim(0, top * 1.15)
        if yfmt:
            ax.yaxis.set_major_formatter(yfmt)
        ax.set_title(model_label(results, model))
        ax.set_xlabel(f"world size K ({results.device_word()})")
    axes[0][0].set_ylabel(ylabel)
    return fig


def chart1_epoch_time(results):
    scale, unit = time_unit(p.median("avg_epoch_s") for p in results.points)
    return _per_model_bars(
        results, "avg_epoch_s",
        "Epoch time: " + " vs ".join(MODE_LABEL.values()),
        "lower is better · dashed: the single-device epoch — "
        "bars above it are slower than one device",
        f"average epoch time ({unit})", scale, lambda v: fmt_time(v, unit),
        "single-device epoch")


def chart6_throughput(results):
    def ideal(ax, model, ks):
        # Ideal strong scaling: K devices process K times the single-device rate.
        single = results.single(model)
        if single is None:
            return 0
        t1 = single.median("throughput_samples_per_s")
        for gi, k in enumerate(ks):
            if k > 1:
                ax.hlines(k * t1, gi - 0.45, gi + 0.45, colors=MUTED, linestyles=":", linewidth=1.2)
                ax.annotate(f"ideal {k}×", (gi + 0.45, k * t1), xytext=(0, 2),
                            textcoords="offset points", ha="right", va="bottom", fontsize=7,
                            color=MUTED)
        return max(k * t1 for k in ks)

    return _per_model_bars(
        results, "throughput_samples_per_s", "Training throughput",
        "higher is better · dashed: single device · dotted: ideal K× the single-device rate",
        "throughput (samples/s)", 1.0, fmt_rate, "single-device rate", extra=ideal,
        yfmt=EngFormatter(sep=""))


def chart3_naive_split(results):
    rows = [(m, k, results.get(m, "naive", k)) for m in results.models for k in results.ks(m)]
    rows = [(m, k, p) for m, k, p in rows
            if p is not None and p.median("comm_s") is not None]
    if not rows:
        raise Skip("no Naive DP runs with comm_s at K > 1")
    scale, unit = time_unit(p.median("avg_epoch_s") for _, _, p in rows)
    fig, axes = new_figure(
        results, "Naive DP: computation vs communication per epoch",
        "each bar is one naive epoch split into compute and the blocking all-reduce · "
        "right: compute + comm = epoch",
        width=9.0, height=0.42 * len(rows) + 1.2,
        legend=[Patch(color="#9ecae1", label="compute"),
                Patch(color=MODE_COLOR["naive"], label="communication (all-reduce)")])
    ax = axes[0][0]
    ys, labels, y, prev = [], [], 0.0, None
    for model, k, p in rows:
        if prev is not None and model != prev:
            y += 0.5  # a gap between models
        prev = model
        ys.append(y)
        labels.append(f"{model_label(results, model)}  K={k}")
        _split_bar(ax, y, p, scale, unit)
        y += 1
    ax.set_yticks(ys, labels)
    ax.invert_yaxis()  # first model on top
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_xlabel("share of the naive epoch time")
    ax.grid(axis="y", visible=False)
    return fig


def _split_bar(ax, y, p, scale, unit):
    epoch, comm = p.median("avg_epoch_s"), p.median("comm_s")
    share = p.value("comm_fraction") or 0.0  # the report's: median of each run's comm / epoch
    ax.barh(y, 1 - share, 0.7, color="#9ecae1")
    ax.barh(y, share, 0.7, left=1 - share, color=MODE_COLOR["naive"])
    # The comm share inside its segment when it fits, else just left of it.
    inside = share > 0.15
    ax.text(1 - share / 2 if inside else 1 - share - 0.01, y, f"{share:.0%} comm",
            ha="center" if inside else "right", va="center", fontsize=8.5, fontweight="bold",
            color="white" if inside else MODE_COLOR["naive"])
    # Absolute times beside the bar: the share alone hides how long the epoch was.
    ax.text(1.01, y, f"{fmt_time(p.median('compute_s') * scale, unit)} + "
            f"{fmt_time(comm * scale, unit)} = {fmt_time(epoch * scale, unit)} {unit}",
            ha="left", va="center", fontsize=8, color="#333333", clip_on=False)


def _overlapped():
    """The data-parallel modes chart 4 holds against naive: the report's others."""
    return [m for m in DP_MODES if m != "naive"]


def chart4_overlap_saving(results):
    groups = []
    for model in results.models:
        for k in results.ks(model):
            naive = results.get(model, "naive", k)
            others = [m for m in _overlapped() if results.get(model, m, k)]
            if naive is not None and others:
                groups.append((model, k, naive))
    if not groups:
        raise Skip("no K > 1 point with Naive DP and an overlapped mode to compare")
    fig, axes = new_figure(
        results, " vs ".join(MODE_LABEL[m] for m in DP_MODES) + ": time saved by overlap",
        f"0% = {MODE_LABEL['naive']} at the same model and K · above the line: faster than naive · "
        "labels: % and time saved per epoch",
        width=max(7.0, 1.3 * len(groups) + 2.0),
        legend=[Line2D([], [], color=MODE_COLOR["naive"], linewidth=2.5, label=f"{MODE_LABEL['naive']} (= 0%)")]
        + mode_handles(_overlapped()))
    ax = axes[0][0]
    scale, unit = time_unit(n.median("avg_epoch_s") for _, _, n in groups)
    lo_all, hi_all = 0.0, 0.0
    for gi, (model, k, naive) in enumerate(groups):
        lo, hi = _saving_bars(ax, results, gi, model, k, scale, unit)
        lo_all, hi_all = min(lo_all, lo), max(hi_all, hi)
    ax.axhline(0, color=MODE_COLOR["naive"], linewidth=2)
    pad = 0.18 * max(hi_all - lo_all, 5)
    ax.set_ylim(min(lo_all - pad, -2), hi_all + pad)
    ax.set_xticks(range(len(groups)), [f"{model_label(results, m)}\nK={k}" for m, k, _ in groups])
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0f}%")
    ax.set_ylabel(f"epoch time saved vs {MODE_LABEL['naive']}")
    ax.grid(axis="x", visible=False)
    return fig


def _saving_bars(ax, results, gi, model, k, scale, unit):
    """Bars of the report's saving against naive (naive_saving: 1 - T/T_naive, min..max from
    the slowest..fastest repeat), labelled with the % and the seconds saved per epoch."""
    lo_all, hi_all = 0.0, 0.0
    modes = _overlapped()
    width = 0.72 / max(len(modes), 1)
    for j, mode in enumerate(modes):
        p = results.get(model, mode, k)
        if p is None or p.median("naive_saving") is None:
            continue
        frac, spread = p.stat("naive_saving")
        saved = 100 * frac
        x = gi + (j - (len(modes) - 1) / 2) * width
        ax.bar(x, saved, width - 0.02, color=MODE_COLOR[mode])
        lo, hi = saved, saved
        if spread:
            lo, hi = 100 * spread[0], 100 * spread[1]
            ax.errorbar(x, saved, yerr=[[saved - lo], [hi - saved]], fmt="none",
                        ecolor="black", elinewidth=0.8, capsize=2)
        up = saved >= 0
        seconds = p.value("naive_saving_s") * scale
        # Two significant digits, zeros kept: "1.0 s" beside "0.78 s", never "1 s".
        ax.annotate(f"{_signed(f'{saved:.0f}')}%\n{_signed(fmt_sig(seconds, 2))} {unit}",
                    (x, max(hi, 0) if up else min(lo, 0)), xytext=(0, 2 if up else -2),
                    textcoords="offset points", ha="center", va="bottom" if up else "top",
                    fontsize=7.5)
        lo_all, hi_all = min(lo_all, lo), max(hi_all, hi)
    return lo_all, hi_all


def _signed(text):
    """A number's text with a real minus sign (U+2212), as the axes print it."""
    return text.replace("-", "\u2212")
