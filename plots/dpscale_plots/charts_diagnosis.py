"""charts_diagnosis.py — the diagnosis charts: why each data-parallel run scaled as it did.

9  time breakdown: one stacked bar per run (model, mode, K), its average epoch split into
   compute not covered by communication, compute overlapped by all-reduces, exposed comm (the
   wait in finish()), loader wait and the rest ("idle": optimizer, step overhead, skew). The
   bar's height is the epoch time; its label is the run's bottleneck.
10 per rank: each rank's compute and all-reduce wait per epoch, one panel per run; a straggler
   is the rank that computes longer while the others wait (its bar is outlined).

Every number is the report's (its "diagnosis" object and the point's medians); the split is
arithmetic on them, stated in the subtitle: overlapped = min(compute, max(0, busy - exposed)),
idle = epoch - compute - exposed - loader (not below 0).
"""
from matplotlib.patches import Patch

from .style import MODE_LABEL, MUTED, Skip, fmt_time, new_figure, time_unit

SEGMENTS = [("compute", "#4c72b0"), ("overlapped comm", "#8fb3e0"), ("exposed comm", "#d62728"),
            ("loader", "#ff7f0e"), ("idle", "#c7c7c7")]


def _diagnosed(results):
    pts = [p for p in results.points if p.mode != "single"
           and (p.d.get("diagnosis") or {}).get("bottleneck")
           and (p.d["diagnosis"].get("per_rank_compute_s") or [])]
    if not pts:
        raise Skip("no data-parallel run carries the diagnosis fields")
    return pts


def _run_label(p):
    return f"{p.model}\n{MODE_LABEL.get(p.mode, p.mode)}\nK={p.k}"


def breakdown(p):
    """The five segments of a point's epoch (seconds), from the report's numbers."""
    d = p.d["diagnosis"]
    epoch = p.median("avg_epoch_s")
    ranks = d["per_rank_compute_s"]
    compute = sum(ranks) / len(ranks)
    waits = d["per_rank_wait_s"] or [0.0]
    exposed = sum(waits) / len(waits)
    busy = p.median("comm_busy_s") or 0.0
    overlapped = min(compute, max(0.0, busy - exposed))
    loader = d["loader_s"]
    idle = max(0.0, epoch - compute - exposed - loader)
    return [compute - overlapped, overlapped, exposed, loader, idle]


def chart9_time_breakdown(results):
    pts = _diagnosed(results)
    rows = [breakdown(p) for p in pts]
    scale, unit = time_unit([sum(r) for r in rows])
    legend = [Patch(color=c, label=n) for n, c in SEGMENTS]
    fig, axes = new_figure(results, "Where each epoch goes",
                           "bar = average epoch; overlapped = all-reduce time hidden under compute "
                           "(busy - exposed); label = the run's bottleneck",
                           width=max(6.5, 1.4 * len(pts) + 2), legend=legend)
    ax = axes[0][0]
    for i, (p, row) in enumerate(zip(pts, rows)):
        bottom = 0.0
        for (name, color), v in zip(SEGMENTS, row):
            ax.bar(i, v * scale, 0.6, bottom=bottom, color=color, edgecolor="white", linewidth=0.5)
            bottom += v * scale
        d = p.d["diagnosis"]
        label = d["bottleneck"] + (f" (rank {d['straggler_rank']})" if d.get("straggler_rank") is not None else "")
        if d.get("overlap_pct") is not None:
            label += f"\noverlap {d['overlap_pct']:.0f}%"
        ax.annotate(label, (i, bottom), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", fontsize=8)
    ax.set_xticks(range(len(pts)), [_run_label(p) for p in pts], fontsize=8)
    top = max(sum(r) for r in rows) * scale
    ax.set_ylim(0, top * 1.25)
    ax.set_ylabel(f"time per epoch ({unit})")
    ax.grid(axis="x", visible=False)
    return fig


def chart10_per_rank(results):
    pts = _diagnosed(results)
    legend = [Patch(color="#4c72b0", label="compute"), Patch(color="#d62728", label="all-reduce wait"),
              Patch(facecolor="white", edgecolor="black", label="straggler")]
    fig, axes = new_figure(results, "Per-rank compute and wait",
                           "a straggler computes longer while the others wait for it in the all-reduce",
                           ncols=len(pts), legend=legend)
    all_times = [t for p in pts for t in p.d["diagnosis"]["per_rank_compute_s"] + p.d["diagnosis"]["per_rank_wait_s"]]
    scale, unit = time_unit(all_times)
    for ax, p in zip(axes[0], pts):
        d = p.d["diagnosis"]
        c, w = d["per_rank_compute_s"], d["per_rank_wait_s"]
        for r in range(len(c)):
            slow = d.get("straggler_rank") == r
            kw = dict(edgecolor="black", linewidth=1.6) if slow else dict(edgecolor="white", linewidth=0.5)
            ax.bar(r - 0.18, c[r] * scale, 0.34, color="#4c72b0", **kw)
            if r < len(w):
                ax.bar(r + 0.18, w[r] * scale, 0.34, color="#d62728", edgecolor="white", linewidth=0.5)
            ax.annotate(fmt_time(c[r] * scale, unit), (r - 0.18, c[r] * scale), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(c)), [f"rank {r}" for r in range(len(c))])
        ax.set_title(f"{p.model} {MODE_LABEL.get(p.mode, p.mode)} K={p.k}\n{d['bottleneck']}", fontsize=9)
        ax.grid(axis="x", visible=False)
        ax.set_ylim(0, max(all_times) * scale * 1.2 or 1)
    axes[0][0].set_ylabel(f"per epoch ({unit})")
    for ax in axes[0]:
        ax.tick_params(axis="y", colors=MUTED)
    return fig
