#!/usr/bin/env python3
"""summary.py — the GPU kit's 00-summary.md: what ran and what it measured, from the files the
steps wrote (standard library only: the GPU machine's python3 is enough).

    python3 kit/summary.py OUTDIR WORKDIR SELF_TEST(0|1) > 00-summary.md

Reads OUTDIR/{system.txt, train-fp32.jsonl, train-tf32.jsonl, bench_gemm.json,
bench_allreduce.txt} and WORKDIR/{steps.tsv, gtest-*.json, report-*.md}. Nothing is computed
that a file does not hold, except ratios, which say what they divide.
"""
import glob
import json
import math
import os
import re
import sys

# The workshop's single-GPU epochs on an A100 80GB (seeds/workshop-data-parallelism-on-gpu.txt,
# "Benchmark Results": 32768 samples, batch 1024).
WORKSHOP_A100_EPOCH_S = {"small": 0.0361, "medium": 0.1180, "large": 0.4112, "xlarge": 0.5956}


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def system_keys(out):
    keys = {}
    for line in read(os.path.join(out, "system.txt")).splitlines():
        if line.startswith("## "):
            break
        if ": " in line:
            k, v = line.split(": ", 1)
            keys.setdefault(k, v)
    return keys


def jsonl(path):
    rows = []
    for line in read(path).splitlines():
        line = line.strip()
        if line:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                rows.append({"status": "unreadable line"})
    return rows


def fmt(x, digits=4):
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def steps_table(work):
    lines = ["| step | status | seconds | note |", "|---|---|---:|---|"]
    for row in read(os.path.join(work, "steps.tsv")).splitlines():
        parts = row.split("\t")
        if len(parts) == 4:
            lines.append("| " + " | ".join(parts) + " |")
    return lines


def skip_reasons(out):
    """test name -> the message of its GTEST_SKIP, from tests.log (gtest's JSON has no message):
    [ RUN      ] Suite.Name / file:line: Skipped / <message> / [  SKIPPED ] Suite.Name"""
    reasons, current, after_skipped = {}, None, False
    for line in read(os.path.join(out, "tests.log")).splitlines():
        m = re.match(r"\[ RUN      \] (\S+)", line)
        if m:
            current, after_skipped = m.group(1), False
        elif current and line.endswith(": Skipped"):
            after_skipped = True
        elif current and after_skipped and line.strip():
            reasons[current], after_skipped = line.strip(), False
    return reasons


def tests_table(out, work):
    reasons = skip_reasons(out)
    lines = ["| program | passed | failed | skipped | failures, and why tests skipped |", "|---|---:|---:|---:|---|"]
    for path in sorted(glob.glob(os.path.join(work, "gtest-*.json"))):
        name = os.path.basename(path)[len("gtest-"):-len(".json")]
        try:
            data = json.loads(read(path))
        except json.JSONDecodeError:
            lines.append(f"| {name} | — | — | — | no readable result (crashed or timed out: tests.log) |")
            continue
        passed, failures, skips = 0, [], {}
        for suite in data.get("testsuites", []):
            for t in suite.get("testsuite", []):
                full = f"{suite['name']}.{t['name']}"
                if t.get("failures"):
                    failures.append(full)
                elif t.get("result") == "SKIPPED":
                    skips.setdefault(reasons.get(full, "no reason given"), []).append(full)
                else:
                    passed += 1
        notes = [f"FAILED {f}" for f in failures]
        for reason, names in skips.items():
            notes.append(f"skipped, {reason}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}")
        lines.append(f"| {name} | {passed} | {len(failures)} | {sum(map(len, skips.values()))} | {'; '.join(notes)} |")
    return lines


def single_table(out, self_test):
    runs = {}
    for precision in ("fp32", "tf32"):
        for r in jsonl(os.path.join(out, f"train-{precision}.jsonl")):
            if r.get("mode") == "single" and r.get("status") == "ok":
                # The config's name for the model (a preset, or the width list the record calls "custom").
                runs.setdefault(r.get("point", {}).get("model", r.get("model")), {})[precision] = r
    head = "| model | params | avg epoch fp32 (s) | avg epoch tf32 (s) | fp32/tf32 |"
    sep = "|---|---:|---:|---:|---:|"
    if not self_test:
        head += " workshop A100 fp32 (s) | A100/this fp32 |"
        sep += "---:|---:|"
    lines = [head, sep]
    for model, by in runs.items():
        f, t = by.get("fp32", {}).get("avg_epoch_s"), by.get("tf32", {}).get("avg_epoch_s")
        n = (by.get("fp32") or by.get("tf32") or {}).get("n_params")
        row = f"| {model} | {n:,} | {fmt(f)} | {fmt(t)} | {fmt(f / t if f and t else None, 2)} |"
        if not self_test:
            a = WORKSHOP_A100_EPOCH_S.get(model)
            row += f" {fmt(a)} | {fmt(a / f if a and f else None, 2)} |"
        lines.append(row)
    return lines


def gemm_table(out):
    try:
        data = json.loads(read(os.path.join(out, "bench_gemm.json")))
    except json.JSONDecodeError:
        return ["(no readable bench_gemm.json)"], ""
    ctx = data.get("context", {})
    peak = ctx.get("cuda_fp32_peak_gflops")
    head = f"device {ctx.get('cuda_device', 'cpu')}" + (f", fp32 peak {float(peak):,.0f} GFLOP/s" if peak else "")
    lines = ["| GEMM | time (ms) | GFLOP/s | % of square sgemm | % of fp32 peak |", "|---|---:|---:|---:|---:|"]
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = b.get("name", "").replace("/manual_time", "")
        lines.append(f"| {name} | {fmt(b.get('real_time'), 3)} | {fmt(b.get('GFLOPS'), 0)} |"
                     f" {fmt(b.get('pct_of_ceiling'), 1)} | {fmt(b.get('pct_of_peak'), 1)} |")
    return lines, head


def math_table(out):
    """CUBLAS_PEDANTIC_MATH (gemm/cuda/...) against CUBLAS_DEFAULT_MATH (gemm/cuda-default/...),
    shape by shape: which the trainers' fp32 should use. Empty when bench_gemm timed one mode."""
    try:
        data = json.loads(read(os.path.join(out, "bench_gemm.json")))
    except json.JSONDecodeError:
        return []
    times = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        m = re.match(r"gemm/(cuda(?:-[a-z0-9]+)?)/(.*)", b.get("name", "").replace("/manual_time", ""))
        if m:
            times.setdefault(m.group(2), {})[m.group(1)] = b.get("real_time")
    lines = ["| GEMM | pedantic (ms) | default (ms) | pedantic/default |", "|---|---:|---:|---:|"]
    for shape, by in times.items():
        p, d = by.get("cuda"), by.get("cuda-default")
        if p and d:
            lines.append(f"| {shape} | {fmt(p, 3)} | {fmt(d, 3)} | {fmt(p / d, 2)} |")
    return lines if len(lines) > 2 else []


def main():
    out, work, self_test = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    sysk = system_keys(out)
    doc = [f"# dpscale GPU kit — {'CPU self-test (tiny models, no GPU)' if self_test else 'GPU run'}", ""]
    doc += [f"- when: {sysk.get('date', '?')}; host {sysk.get('host', '?')}; {sysk.get('os', '?')}, glibc {sysk.get('glibc', '?')}",
            f"- GPU: {sysk.get('gpu', '?')}; driver {sysk.get('driver', '—')} (CUDA {sysk.get('driver_cuda', '—')});"
            f" runtime {sysk.get('cuda_runtime', '—')}; cuBLAS {sysk.get('cublas', '—')}; NCCL {sysk.get('nccl', '—')}",
            f"- CPU: {sysk.get('cpu', '?')}", ""]
    doc += ["## Steps", ""] + steps_table(work) + [""]
    doc += ["## Tests", ""] + tests_table(out, work) + [""]
    doc += ["## Single device" + ("" if self_test else ": the workshop's settings (32768 samples, batch 1024, 5 epochs)"),
            ""] + single_table(out, self_test) + [""]
    for precision in ("fp32", "tf32"):
        report = read(os.path.join(work, f"report-{precision}.md")).strip()
        doc += [f"## dpscale report, {precision} (train-{precision}.jsonl; K = 1: DP speedups show the DP loop's own cost)",
                "", "```", report or "(no report)", "```", ""]
    lines, head = gemm_table(out)
    doc += [f"## GEMMs of a training step (bench_gemm.json; {head})", ""] + lines + [""]
    math = math_table(out)
    if math:
        doc += ["## cuBLAS math for fp32: pedantic against default (bench_gemm.json; > 1: default is faster)", ""]
        doc += math + [""]
    table = read(os.path.join(out, "bench_allreduce.txt"))
    start = table.find("# dpscale bench_allreduce")  # the nccl-tests table, after Google Benchmark's listing
    doc += ["## All-reduce at K = 1 (bench_allreduce.txt)", "", "```",
            (table[start:] if start >= 0 else table).strip() or "(nothing)", "```", ""]
    sys.stdout.write("\n".join(doc))


if __name__ == "__main__":
    main()
