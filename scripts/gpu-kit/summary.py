#!/usr/bin/env python3
"""summary.py — the GPU kit's 00-summary.md: what ran and what it measured, from the files the
steps wrote (standard library only: the GPU machine's python3 is enough).

    python3 kit/summary.py OUTDIR WORKDIR SELF_TEST(0|1) > 00-summary.md

Reads OUTDIR/{system.txt, train-fp32.jsonl, train-tf32.jsonl, ab.jsonl, bench_dp_loop-*.json, bench_step-*.json,
bench_kernels.json, bench_gemm.json, bench_allreduce.txt} and WORKDIR/{steps.tsv, gtest-*.json,
report-*.md}. Nothing is computed that a file does not hold, except ratios, which say what they
divide, and a step's FLOPs (from the record's widths and batch: 2·B·in·out per GEMM, three GEMMs
per layer but the first layer's input gradient).
"""
import glob
import json
import math
import os
import re
import statistics
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


# Dense TF32 tensor-core peaks (TFLOP/s) from NVIDIA's datasheets: half the "with sparsity"
# figure. Looked up by the name nvidia-smi prints; a card not listed gets no TF32 fraction.
DENSE_TF32_PEAK_TFLOPS = [("H100 NVL", None), ("H200 NVL", None), ("H200", 494.7), ("H100 80GB HBM3", 494.7),
                          ("H100 SXM", 494.7), ("H100 PCIe", 378.0), ("A100", 156.0)]


def dense_tf32_peak(gpu_name):
    for key, peak in DENSE_TF32_PEAK_TFLOPS:
        if key in (gpu_name or ""):
            return peak
    return None


def step_flops(record):
    """FLOPs of one optimizer step: forward, weight and input gradients of every layer (no input
    gradient for the first), 2·B·in·out each, B the global batch times the micro-batches."""
    w = record.get("widths") or []
    rows = record.get("global_batch", 0) * (record.get("accum_steps") or 1)
    total = 0
    for i in range(len(w) - 1):
        total += (2 if i == 0 else 3) * 2 * rows * w[i] * w[i + 1]
    return total


def median_epoch(record):
    t = [x for x in record.get("epoch_times_s") or [] if isinstance(x, (int, float))]
    return statistics.median(t) if t else None


def ab_points(out):
    """ab.jsonl (kit/ab.sh) by point, (rev, precision, model, mode, finite_check_every):
    (a record of the point, for fields other than time; the point's time; rounds; failed runs).
    Times are each run's median epoch; a point run more than once (single opens and closes each
    group of DP modes; rounds), the median of its runs' (for two, their mean): single's time is
    then the mean of the two around the DP modes, not whichever ran first."""
    runs = {}
    failed = []
    for r in jsonl(os.path.join(out, "ab.jsonl")):
        key = (r.get("rev"), r.get("precision"), r.get("model"), r.get("mode"), r.get("finite_check_every"))
        if "record" in r:
            runs.setdefault(key, []).append(r["record"])
        else:
            failed.append(f"{'/'.join(str(k) for k in key)}: {r.get('reason', '?')}")
    t = {k: v[0] for k, v in runs.items()}
    epoch = {k: statistics.median(e) if e else None
             for k, e in ((k, [x for x in map(median_epoch, v) if x is not None]) for k, v in runs.items())}
    rounds = max((len(v) for k, v in runs.items() if k[3] != "single"), default=0)
    return t, epoch, rounds, failed


def check_share(epoch, rev, precision, model, mode):
    """(epoch with the finite check every step, epoch without, the check's share of a step: (with -
    without) / with); Nones where unmeasured."""
    a, b = epoch.get((rev, precision, model, mode, 1)), epoch.get((rev, precision, model, mode, 0))
    return a, b, (a - b) / a if a and b else None


def peak_fraction(t, epoch, rev, precision, model, fp32_peak_gflops, gpu_name):
    """(single's TFLOP/s, the card's peak for the precision, the fraction): from ab.jsonl's single runs."""
    rec = t.get((rev, precision, model, "single", 1))
    e = epoch.get((rev, precision, model, "single", 1))
    peak = (fp32_peak_gflops / 1e3 if fp32_peak_gflops else None) if precision == "fp32" else dense_tf32_peak(gpu_name)
    rate = step_flops(rec) * rec.get("steps_per_epoch", 0) / e / 1e12 if rec and e else None
    return rate, peak, (rate / peak if rate and peak else None)


def ab_tables(points, fp32_peak_gflops, gpu_name):
    """The base revision against the new code, from ab.jsonl's points (ab_points): the finite
    check's share of a step, each DP mode at K = 1 against single, and the single runs' fraction
    of the peak."""
    t, epoch, rounds, failed = points
    if not t and not failed:
        return []
    doc = []
    revs = ["base", "new"]
    # The finite check's share: with it (every step) against without it.
    lines = ["| precision | model | mode | rev | epoch, check every step (s) | epoch, check off (s) | check's share of a step |",
             "|---|---|---|---|---:|---:|---:|"]
    for (rev, precision, model, mode, check), rec in sorted(t.items(), key=lambda kv: str(kv[0])):
        if check != 0:
            continue
        a, b, share = check_share(epoch, rev, precision, model, mode)
        lines.append(f"| {precision} | {model} | {mode} | {rev} | {fmt(a)} | {fmt(b)} | "
                     f"{fmt(100 * share, 1) + ' %' if share is not None else '—'} |")
    if len(lines) > 2:
        doc += [f"### The finite check's share of a step (check every step against off; target <= 1 %; "
                f"{rounds} round(s))", ""] + lines + [""]
    # DP at K = 1 against single.
    lines = ["| precision | model | rev | single (s) | naive | interleaved | bucketed |", "|---|---|---|---:|---:|---:|---:|"]
    for precision in ("fp32", "tf32"):
        for model in ("large", "xlarge"):
            for rev in revs:
                if (rev, precision, model, "single", 1) not in t:
                    continue
                s1 = epoch[(rev, precision, model, "single", 1)]
                cells = []
                for mode in ("naive", "interleaved", "bucketed"):
                    d = epoch.get((rev, precision, model, mode, 1))
                    cells.append(f"{fmt(s1 / d, 3)}" if s1 and d else "—")
                lines.append(f"| {precision} | {model} | {rev} | {fmt(s1)} | " + " | ".join(cells) + " |")
    if len(lines) > 2:
        doc += ["### Data-parallel trainers at K = 1 against single (single's epoch / the mode's: target >= 0.99)", "",
                "Each a process of its own; single's time is the mean of its runs before and after the DP modes"
                " (ab.sh). The process-to-process spread is in these ratios; the same loops in one process,"
                " interleaved, with intervals: \"The DP loop at K = 1 in one process\".", ""]
        doc += lines + [""]
    # The single runs against the card's peaks.
    lines = ["| precision | model | rev | TFLOP/s | peak (TFLOP/s) | % of peak | bias + ReLU |",
             "|---|---|---|---:|---:|---:|---|"]
    for precision in ("fp32", "tf32"):
        for model in ("large", "xlarge"):
            for rev in revs:
                rec = t.get((rev, precision, model, "single", 1))
                if not rec:
                    continue
                rate, peak, frac = peak_fraction(t, epoch, rev, precision, model, fp32_peak_gflops, gpu_name)
                pct = 100 * frac if frac is not None else None
                # The record's forward_epilogue: inside the GEMM or a pass of its own (older records: —).
                lines.append(f"| {precision} | {model} | {rev} | {fmt(rate, 1)} | {fmt(peak, 1)} | {fmt(pct, 1)} | "
                             f"{rec.get('forward_epilogue') or '—'} |")
    if len(lines) > 2:
        doc += ["### Single device against the card's peak (fp32: bench_gemm's SMs x lanes x 2 x clock; TF32: "
                "the datasheet's dense figure; targets: TF32 xlarge >= 40 %, fp32 >= 66 %)", ""] + lines + [""]
    if failed:
        doc += ["Failed runs: " + "; ".join(failed), ""]
    return doc


def parts_table(out):
    """The step's parts (bench_step parts/...), one row per benchmark."""
    lines = ["| benchmark | step (ms) | GEMMs | element-wise | optimizer + check | loss read | other | event pair (us) |"
             " GEMMs / step | step TFLOP/s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for precision in ("fp32", "tf32"):
        try:
            data = json.loads(read(os.path.join(out, f"bench_step-{precision}.json")))
        except json.JSONDecodeError:
            continue
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate" or not b.get("name", "").startswith("parts/"):
                continue
            g = b.get
            lines.append(f"| {g('name').replace('/manual_time', '')} | {fmt(g('step_ms'), 3)} | {fmt(g('gemm_ms'), 3)} |"
                         f" {fmt(g('elementwise_ms'), 3)} | {fmt(g('optimizer_ms'), 3)} | {fmt(g('loss_read_ms'), 3)} |"
                         f" {fmt(g('other_ms'), 3)} | {fmt(1e3 * g('events_ms') if g('events_ms') is not None else None, 1)} |"
                         f" {fmt(g('gemm_over_step'), 3)} | {fmt(g('step_TFLOPS'), 1)} |")
    return lines if len(lines) > 2 else []


DP_LOOP_VARIANTS = ("naive", "naive_logged", "naive_per_call", "naive_fused", "interleaved", "bucketed", "single_events")


def dp_loop_table(rows):
    """bench_dp_loop-*.json's rows (dp_loop_rows): each DP variant's speedup at K = 1 in one
    process, per model and precision."""
    lines = ["| benchmark | single (ms/step) | " + " | ".join(DP_LOOP_VARIANTS) + " |",
             "|---|---:|" + "---:|" * len(DP_LOOP_VARIANTS)]
    for _, _, b in rows:
        cells = " | ".join(f"{fmt(b.get(f'{v}_speedup'), 3)} ({fmt(b.get(f'{v}_speedup_lo'), 3)}–"
                           f"{fmt(b.get(f'{v}_speedup_hi'), 3)})" for v in DP_LOOP_VARIANTS)
        lines.append(f"| {b['name'].replace('/manual_time', '')} | {fmt(b.get('single_ms'), 3)} | {cells} |")
    return lines if len(lines) > 2 else []


def dp_loop_rows(out):
    """[(precision, model, benchmark)] of each bench_dp_loop-PRECISION.json row (dp_loop/BACKEND/MODEL/...)."""
    rows = []
    for precision in ("fp32", "tf32"):
        try:
            data = json.loads(read(os.path.join(out, f"bench_dp_loop-{precision}.json")))
        except json.JSONDecodeError:
            continue
        for b in data.get("benchmarks", []):
            name = b.get("name", "")
            if b.get("run_type") != "aggregate" and name.startswith("dp_loop/") and name.count("/") >= 2:
                rows.append((precision, name.split("/")[2], b))
    return rows


def interval_verdict(lo, hi, target):
    """At least `target`, read from a 95% interval: met when the whole interval clears it, not met
    when the whole interval falls short, undecided when the interval straddles it."""
    if lo is None or hi is None:
        return "not measured"
    return "met" if lo >= target else "not met" if hi < target else "undecided"


def gtest_results(work, exe, prefix):
    """(passed, failed, skipped) of exe's tests whose full name starts with prefix (gtest JSON)."""
    try:
        data = json.loads(read(os.path.join(work, f"gtest-{exe}.json")))
    except json.JSONDecodeError:
        return 0, 0, 0
    passed = failed = skipped = 0
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            if not f"{suite['name']}.{t['name']}".startswith(prefix):
                continue
            if t.get("failures"):
                failed += 1
            elif t.get("result") == "SKIPPED":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def goals_table(points, loop_rows, work, fp32_peak_gflops, gpu_name):
    """The GPU work's goals, each with what this run measured and a verdict: the finite check's
    share (at most 1%: one pair of runs each, so a verdict on the value alone), the DP trainers'
    step at K = 1 against single's in one process (at least 0.99, from bench_dp_loop's 95%
    interval), the single runs against the card's peak (TF32 xlarge at least 40%, fp32 at least
    66%) and NCCL's exactness at K = 2 and 4 (every case passed)."""
    t, epoch, _, _ = points
    rows = []
    for mode in ("single", "bucketed"):
        share = check_share(epoch, "new", "tf32", "large", mode)[2]
        rows.append((f"finite check's share of a step, large TF32, {mode} (ab.jsonl, new)", "<= 1 %",
                     f"{fmt(100 * share, 1)} %" if share is not None else "—",
                     "not measured" if share is None else "met" if share <= 0.01 else "not met"))
    for precision, model, b in sorted(loop_rows, key=lambda r: (r[0], r[1])):
        for v in ("naive", "interleaved", "bucketed"):
            lo, hi = b.get(f"{v}_speedup_lo"), b.get(f"{v}_speedup_hi")
            rows.append((f"{v} at K = 1 against single, {model} {precision.upper()} (bench_dp_loop)", ">= 0.99",
                         f"{fmt(b.get(f'{v}_speedup'), 3)} ({fmt(lo, 3)}–{fmt(hi, 3)})", interval_verdict(lo, hi, 0.99)))
    for precision, model, target in (("tf32", "xlarge", 0.40), ("fp32", "large", 0.66), ("fp32", "xlarge", 0.66)):
        rate, peak, frac = peak_fraction(t, epoch, "new", precision, model, fp32_peak_gflops, gpu_name)
        rows.append((f"single {model} {precision.upper()}, share of the card's peak (ab.jsonl, new)",
                     f">= {100 * target:.0f} %", f"{fmt(100 * frac, 1)} % of {fmt(peak, 1)} TFLOP/s" if frac else "—",
                     "not measured" if frac is None else "met" if frac >= target else "not met"))
    passed, failed, skipped = gtest_results(work, "test_dp_nccl_multi", "Modes/DpNcclMultiExactness.")
    rows.append(("NCCL exactness at K = 2 and 4, three modes (test_dp_nccl_multi)", "6 of 6 pass",
                 f"{passed} passed, {failed} failed, {skipped} skipped",
                 "met" if passed == 6 and failed == 0 else "not met" if failed else "not measured"))
    lines = ["| goal | target | measured | verdict |", "|---|---|---|---|"]
    lines += [f"| {g} | {target} | {m} | {v} |" for g, target, m, v in rows]
    return lines


def kernels_tables(out):
    """bench_kernels.json: the optimizer with its finite check three ways, and the element-wise passes."""
    try:
        data = json.loads(read(os.path.join(out, "bench_kernels.json")))
    except json.JSONDecodeError:
        return []
    opt = ["| benchmark | update alone (ms) | separate passes (ms) | fused (ms) | separate / alone | fused / alone |",
           "|---|---:|---:|---:|---:|---:|"]
    passes = ["| pass | GB/s | % of a copy |", "|---|---:|---:|"]
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = b.get("name", "").replace("/manual_time", "")
        if name.startswith("optimizer/"):
            opt.append(f"| {name} | {fmt(b.get('plain_ms'), 3)} | {fmt(b.get('separate_ms'), 3)} | {fmt(b.get('fused_ms'), 3)} |"
                       f" {fmt(b.get('separate_over_plain'), 2)} | {fmt(b.get('fused_over_plain'), 2)} |")
        elif "pct_of_memcpy" in b:
            passes.append(f"| {name} | {fmt(b.get('GBps'), 0)} | {fmt(b.get('pct_of_memcpy'), 1)} |")
    doc = []
    if len(opt) > 2:
        doc += ["### The update and its finite check (bench_kernels.json, optimizer/...)", ""] + opt + [""]
    if len(passes) > 2:
        doc += ["### Element-wise passes (bench_kernels.json)", ""] + passes + [""]
    return doc


def base_revision(out):
    """The base build's version, from the kit's manifest as system.txt carries it."""
    m = re.search(r"(?m)^base: (.*)$", read(os.path.join(out, "system.txt")))
    return m.group(1) if m else "?"


def gemm_context(out):
    try:
        return json.loads(read(os.path.join(out, "bench_gemm.json"))).get("context", {})
    except json.JSONDecodeError:
        return {}


def main():
    out, work, self_test = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    sysk = system_keys(out)
    doc = [f"# dpscale GPU kit — {'CPU self-test (tiny models, no GPU)' if self_test else 'GPU run'}", ""]
    doc += [f"- when: {sysk.get('date', '?')}; host {sysk.get('host', '?')}; {sysk.get('os', '?')}, glibc {sysk.get('glibc', '?')}",
            f"- GPU: {sysk.get('gpu', '?')}; driver {sysk.get('driver', '—')} (CUDA {sysk.get('driver_cuda', '—')});"
            f" runtime {sysk.get('cuda_runtime', '—')}; cuBLAS {sysk.get('cublas', '—')}; NCCL {sysk.get('nccl', '—')}",
            f"- CPU: {sysk.get('cpu', '?')}", ""]
    doc += ["## Steps", ""] + steps_table(work) + [""]
    ctx = gemm_context(out)
    peak = float(ctx["cuda_fp32_peak_gflops"]) if ctx.get("cuda_fp32_peak_gflops") else None
    doc += ["## Against the goals", "",
            "Each goal with what this run measured (the tables below hold the numbers)."
            + (" On the CPU self-test the verdicts only show that the rows are computed." if self_test else ""), ""]
    points, loop_rows = ab_points(out), dp_loop_rows(out)  # each file read once, for the goals and the tables
    doc += goals_table(points, loop_rows, work, peak, sysk.get("gpu", "")) + [""]
    doc += ["## Tests", ""] + tests_table(out, work) + [""]
    doc += ["## Single device" + ("" if self_test else ": the workshop's settings (32768 samples, batch 1024, 5 epochs)"),
            ""] + single_table(out, self_test) + [""]
    for precision in ("fp32", "tf32"):
        report = read(os.path.join(work, f"report-{precision}.md")).strip()
        doc += [f"## dpscale report, {precision} (train-{precision}.jsonl; K = 1: DP speedups show the DP loop's own cost)",
                "", "```", report or "(no report)", "```", ""]
    ab = ab_tables(points, peak, sysk.get("gpu", ""))
    if ab:
        doc += ["## The base revision against this one, on this card (ab.jsonl; kit/ab.sh)", "",
                f"Base: {base_revision(out)}. Each run's median epoch; the two revisions back to back at each point.",
                ""] + ab
    loop = dp_loop_table(loop_rows)
    if loop:
        doc += ["## The DP loop at K = 1 in one process (bench_dp_loop-fp32.json, bench_dp_loop-tf32.json)", "",
                "Each variant's speedup at K = 1: the single block of steps over the variant's block of the same"
                " iteration, median over the iterations, and in brackets its 95% interval (0.990: a step 1% longer"
                " than single's; the goal is at least 0.99). bench/bench_dp_loop.cpp says what each variant is.", ""]
        doc += loop + [""]
    parts = parts_table(out)
    if parts:
        doc += ["## The step's parts (bench_step-fp32.json, bench_step-tf32.json; ms per step)", ""] + parts + [""]
    doc += kernels_tables(out)
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
