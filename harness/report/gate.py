#!/usr/bin/env python3
"""gate.py — the statistics of `dpscale compare`: per point, is the new scaling curve the same as
the baseline's, worse (`regression`), better (`improvement`), or can this machine not tell
(`undecided`)? `dpscale compare` reads the results files, pairs each data-parallel run with the
single run of its round, leaves out runs the machine disturbed, and hands this script one JSON
document, a file named by its argument ("-": stdin; the format: docs/regression-gate.md); this script prints the verdicts and exits
0 (nothing regressed), 1 (a regression), 3 (nothing regressed, something undecided).

Per point, over its paired speedups s = throughput(DP run) / throughput(single run of the same
round), new against baseline, in log space (a ratio's natural scale):
  p        min(1, 2·min(p_MW, p_KS)): Mann-Whitney U (a shift) and Kolmogorov-Smirnov (a change of
           shape or spread), both two-sided, scipy's exact distributions at these sizes; the 2 is
           Bonferroni over the two tests. Then Holm over the points of one curve (model × mode ×
           link: Point::curve), so a 12-point curve does not raise 12 coin-flip alarms.
  effect   Hodges-Lehmann: the median of all pairwise differences log s_new − log s_base, as a
           percent change of speedup; its 95% interval by bootstrap (scipy, percentile, seeded).
  verdict  regression   p_holm < alpha and effect <= −min_effect
           improvement  p_holm < alpha and effect >= +min_effect
           same         otherwise, when the interval's lower end is above −min_effect (a loss of
                        min_effect or more is ruled out)
           undecided    otherwise; also when fewer than min_samples undisturbed samples remain
                        on a side (the reason says which runs the machine disturbed, and how)
           A document with "min_effect_line": f (`dpscale ab` sets 0.75; 1 when absent) calls a
           significant change a regression (improvement) when its estimate reaches f × min_effect:
           there the minimum effect is the smallest loss that must be caught (CI's 5%), and a
           true loss of exactly min_effect has its estimate on either side of min_effect about
           half the time, but beyond three quarters of it nearly always (docs/ab.md).
A point marked "test": "paired" (`dpscale ab`: build B's throughput over build A's, or B's speedup
over A's, the two builds' runs of one round side by side in time) carries one ratio per round
instead of two samples:
  p        Wilcoxon signed-rank of the log ratios against 0, two-sided (scipy, exact at these
           sizes), then Holm per curve as above.
  effect   the one-sample Hodges-Lehmann estimate: the median of the Walsh averages of the log
           ratios; its 95% interval by bootstrap of the rounds (scipy, percentile, seeded).
  verdict  the same rule.
alpha, min_effect and min_samples are the document's: `dpscale compare` writes them from the
gate's constants and options (harness/report/gate.h), so they are written once, in C++.
"""
import json
import math
import sys
import warnings

import numpy as np
from scipy import stats

BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 1  # fixed: the same files always get the same interval

EXIT_SAME, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


def hodges_lehmann(x, y):
    """Median of all pairwise differences x_i - y_j."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return float(np.median(np.subtract.outer(x, y)))


def effect_interval(x, y, confidence=0.95):
    """Bootstrap percentile interval of the Hodges-Lehmann shift (independent resampling of each
    side). Returns (low, high) in log units."""
    def stat(a, b, axis=-1):
        d = np.asarray(a)[..., :, None] - np.asarray(b)[..., None, :]
        return np.median(d.reshape(d.shape[:-2] + (-1,)), axis=-1)
    res = stats.bootstrap((np.asarray(x, float), np.asarray(y, float)), stat, vectorized=True,
                          paired=False, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=confidence,
                          method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


def walsh_median(d, axis=-1):
    """One-sample Hodges-Lehmann: the median of the Walsh averages (d_i + d_j)/2, i <= j, over the
    last axis (vectorized for the bootstrap)."""
    d = np.asarray(d, dtype=float)
    i, j = np.triu_indices(d.shape[-1])
    return np.median((d[..., i] + d[..., j]) / 2.0, axis=-1)


def paired_interval(d, confidence=0.95):
    """Bootstrap percentile interval of the one-sample Hodges-Lehmann estimate (rounds resampled).
    Returns (low, high) in log units."""
    d = np.asarray(d, dtype=float)
    if np.ptp(d) == 0:
        return float(d[0]), float(d[0])  # every round the same ratio: nothing to resample
    res = stats.bootstrap((d,), walsh_median, vectorized=True, n_resamples=BOOTSTRAP_RESAMPLES,
                          confidence_level=confidence, method="percentile",
                          random_state=np.random.default_rng(BOOTSTRAP_SEED))
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


def paired_p(d):
    """Wilcoxon signed-rank p of the differences against 0, two-sided."""
    d = np.asarray(d, dtype=float)
    if not np.any(d != 0):
        return 1.0  # no round differs: no test can see a difference
    with warnings.catch_warnings():
        # A round of exactly equal throughputs sends scipy to its normal approximation, and it
        # says so on stderr: the p it gives is the test's, the warning is not the reader's.
        warnings.simplefilter("ignore", UserWarning)
        return float(stats.wilcoxon(d, alternative="two-sided", method="auto").pvalue)


def two_sample_p(x, y):
    """min(1, 2·min(Mann-Whitney p, Kolmogorov-Smirnov p)), both two-sided."""
    if np.ptp(np.concatenate([x, y])) == 0:
        return 1.0  # every sample equal: no test can see a difference
    p_mw = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto").pvalue
    p_ks = stats.ks_2samp(x, y, alternative="two-sided", method="auto").pvalue
    return float(min(1.0, 2.0 * min(p_mw, p_ks)))


def holm(pvalues):
    """Holm's step-down adjustment; None entries (points not tested) stay None."""
    idx = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(idx)
    out = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def pct(logv):
    return 100.0 * (math.exp(logv) - 1.0)


def spread_pct(samples):
    """(max - min) / (2 median), percent: the ± half-range the report shows."""
    if len(samples) < 2:
        return 0.0
    med = float(np.median(samples))
    return 100.0 * (max(samples) - min(samples)) / (2 * med) if med else 0.0


class BadDocument(Exception):
    """The gate's input lacks what dpscale compare writes; the message is the one line."""


def constants(doc):
    """(alpha, min_effect, min_samples) of the document (harness/report/gate.h writes them)."""
    try:
        alpha, min_effect, min_samples = float(doc["alpha"]), float(doc["min_effect"]), doc["min_samples"]
    except (KeyError, TypeError, ValueError):
        raise BadDocument("the gate's input lacks a number for alpha, min_effect or min_samples "
                          "(write it with dpscale compare)") from None
    if not (0 < alpha < 1 and 0 < min_effect and isinstance(min_samples, int) and min_samples >= 2):
        raise BadDocument(f"the gate's input has alpha {alpha}, min_effect {min_effect}, min_samples "
                          f"{min_samples}: want 0 < alpha < 1, min_effect > 0, an integer min_samples >= 2")
    return alpha, min_effect, min_samples


def judge_paired(pt, min_samples):
    """judge_point for a paired point: pt['pairs'] holds one ratio (new over base) per round, the
    rounds left out and why, and each side's median value."""
    pairs = pt.get("pairs") or {}
    ratios = pairs.get("ratios", [])
    r = {"test": "paired", "n_now": len(ratios), "n_base": len(ratios), "spread_now_pct": spread_pct(ratios),
         "spread_base_pct": 0.0, "value_now": pairs.get("now_median"), "value_base": pairs.get("base_median"),
         "unit": pairs.get("unit", ""), "p": None, "effect_pct": None, "ci_pct": None, "why": []}
    pt["result"] = r
    left_out = pairs.get("left_out", [])
    if len(ratios) < min_samples:
        lone = f"; {'; '.join(left_out[:2])}" if left_out else ""
        r["verdict"] = "undecided"
        r["why"] = [f"{len(ratios)} pair(s) fit to judge, {min_samples} needed{lone}"]
        return
    d = np.log(ratios)
    r["p"] = paired_p(d)
    lo, hi = paired_interval(d)
    r["effect_pct"] = pct(float(walsh_median(d)))
    r["ci_pct"] = [pct(lo), pct(hi)]
    if left_out:
        r["why"].append(f"{len(left_out)} round(s) left out ({left_out[0]})")
    alike = pairs.get("alike", [])
    if alike:
        r["why"].append(f"{len(alike)} pair(s) disturbed alike, judged ({alike[0]})")


def judge_point(pt, alpha, min_effect, min_samples):
    """Fills pt['result']: the test's numbers; the verdict needs Holm's p and comes later."""
    if pt.get("test") == "paired":
        judge_paired(pt, min_samples)
        return
    now, base = pt.get("now") or {}, pt.get("base") or {}
    xs, ys = now.get("samples", []), base.get("samples", [])
    r = {"n_now": len(xs), "n_base": len(ys), "spread_now_pct": spread_pct(xs), "spread_base_pct": spread_pct(ys),
         "speedup_now": float(np.median(xs)) if xs else None, "speedup_base": float(np.median(ys)) if ys else None,
         "p": None, "effect_pct": None, "ci_pct": None, "why": []}
    pt["result"] = r
    if len(xs) < min_samples or len(ys) < min_samples:
        side = []
        for name, side_data, n in (("new", now, len(xs)), ("baseline", base, len(ys))):
            if n < min_samples:
                d = side_data.get("disturbed", [])
                busy = f"; machine busy: {'; '.join(d[:2])}" if d else ""
                u = side_data.get("unpaired", [])
                lone = f"; {u[0]}" if u else ""
                side.append(f"{n} undisturbed sample(s) in {name}, {min_samples} needed{busy}{lone}")
        r["verdict"] = "undecided"
        r["why"] = side
        return
    x, y = np.log(xs), np.log(ys)
    r["p"] = two_sample_p(x, y)
    hl = hodges_lehmann(x, y)
    lo, hi = effect_interval(x, y)
    r["effect_pct"] = pct(hl)
    r["ci_pct"] = [pct(lo), pct(hi)]
    for name, side_data in (("new", now), ("baseline", base)):
        d = side_data.get("disturbed", [])
        if d:
            r["why"].append(f"{len(d)} disturbed run(s) of {name} left out ({d[0]})")
        a = side_data.get("alike", [])
        if a:
            r["why"].append(f"{len(a)} round(s) of {name} disturbed alike, judged ({a[0]})")


def decide(r, p_holm, alpha, min_effect, line_fraction=1.0):
    m = 100.0 * min_effect
    r["p_holm"] = p_holm
    e, (lo, hi) = r["effect_pct"], r["ci_pct"]
    line = m * line_fraction
    if p_holm < alpha and e <= -line:
        return "regression"
    if p_holm < alpha and e >= line:
        return "improvement"
    if lo > -m:
        return "same"
    if p_holm >= alpha:
        r["why"].insert(0, f"a loss of {m:g}% or more is not ruled out (interval reaches {lo:+.1f}%)")
    else:
        r["why"].insert(0, f"significant, but the effect {e:+.1f}% is under the {m:g}% that counts "
                           f"and the interval reaches {lo:+.1f}%")
    return "undecided"


def run_gate(doc):
    alpha, min_effect, min_samples = constants(doc)
    line = doc.get("min_effect_line", 1.0)
    if isinstance(line, bool) or not isinstance(line, (int, float)) or not 0 < line <= 1:
        raise BadDocument(f"the gate's input has min_effect_line {line!r}: want a number in (0, 1]")
    points = doc.get("points", [])
    compared = [p for p in points if p.get("status") == "compared"]
    for p in compared:
        judge_point(p, alpha, min_effect, min_samples)
    curves = {}
    for p in compared:
        curves.setdefault(p["curve"], []).append(p)
    for members in curves.values():
        tested = [m for m in members if m["result"]["p"] is not None]
        adjusted = holm([m["result"]["p"] for m in tested])
        for m, ph in zip(tested, adjusted):
            m["result"]["verdict"] = decide(m["result"], ph, alpha, min_effect, line)
    for p in points:
        st = p.get("status")
        if st == "failed":
            p["result"] = {"verdict": "regression", "why": [p.get("why", "the run failed in the new file")]}
        elif st in ("missing", "extra"):
            p["result"] = {"verdict": st, "why": [p.get("why", "")]}
    return alpha, min_effect, curves


def curve_lines(curves):
    """One line per curve: its verdict and its worst point."""
    out = []
    for name, members in curves.items():
        verdicts = [m["result"]["verdict"] for m in members]
        if "regression" in verdicts:
            v = "regression"
        elif "undecided" in verdicts:
            v = "undecided"
        elif "improvement" in verdicts and all(x in ("same", "improvement") for x in verdicts):
            v = "improvement" if all(x == "improvement" for x in verdicts) else "same"
        else:
            v = "same"
        with_effect = [m for m in members if m["result"].get("effect_pct") is not None]
        worst = min(with_effect, key=lambda m: m["result"]["effect_pct"]) if with_effect else None
        entry = {"curve": name, "verdict": v, "points": len(members)}
        if worst:
            r = worst["result"]
            entry.update({"worst": worst["describe"], "effect_pct": r["effect_pct"], "ci_pct": r["ci_pct"],
                          "p_holm": r.get("p_holm")})
        out.append(entry)
    return out


def fmt_pct(v):
    return "—" if v is None else f"{v:+.1f}%"


def fmt_p(v):
    if v is None:
        return "—"
    return f"{v:.2g}" if v >= 0.001 else "<0.001"


def render_md(doc, alpha, min_effect, curves, counts, exit_code):
    title = doc.get("title") or [f"dpscale compare: {doc.get('now', '?')} against {', '.join(doc.get('base', [])) or '?'}",
                                 "paired speedups (each DP run over its round's single run)"]
    lines = [f"# {t}" for t in title]
    lines[-1] += f"; alpha {alpha:g} (Holm per curve), minimum effect {100 * min_effect:g}%"
    lines.append("")
    for n in doc.get("notes", []):
        lines.append(f"# {n}")
    if doc.get("notes"):
        lines.append("")
    head = ["Point", doc.get("value_head", "Speedup base → new"), "Effect [95% CI]", "p (Holm)", "Spread base/new", "n base/new", "Verdict"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" for _ in head) + "|")
    for p in doc.get("points", []):
        r = p.get("result", {})
        sb, sn = r.get("speedup_base"), r.get("speedup_now")
        sp = f"{sb:.2f}× → {sn:.2f}×" if sb and sn else "—"
        vb, vn = r.get("value_base"), r.get("value_now")
        if r.get("test") == "paired":
            unit = r.get("unit", "")
            if unit == "×":
                sp = f"{vb:.2f}× → {vn:.2f}×" if vb and vn else "—"
            else:
                sp = f"{vb:,.0f} → {vn:,.0f} {unit}".rstrip() if vb and vn else "—"
        ci = r.get("ci_pct")
        eff = f"{fmt_pct(r.get('effect_pct'))} [{fmt_pct(ci[0])}, {fmt_pct(ci[1])}]" if ci else "—"
        spread = (f"±{r['spread_base_pct']:.1f}% / ±{r['spread_now_pct']:.1f}%" if "spread_base_pct" in r else "—")
        n = f"{r['n_base']}/{r['n_now']}" if "n_base" in r else "—"
        if r.get("test") == "paired":
            spread, n = f"±{r['spread_now_pct']:.1f}% (ratios)", f"{r['n_now']} pairs"
        verdict = r.get("verdict", "?")
        why = [w for w in r.get("why", []) if w]
        if why:
            verdict += ": " + "; ".join(why)
        lines.append(f"| {p['describe']} | {sp} | {eff} | {fmt_p(r.get('p_holm'))} | {spread} | {n} | {verdict} |")
    lines.append("")
    for c in curve_lines(curves):
        if "worst" in c:
            ci = c["ci_pct"]
            lines.append(f"# curve {c['curve']}: {c['verdict']} over {c['points']} point(s); worst {c['worst']}: "
                         f"{fmt_pct(c['effect_pct'])} [{fmt_pct(ci[0])}, {fmt_pct(ci[1])}], p {fmt_p(c['p_holm'])}")
        else:
            lines.append(f"# curve {c['curve']}: {c['verdict']} over {c['points']} point(s)")
    for n in doc.get("footer", []):
        lines.append(f"# {n}")
    summary = ", ".join(f"{counts[k]} {k}" for k in ("same", "improvement", "regression", "undecided", "missing", "extra"))
    result = {EXIT_SAME: "PASS", EXIT_REGRESSION: "FAIL", EXIT_UNDECIDED: "UNDECIDED"}[exit_code]
    lines.append(f"# {summary}: {result}")
    return "\n".join(lines) + "\n"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "-"
    try:
        if path == "-":
            doc = json.load(sys.stdin)
        else:
            with open(path) as f:
                doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"gate.py: cannot read the gate's input {path}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        alpha, min_effect, curves = run_gate(doc)
    except BadDocument as e:
        print(f"gate.py: {path}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    counts = {k: 0 for k in ("same", "improvement", "regression", "undecided", "missing", "extra")}
    for p in doc.get("points", []):
        counts[p["result"]["verdict"]] += 1
    if counts["regression"]:
        code = EXIT_REGRESSION
    elif counts["undecided"]:
        code = EXIT_UNDECIDED
    else:
        code = EXIT_SAME
    out = {"alpha": alpha, "min_effect": min_effect, "now": doc.get("now"), "base": doc.get("base"),
           "notes": doc.get("notes", []),
           "points": [{"key": p["key"], "describe": p["describe"], "curve": p.get("curve"), **p["result"]}
                      for p in doc.get("points", [])],
           "curves": curve_lines(curves), "counts": counts, "exit": code}
    if doc.get("verdicts_out"):
        with open(doc["verdicts_out"], "w") as f:
            json.dump(out, f)
    if doc.get("format") == "json":
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_md(doc, alpha, min_effect, curves, counts, code))
    return code


if __name__ == "__main__":
    sys.exit(main())
