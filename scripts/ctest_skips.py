#!/usr/bin/env python3
"""ctest_skips.py — what a CTest run skipped, by label, and a failure when a label that must run
skipped anything.

A test that skips (SKIP_RETURN_CODE 77, gtest's GTEST_SKIP) counts as passed in `make test`:
a CI machine that lost a privilege or a package would turn whole suites (the two emulated nodes,
the PyTorch interop, the plots, the GPU kit) into silent no-ops. This reads the JUnit files that
`make test` and `make test-long` write (ctest --output-junit; --junit once per file, the two
runs hold different tests) and the tests' labels (ctest --show-only=json-v1),
prints one line per label (tests, ran, skipped) and every skipped test with its reason, and
exits 1 when a test carrying a --must-run label was skipped.

  scripts/ctest_skips.py BUILD_DIR --must-run twonode,interop,plots,kit
  scripts/ctest_skips.py BUILD_DIR --junit BUILD_DIR/ctest-junit.xml --junit BUILD_DIR/ctest-junit-long.xml ...
  scripts/ctest_skips.py --junit J.xml --tests-json T.json --must-run ...   (files already made)

Exit status: 0 fine, 1 a must-run label skipped, 2 bad input (a missing or unreadable file).
"""
import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

NO_LABEL = "(no label)"


def fail_input(msg):
    print(f"ctest_skips: {msg}", file=sys.stderr)
    sys.exit(2)


def read_junit(path):
    """{test name: (status, reason)}; status 'run', 'fail', 'skipped' or 'disabled'."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        fail_input(f"cannot read the JUnit file {path}: {e}")
    out = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        status = case.get("status", "run")
        skipped = case.find("skipped")
        if skipped is not None or status == "notrun":
            out[name] = ("skipped", skip_reason(case, skipped))
        else:
            out[name] = (status, "")
    if not out:
        fail_input(f"{path} holds no test cases")
    return out


def skip_reason(case, skipped):
    """The test's own words where it printed them (gtest: the line after '...: Skipped'), else
    CTest's ('SKIP_RETURN_CODE=77')."""
    text = case.findtext("system-out") or ""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if line.endswith("Skipped") and i + 1 < len(lines):
            return lines[i + 1]
    for line in reversed(lines):
        if "skip" in line.lower() and not line.startswith("[  SKIPPED"):
            return line
    if lines:
        return lines[-1][:200]
    return skipped.get("message", "") if skipped is not None else ""


def read_labels(tests_json):
    """{test name: [labels]} from ctest --show-only=json-v1."""
    labels = {}
    for t in tests_json.get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels[t["name"]] = list(props.get("LABELS", [])) or [NO_LABEL]
    return labels


def tests_json_of(build_dir):
    try:
        out = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail_input(f"ctest --show-only in {build_dir} failed: {e}")
    return json.loads(out)


def summarize(results, labels, must_run):
    """(lines to print, names of must-run tests that skipped)."""
    per_label = defaultdict(lambda: [0, 0, 0])  # tests, ran, skipped
    skipped = []
    for name, (status, reason) in sorted(results.items()):
        for label in labels.get(name, [NO_LABEL]):
            row = per_label[label]
            row[0] += 1
            if status == "skipped":
                row[2] += 1
            else:
                row[1] += 1
        if status == "skipped":
            skipped.append((name, labels.get(name, [NO_LABEL]), reason))
    lines = [f"{'label':<12} {'tests':>6} {'ran':>6} {'skipped':>8}"]
    for label in sorted(per_label):
        t, r, s = per_label[label]
        mark = "  <- must run" if label in must_run and s else ""
        lines.append(f"{label:<12} {t:>6} {r:>6} {s:>8}{mark}")
    bad = []
    for name, labs, reason in skipped:
        lines.append(f"skipped: {name} [{','.join(labs)}]: {reason}")
        if must_run.intersection(labs):
            bad.append(name)
    for label in sorted(must_run - set(per_label)):
        lines.append(f"no test carries the must-run label '{label}'")
        bad.append(f"no test labelled {label}")
    return lines, bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir", nargs="?")
    ap.add_argument("--junit", action="append",
                    help="a JUnit file; repeat for several runs (default BUILD_DIR/ctest-junit.xml)")
    ap.add_argument("--tests-json", help="ctest --show-only=json-v1 output (default: asks ctest)")
    ap.add_argument("--must-run", default="", help="comma-separated labels that must not skip")
    a = ap.parse_args(argv)
    if not a.build_dir and not (a.junit and a.tests_json):
        fail_input("give BUILD_DIR, or both --junit and --tests-json")
    junits = a.junit or [os.path.join(a.build_dir, "ctest-junit.xml")]
    if a.tests_json:
        try:
            with open(a.tests_json) as f:
                tests_json = json.load(f)
        except (OSError, ValueError) as e:
            fail_input(f"cannot read {a.tests_json}: {e}")
    else:
        tests_json = tests_json_of(a.build_dir)
    must_run = {l for l in a.must_run.split(",") if l}
    results = {}
    for junit in junits:
        for name, outcome in read_junit(junit).items():
            if name in results:
                fail_input(f"{name} is in two of the JUnit files: give each run's file once")
            results[name] = outcome
    lines, bad = summarize(results, read_labels(tests_json), must_run)
    print("\n".join(lines))
    if bad:
        print(f"ctest_skips: FAILED: the must-run labels ({','.join(sorted(must_run))}) did not all run: "
              f"{'; '.join(bad)}")
        return 1
    print(f"ctest_skips: ok: nothing labelled {','.join(sorted(must_run)) or '(none)'} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
