#!/usr/bin/python3
"""reproduce.py — write docs/REPRODUCTION.md and docs/REPRODUCTION.html from the raw results.

    /usr/bin/python3 plots/reproduce.py --raw docs/reproduction/raw --out docs

`scripts/reproduce.sh` (what `make reproduce` runs) makes the raw directory, then calls this:

    manifest.json          {"machine": ..., "date": ..., "commands": {evidence name: command}}
    runs.report.json       dpscale report --format json of the main sweep (runs.jsonl)
    buckets.report.json    ... of the bucket-cap sweep (buckets.jsonl)
    allreduce-K<k>.json    bench_allreduce --benchmark_format=json at K = k
    predict.json           dpscale predict --format json, calibrated from runs.jsonl
    predict-caps.json      dpscale predict --recommend-cap --format json
    textbook-15.9.1.txt    dpscale predict --textbook 15.9.1
    textbook-15.2.1.txt    dpscale predict --textbook 15.2.1

A missing file leaves its findings "not run", never a made-up verdict. Charts are expected in
OUT/reproduction/charts (dpscale plot of runs.jsonl and buckets.jsonl). Exit 2 on bad input.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True

from pathlib import Path  # noqa: E402

from dpscale_plots.findings import Evidence, judge  # noqa: E402
from dpscale_plots.reproduction_page import markdown, page  # noqa: E402


def _json(path):
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"reproduce: {path}: not JSON ({e})")


def _text(path):
    return path.read_text() if path.exists() else None


def load_evidence(raw):
    manifest = _json(raw / "manifest.json") or {}
    allreduce = {}
    for p in sorted(raw.glob("allreduce-K*.json")):
        allreduce[int(p.stem.split("K")[1])] = (_json(p) or {}).get("benchmarks", [])
    ev = Evidence(runs=_json(raw / "runs.report.json"), buckets=_json(raw / "buckets.report.json"),
                  allreduce=allreduce, predict=_json(raw / "predict.json"),
                  caps_predicted=_json(raw / "predict-caps.json"),
                  textbook_15_9_1=_text(raw / "textbook-15.9.1.txt"),
                  textbook_15_2_1=_text(raw / "textbook-15.2.1.txt"),
                  commands=manifest.get("commands", {}))
    return ev, manifest


def _write(path, text):
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # never a half-written report


def main(argv):
    ap = argparse.ArgumentParser(prog="reproduce", description=__doc__.splitlines()[1])
    ap.add_argument("--raw", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    if not args.raw.is_dir():
        print(f"reproduce: --raw {args.raw}: no such directory", file=sys.stderr)
        return 2
    ev, manifest = load_evidence(args.raw)
    findings = judge(ev)
    meta = {"machine": manifest.get("machine", "unknown"), "date": manifest.get("date", "unknown"),
            "raw_dir": os.path.relpath(args.raw, args.out)}
    args.out.mkdir(parents=True, exist_ok=True)
    _write(args.out / "REPRODUCTION.md", markdown(findings, meta, "reproduction/charts"))
    _write(args.out / "REPRODUCTION.html", page(findings, meta, "reproduction/charts"))
    for f in findings:
        print(f"{f.number:2d}. {f.verdict:15s} {f.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
