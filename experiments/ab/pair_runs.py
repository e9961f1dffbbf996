#!/usr/bin/env python3
"""pair_runs.py — one point's pairs in a `dpscale ab` session, round by round: how much longer
B's epoch was than A's, how much lower its throughput, and the log ratio the gate tests.

    python3 experiments/ab/pair_runs.py RUNS.tar.xz MODE

RUNS.tar.xz holds one or more session folders, each with the session's a.jsonl and b.jsonl. A pair
is A's and B's successful run of MODE in one round (the point's repeat); a tarball of more than
one session adds a column naming each row's session folder. Three numbers describe
one pair and are easy to confuse: B's epoch over A's (e), B's throughput over A's (1/e for the
same samples), and the log of the throughput ratio, which the gate's paired test works on (a
run 50% longer is 33% lower in throughput and −40.5% in log units), so the table prints all
three, with each run's run delay share. Bad input (a file that is no tarball, no pair of MODE):
one line, exit 2, nothing printed on stdout.
"""
import json
import math
import sys
import tarfile
from collections import defaultdict


def sessions(path):
    """{session folder: {"a": {repeat: record}, "b": {...}}} of the successful runs."""
    out = defaultdict(lambda: {"a": {}, "b": {}})
    with tarfile.open(path) as t:
        for m in t.getmembers():
            parts = m.name.split("/")
            if not m.isfile() or parts[-1] not in ("a.jsonl", "b.jsonl"):
                continue
            for line in t.extractfile(m).read().decode().splitlines():
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("status") == "ok":
                    runs = out["/".join(parts[:-1])][parts[-1][0]]
                    # A rerun of a disturbed run comes after the run it reran: the last one counts.
                    runs.setdefault((r["point"]["mode"], r["point"]["repeat"]), []).append(r)
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: pair_runs.py RUNS.tar.xz MODE", file=sys.stderr)
        return 2
    path, mode = argv
    try:
        found = sessions(path)
    except (OSError, tarfile.TarError) as e:
        print(f"pair_runs: {path}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    rows = []
    for name in sorted(found):
        a, b = found[name]["a"], found[name]["b"]
        for key in sorted(k for k in set(a) & set(b) if k[0] == mode):
            ra, rb = a[key][-1], b[key][-1]
            ea, eb = ra["avg_epoch_s"], rb["avg_epoch_s"]
            thr = rb["throughput_samples_per_s"] / ra["throughput_samples_per_s"]
            lead = f"| {name} " if len(found) > 1 else ""
            rows.append(f"{lead}| {key[1] + 1} | {ea:.3f} | {eb:.3f} | {eb / ea - 1:+.1%} | {thr - 1:+.1%} "
                  f"| {math.log(thr):+.1%} | {ra['run_delay_share']:.1%} / {rb['run_delay_share']:.1%} |")
    if not rows:
        print(f"pair_runs: {path} holds no pair of mode {mode}", file=sys.stderr)
        return 2
    print(("| session " if len(found) > 1 else "") + "| round | A epoch (s) | B epoch (s) | B's epoch over A's | B's throughput over A's "
          "| log throughput ratio | run delay A / B |")
    print(("|---" if len(found) > 1 else "") + "|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
