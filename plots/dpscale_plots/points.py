"""points.py — the report's sweep points and the lookups the charts need.

No statistics here: a point's median, min..max, speedup, E, gamma, comm fraction, saving against
naive, bucket count and loss curves are the report's (harness/report/analysis.h says how each is
computed), read as they are. What is left is choosing which points a chart shows.
"""
import math
from collections import Counter

from .point import PointKey
from .style import MODE_LABEL


class Point:
    """One sweep point of the report (its key: point.PointKey), repeats already combined."""

    def __init__(self, d, schema):
        self.d = d
        self.key = PointKey(d["point"], schema)
        self.model, self.mode, self.k = self.key.model, self.key.mode, self.key.k
        self.cap, self.link = self.key.cap, self.key.link
        # The placement the sweep asked for: a line per node count in chart 2.
        self.placement, self.nodes = self.key.placement, self.key.nodes
        self.n = d["runs"]  # successful repeats

    def median(self, name):
        """A spread field's median, or None where the report has null."""
        v = self.d[name]
        return None if v is None else float(v["median"])

    def spread(self, name):
        """(min, max) over the repeats, or None for a single run (nothing to draw)."""
        v = self.d[name]
        return (float(v["min"]), float(v["max"])) if v is not None and self.n > 1 else None

    def stat(self, name):
        """(median, spread): a quantity with its error bar, as charts draw it."""
        return self.median(name), self.spread(name)

    def value(self, name):
        """A plain number of the report (gamma, comm_fraction, n_buckets...), or None."""
        v = self.d[name]
        return None if v is None else float(v)

    def curve(self, name):
        """A per-epoch curve (loss_global, loss_rank0); null entries become NaN (a gap)."""
        return [math.nan if x is None else float(x) for x in self.d[name]]


class Results:
    """The report's points, filtered to one link, with the lookups charts need."""

    def __init__(self, report, source_name):
        self.source_name = source_name
        self.notes = []
        points = [Point(d, report.point_schema) for d in report.points]
        self.link = self._primary_link(points)
        points = [p for p in points if p.mode == "single" or p.link == self.link]
        self._check_one_setup(points)
        self.points = points
        sizes = {}
        for p in points:
            sizes[p.model] = max(sizes.get(p.model, 0), p.d["n_params"])
        self.n_params = sizes
        self.models = sorted(sizes, key=lambda m: (sizes[m], m))
        # Captions describe a parallel run when there is one: it carries the link settings.
        self.first_setup = next((p.d["setup"] for p in points if p.mode != "single"),
                                points[0].d["setup"])
        # The trainers' default cap (the report's option_defaults), PyTorch DDP's: what the
        # workshop's "PyTorch DDP" rows ran with, so it is the bucketed run charts 1-6 show when
        # a file sweeps several caps (chart 7 shows the sweep).
        self.default_cap = float(report.option_defaults["bucket_cap_mb"])

    def _primary_link(self, points):
        # Speedups only make sense on one link; a file mixing links gets charts of the one most
        # of its parallel runs used, and a note (report/compare still see every point).
        counts = Counter()
        for p in points:
            if p.mode != "single":
                counts[p.link] += p.n
        if not counts:
            return points[0].link
        link = counts.most_common(1)[0][0]
        if len(counts) > 1:
            left = sum(c for lk, c in counts.items() if lk != link)
            self.notes.append(f"the file mixes links; charts show link '{link}', "
                              f"{left} run(s) on other links are left out")
        return link

    def _check_one_setup(self, points):
        # Speedups divide one run by another: say so when the file mixes setups that make
        # that comparison unfair (a backend, batch or data-set size change).
        keys = ("backend", "global_batch", "n_samples", "epochs")
        setups = {tuple(p.d["setup"][k] for k in keys) for p in points}
        if len(setups) > 1:
            varying = [k for i, k in enumerate(keys) if len({s[i] for s in setups}) > 1]
            self.notes.append(f"the file mixes setups ({', '.join(varying)} differ between "
                              "runs); speedups compare unlike runs")

    # --- lookups ---
    def get(self, model, mode, k, cap=None, nodes=None):
        """The point, or None. For bucketed without a cap: the cap charts 1-6 show. nodes: the
        placement's node count (None: the first placement the report has)."""
        if mode == "bucketed" and cap is None:
            cap = self.display_cap(model, k)
        found = [p for p in self.points
                 if (p.model, p.mode, p.k) == (model, mode, k) and (mode != "bucketed" or p.cap == cap)
                 and (nodes is None or p.nodes == nodes or p.mode == "single")]
        # Points that differ in another setting (a grad_comm or accumulation axis): the one with
        # the fewest settings away from the point schema's defaults, the plain run, as charts 1-6
        # show it (charts 11-13 draw the axes).
        return min(found, key=lambda p: len(p.key.off_default)) if found else None

    def node_counts(self):
        """The placements' node counts ([None] where the sweep asked for no placement)."""
        counts = sorted({p.nodes for p in self.points if p.mode != "single" and p.nodes})
        return counts or [None]

    def caps(self, model, k):
        return sorted({p.cap for p in self.points
                       if (p.model, p.mode, p.k) == (model, "bucketed", k)})

    def display_cap(self, model, k):
        caps = self.caps(model, k)
        if not caps:
            return None
        return self.default_cap if self.default_cap in caps else max(caps)

    def single(self, model):
        """The K = 1 baseline of a model (the single-device trainer), or None."""
        return self.get(model, "single", 1)

    def ks(self, model=None, parallel_only=True):
        """World sizes present (K > 1 only, unless parallel_only is False)."""
        return sorted({p.k for p in self.points
                       if (model is None or p.model == model) and (p.k > 1 or not parallel_only)})

    def modes_at(self, model, k):
        return [m for m in MODE_LABEL if self.get(model, m, k) is not None]

    def speedup(self, point):
        """The report's S = T(K)/T(1) and its min..max; (None, None) without a baseline."""
        return point.stat("speedup")

    def sweeps(self):
        """(model, K) pairs whose bucketed runs cover at least two caps: chart 7's series."""
        return [(m, k) for m in self.models for k in self.ks(m) if len(self.caps(m, k)) >= 2]

    def has_repeats(self):
        return any(p.n > 1 for p in self.points)

    # --- context for captions ---
    def device_word(self):
        return "GPUs" if self.first_setup["backend"] == "cuda" else "ranks"

    def context_line(self):
        """Where the numbers come from, for the foot of every chart."""
        s = self.first_setup
        parts = [f"{s['backend']}: {s['device_name'] or s['backend']}"]
        if self.link and self.link != "none":
            link = f"link {self.link}"
            if s["link_gbps"] is not None:
                alpha = "?" if s["link_alpha_us"] is None else f"{s['link_alpha_us']:g}"
                link += f" (α {alpha} µs, {s['link_gbps']:g} GB/s"
                dil = s["link_dilation"]
                link += f", ×{dil:g} dilation)" if dil != 1 else ")"
            parts.append(link)
        if s["global_batch"]:
            parts.append(f"B={s['global_batch']}, {s['n_samples']} samples, {s['epochs']} epochs")
        if self.has_repeats():
            parts.append("median of repeats, bars = min..max")
        parts.append(self.source_name)
        return " · ".join(parts)
