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


def check_row(row, where):
    """Raises RowError unless `row` is a row of this schema; returns it."""
    if not isinstance(row, dict):
        raise RowError(f"{where}: not a JSON object")
    if row.get("schema") != ROW_SCHEMA:
        raise RowError(f"{where}: not a history row (schema {row.get('schema')!r}, want {ROW_SCHEMA!r})")
    key = _need(row, "run_key", str, where)
    if not re.fullmatch(r"[0-9a-f]{16}", key):
        raise RowError(f"{where}: 'run_key' is not 16 hex digits")
    _need(row, "point_key", str, where)
    point = _need(row, "point", dict, where)
    _need(point, "model", str, where + ": point")
    _need(point, "mode", str, where + ": point")
    _need(point, "world_size", int, where + ": point")
    for f in ("describe", "curve", "source"):
        _need(row, f, str, where)
    machine = _need(row, "machine", dict, where)
    _need(machine, "fingerprint", str, where + ": machine")
    rev = _need(row, "revision", dict, where)
    _need(rev, "name", str, where + ": revision")
    _need(rev, "commit_id", str, where + ": revision", nullable=True)
    t = _need(rev, "commit_time", str, where + ": revision")
    if not _TIME.match(t):
        raise RowError(f"{where}: revision.commit_time {t!r} is not a UTC ISO 8601 time")
    run = _need(row, "run", dict, where)
    _need(run, "repeat", int, where + ": run")
    _need(run, "attempt", int, where + ": run")
    metrics = _need(row, "metrics", dict, where)
    for m in METRICS:
        v = _need(metrics, m, (int, float), where + ": metrics", nullable=m not in REQUIRED_METRICS)
        if v is not None and not (v == v and abs(v) != float("inf")):
            raise RowError(f"{where}: metrics.{m} is not finite")
    _need(row, "disturbed", str, where, nullable=True)
    state = _need(row, "state", dict, where, nullable=True)
    if state is not None:
        for f in STATE_FIELDS:
            _need(state, f, (int, float), where + ": state")
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
