"""charts_memory.py — chart 14: what sharding saves in memory per rank and what it costs in
speedup, against K, for bucketed DDP and each sharded stage (the `shard_stage` setting).

Left panel per model: the bytes one rank holds as the trainer counts them (the report's
`memory_per_rank`: parameters, gradients, optimizer state), stacked, one bar per series at each
K, with the measured peak RSS (the largest rank's, median of the repeats) as a marker where the
records carry it. Right panel: the report's speedup S(K) for the same series, where the file has
the model's single-device run to divide by. Drawn only when the file holds sharded runs, so a
sweep without them gets no empty chart. The numbers are the report's; choosing which point is
each series' is the only thing done here.
"""
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import (LABEL_BOX, MODE_COLOR, MODE_LABEL, MUTED, Skip, fmt_sig, model_label,
                    new_figure)

MIB = 1024.0 * 1024.0
STAGES = ["1", "2", "3"]
# Purples, darker with the stage (more of the model sharded), light enough that the black hatches
# of the stack read on them; DDP keeps its green.
STAGE_COLOR = {"1": "#cbc9e2", "2": "#9e9ac8", "3": "#6a51a3"}
# (field of memory_per_rank, name, hatch): the stack's order, bottom up.
COMPONENTS = [("param_bytes", "parameters", ""), ("grad_bytes", "gradients", "//"),
              ("optim_bytes", "optimizer state", "..")]
PEAK_MARKER = dict(marker="D", markersize=5, markerfacecolor="white", markeredgecolor="black",
                   markeredgewidth=1.2, linestyle="none")
BAR_W = 0.8


def series_names(results):
    """The series the file holds, in the order drawn: "bucketed", then "stage1".."stage3"."""
    names = ["bucketed"] if any(p.mode == "bucketed" for p in results.points) else []
    stages = {p.key.setting("shard_stage") for p in results.points if p.mode == "sharded"}
    return names + [f"stage{s}" for s in STAGES if s in stages]


def series_label(name):
    return MODE_LABEL["bucketed"] if name == "bucketed" else f"{MODE_LABEL['sharded']} stage {name[5:]}"


def series_color(name):
    return MODE_COLOR["bucketed"] if name == "bucketed" else STAGE_COLOR[name[5:]]


def series_point(results, model, name, k):
    """The point of series NAME at (model, K), or None. Bucketed: the run charts 1-6 show.
    Sharded: of the runs at that stage, the one at the display cap with the fewest settings off
    their defaults (the stage itself apart), as Results.get picks the plain run of a mode."""
    if name == "bucketed":
        return results.get(model, "bucketed", k)
    stage = name[5:]
    found = [p for p in results.points
             if (p.model, p.mode, p.k) == (model, "sharded", k) and p.key.setting("shard_stage") == stage]
    if not found:
        return None
    cap = results.default_cap
    return min(found, key=lambda p: (p.cap != cap, len([s for s in p.key.off_default if s != "shard_stage"])))


def memory_of(point):
    """{"param", "grad", "optim", "peak_rss"} in MiB for one point; None where the record counts
    no memory (param_bytes 0: a record from before the counts). peak_rss is None where no repeat
    read it (0, or a report from before the field)."""
    m = point.d["memory_per_rank"]
    if not m.get("param_bytes"):
        return None
    out = {field.split("_")[0]: m[field] / MIB for field, _, _ in COMPONENTS}
    rss = m.get("peak_rss_bytes") or 0
    out["peak_rss"] = rss / MIB if rss > 0 else None
    return out


def memory_rows(results, model):
    """What the left panel draws: {K: {series: memory_of(point)}} for the K > 1 the model's series
    reach, series without counted memory left out."""
    rows = {}
    for k in results.ks(model):
        at_k = {}
        for name in series_names(results):
            p = series_point(results, model, name, k)
            mem = memory_of(p) if p is not None else None
            if mem is not None:
                at_k[name] = mem
        if at_k:
            rows[k] = at_k
    return rows


def speedup_rows(results, model):
    """What the right panel draws: {series: [(K, S, (min, max) or None)]}, from (1, 1.0) the
    single run; {} without the model's single-device run (nothing to divide by)."""
    if results.single(model) is None:
        return {}
    out = {}
    for name in series_names(results):
        pts = []
        for k in results.ks(model):
            p = series_point(results, model, name, k)
            if p is not None and p.median("speedup") is not None:
                pts.append((k, *p.stat("speedup")))
        if pts:
            out[name] = [(1, 1.0, None)] + pts
    return out


def chart14_memory_per_rank(results):
    if not any(p.mode == "sharded" for p in results.points):
        raise Skip("the file holds no sharded runs")
    models = [m for m in results.models
              if any(p.model == m and p.mode == "sharded" for p in results.points) and memory_rows(results, m)]
    if not models:
        raise Skip("the file's sharded runs carry no memory counts (param_bytes_per_rank)")
    names = series_names(results)
    any_rss = any(mem["peak_rss"] is not None for m in models
                  for at_k in memory_rows(results, m).values() for mem in at_k.values())
    legend = ([Patch(facecolor=series_color(n), edgecolor="black", linewidth=0.6, label=series_label(n))
               for n in names]
              + [Patch(facecolor="white", edgecolor="black", hatch=h, label=label) for _, label, h in COMPONENTS]
              + ([Line2D([], [], label="peak RSS (measured)", **PEAK_MARKER)] if any_rss else []))
    fig, axes = new_figure(
        results, "Memory per rank against K — what sharding saves, what it costs in speedup",
        "left: MiB one rank holds as the trainer counts it, parameters + gradients + optimizer state "
        "(label: the total)" + ("; ◇ the largest rank's peak RSS, measured (median of repeats)" if any_rss else "")
        + "\nright: speedup over the single-device run, S(K) (dashed: ideal S = K)",
        ncols=2, nrows=len(models), width=12.0, height=3.8, legend=legend)
    for row, model in enumerate(models):
        _memory_panel(axes[row][0], model, memory_rows(results, model), names)
        _speedup_panel(axes[row][1], results, model)
        axes[row][0].set_title(f"{model_label(results, model)}: memory per rank")
        axes[row][1].set_title(f"{model_label(results, model)}: speedup")
    return fig


def _memory_panel(ax, model, rows, names):
    ks = sorted(rows)
    top = 0.0
    for gi, k in enumerate(ks):
        present = [n for n in names if n in rows[k]]
        width = BAR_W / len(present)
        for j, name in enumerate(present):
            mem = rows[k][name]
            x = gi + (j - (len(present) - 1) / 2) * width
            bottom = 0.0
            for field, _, hatch in COMPONENTS:
                v = mem[field.split("_")[0]]
                # The gid names the bar in the SVG and on the axes, so a test can read it back.
                ax.bar(x, v, width * 0.9, bottom=bottom, color=series_color(name), edgecolor="black",
                       linewidth=0.6, hatch=hatch, gid=f"mem-{model}-{name}-k{k}-{field.split('_')[0]}")
                bottom += v
            ax.annotate(fmt_sig(bottom, 3), (x, bottom), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, bbox=LABEL_BOX, zorder=5)
            top = max(top, bottom)
            if mem["peak_rss"] is not None:
                ax.plot([x], [mem["peak_rss"]], zorder=6, gid=f"rss-{model}-{name}-k{k}", **PEAK_MARKER)
                top = max(top, mem["peak_rss"])
    ax.set_xticks(range(len(ks)), [f"K={k}" for k in ks])
    ax.set_xlim(-0.6, len(ks) - 0.4)
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("MiB per rank")


def _speedup_panel(ax, results, model):
    rows = speedup_rows(results, model)
    ks = [1] + results.ks(model)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_xlim(ks[0] / 1.25, ks[-1] * 1.25)
    ax.set_xlabel(f"world size K ({results.device_word()})")
    ax.set_ylabel("speedup S(K) (×)")
    if not rows:
        ax.text(0.5, 0.5, "no single-device run of this model:\nno speedup to show", transform=ax.transAxes,
                ha="center", va="center", color=MUTED)
        ax.set_ylim(0, max(ks) * 1.08)
        return
    ax.plot(ks, ks, color=MUTED, linestyle="--", linewidth=1)
    top = max(ks)
    for name, pts in rows.items():
        color = series_color(name)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker="o", linewidth=1.8,
                markersize=5, zorder=3, gid=f"speedup-{model}-{name}")
        for k, s, spread in pts:
            if spread:
                ax.errorbar(k, s, yerr=[[s - spread[0]], [spread[1] - s]], fmt="none", ecolor=color,
                            elinewidth=1, capsize=2.5, zorder=3)
                top = max(top, spread[1])
            top = max(top, s)
    ax.set_ylim(0, top * 1.08)
