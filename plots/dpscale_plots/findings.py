"""findings.py — the twelve findings of the reproduction report, each judged from the numbers.

Each function takes the Evidence (the report JSONs of the measured sweeps, the all-reduce
benchmark, dpscale predict's outputs) and returns a Finding: the claim with the source's
numbers, what was measured here (or predicted, labelled so), and a verdict with its reason.
A verdict is computed, never written down: change the numbers and it changes.

Verdicts: "reproduced", "partly", "not reproduced", "differs" (the source's own arithmetic or
setup disagrees with itself or cannot be compared as stated), "not run" (an input is missing).
"""
from dataclasses import dataclass, field
from statistics import median

from . import sources

VERDICTS = ("reproduced", "partly", "not reproduced", "differs", "not run")


@dataclass
class Finding:
    number: int
    title: str
    claim: str                       # the source's words and numbers
    source: str
    commands: list                   # what produced the evidence
    rows: list = field(default_factory=list)  # (what, source value, value here, measured|predicted)
    verdict: str = "not run"
    reason: str = ""
    charts: list = field(default_factory=list)  # chart file stems shown beside it


@dataclass
class Evidence:
    runs: dict = None           # dpscale report --format json of the main sweep
    buckets: dict = None        # ... of the bucket-cap sweep
    allreduce: dict = None      # K -> list of bench_allreduce benchmark entries
    predict: list = None        # dpscale predict --format json rows
    caps_predicted: list = None  # dpscale predict --recommend-cap --format json rows
    textbook_15_9_1: str = None
    textbook_15_2_1: str = None
    commands: dict = field(default_factory=dict)  # evidence name -> command line


def _default_cap(report):
    """The trainers' default bucket cap, as the report gives it (its option_defaults): PyTorch
    DDP's, what the workshop's DDP rows ran with."""
    return float(report["option_defaults"]["bucket_cap_mb"])


def _dp_modes(report):
    """The report's data-parallel modes, in its mode table's order (contract/modes.cpp)."""
    return [m["name"] for m in (report or {}).get("modes", []) if m["data_parallel"]]


def _label(report, mode):
    """'naive'; 'bucketed (25 MB)': the mode, and for bucketed the cap its rows were run with."""
    return f"{mode} ({_default_cap(report):g} MB)" if mode == "bucketed" else mode


def _pt(report, model, mode, k, cap=None):
    """One point of a report; bucketed points at `cap` (the default cap unless given)."""
    if not report:
        return None
    if mode == "bucketed" and cap is None:
        cap = _default_cap(report)
    for p in report["points"]:
        if p["model"] == model and p["mode"] == mode and p["world_size"] == k:
            if mode != "bucketed" or abs((p["bucket_cap_mb"] or 0) - cap) < 1e-9:
                return p
    return None


def _med(p, key):
    v = p.get(key) if p else None
    if isinstance(v, dict):
        return v.get("median")
    return v


def _pred(ev, model, mode, k):
    """dpscale predict's row; bucketed at the measured runs' default cap."""
    if mode == "bucketed" and not ev.runs:
        return None
    cap = _default_cap(ev.runs) if mode == "bucketed" else None
    for r in ev.predict or []:
        if r["model"] == model and r["mode"] == mode and r["world_size"] == k:
            if mode != "bucketed" or abs(r.get("bucket_cap_mb", cap) - cap) < 1e-9:
                return r
    return None


def _x(v):
    return "—" if v is None else f"{v:.2f}×"


def _cmd(ev, *names):
    return [ev.commands[n] for n in names if n in ev.commands]


def _models(report):
    seen = []
    for p in (report or {}).get("points", []):
        if p["model"] not in seen:
            seen.append(p["model"])
    return seen


def f1_small_slower(ev):
    f = Finding(1, "The small model is slower in every parallel mode",
                "Small (1.5M parameters): every parallel mode is slower than one GPU — 0.60×, 0.58×, 0.83× "
                "(naive, interleaved, DDP) at 2 GPUs; 0.55×, 0.56×, 0.75× at 4.",
                "workshop, Benchmark Results", _cmd(ev, "runs"), charts=["chart2_speedup"])
    slower, total = [], 0
    for k in (2, 4):
        for m in _dp_modes(ev.runs):
            s = _med(_pt(ev.runs, "small", m, k), "speedup")
            if s is None or ("small", m, k) not in sources.WORKSHOP:
                continue
            total += 1
            src = sources.WORKSHOP[("small", m, k)][2]
            f.rows.append((f"small {_label(ev.runs, m)} K={k}", _x(src), _x(s), "measured"))
            if s < 1.0:
                slower.append(f"{m} K={k}")
    if total == 0:
        f.reason = "no small-model runs in the results"
        return f
    if len(slower) == total:
        f.verdict, f.reason = "reproduced", f"all {total} parallel runs of small are below 1×"
    elif slower:
        faster = [r[0] for r in f.rows if not r[2].startswith("0.")]
        f.verdict = "partly"
        calls = sorted({int(_med(p, "n_buckets")) for p in (ev.runs or {}).get("points", [])
                        if p["model"] == "small" and p["mode"] == "bucketed" and _med(p, "n_buckets")
                        and (_med(p, "speedup") or 0) >= 1.0})
        f.reason = (f"{len(slower)} of {total} are below 1×; {', '.join(faster)} reach 1× or more"
                    + (f" — bucketed makes {'/'.join(map(str, calls))} all-reduce calls per step, and fewer calls "
                       "save the emulated link's per-call α, which dominates small" if calls else ""))
    else:
        f.verdict, f.reason = "not reproduced", "every parallel run of small is at least 1×"
    return f


def f2_grows_with_size(ev):
    f = Finding(2, "Speedup grows with model size",
                "Larger models scale better: at 4 GPUs DDP goes 0.75× (small), 1.75× (medium), 2.31× (large), "
                "2.39× (xlarge).", "workshop, Benchmark Results", _cmd(ev, "runs"),
                charts=["chart1_epoch_time", "chart2_speedup"])
    models = [m for m in ("small", "medium", "large", "xlarge") if m in _models(ev.runs)]
    ok, checked = [], []
    for m in _dp_modes(ev.runs):
        s = [_med(_pt(ev.runs, x, m, 2), "speedup") for x in models]
        if len(models) < 2 or any(v is None for v in s) or any((x, m, 2) not in sources.WORKSHOP for x in models):
            continue
        checked.append(m)
        src = [sources.WORKSHOP[(x, m, 2)][2] for x in models]
        f.rows.append((f"{_label(ev.runs, m)} K=2: " + " < ".join(models), " / ".join(_x(v) for v in src),
                       " / ".join(_x(v) for v in s), "measured"))
        if all(a < b for a, b in zip(s, s[1:])):
            ok.append(m)
    if not checked:
        f.reason = "needs at least two models with every DP mode at K=2"
    elif len(ok) == len(checked):
        f.verdict, f.reason = "reproduced", f"speedup rises with size for {', '.join(ok)} at K=2"
    elif ok:
        f.verdict, f.reason = "partly", f"rises for {', '.join(ok)} only"
    else:
        f.verdict, f.reason = "not reproduced", "no mode's speedup rises with model size"
    return f


def f3_interleaved_beats_naive(ev):
    f = Finding(3, "Interleaved beats naive by about 14% at 4 devices (large, xlarge)",
                "Large at 4 GPUs: naive 1.92× vs interleaved 2.24× (14% faster); xlarge 2.06× vs 2.40× (14%).",
                "workshop, Interleaved Consistently Beats Naive", _cmd(ev, "runs", "predict"),
                charts=["chart4_overlap_vs_naive"])
    gains = []
    for model in ("large", "xlarge"):
        src = sources.WORKSHOP[(model, "naive", 4)][0] / sources.WORKSHOP[(model, "interleaved", 4)][0] - 1
        n, i = _pt(ev.runs, model, "naive", 4), _pt(ev.runs, model, "interleaved", 4)
        if n and i:
            g = _med(n, "avg_epoch_s") / _med(i, "avg_epoch_s") - 1
            gains.append(("measured", model, g))
            f.rows.append((f"{model} K=4, naive epoch / interleaved epoch − 1", f"{src:.0%}", f"{g:.0%}",
                           "measured (4 ranks on 2 cores)"))
        pn, pi = _pred(ev, model, "naive", 4), _pred(ev, model, "interleaved", 4)
        if pn and pi:
            g = pn["epoch_s"] / pi["epoch_s"] - 1
            gains.append(("predicted", model, g))
            f.rows.append((f"{model} K=4, naive / interleaved − 1", f"{src:.0%}", f"{g:.0%}", "predicted"))
    if not gains:
        f.reason = "no K=4 runs of large or xlarge, and no prediction"
        return f
    # "14% faster" is the workshop's (2.24 − 1.92)/2.24; in epoch times (naive/interleaved − 1) its
    # own gain is 17% for large and xlarge alike: within half of it either way counts as the same.
    src = {m: sources.WORKSHOP[(m, "naive", 4)][0] / sources.WORKSHOP[(m, "interleaved", 4)][0] - 1
           for m in ("large", "xlarge")}
    near = [g for _, m, g in gains if 0.5 * src[m] <= g <= 1.5 * src[m]]
    beats = [g for _, _, g in gains if g > 0]
    if len(near) == len(gains):
        f.verdict, f.reason = "reproduced", "interleaved is faster by within half of the workshop's own gain, in every case"
    elif len(beats) == len(gains):
        f.verdict = "partly"
        f.reason = ("interleaved beats naive in every case, by " +
                    ", ".join(f"{g:.0%} ({how})" for how, _, g in gains) +
                    ", against the workshop's 17% in the same terms; within half of it counts as reproduced, and "
                    "the size of the gain depends on γ, which the emulated link sets")
    else:
        f.verdict, f.reason = "not reproduced", "interleaved does not beat naive in every case"
    if "xlarge" not in [m for _, m, _ in gains]:
        f.reason += "; xlarge was not run (a K=4 xlarge run takes minutes on 2 cores)"
    return f


def f4_bucketed_matches(ev):
    f = Finding(4, "Bucketed (DDP) matches or beats interleaved",
                "DDP 2.31× vs interleaved 2.24× (large, 4 GPUs); 1.75× vs 1.35× (medium, 4); within 1% for xlarge.",
                "workshop, DDP Matches or Beats Hand-Rolled", _cmd(ev, "runs"),
                charts=["chart4_overlap_vs_naive", "chart6_throughput"])
    ok, total = [], 0
    for model in _models(ev.runs):
        for k in (2, 4):
            b, i = _pt(ev.runs, model, "bucketed", k), _pt(ev.runs, model, "interleaved", k)
            if not (b and i):
                continue
            total += 1
            r = _med(b, "throughput_samples_per_s") / _med(i, "throughput_samples_per_s")
            src = sources.WORKSHOP.get((model, "bucketed", k))
            srcr = src[2] / sources.WORKSHOP[(model, "interleaved", k)][2] if src else None
            f.rows.append((f"{model} K={k}: bucketed / interleaved throughput",
                           "—" if srcr is None else f"{srcr:.2f}", f"{r:.2f}", "measured"))
            if r >= 0.97:
                ok.append(f"{model} K={k}")
    if total == 0:
        f.reason = "no bucketed and interleaved pairs"
    elif len(ok) == total:
        f.verdict, f.reason = "reproduced", f"bucketed is within 3% of interleaved or faster in all {total} pairs"
    elif ok:
        f.verdict, f.reason = "partly", f"{len(ok)} of {total} pairs match or beat (within 3%)"
    else:
        f.verdict, f.reason = "not reproduced", "bucketed trails interleaved everywhere"
    return f


def _naive_rise(ev, f, key, fmt, src_of):
    """Rows of naive's `key` at K=2 and K=4, measured and predicted; returns (rises, total)."""
    rises = total = 0
    for model in _models(ev.runs):
        a, b = _pt(ev.runs, model, "naive", 2), _pt(ev.runs, model, "naive", 4)
        if a and b and _med(a, key) is not None and _med(b, key) is not None:
            total += 1
            va, vb = _med(a, key), _med(b, key)
            rises += vb > va
            f.rows.append((f"{model} naive K=2 → 4", src_of(model), f"{fmt(va)} → {fmt(vb)}",
                           "measured (K=4: 4 ranks on 2 cores)"))
    return rises, total


def f5_comm_fraction_rises(ev):
    f = Finding(5, "Naive's communication fraction rises from 2 to 4 devices",
                "Naive comm share of the epoch: medium 31% → 43%, large 18% → 35%, xlarge 17% → 32%.",
                "workshop, chart 3 (Naive DP: Compute vs Communication)", _cmd(ev, "runs", "predict"),
                charts=["chart3_naive_comm_split"])

    def src(model):
        a, b = sources.WORKSHOP_NAIVE_COMM_PCT.get((model, 2)), sources.WORKSHOP_NAIVE_COMM_PCT.get((model, 4))
        return f"{a}% → {b}%" if a else "—"

    rises, total = _naive_rise(ev, f, "comm_fraction", lambda v: f"{v:.0%}", src)
    prises = ptotal = 0
    for model in _models(ev.runs):
        pa, pb = _pred(ev, model, "naive", 2), _pred(ev, model, "naive", 4)
        if pa and pb:
            ptotal += 1
            fa, fb = pa["comm_s"] / pa["epoch_s"], pb["comm_s"] / pb["epoch_s"]
            prises += fb > fa
            f.rows.append((f"{model} naive K=2 → 4", src(model), f"{fa:.0%} → {fb:.0%}", "predicted"))
    return _verdict_rise(f, rises, total, prises, ptotal,
                         "with 4 ranks on 2 cores compute does not shrink from K=2 to 4, so the measured fraction "
                         "understates the rise; the prediction divides compute by K")


def f6_comm_time_grows(ev):
    f = Finding(6, "Naive's communication time grows with K",
                "Naive comm per epoch, 2 → 4 GPUs: small 28.4 → 30.7 ms, medium 32.8 → 37.0, large 50.1 → 74.4, "
                "xlarge 70.0 → 94.0.", "workshop, Benchmark Results (Comm Time)", _cmd(ev, "runs", "predict"),
                charts=["chart3_naive_comm_split"])

    def src(model):
        a, b = sources.WORKSHOP.get((model, "naive", 2)), sources.WORKSHOP.get((model, "naive", 4))
        return f"{a[1] * 1e3:.1f} → {b[1] * 1e3:.1f} ms" if a else "—"

    rises, total = _naive_rise(ev, f, "comm_s", lambda v: f"{v:.3f} s", src)
    prises = ptotal = 0
    for model in _models(ev.runs):
        pa, pb = _pred(ev, model, "naive", 2), _pred(ev, model, "naive", 4)
        if pa and pb:
            ptotal += 1
            prises += pb["comm_s"] > pa["comm_s"]
            f.rows.append((f"{model} naive K=2 → 4", src(model), f"{pa['comm_s']:.3f} → {pb['comm_s']:.3f} s",
                           "predicted"))
    return _verdict_rise(f, rises, total, prises, ptotal,
                         "the ring moves 2(K−1)/K of the gradient per rank and makes 2(K−1) hops: 1.5× the bytes "
                         "and 3× the per-hop α from K=2 to 4")


def _verdict_rise(f, rises, total, prises, ptotal, why):
    if total + ptotal == 0:
        f.reason = "no naive runs at K=2 and K=4"
    elif rises == total and prises == ptotal:
        f.verdict, f.reason = "reproduced", f"it rises for every model ({total} measured, {ptotal} predicted); {why}"
    elif rises + prises > 0:
        f.verdict = "partly"
        f.reason = f"rises in {rises} of {total} measured and {prises} of {ptotal} predicted cases; {why}"
    else:
        f.verdict, f.reason = "not reproduced", f"it does not rise; {why}"
    return f


def f7_loss_logging(ev):
    f = Finding(7, "Loss curves cluster by K only because of rank-0 logging",
                "Three clusters by GPU count (1, 2, 4) are a logging artifact: rank 0 logs its local loss; "
                "averaged across ranks, the clusters collapse onto one curve.",
                "workshop, chart 5 (Loss Convergence)", _cmd(ev, "runs"), charts=["chart5_loss_convergence"])
    worst_global = worst_rank0 = 0.0
    n = 0
    for model in _models(ev.runs):
        single = _pt(ev.runs, model, "single", 1)
        if not single or not single.get("loss_global"):
            continue
        ref = single["loss_global"]
        for k in (2, 4):
            for m in _dp_modes(ev.runs):
                p = _pt(ev.runs, model, m, k)
                if not p or not p.get("loss_global") or not p.get("loss_rank0"):
                    continue
                n += 1
                dg = max(abs(a - b) for a, b in zip(p["loss_global"], ref))
                dr = max(abs(a - b) for a, b in zip(p["loss_rank0"], ref))
                worst_global, worst_rank0 = max(worst_global, dg), max(worst_rank0, dr)
    if n == 0:
        f.reason = "no runs with per-epoch global and rank-0 losses"
        return f
    f.rows.append(("largest difference, rank-0 loss against single's, over runs and epochs", "visible clusters",
                   f"{worst_rank0:.2e}", "measured"))
    f.rows.append(("largest difference, global loss against single's", "one curve", f"{worst_global:.2e}", "measured"))
    if worst_global < 1e-4 and worst_rank0 > 10 * max(worst_global, 1e-7):
        f.verdict = "reproduced"
        f.reason = (f"over {n} data-parallel runs the global loss stays within {worst_global:.1e} of the single "
                    f"device's, while rank 0's local loss departs by up to {worst_rank0:.1e}")
    elif worst_global < 1e-4:
        f.verdict, f.reason = "partly", "the global loss collapses, but rank 0's loss barely separates here"
    else:
        f.verdict, f.reason = "not reproduced", f"the global loss departs by {worst_global:.1e} from single's"
    return f


def f8_amdahl(ev):
    w = sources.WORKSHOP_AMDAHL_XLARGE_4
    fr = w["t_single"] / (w["t_single"] + w["t_comm"])
    own = 1.0 / ((1 - fr) + fr / 4)
    f = Finding(8, "The Amdahl ceiling from naive's communication",
                f"xlarge at 4 GPUs: f = 0.596/(0.596 + 0.094) = 0.86, 1/(0.14 + 0.86/4) = {w['stated_max']}× "
                f"theoretical max; achieved {w['achieved']}×.", "workshop, Amdahl's Law paragraph",
                _cmd(ev, "runs"), charts=["chart8_efficiency_knee"])
    f.rows.append(("ceiling from the workshop's own inputs", f"{w['stated_max']}×", f"{own:.2f}×",
                   "computed (f unrounded)"))
    held = []
    for model in _models(ev.runs):
        for k in (2, 4):
            p = _pt(ev.runs, model, "naive", k)
            if p and p.get("amdahl_max") is not None and _med(p, "speedup") is not None:
                s, a = _med(p, "speedup"), p["amdahl_max"]
                held.append(s <= a * 1.02)
                f.rows.append((f"{model} naive K={k}: speedup ≤ naive Amdahl", "—", f"{s:.2f}× ≤ {a:.2f}×",
                               "measured"))
    f.verdict = "differs"
    rounded = 1.0 / (0.14 + 0.86 / 4)
    f.rows.append(("the stated formula, 1/(0.14 + 0.86/4)", f"{w['stated_max']}×", f"{rounded:.2f}×", "computed"))
    f.reason = (f"the workshop's own formula gives {rounded:.2f}× with its rounded f = 0.86 and {own:.2f}× with f "
                f"unrounded; the stated {w['stated_max']}× matches neither (the principle holds: the achieved "
                f"{w['achieved']}× is below the ceiling)"
                + (f". Here naive stays under its ceiling in {sum(held)} of {len(held)} runs (2% margin)" if held else ""))
    return f


def f9_ring_vs_star(ev):
    f = Finding(9, "Ring vs star: per-device traffic",
                "Star: GPU 0 moves 2(N−1)·D (624 MB in + 624 MB out for D = 208 MB, N = 4); ring: every GPU "
                "sends 2(N−1)/N·D.", "workshop, Naive vs Ring AllReduce", _cmd(ev, "allreduce"))
    ok = total = 0
    for k, entries in sorted((ev.allreduce or {}).items()):
        by = {}
        for e in entries:
            algo = e["name"].split("/")[1]
            by[algo] = e
        if "ring" not in by or "star" not in by:
            continue
        d = by["ring"]["bytes"]
        # The ring's claim is per device, bytes sent; the star's is the root's traffic, in and out.
        for algo, formula, what in (("ring", 2 * (k - 1) / k * d, "sent"),
                                    ("star", 2 * (k - 1) * d, "sent + received")):
            e = by[algo]
            moved = e.get("rank0_sent_bytes", 0) + (e.get("rank0_received_bytes", 0) if algo == "star" else 0)
            total += 1
            ok += abs(moved - formula) <= 1e-6 * formula + 8
            f.rows.append((f"K={k} {algo}: rank 0 {what}", f"{formula / d:.2f}·D", f"{moved / d:.2f}·D",
                           "measured (bytes counted in the sends)"))
        t = by["star"]["real_time"] / by["ring"]["real_time"]
        f.rows.append((f"K={k}: star time / ring time on the emulated link", f"{k}× (= N)", f"{t:.2f}×",
                       "measured"))
    if total == 0:
        f.reason = "no ring and star all-reduce benchmark results"
    elif ok == total:
        f.verdict, f.reason = "reproduced", "rank 0's counted bytes equal the formulas at every K"
    else:
        f.verdict, f.reason = "not reproduced", f"{total - ok} of {total} byte counts differ from the formulas"
    return f


def f10_textbook_15_9_1(ev):
    f = Finding(10, "Textbook Output 15.9.1, exactly",
                "The scaling simulator's table: perfect scaling to K = 4, the knee at K = 8 (73%), a ceiling "
                "near 5.9×.", "textbook 15.9, Code/Output 15.9.1", _cmd(ev, "textbook_15_9_1"))
    if not ev.textbook_15_9_1:
        f.reason = "dpscale predict --textbook 15.9.1 was not run"
        return f
    want = [" ".join(r.split()) for r in sources.TEXTBOOK_15_9_1.splitlines()[2:]]
    got = {" ".join(r.split()) for r in ev.textbook_15_9_1.splitlines()}
    same = sum(r in got for r in want)
    f.rows.append(("rows identical to the book's (whitespace aside)", f"{len(want)}", f"{same}", "computed"))
    f.verdict = "reproduced" if same == len(want) else ("partly" if same else "not reproduced")
    f.reason = f"{same} of {len(want)} rows match Output 15.9.1"
    return f


def f11_textbook_15_2_1(ev):
    f = Finding(11, "Textbook Output 15.2.1, exactly",
                "Eight GPUs, a 2 GB gradient: 11.68 ms in one node, 280.07 ms across nodes (24×); 95.5% vs 47.2% "
                "efficiency, 48 points lost.", "textbook 15.2, Output 15.2.1", _cmd(ev, "textbook_15_2_1"))
    if not ev.textbook_15_2_1:
        f.reason = "dpscale predict --textbook 15.2.1 was not run"
        return f
    text = ev.textbook_15_2_1
    found = [n for n in sources.TEXTBOOK_15_2_1 if n in text]
    f.rows.append(("the book's numbers found in the output", ", ".join(sources.TEXTBOOK_15_2_1),
                   ", ".join(found), "computed"))
    f.verdict = "reproduced" if len(found) == len(sources.TEXTBOOK_15_2_1) else ("partly" if found else "not reproduced")
    f.reason = f"{len(found)} of {len(sources.TEXTBOOK_15_2_1)} numbers appear"
    return f


def f12_bucket_cap_curve(ev):
    f = Finding(12, "The bucket-cap curve, 0.5–8 MB",
                "Throughput changes as bucket_cap_mb moves from 0.5 to 8 MB; the hypothesis: doubling the cap "
                "halves the communication fraction s, with diminishing returns.",
                "notes on data parallelism and bucketing", _cmd(ev, "buckets", "caps_predicted"),
                charts=["chart7_bucket_cap_sweep"])
    pts = sorted((p for p in (ev.buckets or {}).get("points", []) if p["mode"] == "bucketed"
                  and p["bucket_cap_mb"] is not None and 0.5 <= p["bucket_cap_mb"] <= 8),
                 key=lambda p: p["bucket_cap_mb"])
    pred = {round(r["bucket_cap_mb"], 6): r for r in ev.caps_predicted or []}
    for p in pts:
        c = p["bucket_cap_mb"]
        pr = pred.get(round(c, 6))
        f.rows.append((f"{p['model']} K={p['world_size']} cap {c:g} MB: exposed comm per epoch (share) · throughput",
                       "—", f"{_med(p, 'comm_s'):.3f} s ({p['comm_fraction']:.0%}) · "
                       f"{_med(p, 'throughput_samples_per_s'):,.0f}/s", "measured"))
        if pr and pr.get("exposed_comm_s") is not None:
            f.rows.append((f"cap {c:g} MB: exposed comm per epoch", "—", f"{pr['exposed_comm_s']:.3f} s", "predicted"))
    if len(pts) < 2:
        f.reason = "no bucket-cap sweep over 0.5–8 MB"
        return f
    halvings = [b["comm_fraction"] / a["comm_fraction"] for a, b in zip(pts, pts[1:])
                if a["comm_fraction"] and abs(b["bucket_cap_mb"] / a["bucket_cap_mb"] - 2) < 1e-9]
    falls = pts[-1]["comm_fraction"] < pts[0]["comm_fraction"]
    mh = median(halvings) if halvings else None
    if falls and mh is not None and 0.35 <= mh <= 0.65:
        f.verdict, f.reason = "reproduced", f"each doubling multiplies s by {mh:.2f} (median)"
    elif falls:
        f.verdict = "partly"
        f.reason = (f"the exposed comm share s falls from {pts[0]['comm_fraction']:.0%} to {pts[-1]['comm_fraction']:.0%} over 0.5–8 MB, "
                    + (f"but each doubling multiplies it by {mh:.2f} (median), not 0.5: " if mh else "")
                    + "a cap saves calls only until the layers' own tensors fill the buckets")
    else:
        f.verdict, f.reason = "not reproduced", "s does not fall as the cap grows"
    return f


ALL = (f1_small_slower, f2_grows_with_size, f3_interleaved_beats_naive, f4_bucketed_matches,
       f5_comm_fraction_rises, f6_comm_time_grows, f7_loss_logging, f8_amdahl, f9_ring_vs_star,
       f10_textbook_15_9_1, f11_textbook_15_2_1, f12_bucket_cap_curve)


def judge(ev):
    return [fn(ev) for fn in ALL]
