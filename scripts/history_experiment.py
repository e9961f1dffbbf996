#!/usr/bin/python3
"""history_experiment.py — how well `dpscale history changes` finds a change in the noise this
machine's CI sweep measures. Writes results/history/synthetic.md (the table) and .json.

  /usr/bin/python3 scripts/history_experiment.py [--bin build/bin/dpscale] [--seeds 100]
  /usr/bin/python3 scripts/history_experiment.py --table results/history/synthetic.json   (the table only)

1. The noise: the ten idle sweeps of configs/ci.json in results/gate/runs.tar.xz (one build,
   an idle machine, scripts/gate-experiment.sh) are added to a scratch history with
   `dpscale history add`, one revision each, and σ is the standard deviation, over the ten
   revisions, of the log of each series' value (the median of its undisturbed paired speedups,
   what `changes` tests), pooled over the three data-parallel series (the mean of their
   variances).
2. Synthetic histories: 40 revisions of log-speedup noise N(0, σ); a shift of 3%, 5% or 10% of
   speedup (a loss) from a known revision τ, drawn per seed from 10..30; or none. Each is
   judged as `changes` judges a series (series.changes: E-divisive means, alpha 0.01, 99
   permutations, 3 revisions a side). Found: a change reported at τ ± 1. For flat histories:
   any change reported is false. 100 seeds each; the same again at σ/2 and σ/4 (what 4 and 16
   times the rounds per revision would measure, if the noise of a revision's median falls as
   1/√rounds). Beside each: how often a least-squares split, told that there is exactly one
   change, puts it at τ ± 1 (the Gaussian maximum-likelihood place of one change): a reference
   for what this noise allows a detector that must also decide whether there is a change.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness" / "history"))
sys.dont_write_bytecode = True
from dpscale_history import series as seriesmod  # noqa: E402

N_REVS, SHIFTS, TAU_RANGE = 40, (0.0, 0.03, 0.05, 0.10), (10, 30)
ALPHA, PERMUTATIONS, MIN_SIZE = 0.01, 99, 3


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"history_experiment: {' '.join(map(str, cmd))} failed: {r.stderr.strip()}")
    return r.stdout


def measured_sigma(dpscale):
    """σ of a revision's log-speedup on this machine, from the idle sweeps of results/gate."""
    with tempfile.TemporaryDirectory() as d:
        with tarfile.open(ROOT / "results" / "gate" / "runs.tar.xz") as t:
            idle = sorted((m for m in t.getmembers() if m.name.startswith("runs/idle-") and m.name.endswith(".jsonl")),
                          key=lambda m: int(m.name.rsplit("-", 1)[1].split(".")[0]))
            t.extractall(d, members=idle)
        db = Path(d) / "idle.sqlite"
        for i, m in enumerate(idle):
            run([dpscale, "history", "add", str(Path(d) / m.name), "--rev", f"idle-{i + 1}",
                 "--rev-time", f"2026-01-01T{i:02d}:00:00Z", "--db", str(db)])
        shown = json.loads(run([dpscale, "history", "show", "--db", str(db), "--format", "json"]))
    per_series = {}
    for s in shown["series"]:
        logs = [math.log(st["median"]) for st in s["steps"] if st["median"]]
        mean = sum(logs) / len(logs)
        per_series[s["describe"]] = {"revisions": len(logs),
                                     "sd": math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))}
    pooled = math.sqrt(sum(v["sd"] ** 2 for v in per_series.values()) / len(per_series))
    return pooled, per_series, [m.name for m in idle]


def judge(values):
    s = seriesmod.Series(machine="synthetic", point_key="synthetic", describe="synthetic", curve="synthetic",
                         model="small", mode="naive", world_size=2, metric="speedup")
    for i, v in enumerate(values):
        rev = seriesmod.Revision(f"r{i}", f"r{i}", None, f"2026-01-01T00:00:{i:02d}Z")
        s.steps.append(seriesmod.Step(rev, values=[v]))
    return seriesmod.changes(s, ALPHA, PERMUTATIONS, MIN_SIZE)


def least_squares_split(values):
    """Where one mean shift fits best (the Gaussian maximum-likelihood split, told that there is
    exactly one change): the reference for how well any detector can place it in this noise."""
    x = [math.log(v) for v in values]
    n = len(x)
    best, at = -1.0, None
    for t in range(MIN_SIZE, n - MIN_SIZE + 1):
        m1, m2 = sum(x[:t]) / t, sum(x[t:]) / (n - t)
        stat = t * (n - t) / n * (m1 - m2) ** 2
        if stat > best:
            best, at = stat, t
    return at


def scenario(sigma, shift, seeds):
    found, any_change, errors, ideal = 0, 0, [], 0
    for seed in range(seeds):
        rng = random.Random(f"{sigma:.6f}|{shift}|{seed}")
        tau = rng.randint(*TAU_RANGE)
        values = [math.exp(rng.gauss(0, sigma) + (math.log(1 - shift) if i >= tau else 0)) for i in range(N_REVS)]
        changes = judge(values)
        any_change += bool(changes)
        hits = [c for c in changes if abs(c.index - tau) <= 1 and c.regression]
        found += bool(hits)
        if changes and shift:
            errors.append(min(abs(c.index - tau) for c in changes))
        ideal += abs(least_squares_split(values) - tau) <= 1
    return {"sigma_pct": 100 * sigma, "shift_pct": 100 * shift, "seeds": seeds,
            "found_at_tau_pm1": found / seeds if shift else None, "any_change": any_change / seeds,
            "median_location_error": sorted(errors)[len(errors) // 2] if errors else None,
            "least_squares_at_tau_pm1": ideal / seeds if shift else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin" / "dpscale"))
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--out", default=str(ROOT / "results" / "history"))
    ap.add_argument("--table", help="print the table of a committed synthetic.json, measuring nothing")
    a = ap.parse_args()
    if a.table:
        doc = json.loads(Path(a.table).read_text())
        print("\n".join(report(doc, doc["rows"][0]["seeds"])))
        return
    sigma, per_series, files = measured_sigma(a.bin)
    rows = [scenario(s, shift, a.seeds) for s in (sigma, sigma / 2, sigma / 4) for shift in SHIFTS]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"sigma_measured_pct": 100 * sigma, "per_series": per_series, "idle_sweeps": files, "revisions": N_REVS,
           "tau_range": TAU_RANGE, "alpha": ALPHA, "permutations": PERMUTATIONS, "min_size": MIN_SIZE, "rows": rows}
    (out / "synthetic.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = report(doc, a.seeds)
    (out / "synthetic.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def report(doc, seeds):
    """The Markdown of an experiment's JSON (what --table prints)."""
    sigma, per_series, files, rows = doc["sigma_measured_pct"], doc["per_series"], doc["idle_sweeps"], doc["rows"]
    lo, hi = doc["tau_range"]
    lines = ["# Change points in synthetic histories with this machine's noise", "",
             "Written by `scripts/history_experiment.py` (docs/history.md says how to read it).", "",
             f"σ of a revision's log-speedup, measured: **{sigma:.2f}%** (pooled over "
             + ", ".join(f"{k}: {100 * v['sd']:.2f}%" for k, v in per_series.items())
             + f"; {len(files)} idle sweeps of configs/ci.json from results/gate/runs.tar.xz, one revision each).", "",
             f"{doc['revisions']} revisions, a loss of speedup from revision τ (drawn from {lo}..{hi}), "
             f"{seeds} seeds per row; E-divisive means, alpha {doc['alpha']}, {doc['permutations']} permutations, "
             f"{doc['min_size']} revisions a side.", "",
             "| σ | shift | found at τ ± 1 | seeds with any change | median distance of the nearest change from τ "
             "| least squares told of one change: at τ ± 1 |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        found = "—" if r["found_at_tau_pm1"] is None else f"{100 * r['found_at_tau_pm1']:.0f}%"
        err = "—" if r["median_location_error"] is None else str(r["median_location_error"])
        label = "none (flat)" if not r["shift_pct"] else f"−{r['shift_pct']:.0f}%"
        ideal = "—" if r["least_squares_at_tau_pm1"] is None else f"{100 * r['least_squares_at_tau_pm1']:.0f}%"
        lines.append(f"| {r['sigma_pct']:.2f}% | {label} | {found} | {100 * r['any_change']:.0f}% | {err} | {ideal} |")
    return lines


if __name__ == "__main__":
    main()
