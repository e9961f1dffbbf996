"""load.py — read a dpscale results file (JSONL sweep lines, docs/RESULTS_FORMAT.md) and check it.

The file is opened read-only and never written. What counts as bad input, and what is only
worth a note, follows the issue: a truncated line (a sweep killed mid-write) and failed runs are
skipped with a message; anything else that is not our format stops the program.

A truncated line is usually the last one, but `dpscale sweep --resume` starts a new line after
it and appends, so it may sit mid-file; the rule is the harness's (harness/results_file.cpp):
an object that was still open when the line ran out, wherever it is.
"""
import json
import math
import re
from dataclasses import dataclass, field

SCHEMA = "dpscale.result/1"
MODES = ("single", "naive", "interleaved", "bucketed")

# Fields every chart relies on, with the JSON types they must have. The others a chart needs
# (comm_s, loss_rank0, ...) are checked where they are used, so a file lacking them only costs
# that chart.
_REQUIRED = {
    "model": str, "mode": str, "world_size": int, "n_params": int,
    "avg_epoch_s": (int, float), "throughput_samples_per_s": (int, float),
    "compute_s": (int, float),
}
_OPTIONAL_NUMBERS = ("comm_s", "exposed_comm_s", "comm_busy_s", "bucket_cap_mb", "n_buckets")
_OPTIONAL_LISTS = ("loss_global", "loss_rank0", "epoch_times_s")


class BadInput(Exception):
    """The file cannot be plotted; the message is the one line the user sees."""


@dataclass
class Run:
    """One successful run: its sweep point (what is matched across files) and its record."""
    model: str
    mode: str
    k: int
    cap: float | None    # bucket cap in MiB, bucketed only
    link: str
    repeat: int
    rec: dict

    def num(self, name):
        """A numeric field as float, or None when absent or null."""
        v = self.rec.get(name)
        return None if v is None else float(v)

    def series(self, name):
        """A per-epoch list field as floats ([] when absent); null entries become NaN."""
        return [math.nan if x is None else float(x) for x in self.rec.get(name) or []]


@dataclass
class Loaded:
    runs: list
    n_failed: int = 0
    warnings: list = field(default_factory=list)


def load_results(path):
    """Read and check PATH; return Loaded or raise BadInput."""
    text = _read_text(path)
    numbered = [(i + 1, ln) for i, ln in enumerate(text.split("\n")) if ln.strip()]
    if not numbered:
        raise BadInput(f"{path}: empty file, no results to plot")
    out = Loaded(runs=[])
    for lineno, line in numbered:
        obj = _parse_line(path, lineno, line, out)
        if obj is None:
            continue
        if obj.get("status") == "failed":
            if not isinstance(obj.get("point"), dict):
                raise BadInput(f"{path}:{lineno}: a failed line without a sweep 'point': "
                               "not a dpscale results line")
            out.n_failed += 1
            continue
        out.runs.append(_to_run(path, lineno, obj))
    if not out.runs:
        raise BadInput(f"{path}: no successful runs to plot"
                       + (f" ({out.n_failed} failed)" if out.n_failed else ""))
    return out


def _read_text(path):
    try:
        with open(path, "rb") as f:  # read-only: the results file is never rewritten
            data = f.read()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a .jsonl results file") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not a text file (not UTF-8), expected JSON lines") from None


def _parse_line(path, lineno, line, out):
    """The line's JSON object, None for a skipped truncated line; BadInput otherwise."""
    try:
        obj = json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        if is_cut_short(line, e):
            out.warnings.append(f"line {lineno} is truncated (killed sweep?); skipped")
            return None
        raise BadInput(f"{path}:{lineno}: not a JSON line ({e.msg})") from None
    except ValueError as e:  # NaN/Infinity
        raise BadInput(f"{path}:{lineno}: not a JSON line ({e})") from None
    if not isinstance(obj, dict):
        kind = {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
                type(None): "null"}[type(obj)]
        raise BadInput(f"{path}:{lineno}: a JSON {kind}, expected a sweep-line object")
    return obj


_LITERALS = ("true", "false", "null")
_NUMBER_TAIL = re.compile(r"[-+.eE0-9]+")


def is_cut_short(line, err):
    """True when LINE is a JSON object cut off mid-way: the parser ran out of input rather than
    into a wrong character. Python's decoder reports where the unfinished token began, so a cut
    inside a string, a number or a literal is recognised by what is left from there."""
    if not line.lstrip().startswith("{") or err.msg == "Extra data":
        return False
    if err.msg.startswith("Unterminated string"):  # no closing quote before the end
        return True
    tail = line[err.pos:].rstrip()
    return (tail == "" or any(lit.startswith(tail) for lit in _LITERALS)
            or _NUMBER_TAIL.fullmatch(tail) is not None)


def _reject_constant(name):
    # NaN/Infinity are not JSON; a record holding them is broken, not plottable.
    raise ValueError(f"{name} is not valid JSON")


def _to_run(path, lineno, obj):
    where = f"{path}:{lineno}"
    status = obj.get("status")
    if status not in (None, "ok"):
        raise BadInput(f"{where}: status {status!r} is neither 'ok' nor 'failed'")
    if obj.get("schema") != SCHEMA:
        if "schema" in obj:
            raise BadInput(f"{where}: schema {obj['schema']!r} is not {SCHEMA}")
        raise BadInput(f"{where}: not a dpscale results line (no \"schema\": \"{SCHEMA}\")")
    for name, types in _REQUIRED.items():
        _check_type(where, obj, name, types, required=True)
    for name in _OPTIONAL_NUMBERS:
        _check_type(where, obj, name, (int, float), required=False)
    for name in _OPTIONAL_LISTS:
        # null entries are allowed: the C++ writer prints a NaN (a diverged loss) as null.
        v = obj.get(name)
        if v is not None and not (isinstance(v, list)
                                  and all(x is None or _is_number(x) for x in v)):
            raise BadInput(f"{where}: field '{name}' is not a list of numbers")
    point = obj.get("point")
    if point is not None and not isinstance(point, dict):
        raise BadInput(f"{where}: field 'point' is not an object")
    return _make_run(where, obj, point or {})


def _make_run(where, obj, point):
    # The sweep point is what the harness matches runs by; a bare trainer record (no point)
    # falls back to the record's own fields.
    mode = point.get("mode", obj["mode"])
    if mode not in MODES:
        raise BadInput(f"{where}: unknown mode {mode!r} (expected one of {', '.join(MODES)})")
    k = point.get("world_size", obj["world_size"])
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise BadInput(f"{where}: world_size {k!r} is not a positive integer")
    cap = point.get("bucket_cap_mb", obj.get("bucket_cap_mb"))
    if mode != "bucketed":
        cap = None
    elif not _is_number(cap) or cap <= 0:
        raise BadInput(f"{where}: bucketed run without a positive bucket_cap_mb")
    repeat = point.get("repeat", 0)
    return Run(model=str(point.get("model", obj["model"])), mode=mode, k=k,
               cap=None if cap is None else float(cap),
               link=str(point.get("link", obj.get("link", "none"))),
               repeat=repeat if isinstance(repeat, int) else 0, rec=obj)


def _check_type(where, obj, name, types, required):
    if name not in obj or obj[name] is None:
        if required:
            raise BadInput(f"{where}: record has no field '{name}'")
        return
    v = obj[name]
    ok = isinstance(v, types) and not isinstance(v, bool)
    if ok and isinstance(v, float) and not math.isfinite(v):
        ok = False
    if not ok:
        raise BadInput(f"{where}: record field '{name}' has the wrong type ({type(v).__name__})")


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
