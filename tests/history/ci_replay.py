#!/usr/bin/python3
"""ci_replay.py — how often CI's history step fails, replayed: synthetic series judged run by run
as scripts/ci-history.sh judges them (`changes --min-effect 15 --record`), against the rule it
replaced (fail while the newest change is a regression). docs/history.md, "What CI judges".

  /usr/bin/python3 tests/history/ci_replay.py [--seeds 50] [--sigma 5.23] [--revisions 40]

Each history is one series of `--revisions` revisions, log-speedup noise N(0, σ) (σ the plain
series' noise of one CI sweep, docs/history.md), and a loss of 20% from each revision of a
scenario's list. CI run n sees revisions 1..n: it fails under the old rule when the newest change
of the whole series is a regression of at least 15%; under the new one when judge.failing says
so (the newest change since the series' newest mark), and then marks that change as `--record`
does. Printed per scenario: the failing runs per history, how many histories report each loss
exactly once, the runs from a loss to its first failing run, and failing runs per 100 runs.
Seeded: the same arguments print the same table. In-process, with the code `changes` runs
(series.changes, judge.failing); the store and the command line are tested in
test_history_judged.py."""
import argparse
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "history"))
sys.dont_write_bytecode = True
from dpscale_history import judge, series as seriesmod  # noqa: E402

MIN_EFFECT, ALPHA, PERMUTATIONS, MIN_SIZE = 15.0, 0.01, 99, 3
LOSS = 0.20


def history(seed, n, sigma, losses):
    """The revisions' values: 1.5 times 0.8 per loss passed, times exp(N(0, sigma))."""
    rng = random.Random(seed)
    return [1.5 * (1 - LOSS) ** sum(1 for at in losses if i >= at) * math.exp(rng.gauss(0, sigma)) for i in range(n)]


def series_of(values, seed):
    s = seriesmod.Series(machine=f"replay {seed}", point_key="p", describe="replay", curve="replay", model="m",
                         mode="naive", world_size=2, metric="speedup")
    for i, v in enumerate(values):
        rev = seriesmod.Revision(f"r{i:03d}", f"r{i:03d}", None, f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z")
        s.steps.append(seriesmod.Step(rev, values=[v]))
    return s


def replay(values, seed):
    """(failing runs under the old rule, failing runs under the new, the runs that failed with
    the revision index each failed on)."""
    marks, old, new, failed = [], 0, 0, []
    for n in range(1, len(values) + 1):
        s = series_of(values[:n], seed)
        found = seriesmod.changes(s, ALPHA, PERMUTATIONS, MIN_SIZE)
        if found and found[-1].regression and abs(found[-1].effect_pct) >= MIN_EFFECT:
            old += 1
        c, _ = judge.failing(s, found, judge.newest_marks(marks), ALPHA, PERMUTATIONS, MIN_SIZE, MIN_EFFECT)
        if c:
            new += 1
            at = int(c.revision.key[1:])
            failed.append((n - 1, at))
            marks.append({"machine": s.machine, "point_key": s.point_key, "anchor_key": "", "metric": s.metric,
                          "rev_key": c.revision.key, "commit_time": c.revision.commit_time, "kind": "reported"})
    return old, new, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--sigma", type=float, default=5.23, help="percent, the noise of a revision's log-speedup")
    ap.add_argument("--revisions", type=int, default=40)
    a = ap.parse_args()
    n, sigma = a.revisions, a.sigma / 100
    scenarios = [("flat", ()), (f"a loss at {n * 3 // 8}", (n * 3 // 8,)),
                 (f"losses at {n // 4} and {n * 5 // 8}", (n // 4, n * 5 // 8))]
    print(f"# {a.seeds} histories per row, {n} revisions, σ {a.sigma:g}%, losses of {LOSS:.0%}, "
          f"--min-effect {MIN_EFFECT:g}, alpha {ALPHA:g}, {PERMUTATIONS} permutations, {MIN_SIZE} a side")
    print("| history | failing runs per history, old rule (median, max) | new rule (median, max) | "
          "histories failing once per loss, nowhere else | runs from a loss to its report (median) | "
          "failing runs per 100, old | new |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, losses in scenarios:
        olds, news, once, delays = [], [], 0, []
        for seed in range(a.seeds):
            old, new, failed = replay(history(seed, n, sigma, losses), seed)
            olds.append(old)
            news.append(new)
            # Each loss reported by one failing run whose change lies within 2 revisions of it.
            hits = [sum(1 for _, at in failed if abs(at - loss) <= 2) for loss in losses]
            if all(h == 1 for h in hits) and len(failed) == len(losses):
                once += 1
            for loss in losses:
                runs = [run for run, at in failed if abs(at - loss) <= 2]
                if runs:
                    delays.append(runs[0] - loss)
        delay = f"{statistics.median(delays):g}" if delays else "—"
        print(f"| {name} | {statistics.median(olds):g}, {max(olds)} | {statistics.median(news):g}, {max(news)} | "
              f"{once} of {a.seeds} | {delay} | {100 * sum(olds) / (a.seeds * n):.1f} | "
              f"{100 * sum(news) / (a.seeds * n):.1f} |")


if __name__ == "__main__":
    main()
