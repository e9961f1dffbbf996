"""series.py — from stored runs to series: one per (machine, point), its revisions in commit
order, each with the metric of its undisturbed runs (their median is the series' value) and of
its disturbed ones (drawn apart, never tested); and the change points of each series found by
changepoint.py, with their effect. No I/O: the store's rows in, Series and Change out.

Anchored series (build_anchored): from the pairs of A/B sessions, one per (machine, point, anchor
revision): "METRIC vs ANCHOR", the value at a B revision the median of its sessions' log ratios
(B's metric over the anchor's of the same round), several sessions of one revision pooled."""
import json
import math
import zlib
from dataclasses import dataclass, field

from . import changepoint

# Which way is worse, per metric the series can follow.
HIGHER_IS_BETTER = {"speedup": True, "efficiency": True, "throughput": True, "epoch_s": False}


@dataclass
class Revision:
    key: str
    name: str
    commit_id: object
    commit_time: str

    @property
    def label(self):
        """The short commit id, or the name where git knew no commit."""
        return self.commit_id[:8] if self.commit_id else self.name


@dataclass
class Step:
    """One revision of one series."""
    revision: Revision
    values: list = field(default_factory=list)      # the metric of its undisturbed runs (all: include_disturbed)
    disturbed: list = field(default_factory=list)   # (value, why) of its disturbed runs
    others: dict = field(default_factory=dict)      # metric -> undisturbed values, for tables
    log_median: bool = False                         # ratios: the median of the logs (an even count's middle two geometric)

    @property
    def median(self):
        if not self.values:
            return None
        if self.log_median:
            return math.exp(median([math.log(v) for v in self.values]))
        return median(self.values)


@dataclass
class Series:
    machine: str
    point_key: str
    describe: str
    curve: str
    model: str
    mode: str
    world_size: int
    metric: str
    settings: dict = field(default_factory=dict)  # the point's settings off their default (from the C++ point)
    label: str = ""  # describe, plus the settings that tell it from another series of the same describe
    steps: list = field(default_factory=list)  # commit order
    anchor: object = None  # anchored series: the anchor revision (Revision); values are B over it

    @property
    def quantity(self):
        """What the values are: the metric, or "METRIC vs ANCHOR" (a ratio) for an anchored series."""
        return f"{self.metric} vs {self.anchor.label}" if self.anchor else self.metric

    def tested(self):
        """The steps with a value: what the change points are found in."""
        return [s for s in self.steps if s.values]


@dataclass
class Change:
    series: Series
    index: int              # into series.tested(): the first step after the change
    before: float           # median of the segment before (revision values)
    after: float
    effect_pct: float       # Hodges-Lehmann, after against before, as a percent change
    interval_pct: tuple     # its 95% interval
    p: float
    regression: bool        # worse in the metric's direction

    @property
    def revision(self):
        return self.series.tested()[self.index].revision


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def matches(run, filters):
    f = filters
    return ((not f.get("machine") or f["machine"] in run["fingerprint"])
            and (not f.get("model") or f["model"] == run["model"])
            and (not f.get("mode") or f["mode"] == run["mode"])
            and (not f.get("world_size") or f["world_size"] == run["world_size"])
            and (not f.get("match") or f["match"] in run["describe"]))


TABLE_METRICS = ("speedup", "efficiency", "comm_share", "epoch_s", "throughput")


def build(runs, metric, filters=None, include_disturbed=False):
    """Series of the runs (the store's, in commit order) that match the filters and have the
    metric, in order of machine, then curve, then K. `include_disturbed`: disturbed runs count as
    undisturbed ones (a machine that is never quiet; said wherever it is used)."""
    filters = filters or {}
    by_key = {}
    for r in runs:
        if not matches(r, filters) or r[metric] is None:
            continue
        key = (r["fingerprint"], r["point_key"])
        s = by_key.get(key)
        if s is None:
            s = by_key[key] = Series(machine=r["fingerprint"], point_key=r["point_key"], describe=r["describe"],
                                     curve=r["curve"], model=r["model"], mode=r["mode"], world_size=r["world_size"],
                                     metric=metric, settings=json.loads(r["point"]).get("settings", {}))
        if not s.steps or s.steps[-1].revision.key != r["rev_key"]:
            s.steps.append(Step(Revision(r["rev_key"], r["rev_name"], r["commit_id"], r["commit_time"])))
        step = s.steps[-1]
        if r["disturbed"]:
            step.disturbed.append((r[metric], r["disturbed"]))
        if not r["disturbed"] or include_disturbed:
            step.values.append(r[metric])
            for m in TABLE_METRICS:
                if r[m] is not None:
                    step.others.setdefault(m, []).append(r[m])
    found = sorted(by_key.values(), key=lambda s: (s.machine, s.curve, s.world_size, s.describe, s.point_key))
    label(found)
    return found


# The pairs' column an anchored series of each metric follows (efficiency: speedup over K, whose
# ratio between two builds at one K is the speedup's). Epoch time has none: its ratio is
# throughput's inverted.
ANCHORED_COLUMN = {"throughput": "throughput_ratio", "speedup": "speedup_ratio", "efficiency": "speedup_ratio"}


def build_anchored(pairs, metric, filters=None, include_disturbed=False):
    """Anchored series of the stored pairs (the store's, in B's commit order) that match the
    filters: one per (machine, point, anchor), a step per B revision holding the ratios of its
    undisturbed pairs (a pair is disturbed when either half was), in the order build() gives
    plain series (history.py lists them after the plain ones)."""
    column = ANCHORED_COLUMN.get(metric)
    if column is None:
        return []
    filters = filters or {}
    by_key = {}
    for r in pairs:
        if not matches(r, filters) or r[column] is None:
            continue
        key = (r["fingerprint"], r["point_key"], r["anchor_key"])
        s = by_key.get(key)
        if s is None:
            anchor = Revision(r["anchor_key"], r["anchor_name"], r["anchor_commit_id"], "")
            s = by_key[key] = Series(machine=r["fingerprint"], point_key=r["point_key"], describe=r["describe"],
                                     curve=f"{r['curve']} {metric} vs {anchor.label}", model=r["model"],
                                     mode=r["mode"], world_size=r["world_size"], metric=metric,
                                     settings=json.loads(r["point"]).get("settings", {}), anchor=anchor)
        if not s.steps or s.steps[-1].revision.key != r["rev_key"]:
            s.steps.append(Step(Revision(r["rev_key"], r["rev_name"], r["commit_id"], r["commit_time"]),
                                log_median=True))
        step = s.steps[-1]
        if r["disturbed"]:
            step.disturbed.append((r[column], r["disturbed"]))
        if not r["disturbed"] or include_disturbed:
            step.values.append(r[column])
    found = sorted(by_key.values(), key=lambda s: (s.machine, s.curve, s.world_size, s.describe, s.point_key))
    label(found)
    for s in found:
        s.label += f" — {s.quantity}"
    return found


def label(series_list):
    """Each series' label: its description, and where two series of one machine share it (a
    setting that is no sweep axis differs: ci.json's samples against cpu.json's), the settings
    whose values tell them apart."""
    groups = {}
    for s in series_list:
        groups.setdefault((s.machine, s.describe), []).append(s)
    for group in groups.values():
        keys = sorted({k for s in group for k in s.settings})
        differ = [k for k in keys if len({s.settings.get(k) for s in group}) > 1] if len(group) > 1 else []
        for s in group:
            extra = " ".join(f"{k}={s.settings.get(k, 'default')}" for k in differ)
            s.label = s.describe + (f" ({extra})" if extra else "")


def seed_of(series):
    """The permutation test's seed: fixed per series, so a history always gives the same answer."""
    anchor = "\n" + series.anchor.key if series.anchor else ""
    return zlib.crc32((series.machine + "\n" + series.point_key + anchor).encode())


def changes(series, alpha, permutations, min_size):
    """The change points of one series, oldest first."""
    steps = series.tested()
    x = [s.median for s in steps]
    if len(x) < 2 * min_size:
        return []
    # The test and the effect in log space: a change of speedup is a ratio.
    logs = [math.log(v) for v in x]
    found = changepoint.e_divisive(logs, alpha=alpha, permutations=permutations, min_size=min_size,
                                   seed=seed_of(series))
    bounds = [0] + [c.index for c in found] + [len(x)]
    out = []
    for i, c in enumerate(found):
        lo, at, hi = bounds[i], bounds[i + 1], bounds[i + 2]
        shift, low, high = changepoint.hodges_lehmann_interval(logs[lo:at], logs[at:hi])
        pct = lambda v: 100.0 * (math.exp(v) - 1.0)  # noqa: E731
        worse = shift < 0 if HIGHER_IS_BETTER[series.metric] else shift > 0
        out.append(Change(series=series, index=c.index, before=median(x[lo:at]), after=median(x[at:hi]),
                          effect_pct=pct(shift), interval_pct=(pct(low), pct(high)), p=c.p, regression=worse))
    return out

