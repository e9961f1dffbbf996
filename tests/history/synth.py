"""synth.py — histories with known numbers for the history tests: rows of the contract
(harness/history/history_rows.h) made from templates that the real `dpscale history add` wrote
for the committed CI baseline, with revisions, values and disturbance chosen by the test."""
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

SRC = Path(os.environ.get("DPSCALE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("DPSCALE_BIN", str(SRC / "build" / "bin" / "dpscale"))
BASELINE = SRC / ".ci" / "baseline" / "ci-cpu.jsonl"


def dpscale(*args, timeout=120, env=None):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


_templates = None


def templates():
    """One exported row per point of the CI baseline (single, naive, interleaved, bucketed)."""
    global _templates
    if _templates is None:
        with tempfile.TemporaryDirectory() as d:
            db = Path(d) / "t.sqlite"
            r = dpscale("history", "add", BASELINE, "--rev", "template", "--rev-time", "2026-01-01T00:00:00Z", "--db", db)
            assert r.returncode == 0, r.stderr
            r = dpscale("history", "export", "--db", db)
            assert r.returncode == 0, r.stderr
        by_mode = {}
        for line in r.stdout.splitlines():
            row = json.loads(line)
            by_mode.setdefault(row["point"]["mode"], row)
        _templates = by_mode
    return _templates


def revision(i, name=None):
    """The i-th revision of a synthetic history: a label one hour after the one before."""
    return {"name": name or f"rev{i:03d}", "commit_id": None,
            "commit_time": f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"}


def row(mode, rev, speedup, run=0, disturbed=None, machine=None, point_suffix=""):
    """A run of `mode` at revision `rev` with this speedup (single: its throughput scales)."""
    r = json.loads(json.dumps(templates()[mode]))
    r["revision"] = rev
    if point_suffix:
        r["point_key"] += point_suffix
        r["describe"] += point_suffix
    if machine:
        r["machine"]["fingerprint"] = machine
    k = r["point"]["world_size"]
    m = r["metrics"]
    if mode != "single":
        m["speedup"], m["efficiency"] = speedup, speedup / k
        m["throughput"] = 8000.0 * speedup
        m["epoch_s"] = 1.0 / speedup
    r["disturbed"] = disturbed
    r["run"]["repeat"] = run
    ident = f"{r['point_key']}|{r['machine']['fingerprint']}|{rev['name']}|{run}"
    r["run_key"] = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return r


def digest(path):
    """The file's bytes as a hash: a store or file a refused command must leave as it was."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_rows(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def step_history(n_revs, change_at, before, after, modes=("naive",), runs=3, jitter=0.004):
    """n_revs revisions, speedup `before` until revision change_at and `after` from it on, with a
    small fixed wobble between runs (deterministic)."""
    rows = []
    for i in range(n_revs):
        base = before if i < change_at else after
        for mode in modes:
            for j in range(runs):
                wobble = jitter * (((i * 7 + j * 3) % 5) - 2) / 2
                rows.append(row(mode, revision(i), base * (1 + wobble), run=j))
    return rows
