"""load.py — read and check the report JSON that `dpscale report FILE --format json` prints
(docs/RESULTS_FORMAT.md, "The report JSON"); `dpscale plot` writes it and hands it over.

The plotter computes no statistic of its own: medians, spreads, speedup, E, comm fraction, gamma,
the saving against naive and the loss curves are all the report's, so a chart cannot disagree
with `dpscale report`. The results file itself (JSONL) is read by the harness only.

Everything the charts read is checked here, before anything is drawn: bad input is one line
(BadInput) and no chart is written. The file is opened read-only and never written.
"""
import json
import math
from dataclasses import dataclass, field

import jsonschema

from .style import MODE_LABEL, use_modes

SCHEMA = "dpscale.report/2"
RESULT_SCHEMA = "dpscale.result/1"  # a results-file line: named only to say what to run instead

# The fields of a report point the charts read, by shape. "spread" is {"median", "min", "max"};
# "?" allows null; "point" is the point's key, checked against the report's own point_schema.
# A test holds this against the harness's own output (tests/plots), so the two sides of the
# report cannot drift apart unnoticed.
POINT_FIELDS = {
    "point": "point", "n_params": "int", "runs": "int", "setup": "setup",
    "avg_epoch_s": "spread", "comm_s": "spread?", "compute_s": "spread",
    "comm_busy_s": "spread?", "throughput_samples_per_s": "spread",
    "throughput_tokens_per_s": "spread?",  # a transformer's samples/s times its tokens per sample
    "speedup": "spread?",
    "efficiency": "spread?", "comm_fraction": "number?", "gamma": "number?",
    "amdahl_max": "number?", "naive_saving": "spread?", "naive_saving_s": "number?",
    "n_buckets": "number?", "loss_global": "curve", "loss_rank0": "curve",
    "diagnosis": "object?",  # the triad, the label, per-rank times (charts 9, 10)
    "memory_per_rank": "object",  # bytes each rank holds: parameters, gradients, optimizer state
}
# Fields a report point may lack.
OPTIONAL_POINT_FIELDS = {
    "final_loss": "spread?",  # each repeat's last finite loss_global
    "test_accuracy": "spread?",  # with a dataset's test split (Fashion-MNIST)
}
# memory_per_rank's bytes (chart 14): counted by the trainer, 0 where a record has no counts.
MEMORY_FIELDS = {"param_bytes": "int", "grad_bytes": "int", "optim_bytes": "int"}
# The measured peak RSS, which a report from before the field lacks.
OPTIONAL_MEMORY_FIELDS = {"peak_rss_bytes": "int"}
SETUP_FIELDS = {
    "backend": "str", "device_name": "str", "global_batch": "int", "n_samples": "int",
    "epochs": "int", "link_alpha_us": "number?", "link_gbps": "number?",
    "link_dilation": "number",
}


class BadInput(Exception):
    """The file cannot be plotted; the message is the one line the user sees."""


@dataclass
class Report:
    file: str                 # the results file the report was made from
    points: list              # dicts, as checked against POINT_FIELDS
    option_defaults: dict     # the trainer options' defaults (contract/schema_doc.h): {key: value}
    point_schema: dict        # the JSON Schema of each point's "point" (harness/point/point.h)
    n_failed: int = 0
    warnings: list = field(default_factory=list)


def load_report(path):
    """Read and check PATH; return Report or raise BadInput."""
    obj = _parse(path, _read_text(path))
    if obj.get("schema") != SCHEMA:
        if obj.get("schema") == RESULT_SCHEMA or "point" in obj:
            raise BadInput(_results_file_hint(path))
        if "schema" in obj:
            raise BadInput(f"{path}: schema {obj['schema']!r} is not {SCHEMA}")
        raise BadInput(f"{path}: not a dpscale report (no \"schema\": \"{SCHEMA}\")")
    for name, kind in (("file", str), ("modes", list), ("option_defaults", dict), ("point_schema", dict),
                       ("warnings", list), ("points", list), ("failed", list)):
        if not isinstance(obj.get(name), kind):
            raise BadInput(f"{path}: report field '{name}' is missing or not a {kind.__name__}")
    if not all(isinstance(m, dict) and isinstance(m.get("name"), str) and isinstance(m.get("label"), str)
               and isinstance(m.get("data_parallel"), bool) for m in obj["modes"]):
        raise BadInput(f"{path}: report field 'modes' is not a list of mode entries")
    use_modes(obj["modes"])
    if not _is_number(obj["option_defaults"].get("bucket_cap_mb")):
        raise BadInput(f"{path}: report field 'option_defaults' has no number for bucket_cap_mb")
    if not all(isinstance(w, str) for w in obj["warnings"]):
        raise BadInput(f"{path}: report field 'warnings' is not a list of strings")
    try:
        validator = jsonschema.Draft202012Validator(obj["point_schema"])
        validator.check_schema(obj["point_schema"])
    except jsonschema.SchemaError as e:
        raise BadInput(f"{path}: report field 'point_schema' is not a JSON Schema: {e.message}") from None
    for i, p in enumerate(obj["points"]):
        _check_point(f"{path}: point {i + 1}", p, validator)
    if not obj["points"]:
        n = len(obj["failed"])
        raise BadInput(f"{path}: no successful runs to plot" + (f" ({n} failed)" if n else ""))
    return Report(file=obj["file"], points=obj["points"], option_defaults=obj["option_defaults"],
                  point_schema=obj["point_schema"], n_failed=len(obj["failed"]), warnings=obj["warnings"])


def _read_text(path):
    try:
        with open(path, "rb") as f:  # read-only: the input is never rewritten
            data = f.read()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a report .json file") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not a text file (not UTF-8), expected a report .json") from None


def _parse(path, text):
    if not text.strip():
        raise BadInput(f"{path}: empty file, no report to plot")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _looks_like_results_line(text):
            raise BadInput(_results_file_hint(path)) from None
        raise BadInput(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    except ValueError as e:  # NaN/Infinity
        raise BadInput(f"{path}: not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise BadInput(f"{path}: a JSON {_kind(obj)}, expected a report object")
    return obj


def _looks_like_results_line(text):
    try:
        first = json.loads(text.split("\n", 1)[0])
    except ValueError:
        return False
    return isinstance(first, dict) and (first.get("schema") == RESULT_SCHEMA or "point" in first)


def _results_file_hint(path):
    return (f"{path}: a results file (JSON lines), not a report: run `dpscale plot {path}`, "
            f"or give this script `dpscale report {path} --format json`'s output")


def _reject_constant(name):
    # NaN/Infinity are not JSON (the harness writes a missing number as null).
    raise ValueError(f"{name} is not valid JSON")


def _check_point(where, p, validator):
    if not isinstance(p, dict):
        raise BadInput(f"{where}: a JSON {_kind(p)}, expected an object")
    for name, shape in POINT_FIELDS.items():
        _check_field(where, p, name, shape)
    for name, shape in OPTIONAL_POINT_FIELDS.items():
        if name in p:
            _check_field(where, p, name, shape)
    error = jsonschema.exceptions.best_match(validator.iter_errors(p["point"]))
    if error is not None:
        at = "".join(f"[{x!r}]" if isinstance(x, int) else f".{x}" for x in error.absolute_path)
        raise BadInput(f"{where}: point{at}: {error.message}")
    if p["point"]["mode"] not in MODE_LABEL:
        raise BadInput(f"{where}: unknown mode {p['point']['mode']!r} "
                       f"(expected one of {', '.join(MODE_LABEL)})")
    if p["runs"] < 1:
        raise BadInput(f"{where}: runs must be positive")


def _check_field(where, obj, name, shape):
    if name not in obj:
        raise BadInput(f"{where}: no field '{name}'")
    v = obj[name]
    if shape.endswith("?"):
        if v is None:
            return
        shape = shape[:-1]
    ok = {
        "str": lambda: isinstance(v, str),
        "int": lambda: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda: _is_number(v),
        "spread": lambda: (isinstance(v, dict)
                           and all(_is_number(v.get(k)) for k in ("median", "min", "max"))),
        # per-epoch medians; null where no repeat had a finite value (a diverged run)
        "curve": lambda: isinstance(v, list) and all(x is None or _is_number(x) for x in v),
        "setup": lambda: isinstance(v, dict),
        "point": lambda: isinstance(v, dict),
        "object": lambda: isinstance(v, dict),
    }[shape]()
    if not ok:
        raise BadInput(f"{where}: field '{name}' is not a {shape}")
    if shape == "setup":
        for sub, sub_shape in SETUP_FIELDS.items():
            _check_field(f"{where} setup", v, sub, sub_shape)
    if name == "memory_per_rank":
        for sub, sub_shape in MEMORY_FIELDS.items():
            _check_field(f"{where} memory_per_rank", v, sub, sub_shape)
        for sub, sub_shape in OPTIONAL_MEMORY_FIELDS.items():
            if sub in v:
                _check_field(f"{where} memory_per_rank", v, sub, sub_shape)


def _kind(v):
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null", dict: "object"}[type(v)]


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
