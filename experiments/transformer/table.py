#!/usr/bin/env python3
"""table.py — the tables of experiments/transformer/ from its data, one kind of file each.

    python3 experiments/transformer/table.py sweep experiments/transformer/data/gpt-cpu.jsonl
    python3 experiments/transformer/table.py buckets experiments/transformer/data/gpt-cpu.jsonl
    python3 experiments/transformer/table.py triad experiments/transformer/data/gpt-mid-triad.jsonl
    python3 experiments/transformer/table.py triad-summary experiments/transformer/data/gpt-mid-triad-16.jsonl
    python3 experiments/transformer/table.py vs-pytorch experiments/transformer/data/gpt-vs-pytorch.jsonl
    python3 experiments/transformer/table.py gemm-rate experiments/transformer/data/gpt-gemm-rate.jsonl

sweep       a `dpscale sweep gpt-cpu.json` results file: per model the average epoch of each mode
            (bucketed per cap), the share of it the all-reduce took (naive: comm_s, the others:
            exposed_comm_s, over avg_epoch_s), how many times shorter than naive's it is, the
            link dilation F each run measured, the share of the epoch the ranks lost to run
            delay (run_delay_share) and the machine's 1-minute load before the run
buckets     the same file: each bucketed run's bucket count and sizes (MiB, first to last)
triad       triad.sh's RESULTS_JSON records: per run the triad's steps per phase, the overlap %
            it read, its compute-only, comm-only and exposed times per step, the step
            (avg_epoch_s / steps, the step the diagnosis line quotes) and the run delay share,
            one row per run in file order
triad-summary  the same records per mode and cap: the overlap's median and range over the runs,
            the comm-only and exposed times' medians
vs-pytorch  vs-pytorch.sh's lines: per model the median step of each framework over the rounds,
            their ranges and dpscale's speed-up (PyTorch's median over dpscale's)
gemm-rate   gemm-rate.sh's lines: per model and GEMM library, over the rounds, the median (and
            range) of rate_over_in_place and rate_over_alone — the step's GEMMs' rate as a
            fraction of the same GEMMs' rate alone on the step's own buffers and on warm scratch
            operands (the first only where every line has it) — and of their attention and dense
            parts, the GEMMs' share of the step, the step and the range of the 1-minute load
            before the benchmarks
"""
import json
import statistics
import sys

MIB = 1 << 20


def records(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def short(model):
    return model if not model.startswith("gpt:") else "mid-size"


def columns(rows):
    """The sweep's columns in order: single, naive, interleaved, bucketed per cap."""
    cols = []
    for mode in ("single", "naive", "interleaved"):
        cols += [(mode, None)] if any(r["mode"] == mode for r in rows) else []
    caps = sorted({r["bucket_cap_mb"] for r in rows if r["mode"] == "bucketed"})
    return cols + [("bucketed", c) for c in caps]


def find(rows, model, mode, cap):
    for r in rows:
        if r["model"] == model and r["mode"] == mode and (mode != "bucketed" or r["bucket_cap_mb"] == cap):
            return r
    return None


def sweep(path):
    rows = records(path)
    cols = columns(rows)
    head = ["single" if m == "single" else m if m != "bucketed" else f"bucketed {c:g} MiB" for m, c in cols]
    print("| model | | " + " | ".join(head) + " |")
    print("|---|---|" + "--:|" * len(cols))
    for model in dict.fromkeys(r["model"] for r in rows):
        got = [find(rows, model, m, c) for m, c in cols]
        naive = find(rows, model, "naive", None)
        cells = {
            "avg epoch (s)": [f"{r['avg_epoch_s']:.2f}" if r else "" for r in got],
            "all-reduce % of the epoch": [
                "—" if r is None or r["mode"] == "single" else
                f"{100 * (r['comm_s'] if r['mode'] == 'naive' else r['exposed_comm_s']) / r['avg_epoch_s']:.0f} %"
                for r in got],
            "naive's epoch over this one": [
                "—" if r is None or r["mode"] in ("single", "naive") or naive is None else
                f"{naive['avg_epoch_s'] / r['avg_epoch_s']:.1f}×" for r in got],
            "link dilation F": ["—" if r is None or r["mode"] == "single" else f"{r['link_dilation']:.0f}" for r in got],
            "run delay % of the epoch": [f"{100 * r['run_delay_share']:.0f} %" if r else "" for r in got],
            "1-minute load before the run": [f"{r['system']['state']['load1_before']:.1f}" if r else "" for r in got],
        }
        for what, vals in cells.items():
            print(f"| {short(model)} | {what} | " + " | ".join(vals) + " |")


def buckets(path):
    print("| model | cap (MiB) | buckets | sizes (MiB, first to last) |")
    print("|---|--:|--:|---|")
    for r in records(path):
        if r["mode"] != "bucketed":
            continue
        sizes = ", ".join(f"{b / MIB:.1f}" for b in r["bucket_bytes"])
        print(f"| {short(r['model'])} | {r['bucket_cap_mb']:g} | {r['n_buckets']} | {sizes} |")


def triad(path):
    print("| run | mode | cap (MiB) | triad steps | overlap % | compute-only step (ms) | comm-only step (ms) | "
          "exposed (ms) | step (s) | run delay % |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for i, r in enumerate(records(path), 1):
        cap = f"{r['bucket_cap_mb']:g}" if r["mode"] == "bucketed" else "—"
        print(f"| {i} | {r['mode']} | {cap} | {r['triad_steps']} | {r['overlap_pct']:.2f} | "
              f"{1e3 * r['compute_only_step_s']:.1f} | {1e3 * r['comm_only_step_s']:.1f} | "
              f"{1e3 * r['exposed_comm_step_s']:.1f} | {r['avg_epoch_s'] / r['steps']:.3f} | "
              f"{100 * r['run_delay_share']:.0f} |")


def triad_summary(path):
    rows = records(path)
    print("| mode | cap (MiB) | runs | overlap %, median | range | comm-only step, median (ms) | exposed, median (ms) |")
    print("|---|--:|--:|--:|---|--:|--:|")
    for key in dict.fromkeys((r["mode"], r.get("bucket_cap_mb")) for r in rows):
        got = [r for r in rows if (r["mode"], r.get("bucket_cap_mb")) == key]
        cap = f"{key[1]:g}" if key[0] == "bucketed" else "—"
        ov = [r["overlap_pct"] for r in got]
        print(f"| {key[0]} | {cap} | {len(got)} | {statistics.median(ov):.1f} | {min(ov):.1f}–{max(ov):.1f} | "
              f"{1e3 * statistics.median(r['comm_only_step_s'] for r in got):.1f} | "
              f"{1e3 * statistics.median(r['exposed_comm_step_s'] for r in got):.1f} |")


def vs_pytorch(path):
    rows = records(path)
    print("| model | rounds | dpscale step, median (ms) | range | PyTorch step, median (ms) | range | dpscale faster by |")
    print("|---|--:|--:|---|--:|---|--:|")
    for model in dict.fromkeys(r["model"] for r in rows):
        steps = {f: [r["step_s"] * 1e3 for r in rows if r["model"] == model and r["framework"] == f]
                 for f in ("dpscale", "torch")}
        med = {f: statistics.median(v) for f, v in steps.items()}
        rng = {f: f"{min(v):.1f}–{max(v):.1f}" for f, v in steps.items()}
        print(f"| {model} | {len(steps['dpscale'])} | {med['dpscale']:.1f} | {rng['dpscale']} | {med['torch']:.1f} | "
              f"{rng['torch']} | {med['torch'] / med['dpscale']:.2f}× |")


def gemm_rate(path):
    rows = records(path)
    # Files measured before bench_step replayed the calls in place too have only the warm ruler.
    in_place = all("rate_over_in_place" in r for r in rows)
    rulers = (["in_place"] if in_place else []) + ["alone"]
    head = {"in_place": "in-step rate / alone on the step's buffers", "alone": "in-step rate / alone on warm scratch"}
    print("| model | GEMM library | rounds | " +
          " | ".join(f"{head[k]}, median | range | attention's | dense (Conv1D, head)" for k in rulers) +
          " | GEMMs' share of the step | step, median (ms) | load before |")
    print("|---|---|--:|" + "--:|---|--:|--:|" * len(rulers) + "--:|--:|---|")
    for model in dict.fromkeys(r["model"] for r in rows):
        for lib in dict.fromkeys(r["gemm_library"] for r in rows):
            got = [r for r in rows if r["model"] == model and r["gemm_library"] == lib]
            if not got:
                continue
            cells = []
            for k in rulers:
                keys = (f"rate_over_{k}", f"attention_rate_over_{k}", f"dense_rate_over_{k}")
                med = [statistics.median(r[f] for r in got) for f in keys]
                lo, hi = min(r[keys[0]] for r in got), max(r[keys[0]] for r in got)
                cells.append(f"{med[0]:.2f} | {lo:.2f}–{hi:.2f} | {med[1]:.2f} | {med[2]:.2f}")
            share = statistics.median(r["gemm_over_step"] for r in got)
            step = statistics.median(r["step_ms"] for r in got)
            loads = [r["load1_before"] for r in got]
            print(f"| {short(model)} | {lib} | {len(got)} | " + " | ".join(cells) +
                  f" | {100 * share:.0f} % | {step:.1f} | {min(loads):.1f}–{max(loads):.1f} |")


if __name__ == "__main__":
    kinds = {"sweep": sweep, "buckets": buckets, "triad": triad, "triad-summary": triad_summary,
             "vs-pytorch": vs_pytorch, "gemm-rate": gemm_rate}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds:
        print(f"usage: table.py {{{'|'.join(kinds)}}} FILE", file=sys.stderr)
        sys.exit(2)
    kinds[sys.argv[1]](sys.argv[2])
