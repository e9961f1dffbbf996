"""judge.py — what `dpscale history changes` fails on: each series judged from its newest mark on.

A mark (the store's table `marks`) says that a series — one point on one machine, plain or
against one anchor — was judged at a revision for one metric: `changes --record` marks each
regression it fails on ('reported'), `accept --rev REV` marks a change the user accepts ('accepted').
Either way, later runs judge that series against the level from the mark's revision on, so a
change fails one run, the one that found it, and then stands as history. No I/O: series, their
change points and the store's marks in; the failing change of each series out."""
import dataclasses

from . import series as seriesmod


def key_of(series):
    """A series' identity in the marks: machine, point key, anchor key ('' for a plain series)."""
    return (series.machine, series.point_key, series.anchor.key if series.anchor else "")


def newest_marks(marks):
    """(machine, point key, anchor key, metric) -> the newest mark (the store's, in commit order)."""
    out = {}
    for m in marks:
        out[(m["machine"], m["point_key"], m["anchor_key"], m["metric"])] = m
    return out


def since(series, mark):
    """The series from the mark's revision on (the steps at or after it in commit order)."""
    keys = [st.revision.key for st in series.steps]
    if mark["rev_key"] in keys:
        at = keys.index(mark["rev_key"])
    else:
        at = next((i for i, st in enumerate(series.steps) if st.revision.commit_time >= mark["commit_time"]),
                  len(series.steps))
    return dataclasses.replace(series, steps=series.steps[at:])


def failing(series, found, newest, alpha, permutations, min_size, min_effect):
    """The change that fails `series`, or None: the newest change of the series judged from its
    newest mark on (`found`, the whole series' changes, where it has no mark), when that is a
    regression of at least `min_effect` percent. Returns (change or None, the mark or None)."""
    mark = newest.get(key_of(series) + (series.metric,))
    if mark is not None:
        found = seriesmod.changes(since(series, mark), alpha, permutations, min_size)
    if found and found[-1].regression and abs(found[-1].effect_pct) >= min_effect:
        return found[-1], mark
    return None, mark


def mark_of(change, revision_ids):
    """The mark `changes --record` stores for a change it failed on."""
    s = change.series
    return {"machine": s.machine, "point_key": s.point_key, "anchor_key": s.anchor.key if s.anchor else "",
            "metric": s.metric, "revision_id": revision_ids[change.revision.key], "effect_pct": change.effect_pct}


def marked(change, marks):
    """The kinds of mark held at a change's revision for its series and metric ('reported',
    'accepted'), sorted; [] when none."""
    k = key_of(change.series) + (change.series.metric,)
    return sorted({m["kind"] for m in marks
                   if (m["machine"], m["point_key"], m["anchor_key"], m["metric"]) == k
                   and m["rev_key"] == change.revision.key})
