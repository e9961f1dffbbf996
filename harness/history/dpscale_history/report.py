"""report.py — `dpscale history show` and `changes` as Markdown or JSON (the page is page.py)."""
import json


def _num(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def _pct(v):
    return f"{v:+.1f}%"


def step_json(st):
    r = st.revision
    return {"revision": r.name, "commit_id": r.commit_id, "commit_time": r.commit_time, "runs": len(st.values),
            "disturbed": len(st.disturbed), "median": st.median, "values": st.values,
            "disturbed_values": [v for v, _ in st.disturbed]}


def series_head(s):
    return {"machine": s.machine, "describe": s.describe, "label": s.label, "curve": s.curve,
            "point_key": s.point_key, "metric": s.metric, "quantity": s.quantity,
            "anchor": None if s.anchor is None else {"revision": s.anchor.name, "commit_id": s.anchor.commit_id}}


def show_md(series_list):
    out = []
    for s in series_list:
        out.append(f"## {s.label} — {s.machine}\n")
        what = "pairs" if s.anchor else "runs"
        out.append(f"| revision | commit time | {what} tested | disturbed | {s.quantity} (median) | min | max |")
        out.append("|---|---|---:|---:|---:|---:|---:|")
        for st in s.steps:
            lo = min(st.values) if st.values else None
            hi = max(st.values) if st.values else None
            out.append(f"| {st.revision.label} | {st.revision.commit_time} | {len(st.values)} | {len(st.disturbed)} | "
                       f"{_num(st.median)} | {_num(lo)} | {_num(hi)} |")
        out.append("")
    if not series_list:
        out.append("no series match")
    return "\n".join(out) + "\n"


def show_json(series_list):
    return json.dumps({"series": [dict(series_head(s), steps=[step_json(st) for st in s.steps])
                                  for s in series_list]}, indent=1) + "\n"


def change_json(c, marks=()):
    return {"machine": c.series.machine, "describe": c.series.describe, "label": c.series.label,
            "curve": c.series.curve, "point_key": c.series.point_key,
            "metric": c.series.metric, "revision": c.revision.name, "commit_id": c.revision.commit_id,
            "commit_time": c.revision.commit_time, "index": c.index, "before": c.before, "after": c.after,
            "effect_pct": c.effect_pct, "interval_pct": list(c.interval_pct), "p": c.p,
            "direction": "regression" if c.regression else "improvement", "marks": list(marks)}


def failing_json(c, mark):
    """A failing change, and the mark its series was judged from (null: the whole series)."""
    return dict(change_json(c), judged_from=None if mark is None else {"revision": mark["rev_name"],
                                                                         "kind": mark["kind"]})


def changes_md(series_list, found, failing, min_effect, include_disturbed=False, marks_of=None):
    """`found`: every change of every series; `failing`: (change, mark judged from) of the series
    that fail; `marks_of`: id(change) -> the kinds of mark held at it."""
    marks_of = marks_of or {}
    out = ["| machine | series | first revision after | before → after | effect [95% interval] | p | direction |",
           "|---|---|---|---|---|---:|---|"]
    for c in found:
        held = marks_of.get(id(c))
        direction = ("regression" if c.regression else "improvement") + (f" ({', '.join(held)})" if held else "")
        out.append(f"| {c.series.machine} | {c.series.label} | {c.revision.label} ({c.revision.commit_time}) | "
                   f"{_num(c.before)} → {_num(c.after)} | {_pct(c.effect_pct)} [{_pct(c.interval_pct[0])}, "
                   f"{_pct(c.interval_pct[1])}] | {c.p:.3f} | {direction} |")
    if not found:
        out = ["no change points"]
    tested = sum(1 for s in series_list if s.tested())
    out.append("")
    out.append(f"# {tested} series, {len(found)} change point(s), metric {series_list[0].metric if series_list else '—'}"
               + (", disturbed runs included" if include_disturbed else ""))
    for c, mark in failing:
        since = f" since {mark['rev_name']} ({mark['kind']})" if mark is not None else ""
        out.append(f"# regression: {c.series.label} on {c.series.machine}: its newest change{since}, at {c.revision.label}, "
                   f"is {_pct(c.effect_pct)} (at least {min_effect:g}%)")
    return "\n".join(out) + "\n"


def changes_json(series_list, found, failing, min_effect, include_disturbed=False, marks_of=None):
    marks_of = marks_of or {}
    return json.dumps({"series": len(series_list), "min_effect_pct": min_effect, "include_disturbed": include_disturbed,
                       "changes": [change_json(c, marks_of.get(id(c), ())) for c in found],
                       "failing": [failing_json(c, m) for c, m in failing]}, indent=1) + "\n"
