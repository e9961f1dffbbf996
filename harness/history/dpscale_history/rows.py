"""rows.py — the row: one run as the C++ side hands it over (harness/history/history_rows.h)
and as `dpscale history export` writes it. This module only checks that a row is one; every
field is said once, in docs/history.md ("The row")."""
import json
import re

ROW_SCHEMA = "dpscale.history.row/1"
METRICS = ("epoch_s", "throughput", "speedup", "efficiency", "comm_share", "overlap_pct", "run_delay_share")
# Metrics that must be there (every successful run has them); the others may be null.
REQUIRED_METRICS = ("epoch_s", "throughput")
STATE_FIELDS = ("load1_before", "load1_after", "steal_pct", "iowait_pct", "others_cpus", "cpu_mhz", "nice",
                "probe_before_gflops", "probe_after_gflops")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class RowError(Exception):
    """A row that is not one; the message names where and what."""


def _need(obj, key, kinds, where, nullable=False):
    if not isinstance(obj, dict) or key not in obj:
        raise RowError(f"{where}: no field '{key}'")
    v = obj[key]
    if v is None and nullable:
        return v
    if isinstance(v, bool) or not isinstance(v, kinds):
        raise RowError(f"{where}: '{key}' has the wrong type")
    return v


# The ranges a row's numbers can take, as the results file's reader holds a record to its own
# (contract/record_values.h): a run takes a positive time at a positive rate, its paired speedup
# is a positive ratio, shares and percentages are not negative. A row out of them was made by
# hand or broken on the way, and a series' log of it is nonsense or a crash.
POSITIVE, NON_NEGATIVE = "a positive number", "a non-negative number"
METRIC_RANGES = {"epoch_s": (POSITIVE, None), "throughput": (POSITIVE, None), "speedup": (POSITIVE, None),
                 "efficiency": (POSITIVE, None), "comm_share": (NON_NEGATIVE, None),
                 "overlap_pct": (NON_NEGATIVE, 100.0), "run_delay_share": (NON_NEGATIVE, None)}
# The machine's state around a run (harness/results/machine_state.h); `nice` is a nice value, -20..19.
STATE_RANGES = {"load1_before": (NON_NEGATIVE, None), "load1_after": (NON_NEGATIVE, None),
                "steal_pct": (NON_NEGATIVE, 100.0), "iowait_pct": (NON_NEGATIVE, 100.0),
                "others_cpus": (NON_NEGATIVE, None), "cpu_mhz": (NON_NEGATIVE, None), "nice": (None, None),
                "probe_before_gflops": (NON_NEGATIVE, None), "probe_after_gflops": (NON_NEGATIVE, None)}
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _in_range(v, kind, top, what, where):
    """Raises RowError unless the number v is finite and in its range."""
    ok = v == v and abs(v) != float("inf")
    if ok and kind == POSITIVE:
        ok = v > 0
    elif ok and kind == NON_NEGATIVE:
        ok = v >= 0
    if ok and top is not None:
        ok = v <= top
    if not ok:
        want = "a finite number" if kind is None else kind
        raise RowError(f"{where}: {what} must be {want}" + (f" up to {top:g}" if top is not None else "")
                       + f" (got {v!r})")


def _text(obj, key, where):
    """A non-empty one-line text field: it is a series' name, a table's cell, a chart's label."""
    v = _need(obj, key, str, where)
    if not v or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in v):
        raise RowError(f"{where}: '{key}' must be one line of text")
    return v


def check_row(row, where):
    """Raises RowError unless `row` is a row of this schema with every number in its range;
    returns it."""
    if not isinstance(row, dict):
        raise RowError(f"{where}: not a JSON object")
    if row.get("schema") != ROW_SCHEMA:
        raise RowError(f"{where}: not a history row (schema {row.get('schema')!r}, want {ROW_SCHEMA!r})")
    key = _need(row, "run_key", str, where)
    if not re.fullmatch(r"[0-9a-f]{16}", key):
        raise RowError(f"{where}: 'run_key' is not 16 hex digits")
    _text(row, "point_key", where)
    point = _need(row, "point", dict, where)
    _text(point, "model", where + ": point")
    _text(point, "mode", where + ": point")
    k = _need(point, "world_size", int, where + ": point")
    if k < 1:
        raise RowError(f"{where}: point.world_size must be at least 1 (got {k})")
    cap = _need(point, "bucket_cap_mb", (int, float), where + ": point", nullable=True) if "bucket_cap_mb" in point \
        else None
    if cap is not None:
        _in_range(cap, POSITIVE, None, "point.bucket_cap_mb", where)
    for f in ("link", "placement"):
        if f in point:
            _need(point, f, str, where + ": point")
    if "settings" in point:
        _need(point, "settings", dict, where + ": point")
    for f in ("describe", "curve"):
        _text(row, f, where)
    _need(row, "source", str, where)
    machine = _need(row, "machine", dict, where)
    _text(machine, "fingerprint", where + ": machine")
    rev = _need(row, "revision", dict, where)
    name = _text(rev, "name", where + ": revision")
    # As `--rev` takes a name: one word, not an option.
    if name.startswith("-") or " " in name:
        raise RowError(f"{where}: revision.name {name!r} is not one word")
    cid = _need(rev, "commit_id", str, where + ": revision", nullable=True)
    if cid is not None and not _COMMIT_ID.fullmatch(cid):
        raise RowError(f"{where}: revision.commit_id {cid!r} is not a full git commit id")
    t = _need(rev, "commit_time", str, where + ": revision")
    if not _TIME.match(t):
        raise RowError(f"{where}: revision.commit_time {t!r} is not a UTC ISO 8601 time")
    run = _need(row, "run", dict, where)
    for f in ("repeat", "attempt"):
        if _need(run, f, int, where + ": run") < 0:
            raise RowError(f"{where}: run.{f} must not be negative (got {run[f]})")
    metrics = _need(row, "metrics", dict, where)
    for m in METRICS:
        v = _need(metrics, m, (int, float), where + ": metrics", nullable=m not in REQUIRED_METRICS)
        if v is not None:
            _in_range(v, *METRIC_RANGES[m], f"metrics.{m}", where)
    # The efficiency is the speedup over K (history_rows.cpp): one without the other, or another
    # ratio, is a row edited by hand.
    s, e = metrics["speedup"], metrics["efficiency"]
    if (s is None) != (e is None) or (s is not None and abs(e * k - s) > 1e-6 * s):
        raise RowError(f"{where}: metrics.efficiency {e!r} is not metrics.speedup {s!r} over K={k}")
    _need(row, "disturbed", str, where, nullable=True)
    state = _need(row, "state", dict, where, nullable=True)
    if state is not None:
        for f in STATE_FIELDS:
            _in_range(_need(state, f, (int, float), where + ": state"), *STATE_RANGES[f], f"state.{f}", where)
    return row


def read_rows(path):
    """Every row of a JSON-lines file, checked; RowError names the file and line."""
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise RowError(f"{path}: cannot read ({e.strerror})") from None
    with f:
        try:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RowError(f"{path}:{n}: not JSON ({e.msg})") from None
                rows.append(check_row(row, f"{path}:{n}"))
        except UnicodeDecodeError:
            raise RowError(f"{path}: not UTF-8 text") from None
    return rows
