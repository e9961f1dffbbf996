"""charts_scaling.py — how speed grows with the number of devices: chart 2 (speedup S(K) with
the ideal line) and chart 8 (efficiency E(K) = S/K and gamma(K) = comm/compute, knee marked).

Definitions from textbook 15.9 section 3: S(K) = T(K)/T(1) with T the throughput, E(K) = S/K,
gamma(K) = t_comm/t_compute. Gamma is measured on Naive DP, the one mode whose all-reduce is a
separate phase (comm_s) with compute_s beside it. S, E and gamma are read from the report, not
recomputed: with repeats, gamma is the median of each run's comm/compute (harness/report/analysis.h),
which the ratio of the median comm to the median compute is not. The knee is where gamma crosses
1; E below 0.8 is the usual tolerance. Finding the crossings is the only arithmetic done here.
"""
import math

from matplotlib.lines import Line2D

from .style import (DP_MODES, LABEL_BOX, MODE_COLOR, MODE_LABEL, MUTED, Skip, model_label,
                    new_figure)

E_TOLERANCE = 0.8
KNEE_COLOR = "#8b0000"
GAMMA_KNEE_COLOR = "#6a3d9a"


def _scaling_models(results):
    models = [m for m in results.models if results.single(m) is not None and results.ks(m)]
    if not models:
        raise Skip("no K > 1 runs of a model that also has a single-device baseline")
    return models


def _mode_lines(modes):
    return [Line2D([], [], color=MODE_COLOR[m], marker="o", label=MODE_LABEL[m]) for m in modes]


def _log2_k_axis(ax, ks):
    """World sizes are powers of two in practice: log2 spacing, plain integer ticks."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_xlim(ks[0] / 1.25, ks[-1] * 1.25)


def _series(results, model, mode, field, nodes=None):
    """[(K, value, spread)] of the report's speedup or efficiency, starting at the single run
    (1.0 for both): every mode's curve leaves from the baseline. nodes: one placement's node
    count (None: whichever placement the report has first)."""
    base = results.single(model).median(field)
    pts = [(1, base, None)]
    for k in results.ks(model):
        p = results.get(model, mode, k, nodes=nodes)
        if p is not None and p.median(field) is not None:
            pts.append((k, *p.stat(field)))
    return pts if len(pts) > 1 else []


def _speedup_series(results, model, mode, nodes=None):
    return _series(results, model, mode, "speedup", nodes)


# One line per placement in chart 2: the node count's line style.
NODE_STYLES = ["-", "-.", (0, (1, 1)), (0, (6, 2))]  # "--" is the ideal line


def _efficiency_series(results, model, mode):
    return _series(results, model, mode, "efficiency")


def chart2_speedup(results):
    models = _scaling_models(results)
    modes = [m for m in DP_MODES if any(_speedup_series(results, md, m) for md in models)]
    node_counts = results.node_counts()
    placed = node_counts != [None]
    legend = _mode_lines(modes) + [
        Line2D([], [], color=MUTED, linestyle=NODE_STYLES[i % len(NODE_STYLES)],
               label=f"{n} node{'s' if n > 1 else ''} (K/{n} ranks each)")
        for i, n in enumerate(node_counts) if placed] + [
        Line2D([], [], color=MUTED, linestyle="--", label="ideal linear (S = K)"),
        # In the legend, not on the line: lines leaving (1, 1) would cross a label there.
        Line2D([], [], color=MUTED, linestyle=":", label="1× = one device")]
    fig, axes = new_figure(
        results, "Scaling: speedup over the single-device run",
        "S(K) = throughput with K devices / single-device throughput · "
        "below the dotted 1× line, parallel is slower than one device",
        ncols=len(models), legend=legend)
    for ax, model in zip(axes[0], models):
        ks = [1] + results.ks(model)
        ax.plot(ks, ks, color=MUTED, linestyle="--", linewidth=1)
        ax.axhline(1.0, color=MUTED, linestyle=":", linewidth=1)
        ends = []
        for i, nodes in enumerate(node_counts):
            for mode in modes:
                pts = _speedup_series(results, model, mode, nodes)
                if pts:
                    _plot_with_spread(ax, pts, MODE_COLOR[mode], linestyle=NODE_STYLES[i % len(NODE_STYLES)])
                    if i == 0:
                        ends.append((pts[-1][1], pts[-1][0], mode))
        _label_line_ends(ax, ends, top=max(ks))
        _log2_k_axis(ax, ks)
        ax.set_ylim(0, max([max(ks)] + [s for s, _, _ in ends]) * 1.08)
        ax.set_title(model_label(results, model))
        ax.set_xlabel(f"world size K ({results.device_word()})")
    axes[0][0].set_ylabel("speedup S(K) (×)")
    return fig


def _plot_with_spread(ax, pts, color, hollow_below=None, linestyle="-"):
    ks, ys = [p[0] for p in pts], [p[1] for p in pts]
    ax.plot(ks, ys, color=color, marker="o", linewidth=1.8, markersize=5, zorder=3, linestyle=linestyle)
    for k, y, spread in pts:
        if spread:
            ax.errorbar(k, y, yerr=[[y - spread[0]], [spread[1] - y]], fmt="none",
                        ecolor=color, elinewidth=1, capsize=2.5, zorder=3)
        if hollow_below is not None and y < hollow_below:
            # A hollow marker flags the points past the efficiency tolerance.
            ax.plot(k, y, marker="o", markersize=8, markerfacecolor="white",
                    markeredgecolor=color, markeredgewidth=1.8, zorder=4)


def _label_line_ends(ax, ends, top, fmt="{:.2f}×"):
    """Value labels right of each line's last point, pushed apart (in data units) so close
    values stay legible."""
    min_gap = 0.07 * top
    placed = None
    for y, k, mode in sorted(ends):
        ly = y if placed is None or y - placed >= min_gap else placed + min_gap
        placed = ly
        ax.annotate(fmt.format(y), (k, ly), xytext=(6, 0), textcoords="offset points",
                    ha="left", va="center", fontsize=8, color=MODE_COLOR[mode],
                    fontweight="bold", annotation_clip=False, bbox=LABEL_BOX, zorder=5)


def _gamma_series(results, model):
    """[(K, gamma)] of the naive points: the report's gamma, as `dpscale report` prints it."""
    out = []
    for k in results.ks(model):
        p = results.get(model, "naive", k)
        if p is not None and p.value("gamma") is not None:
            out.append((k, p.value("gamma")))
    return out


def crossing(series, level, rising):
    """Where a measured curve [(K, v)] first passes LEVEL (upwards if rising): (K, text form).
    Between two measured world sizes the crossing is interpolated linearly in log2 K, the
    axis the chart uses; K is None when the curve never passes it."""
    prev = None
    for k, v in series:
        if (v >= level) if rising else (v < level):
            if prev is None:
                return k, f"K ≤ {k}"
            (k0, v0) = prev
            t = (level - v0) / (v - v0)
            kx = 2 ** (math.log2(k0) + t * (math.log2(k) - math.log2(k0)))
            return kx, f"K ≈ {kx:.1f}"
        prev = (k, v)
    return None, None


def efficiency_knee(results, model, modes):
    """The practical limit (textbook 15.9): where even the best mode's E falls below 0.8."""
    best = {}
    for mode in modes:
        for k, e, _ in _efficiency_series(results, model, mode):
            best[k] = max(best.get(k, 0.0), e)
    series = sorted(best.items())
    k, where = crossing(series, E_TOLERANCE, rising=False)
    if k is None:
        return None, f"E ≥ {E_TOLERANCE} up to K={series[-1][0]}"
    return k, f"best E < {E_TOLERANCE} past {where}"


def gamma_knee(series):
    """The knee proper: where gamma(K) crosses 1 and the all-reduce can no longer hide."""
    if not series:
        return None, "no Naive DP runs: γ unknown"
    k, where = crossing(series, 1.0, rising=True)
    if k is None:
        return None, f"γ < 1 up to K={series[-1][0]}: no knee yet"
    return k, f"knee: γ = 1 at {where}"


def chart8_efficiency(results):
    models = _scaling_models(results)
    modes = [m for m in DP_MODES if any(_speedup_series(results, md, m) for md in models)]
    legend = _mode_lines(modes) + [
        Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle="none",
               label=f"E < {E_TOLERANCE}"),
        Line2D([], [], color=KNEE_COLOR, linestyle=":", linewidth=1.6,
               label=f"best E falls below {E_TOLERANCE}"),
        Line2D([], [], color=GAMMA_KNEE_COLOR, linestyle="-.", linewidth=1.6,
               label="γ crosses 1 (knee)")]
    fig, axes = new_figure(
        results, "Scaling efficiency E(K) = S/K and comm-to-compute ratio γ(K)",
        f"top: the share of the ideal speedup each mode reaches (tolerance {E_TOLERANCE})\n"
        "bottom: γ = all-reduce time / compute time, measured on Naive DP · the knee is where "
        "γ crosses 1 and communication stops hiding behind compute",
        ncols=len(models), nrows=2, height=3.0, legend=legend, sharex="col")
    for col, model in enumerate(models):
        ks = [1] + results.ks(model)
        gammas = _gamma_series(results, model)
        e_k, e_text = efficiency_knee(results, model, modes)
        g_k, g_text = gamma_knee(gammas)
        _efficiency_panel(axes[0][col], results, model, modes)
        _gamma_panel(axes[1][col], model, gammas)
        for ax in (axes[0][col], axes[1][col]):
            if e_k is not None:
                ax.axvline(e_k, color=KNEE_COLOR, linestyle=":", linewidth=1.6, zorder=2)
            if g_k is not None:
                ax.axvline(g_k, color=GAMMA_KNEE_COLOR, linestyle="-.", linewidth=1.6, zorder=2)
            _log2_k_axis(ax, ks)
        axes[0][col].set_title(f"{model_label(results, model)}\n{e_text}")
        axes[1][col].set_title(g_text, fontsize=10)
        axes[1][col].set_xlabel(f"world size K ({results.device_word()})")
    axes[0][0].set_ylabel("efficiency E(K) = S/K")
    axes[1][0].set_ylabel("γ(K) = comm / compute")
    return fig


def _efficiency_panel(ax, results, model, modes):
    top = 1.0
    for mode in modes:
        pts = _efficiency_series(results, model, mode)
        if pts:
            _plot_with_spread(ax, pts, MODE_COLOR[mode], hollow_below=E_TOLERANCE)
            top = max(top, max(e for _, e, _ in pts))
    ax.axhline(1.0, color=MUTED, linestyle="--", linewidth=1)
    ax.axhline(E_TOLERANCE, color=KNEE_COLOR, linestyle=":", linewidth=1)
    ax.axhspan(0, E_TOLERANCE, color=KNEE_COLOR, alpha=0.05, zorder=0)
    ax.annotate(f"E = {E_TOLERANCE}", (0.99, E_TOLERANCE), xycoords=("axes fraction", "data"),
                xytext=(0, 2), textcoords="offset points", ha="right", va="bottom",
                fontsize=7.5, color=KNEE_COLOR, bbox=LABEL_BOX, zorder=5)
    ax.set_ylim(0, top * 1.12)


def _gamma_panel(ax, model, gammas):
    top = max([1.5] + [g * 1.15 for _, g in gammas])
    ax.axhspan(1.0, top, color=KNEE_COLOR, alpha=0.05, zorder=0)
    ax.axhline(1.0, color=KNEE_COLOR, linestyle=":", linewidth=1)
    ax.annotate("γ = 1: comm-bound above", (0.01, 1.0), xycoords=("axes fraction", "data"),
                xytext=(0, 2), textcoords="offset points", ha="left", va="bottom",
                fontsize=7.5, color=KNEE_COLOR, bbox=LABEL_BOX, zorder=5)
    if gammas:
        ax.plot([k for k, _ in gammas], [g for _, g in gammas], color=MODE_COLOR["naive"],
                marker="s", linewidth=1.8, zorder=3)
        for k, g in gammas:
            # The id names the label in the SVG, so a test can hold it against the report.
            ax.annotate(f"{g:.2f}", (k, g), xytext=(0, 5), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7.5, color=MODE_COLOR["naive"],
                        bbox=LABEL_BOX, zorder=5, gid=f"gamma-{model}-k{k}")
    else:
        ax.text(0.5, 0.5, "no Naive DP runs", transform=ax.transAxes, ha="center",
                color=MUTED)
    ax.set_ylim(0, top)
