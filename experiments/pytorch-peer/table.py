#!/usr/bin/env python3
"""table.py — the medians and ratios of an experiments/pytorch-peer/run.sh run, against the targets.

    python3 experiments/pytorch-peer/table.py experiments/pytorch-peer/data/gemm-vs-pytorch.jsonl

Each line of the file is one run of one round: {"round", "what", "load1_before",
"openblas_coretype", "record"} — a dpscale RESULTS_JSON record, a torch_peer.py record, or
bench_step's Google Benchmark JSON. Per run the epoch time is the record's avg_epoch_s; the
tables give each configuration's median over the rounds, and the ratios of medians:
  single      PyTorch's single epoch / dpscale's               (target >= 1.3, small/medium/large)
  K = 2       PyTorch's best mode's epoch / dpscale's best mode's (target >= 1.3)
  step/sgemm  bench_step: the step's GEMM FLOPs over the step's time, in the library dpscale's
              single run chose, over the best library's rate on the same GEMMs alone (gemm_GFLOPS),
              the same round; median over rounds (target >= 0.85)
"""
import json
import statistics
import sys


def main(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    epochs, chosen, loads, pins, steps = {}, {}, [], set(), []
    for r in runs:
        loads.append(r["load1_before"])
        pins.add(r.get("openblas_coretype") or "unset")
        rec = r["record"]
        if r["what"] == "bench_step":
            steps.append((r["round"], rec))
            continue
        epochs.setdefault(r["what"], []).append(rec["avg_epoch_s"])
        if r["what"].startswith("dpscale single"):
            chosen.setdefault(rec["model"], set()).add(
                f"{rec.get('gemm_library', '?')} ({rec.get('gemm_kernel', '?')})")
    med = {w: statistics.median(v) for w, v in epochs.items()}
    rounds = max(r["round"] for r in runs)
    print(f"# {len(runs)} runs in {rounds} rounds; 1-minute load before a run: median {statistics.median(loads):.2f}, "
          f"range {min(loads):.2f}-{max(loads):.2f}; OPENBLAS_CORETYPE: {', '.join(sorted(pins))}")
    verdict = lambda ok: "meets target" if ok else "MISSES target"  # noqa: E731
    print("\n## Single device: median epoch (s), PyTorch / dpscale (target >= 1.3)\n")
    print("| model | dpscale | PyTorch | PyTorch / dpscale | dpscale's GEMM library (auto) | |")
    print("|---|---:|---:|---:|---|---|")
    for model in ("small", "medium", "large"):
        d, t = med.get(f"dpscale single {model}"), med.get(f"pytorch single {model}")
        if d and t:
            print(f"| {model} | {d:.3f} | {t:.3f} | {t / d:.2f}x | {', '.join(sorted(chosen.get(model, [])))} | "
                  f"{verdict(t / d >= 1.3)} |")
    print("\n## K = 2: median epoch (s) of each mode; the best mode of each, PyTorch / dpscale (target >= 1.3)\n")
    print("| model | dpscale naive | interleaved | bucketed | PyTorch naive | interleaved | DDP | best / best | |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for model in ("small", "medium", "large"):
        d = {m: med.get(f"dpscale {m} {model}") for m in ("naive", "interleaved", "bucketed")}
        t = {m: med.get(f"pytorch {m} {model}") for m in ("naive", "interleaved", "ddp")}
        if not all(d.values()) or not all(t.values()):
            continue
        bd, bt = min(d, key=d.get), min(t, key=t.get)
        ratio = t[bt] / d[bd]
        cells = " | ".join(f"{v:.3f}" for v in list(d.values()) + list(t.values()))
        print(f"| {model} | {cells} | {ratio:.2f}x ({bt} / {bd}) | {verdict(ratio >= 1.3)} |")
    print("\n## The step against the best library's sgemm on its GEMMs (bench_step; target >= 0.85)\n")
    print("| model | library (auto) | step GFLOP/s | best library | its GEMMs alone GFLOP/s | step / best sgemm | |")
    print("|---|---|---:|---|---:|---:|---|")
    for model in ("small", "medium", "large"):
        lib = {c.split(" ")[0] for c in chosen.get(model, [])}
        ratios, step_rates, best_rates, best_libs = [], [], [], []
        for _, rec in steps:
            rows = {b["name"].split("/gemm:")[1].split("/")[0]: b for b in rec["benchmarks"]
                    if b["name"].startswith(f"step/{model}/") and b.get("run_type", "iteration") == "iteration"}
            if not rows or len(lib) != 1 or next(iter(lib)) not in rows:
                continue
            best = max(rows, key=lambda g: rows[g]["gemm_GFLOPS"])
            step_rate = rows[next(iter(lib))]["step_GFLOPS"]
            ratios.append(step_rate / rows[best]["gemm_GFLOPS"])
            step_rates.append(step_rate)
            best_rates.append(rows[best]["gemm_GFLOPS"])
            best_libs.append(best)
        if ratios:
            r = statistics.median(ratios)
            print(f"| {model} | {next(iter(lib))} | {statistics.median(step_rates):.1f} | "
                  f"{'/'.join(sorted(set(best_libs)))} | {statistics.median(best_rates):.1f} | {r:.2f} | "
                  f"{verdict(r >= 0.85)} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: table.py OUT.jsonl", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
