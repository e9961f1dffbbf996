#!/usr/bin/python3
"""detection.py — how well `dpscale history changes` finds a change in the noise this machine's
CI sweep measures (experiments/history/README.md). Writes experiments/history/data/synthetic.md
(the table) and .json.

  /usr/bin/python3 experiments/history/detection.py [--bin build/bin/dpscale] [--seeds 100]
        [--aa-tarball experiments/ab/data/back-to-back/runs.tar.xz] [--aa-sessions DIR...]
  /usr/bin/python3 experiments/history/detection.py --table experiments/history/data/synthetic.json   (the table only)

1. The noise: the ten idle sweeps of configs/ci.json in experiments/gate/data/runs.tar.xz (one
   build, an idle machine, experiments/gate/run.sh) are added to a scratch history with
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
3. The anchored series' noise (docs/history.md, "Anchored series"): σ of one A/B session's value
   — the median of its rounds' log ratios, B's run over A's of the same round — between
   sessions of identical builds (A/A: the true ratio is 1, so σ is the root mean square of the
   sessions' values around 0, pooled over the series of a metric, per machine condition: quiet
   — ci-aa and the ab experiment's idle-N — or busy1-N, beside a busy loop). The sessions: the committed
   A/A session experiments/ab/data/ci-aa/runs.tar.xz and the `dpscale ab --out` directories given with
   --aa-sessions, or every A/A session (idle-N, busy1-N) of a committed tarball of
   experiments/ab/run.sh's sessions given with --aa-tarball, each added to a scratch history with `dpscale history add DIR --rev-a --rev-b`
   (the anchor one label, each session's B a revision of its own), read back with `show`; only
   undisturbed pairs count, as `changes` tests them. The per-session values go to
   experiments/history/data/anchored-sigma.json, which a later run without --aa-sessions or --aa-tarball
   reads. Then the synthetic histories of 2. again at
   each condition's σ of the anchored speedup and throughput, and at the quiet σ's 95% upper
   bound (chi-square: so few values bound σ loosely).
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "history"))
sys.dont_write_bytecode = True
from dpscale_history import series as seriesmod  # noqa: E402
from scipy import stats  # noqa: E402

CI_AA = "experiments/ab/data/ci-aa/runs.tar.xz"  # CI's own A/A session, relative to the tree
N_REVS, SHIFTS, TAU_RANGE = 40, (0.0, 0.03, 0.05, 0.10), (10, 30)
ALPHA, PERMUTATIONS, MIN_SIZE = 0.01, 99, 3


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"detection: {' '.join(map(str, cmd))} failed: {r.stderr.strip()}")
    return r.stdout


def measured_sigma(dpscale):
    """σ of a revision's log-speedup on this machine, from the idle sweeps of experiments/gate/data."""
    with tempfile.TemporaryDirectory() as d:
        with tarfile.open(ROOT / "experiments" / "gate" / "data" / "runs.tar.xz") as t:
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


def bad_input(line):
    print(f"detection: {line}", file=sys.stderr)
    sys.exit(2)


def check_sessions(session_dirs):
    """Refuses, before any work, a directory that is not a finished A/B session."""
    for p in session_dirs:
        if not ((Path(p) / "a.jsonl").is_file() and (Path(p) / "b.jsonl").is_file()):
            bad_input(f"{p} holds no a.jsonl and b.jsonl: not a dpscale ab --out directory")
        if list(Path(p).glob("*.lock")):
            bad_input(f"{p} is a session still running (a .lock file there)")


def anchored_sigma(dpscale, session_dirs):
    """The anchored series' σ between A/A sessions: per session and series the value `show` gives
    (the median of the undisturbed pairs' log ratios), and per metric their root mean square
    around 0 over every (session, series). Also, as a cross-check, the noise of a session's median
    from its own rounds: 1.2533 × the rounds' SD of log ratio / √rounds (a normal median's)."""
    with tempfile.TemporaryDirectory() as d:
        aa = Path(d) / "ci-aa"
        aa.mkdir()
        with tarfile.open(ROOT / CI_AA) as t:
            # The tarball holds the session's one folder (ab-<time>/a.jsonl, b.jsonl): the two files
            # are read from wherever they sit in it, so the folder's name does not matter.
            for m in t.getmembers():
                name = m.name.rsplit("/", 1)[-1]
                if m.isfile() and name in ("a.jsonl", "b.jsonl"):
                    (aa / name).write_bytes(t.extractfile(m).read())
        sessions = [(CI_AA, aa)] + [(Path(p).name, Path(p)) for p in session_dirs]
        db = Path(d) / "aa.sqlite"
        for i, (_, path) in enumerate(sessions):
            run([dpscale, "history", "add", str(path), "--rev-a", "aa-anchor", "--rev-a-time", "2026-01-01T00:00:00Z",
                 "--rev-b", f"aa-{i + 1:02d}", "--rev-b-time", f"2026-01-02T{i // 60:02d}:{i % 60:02d}:00Z", "--db", str(db)])
        shown = {m: json.loads(run([dpscale, "history", "show", "--db", str(db), "--format", "json", "--metric", m]))
                 for m in ("speedup", "throughput")}
    names = {f"aa-{i + 1:02d}": name for i, (name, _) in enumerate(sessions)}
    out = {"sessions": [name for name, _ in sessions], "metrics": {}}
    for metric, doc in shown.items():
        values, within, squares = [], [], []
        for s in doc["series"]:
            if not s["anchor"]:
                continue
            for st in s["steps"]:
                if not st["values"]:
                    continue
                logs = [math.log(v) for v in st["values"]]
                value = math.log(st["median"])
                squares.append(value ** 2)
                entry = {"session": names[st["revision"]], "series": s["describe"], "pairs": len(logs),
                         "disturbed_pairs": st["disturbed"], "median_ratio": st["median"], "log_median": value}
                if len(logs) > 1:
                    mean = sum(logs) / len(logs)
                    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))
                    entry["median_noise_from_rounds"] = 1.2533 * sd / math.sqrt(len(logs))
                    within.append(entry["median_noise_from_rounds"] ** 2)
                values.append(entry)
        groups = {}
        for e in values:
            groups.setdefault(group_of(e["session"]), []).append(e)
        out["metrics"][metric] = {"values": values,
                                  "groups": {g: sigma_of(v) for g, v in sorted(groups.items(), key=group_order)}}
    return out


def group_of(session):
    """The machine's condition in a session: quiet (CI's ci-aa, the ab experiment's idle-N) or
    the ab experiment's condition (busy1-N: beside a busy loop)."""
    if session == CI_AA or session.startswith("idle-"):
        return "quiet"
    return session.rsplit("-", 1)[0]


def group_order(item):
    return (item[0] != "quiet", item[0])


def sigma_of(values):
    """σ of a group's session values around 0 (the root mean square: A/A, the true ratio is 1),
    its 95% upper bound (chi-square with n degrees of freedom: n values of known mean, taken as
    independent — the σ that values this small would come from 5% of the time), and the noise of
    the sessions' medians from their own rounds."""
    n = len(values)
    ss = sum(e["log_median"] ** 2 for e in values)
    within = [e["median_noise_from_rounds"] ** 2 for e in values if "median_noise_from_rounds" in e]
    return {"sessions": sorted({e["session"] for e in values}), "values": n, "sigma": math.sqrt(ss / n),
            "sigma_upper95": math.sqrt(ss / stats.chi2.ppf(0.05, n)),
            "sigma_from_rounds": math.sqrt(sum(within) / len(within)) if within else None}


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
    ap.add_argument("--out", default=str(ROOT / "experiments" / "history" / "data"))
    ap.add_argument("--table", help="print the table of a committed synthetic.json, measuring nothing")
    ap.add_argument("--aa-tarball", help="a tarball of experiments/ab/run.sh's sessions (sessions/<condition>-N/): "
                    "its A/A sessions, idle-N and busy1-N, are the --aa-sessions")
    ap.add_argument("--aa-sessions", nargs="+", default=[],
                    help="dpscale ab --out directories of A/A sessions (identical builds), besides CI's, experiments/ab/data/ci-aa")
    a = ap.parse_args()
    if a.table:
        doc = json.loads(Path(a.table).read_text())
        print("\n".join(report(doc, doc["rows"][0]["seeds"])))
        return
    with tempfile.TemporaryDirectory() as unpacked:
        if a.aa_tarball:
            a.aa_sessions += aa_sessions_of(a.aa_tarball, Path(unpacked))
        experiment(a)


def aa_sessions_of(tarball, into):
    """The A/A sessions (idle-N, busy1-N) of a tarball of experiments/ab/run.sh's sessions, unpacked
    into `into`, in the order of their condition and number; refuses a tarball that holds none."""
    try:
        with tarfile.open(tarball) as t:
            members = [m for m in t.getmembers() if m.isfile() and len(m.name.split("/")) >= 2
                       and m.name.split("/")[-1] in ("a.jsonl", "b.jsonl")
                       and m.name.split("/")[-2].rsplit("-", 1)[0] in ("idle", "busy1")]
            t.extractall(into, members=members)
    except (OSError, tarfile.TarError) as e:
        bad_input(f"{tarball}: {str(e).splitlines()[0]}")
    dirs = sorted({(into / m.name).parent for m in members},
                  key=lambda p: (p.name.rsplit("-", 1)[0] != "idle", p.name.rsplit("-", 1)[1].zfill(6)))
    if not dirs:
        bad_input(f"{tarball} holds no A/A session (sessions/idle-N or busy1-N with a.jsonl and b.jsonl)")
    return [str(d) for d in dirs]


def experiment(a):
    check_sessions(a.aa_sessions)
    sigma, per_series, files = measured_sigma(a.bin)
    rows = [scenario(s, shift, a.seeds) for s in (sigma, sigma / 2, sigma / 4) for shift in SHIFTS]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    anchored_path = out / "anchored-sigma.json"
    if a.aa_sessions:
        anchored = anchored_sigma(a.bin, a.aa_sessions)
        anchored["command"] = (f"experiments/history/detection.py --aa-tarball {a.aa_tarball}" if a.aa_tarball else
                               "experiments/history/detection.py --aa-sessions "
                               + " ".join(f"OUT/sessions/{name}" for name in anchored["sessions"][1:]))
        anchored["method"] = (
            "Sessions other than ci-aa: experiments/ab/run.sh OUT, conditions idle and busy1 (A/A: base against "
            "base-copy). Each session added with `dpscale history add DIR --rev-a aa-anchor --rev-b aa-NN`, read "
            "back with `show --format json --metric speedup|throughput`: a value is a session's anchored series "
            "value at one point, the median of its undisturbed pairs' log ratios (log_median). Per group: sigma = "
            "sqrt(mean of log_median^2) (A/A: the true ratio is 1); sigma_upper95 = sqrt(sum / chi2.ppf(0.05, n)); "
            "sigma_from_rounds = sqrt(mean of (1.2533 * SD of the pairs' log ratios / sqrt(pairs))^2).")
        anchored_path.write_text(json.dumps(anchored, indent=1) + "\n")
    else:
        anchored = json.loads(anchored_path.read_text()) if anchored_path.exists() else None
    if anchored:
        for metric in ("speedup", "throughput"):
            for group, g in anchored["metrics"][metric]["groups"].items():
                bounds = (("sigma", ""), ("sigma_upper95", ", 95% upper bound")) if group == "quiet" else (("sigma", ""),)
                for key, what in bounds:
                    for shift in SHIFTS:
                        rows.append(dict(scenario(g[key], shift, a.seeds), series=f"anchored {metric}, {group}{what}"))
    doc = {"sigma_measured_pct": 100 * sigma, "per_series": per_series, "idle_sweeps": files, "revisions": N_REVS,
           "tau_range": TAU_RANGE, "alpha": ALPHA, "permutations": PERMUTATIONS, "min_size": MIN_SIZE, "rows": rows}
    if anchored:
        doc["anchored"] = {"sessions": anchored["sessions"],
                           "groups": {m: anchored["metrics"][m]["groups"] for m in ("speedup", "throughput")}}
    (out / "synthetic.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = report(doc, a.seeds)
    (out / "synthetic.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def report(doc, seeds):
    """The Markdown of an experiment's JSON (what --table prints)."""
    sigma, per_series, files, rows = doc["sigma_measured_pct"], doc["per_series"], doc["idle_sweeps"], doc["rows"]
    lo, hi = doc["tau_range"]
    lines = ["# Change points in synthetic histories with this machine's noise", "",
             "Written by `experiments/history/detection.py` (experiments/history/README.md says how to read it).", "",
             f"σ of a revision's log-speedup, measured: **{sigma:.2f}%** (pooled over "
             + ", ".join(f"{k}: {100 * v['sd']:.2f}%" for k, v in per_series.items())
             + f"; {len(files)} idle sweeps of configs/ci.json from experiments/gate/data/runs.tar.xz, one revision each).", "",
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
        sigma_text = f"{r['sigma_pct']:.2f}%" + (f" ({r['series']})" if r.get("series") else "")
        lines.append(f"| {sigma_text} | {label} | {found} | {100 * r['any_change']:.0f}% | {err} | {ideal} |")
    if doc.get("anchored"):
        an = doc["anchored"]
        lines += ["", "Anchored series (B over the anchor A of the same round, one A/B session per revision): σ of a "
                  "session's median log ratio between A/A sessions (root mean square around 0), measured, with its 95% "
                  "upper bound (chi-square) and, for comparison, the noise of a session's median from its own rounds:"]
        for m, groups in an["groups"].items():
            for g, v in groups.items():
                lines.append(f"- {m} vs anchor, {g} ({', '.join(v['sessions'])}; {v['values']} session × series values): "
                             f"**{100 * v['sigma']:.2f}%**, at most {100 * v['sigma_upper95']:.2f}%; "
                             f"from rounds {100 * v['sigma_from_rounds']:.2f}%")
        lines += ["", "Per-session values: experiments/history/data/anchored-sigma.json."]
    return lines


if __name__ == "__main__":
    main()
