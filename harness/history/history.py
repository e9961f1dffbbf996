#!/usr/bin/env python3
"""history.py — the Python side of `dpscale history` (harness/history/history_main.h runs it):

  history.py add     --db PATH --rows ROWS.jsonl      rows from the C++ side (history_rows.h)
  history.py add     --db PATH --rows A.jsonl --b-rows B.jsonl   an A/B session: both builds' runs,
                                                     and the pairs of its rounds (anchored series)
  history.py import  --db PATH --rows ROWS.jsonl      rows from `export`
  history.py export  --db PATH [--out FILE]
  history.py show    --db PATH [filters] [--format md|json]
  history.py changes --db PATH [filters] [--min-effect PCT] [--alpha A] [--permutations N] [--min-size N] [--record]
  history.py html    --db PATH --out DIR [filters] [...]
  history.py accept  --db PATH --rev REV [filters]     judge the series holding REV from REV on

Exit status: 0 fine; 1 (changes) some series' newest change, judged from its newest mark on
(judge.py), is a regression of at least --min-effect; 2 bad input (one line on stderr); 4 a
fault of this code or a missing package. Runs the store holds that are not rows are named in a
warning each and left out. docs/history.md.
"""
import argparse
import json
import os
import sqlite3
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from dpscale_history import rows as rowmod  # noqa: E402
from dpscale_history import store as storemod  # noqa: E402

WARNINGS_SHOWN = 10

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 4


class BadInput(Exception):
    pass


class Warnings:
    """The store's rows left out, one line each on stderr (the first WARNINGS_SHOWN, then how many
    more): said, never fatal."""

    def __init__(self, db):
        self.db, self.n = db, 0

    def __call__(self, line):
        self.n += 1
        if self.n <= WARNINGS_SHOWN:
            print(f"dpscale: warning: {line}", file=sys.stderr)

    def done(self):
        if self.n > WARNINGS_SHOWN:
            print(f"dpscale: warning: {self.db}: {self.n - WARNINGS_SHOWN} more left out", file=sys.stderr)


def parse(argv):
    ap = argparse.ArgumentParser(prog="history.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("add", "import"):
        p = sub.add_parser(name)
        p.add_argument("--db", required=True)
        p.add_argument("--rows", required=True)
        if name == "add":
            p.add_argument("--b-rows", help="an A/B session: B's rows (--rows being A's)")
    p = sub.add_parser("export")
    p.add_argument("--db", required=True)
    p.add_argument("--out")
    for name in ("show", "changes", "html", "accept"):
        p = sub.add_parser(name)
        p.add_argument("--db", required=True)
        p.add_argument("--metric", default="speedup", choices=["speedup", "efficiency", "throughput", "epoch_s"])
        p.add_argument("--machine")
        p.add_argument("--model")
        p.add_argument("--mode")
        p.add_argument("--world-size", type=int)
        p.add_argument("--match")
        p.add_argument("--format", default="md", choices=["md", "json"])
        p.add_argument("--min-effect", type=float, default=5.0)
        p.add_argument("--alpha", type=float, default=0.01)
        p.add_argument("--permutations", type=int, default=99)
        p.add_argument("--min-size", type=int, default=3)
        p.add_argument("--include-disturbed", action="store_true")
        if name == "html":
            p.add_argument("--out", required=True)
        if name == "changes":
            p.add_argument("--record", action="store_true",
                           help="mark each regression failed on, so later runs judge its series from it on")
        if name == "accept":
            p.add_argument("--rev", required=True)
    return ap.parse_args(argv)


def filters_of(a):
    return {"machine": a.machine, "model": a.model, "mode": a.mode, "world_size": a.world_size, "match": a.match}


def cmd_add(a):
    b_path = getattr(a, "b_rows", None)
    try:
        rows = rowmod.read_rows(a.rows)
        b_rows = rowmod.read_rows(b_path) if b_path else None
    except rowmod.RowError as e:
        raise BadInput(str(e)) from None
    # The rows are all checked before the store is opened: a bad file changes nothing.
    s = storemod.open_store(a.db, create=True)
    try:
        result = s.add(rows, b_rows)
    finally:
        s.close()
    added, held = result[0], result[1]
    where = "imported into" if a.cmd == "import" else "added to"
    line = f"dpscale history: {added} run(s) {where} {a.db}" + (f", {held} already held" if held else "")
    if b_rows is not None:
        line += f"; {result[2]} A/B pair(s) added"
    print(line, file=sys.stderr)
    return EXIT_OK


def cmd_export(a):
    s = storemod.open_store(a.db)
    warn = Warnings(a.db)
    try:
        lines = [json.dumps(r, sort_keys=True) + "\n" for r in s.export_rows(warn)]
    finally:
        s.close()
        warn.done()
    if a.out:
        tmp = a.out + ".tmp"
        try:
            os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                f.writelines(lines)
            os.replace(tmp, a.out)
        except OSError as e:
            raise BadInput(f"--out {a.out}: cannot write ({e.strerror})") from None
        print(f"dpscale history: {len(lines)} run(s) exported to {a.out}", file=sys.stderr)
    else:
        sys.stdout.writelines(lines)
    return EXIT_OK


def series_of(a, s):
    """The series of the open store `s` that the filters select: plain ones, then anchored ones.
    Stored runs that are not rows (and the pairs they are half of) are named and left out."""
    from dpscale_history import series as seriesmod
    warn = Warnings(a.db)
    runs, bad = s.checked_runs(warn)
    pairs = s.checked_pairs(bad, warn)
    warn.done()
    found = seriesmod.build(runs, a.metric, filters_of(a), include_disturbed=a.include_disturbed)
    found += seriesmod.build_anchored(pairs, a.metric, filters_of(a), include_disturbed=a.include_disturbed)
    return found


def load_series(a):
    s = storemod.open_store(a.db)
    try:
        return series_of(a, s)
    finally:
        s.close()


def all_changes(a, series_list):
    from dpscale_history import series as seriesmod
    return {id(s): seriesmod.changes(s, a.alpha, a.permutations, a.min_size) for s in series_list}


def cmd_show(a):
    from dpscale_history import report
    series_list = load_series(a)
    sys.stdout.write(report.show_json(series_list) if a.format == "json" else report.show_md(series_list))
    return EXIT_OK


def cmd_changes(a):
    from dpscale_history import judge, report
    s = storemod.open_store(a.db)
    try:
        series_list = series_of(a, s)
        marks = s.marks()
        by_series = all_changes(a, series_list)
        found = [c for x in series_list for c in by_series[id(x)]]
        # A series fails when its newest change since its newest mark is a regression of at
        # least --min-effect: a change reported (or accepted) once stands as history after.
        newest = judge.newest_marks(marks)
        failing = []
        for x in series_list:
            c, mark = judge.failing(x, by_series[id(x)], newest, a.alpha, a.permutations, a.min_size, a.min_effect)
            if c:
                failing.append((c, mark))
        recorded = None
        if a.record and failing:
            ids = s.revision_ids()
            recorded = s.add_marks([judge.mark_of(c, ids) for c, _ in failing], "reported")
    finally:
        s.close()
    marks_of = {id(c): judge.marked(c, marks) for c in found}
    text = (report.changes_json if a.format == "json" else report.changes_md)(series_list, found, failing, a.min_effect,
                                                                             a.include_disturbed, marks_of)
    sys.stdout.write(text)
    if recorded is not None:
        print(f"dpscale history: {len(failing)} regression(s) recorded in {a.db} ({recorded} new): later runs judge "
              "their series from their change on", file=sys.stderr)
    return EXIT_REGRESSION if failing else EXIT_OK


def cmd_accept(a):
    from dpscale_history import judge
    s = storemod.open_store(a.db)
    try:
        rev_id, rev_key, name, _ = s.revision_by_label(a.rev)
        holding = [x for x in series_of(a, s) if any(st.revision.key == rev_key for st in x.steps)]
        if not holding:
            raise BadInput(f"{a.db}: no {a.metric} series that the filters select holds revision {a.rev}")
        added = s.add_marks([{"machine": x.machine, "point_key": x.point_key, "anchor_key": judge.key_of(x)[2],
                              "metric": a.metric, "revision_id": rev_id} for x in holding], "accepted")
    finally:
        s.close()
    print(f"dpscale history: {name} accepted in {len(holding)} {a.metric} series of {a.db} ({added} new): "
          f"changes judges them from {name} on", file=sys.stderr)
    return EXIT_OK


def cmd_html(a):
    from dpscale_history import page
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise BadInput(f"html: {a.out} is a file, not a directory")
    series_list = load_series(a)
    by_series = all_changes(a, series_list)
    params = f"alpha {a.alpha:g}, {a.permutations} permutations, at least {a.min_size} revisions a side"
    if a.include_disturbed:
        params += "; disturbed runs included (--include-disturbed)"
    text = page.write_page(series_list, by_series, os.path.basename(a.db), a.metric, params, a.include_disturbed)
    try:
        os.makedirs(a.out, exist_ok=True)
        path = os.path.join(a.out, "index.html")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise BadInput(f"html: cannot write {a.out} ({e.strerror})") from None
    print(f"dpscale history: {path}: {len(series_list)} series, "
          f"{sum(len(v) for v in by_series.values())} change point(s)", file=sys.stderr)
    return EXIT_OK


def main(argv):
    a = parse(argv)
    try:
        return {"add": cmd_add, "import": cmd_add, "export": cmd_export, "show": cmd_show, "changes": cmd_changes,
                "html": cmd_html, "accept": cmd_accept}[a.cmd](a)
    except (BadInput, storemod.StoreError) as e:
        print(f"dpscale: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except sqlite3.DatabaseError as e:
        print(f"dpscale: {a.db}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as e:
        # A machine without the packages (scripts/install-deps.sh): said in one line, and never
        # Python's exit 1, which `changes` means as a regression.
        print(f"dpscale: the history needs Python 3 with numpy and scipy ({e})", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception:  # a fault of this code: its traceback, and not exit 1 (a regression)
        traceback.print_exc()
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
