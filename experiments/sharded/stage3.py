#!/usr/bin/env python3
"""stage3.py — the tables of experiments/sharded/README.md's stage-3 section, from stage3.sh's records.

    python3 experiments/sharded/stage3.py runs OUT.jsonl      every run, in the order it ran
    python3 experiments/sharded/stage3.py summary OUT.jsonl   medians per configuration

hidden % = 1 − allgather_exposed_s / allgather_s, clamped to [0, 100]: the share of the
all-gathers' own time (their durations on the comm thread, link hold included) that no step
waited for, which is the exposure triad's overlap (1 − exposed / comm alone) taken for the
all-gathers alone. Memory: the record's count of
what a rank held (parameters + gradients + optimizer state) and the kernel's peak RSS over the
epochs (the largest rank's); each saving is bucketed DDP's value minus the run's, medians. The
measured P + G + O is the run's peak RSS less the rest of the process, taken as bucketed's
peak RSS less its count (the same libraries, data and activations in every configuration).
"""
import json
import statistics
import sys

MIB = 1024.0 * 1024.0


def die(msg):
    print("stage3.py: " + msg, file=sys.stderr)
    sys.exit(2)


def label(r):
    if r["mode"] == "bucketed":
        return "bucketed"
    s = "stage %d" % r["shard_stage"]
    if r["shard_stage"] == 3:
        s += ", prefetch %d" % r["prefetch_units"]
    return s


def counted(r):
    return r["param_bytes_per_rank"] + r["grad_bytes_per_rank"] + r["optim_bytes_per_rank"]


def hidden(r):
    ag = r.get("allgather_s") or 0.0
    if ag <= 0:
        return None
    # Clamped to [0, 100] as the triad's overlap is: a wait longer than the calls themselves
    # (the partner rank arriving late) hides nothing, it does not hide a negative share.
    return max(0.0, min(100.0, 100.0 * (1.0 - r["allgather_exposed_s"] / ag)))


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def runs_table(recs):
    print("| run | configuration | epoch (s) | all-gather (s/epoch) | exposed (s/epoch) | hidden % | P + G + O (MiB) | peak RSS (MiB) | run delay % |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|--:|")
    for i, r in enumerate(recs, 1):
        ag = r.get("allgather_s") if r["mode"] == "sharded" else None
        ex = r.get("allgather_exposed_s") if r["mode"] == "sharded" else None
        delay = r.get("run_delay_share")
        print("| %d | %s | %.2f | %s | %s | %s | %.1f (%.1f + %.1f + %.1f) | %.1f | %s |" % (
            i, label(r), r["avg_epoch_s"], fmt(ag, ".2f"), fmt(ex, ".2f"), fmt(hidden(r), ".0f"),
            counted(r) / MIB, r["param_bytes_per_rank"] / MIB, r["grad_bytes_per_rank"] / MIB,
            r["optim_bytes_per_rank"] / MIB, r["peak_rss_bytes"] / MIB,
            fmt(None if delay is None else 100 * delay, ".0f")))


def summary_table(recs):
    order = []
    by = {}
    for r in recs:
        k = label(r)
        if k not in by:
            order.append(k)
            by[k] = []
        by[k].append(r)
    if "bucketed" not in by:
        die("no bucketed run to compare with")
    med = statistics.median
    base_epoch = med(r["avg_epoch_s"] for r in by["bucketed"])
    base_count = med(counted(r) for r in by["bucketed"])
    base_rss = med(r["peak_rss_bytes"] for r in by["bucketed"])
    # The rest of the process (libraries, data, activations, scratch): bucketed's peak RSS less
    # its count, taken as every configuration's; what remains of a run's RSS is its P + G + O.
    rest = med(r["peak_rss_bytes"] - counted(r) for r in by["bucketed"])
    print("| configuration | runs | epoch (s) | over bucketed | hidden % of the all-gathers | P + G + O counted (MiB) | P + G + O measured (MiB) | measured / counted | saving counted (MiB) | saving in peak RSS (MiB) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for k in order:
        rs = by[k]
        epoch = med(r["avg_epoch_s"] for r in rs)
        hid = [h for h in (hidden(r) for r in rs) if h is not None]
        cnt = med(counted(r) for r in rs)
        rss = med(r["peak_rss_bytes"] for r in rs)
        saved_c, saved_m = base_count - cnt, base_rss - rss
        held = rss - rest
        print("| %s | %d | %.2f | %s | %s | %.1f | %s | %s | %s | %s |" % (
            k, len(rs), epoch, "—" if k == "bucketed" else "%.3f×" % (epoch / base_epoch),
            "—" if not hid else "%.0f" % med(hid), cnt / MIB,
            "—" if k == "bucketed" else "%.1f" % (held / MIB),
            "—" if k == "bucketed" else "%+.1f %%" % (100 * (held - cnt) / cnt),
            "—" if k == "bucketed" else "%.1f" % (saved_c / MIB),
            "—" if k == "bucketed" else "%.1f" % (saved_m / MIB)))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("runs", "summary"):
        die("usage: stage3.py runs|summary OUT.jsonl")
    recs = read(sys.argv[2])
    if not recs:
        die("%s holds no records" % sys.argv[2])
    (runs_table if sys.argv[1] == "runs" else summary_table)(recs)


if __name__ == "__main__":
    main()
