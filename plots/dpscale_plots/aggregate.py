"""aggregate.py — from runs to sweep points: repeats combined, baselines found.

These machines are noisy, so a sweep may run every point several times (point.repeat). A chart
shows the median of the repeats and their min..max as the spread. Derived numbers (speedup,
efficiency, gamma) are computed from medians, as `dpscale report` does.
"""
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from .load import MODES

# PyTorch DDP's default bucket cap: what the workshop's "PyTorch DDP" rows ran with, so it is the
# bucketed run charts 1-6 show when a file sweeps several caps (chart 7 shows the sweep).
DDP_DEFAULT_CAP_MB = 25.0


def _median_or_nan(values):
    # A NaN entry (a diverged run's loss) is left out; all NaN leaves a gap in the curve.
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


@dataclass
class Point:
    """One sweep point (model, mode, K, bucket cap) with its repeats."""
    model: str
    mode: str
    k: int
    cap: float | None
    runs: list

    @property
    def n(self):
        return len(self.runs)

    def median(self, name):
        vals = [v for v in (r.num(name) for r in self.runs) if v is not None]
        return statistics.median(vals) if vals else None

    def spread(self, name):
        """(min, max) over the repeats, or None for a single run."""
        vals = [v for v in (r.num(name) for r in self.runs) if v is not None]
        return (min(vals), max(vals)) if len(vals) > 1 else None

    def curve(self, name):
        """Per-epoch median over the repeats of a list field ([] if none has it)."""
        curves = [c for c in (r.series(name) for r in self.runs) if c]
        if not curves:
            return []
        n = min(len(c) for c in curves)
        return [_median_or_nan([c[e] for c in curves]) for e in range(n)]


class Results:
    """All successful runs of one file, grouped into points, with the lookups charts need."""

    def __init__(self, runs, source_name):
        self.source_name = source_name
        self.notes = []
        self.link = self._primary_link(runs)
        runs = [r for r in runs if r.mode == "single" or r.link == self.link]
        self._check_one_setup(runs)
        groups = defaultdict(list)
        for r in runs:
            groups[(r.model, r.mode, r.k, r.cap)].append(r)
        self.points = [Point(*key, runs=v) for key, v in groups.items()]
        sizes = {}
        for p in self.points:
            sizes[p.model] = max(sizes.get(p.model, 0), int(p.median("n_params") or 0))
        self.n_params = sizes
        self.models = sorted(sizes, key=lambda m: (sizes[m], m))
        # Captions describe a parallel run when there is one: it carries the link settings.
        self.first_rec = next((r.rec for r in runs if r.mode != "single"), runs[0].rec)

    def _primary_link(self, runs):
        # Speedups only make sense on one link; a file mixing links gets charts of the one most
        # of its parallel runs used, and a note (report/compare still see every point).
        counts = Counter(r.link for r in runs if r.mode != "single")
        if not counts:
            return runs[0].link
        link = counts.most_common(1)[0][0]
        if len(counts) > 1:
            left = sum(c for lk, c in counts.items() if lk != link)
            self.notes.append(f"the file mixes links; charts show link '{link}', "
                              f"{left} run(s) on other links are left out")
        return link

    def _check_one_setup(self, runs):
        # Speedups divide one run by another: say so when the file mixes setups that make
        # that comparison unfair (a backend, batch or data-set size change).
        keys = ("backend", "global_batch", "n_samples", "epochs")
        setups = {tuple(r.rec.get(k) for k in keys) for r in runs}
        if len(setups) > 1:
            varying = [k for i, k in enumerate(keys) if len({s[i] for s in setups}) > 1]
            self.notes.append(f"the file mixes setups ({', '.join(varying)} differ between "
                              "runs); speedups compare unlike runs")

    # --- lookups ---
    def get(self, model, mode, k, cap=None):
        """The point, or None. For bucketed without a cap: the cap charts 1-6 show."""
        if mode == "bucketed" and cap is None:
            cap = self.display_cap(model, k)
        for p in self.points:
            if (p.model, p.mode, p.k) == (model, mode, k) and (mode != "bucketed" or p.cap == cap):
                return p
        return None

    def caps(self, model, k):
        return sorted({p.cap for p in self.points
                       if (p.model, p.mode, p.k) == (model, "bucketed", k)})

    def display_cap(self, model, k):
        caps = self.caps(model, k)
        if not caps:
            return None
        return DDP_DEFAULT_CAP_MB if DDP_DEFAULT_CAP_MB in caps else max(caps)

    def single(self, model):
        """The K = 1 baseline of a model (the single-device trainer), or None."""
        return self.get(model, "single", 1)

    def ks(self, model=None, parallel_only=True):
        """World sizes present (K > 1 only, unless parallel_only is False)."""
        return sorted({p.k for p in self.points
                       if (model is None or p.model == model) and (p.k > 1 or not parallel_only)})

    def modes_at(self, model, k):
        return [m for m in MODES if self.get(model, m, k) is not None]

    def speedup(self, point):
        """S = T(K)/T(1) from median throughputs, with the spread of T(K); (None, None) without
        a single-device baseline."""
        base = self.single(point.model)
        t1 = base.median("throughput_samples_per_s") if base else None
        tk = point.median("throughput_samples_per_s")
        if not t1 or tk is None:
            return None, None
        spread = point.spread("throughput_samples_per_s")
        return tk / t1, (spread[0] / t1, spread[1] / t1) if spread else None

    def sweeps(self):
        """(model, K) pairs whose bucketed runs cover at least two caps: chart 7's series."""
        return [(m, k) for m in self.models for k in self.ks(m) if len(self.caps(m, k)) >= 2]

    def has_repeats(self):
        return any(p.n > 1 for p in self.points)

    # --- context for captions ---
    def device_word(self):
        return "GPUs" if self.first_rec.get("backend") == "cuda" else "ranks"

    def context_line(self):
        """Where the numbers come from, for the foot of every chart."""
        r = self.first_rec
        dev = r.get("device_name") or r.get("backend") or "?"
        parts = [f"{r.get('backend', '?')}: {dev}"]
        if self.link and self.link != "none":
            link = f"link {self.link}"
            if r.get("link_gbps") is not None:
                link += f" (α {r.get('link_alpha_us'):g} µs, {r.get('link_gbps'):g} GB/s"
                dil = r.get("link_dilation")
                link += f", ×{dil:g} dilation)" if dil not in (None, 1, 1.0) else ")"
            parts.append(link)
        if r.get("global_batch"):
            parts.append(f"B={r['global_batch']}, {r.get('n_samples', '?')} samples, "
                         f"{r.get('epochs', '?')} epochs")
        if self.has_repeats():
            parts.append("median of repeats, bars = min..max")
        parts.append(self.source_name)
        return " · ".join(parts)
