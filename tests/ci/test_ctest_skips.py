#!/usr/bin/env python3
"""test_ctest_skips.py — scripts/ctest_skips.py, CI's check that no must-run label skipped, on
JUnit and label files written here in CTest's own formats (as `ctest --output-junit` and
`ctest --show-only=json-v1` write them): the counts per label, the reasons, and the exit status
for a skip under a must-run label, a skip under another label, and a must-run label no test has.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "ctest_skips.py")

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="dpscale" tests="5" failures="0" disabled="0" skipped="3" hostname="" time="1">
  <testcase name="twonode.script" classname="twonode.script" time="0.1" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>twonode: skipped: not root (network namespaces need root)
</system-out>
  </testcase>
  <testcase name="NcclDp.Two" classname="NcclDp.Two" time="0.1" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>Running main()
tests/trainers/test_dp_nccl.cpp:31: Skipped
needs 2 GPU(s) (one per NCCL rank), 0 answer
[  SKIPPED ] NcclDp.Two
</system-out>
  </testcase>
  <testcase name="plot_arithmetic" classname="plot_arithmetic" time="2" status="run"><system-out/></testcase>
  <testcase name="twonode.hier.np2" classname="twonode.hier.np2" time="2" status="run"><system-out/></testcase>
  <testcase name="Unlabelled.Skip" classname="Unlabelled.Skip" time="0" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/><system-out></system-out>
  </testcase>
</testsuite>
"""

TESTS = {"kind": "ctestInfo", "tests": [
    {"name": "twonode.script", "properties": [{"name": "LABELS", "value": ["twonode"]}]},
    {"name": "NcclDp.Two", "properties": [{"name": "LABELS", "value": ["gpu"]}]},
    {"name": "plot_arithmetic", "properties": [{"name": "LABELS", "value": ["plots"]}]},
    {"name": "twonode.hier.np2", "properties": [{"name": "LABELS", "value": ["mpi", "twonode"]}]},
    {"name": "Unlabelled.Skip", "properties": [{"name": "WORKING_DIRECTORY", "value": "/x"}]},
]}


class CtestSkips(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.junit = os.path.join(self.dir.name, "j.xml")
        self.tests = os.path.join(self.dir.name, "t.json")
        with open(self.junit, "w") as f:
            f.write(JUNIT)
        with open(self.tests, "w") as f:
            json.dump(TESTS, f)

    def tearDown(self):
        self.dir.cleanup()

    def run_script(self, must_run, junit=None):
        junits = junit if isinstance(junit, list) else [junit or self.junit]
        args = [a for j in junits for a in ("--junit", j)]
        return subprocess.run([sys.executable, SCRIPT, *args, "--tests-json", self.tests,
                               "--must-run", must_run], capture_output=True, text=True)

    def split_junit(self, long_names):
        """JUNIT as the two runs CI makes write it: `make test` (the rest) and `make test-long`
        (the cases named), each a file of its own."""
        root = ET.fromstring(JUNIT)
        paths = []
        for part, keep in (("fast", lambda n: n not in long_names), ("long", lambda n: n in long_names)):
            suite = ET.Element("testsuite", root.attrib)
            for case in root.iter("testcase"):
                if keep(case.get("name")):
                    suite.append(case)
            paths.append(os.path.join(self.dir.name, f"{part}.xml"))
            ET.ElementTree(suite).write(paths[-1])
        return paths

    def row(self, out, label):
        for line in out.splitlines():
            if line.startswith(label + " "):
                return [int(x) for x in line[len(label):].split()[:3]]
        self.fail(f"no row for {label} in:\n{out}")

    def test_counts_per_label(self):
        r = self.run_script("plots")
        self.assertEqual(self.row(r.stdout, "twonode"), [2, 1, 1])
        self.assertEqual(self.row(r.stdout, "gpu"), [1, 0, 1])
        self.assertEqual(self.row(r.stdout, "plots"), [1, 1, 0])
        self.assertEqual(self.row(r.stdout, "mpi"), [1, 1, 0])
        self.assertEqual(self.row(r.stdout, "(no label)"), [1, 0, 1])

    def test_reasons_are_the_tests_own_words(self):
        r = self.run_script("plots")
        self.assertIn("skipped: NcclDp.Two [gpu]: needs 2 GPU(s) (one per NCCL rank), 0 answer", r.stdout)
        self.assertIn("skipped: twonode.script [twonode]: twonode: skipped: not root", r.stdout)

    def test_skip_under_a_must_run_label_fails(self):
        r = self.run_script("twonode,plots")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("did not all run: twonode.script", r.stdout)
        self.assertNotIn("NcclDp.Two", r.stdout.splitlines()[-1])

    def test_skips_under_other_labels_pass(self):
        r = self.run_script("plots,mpi")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ctest_skips: ok", r.stdout)

    def test_a_must_run_label_no_test_has_fails(self):
        r = self.run_script("plots,interop")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no test labelled interop", r.stdout)

    # Catches reading only the first --junit: the must-run skip sits in the long run's file.
    def test_a_skip_in_the_second_runs_file_fails(self):
        paths = self.split_junit({"twonode.script", "twonode.hier.np2"})
        r = self.run_script("twonode,plots", junit=paths)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("did not all run: twonode.script", r.stdout)
        self.assertEqual(self.row(r.stdout, "twonode"), [2, 1, 1])
        self.assertEqual(self.row(r.stdout, "plots"), [1, 1, 0])

    def test_one_test_in_two_files_is_one_line_exit_2(self):
        r = self.run_script("plots", junit=[self.junit, self.junit])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("is in two of the JUnit files", r.stderr)

    def test_a_torn_junit_file_is_one_line_exit_2(self):
        torn = os.path.join(self.dir.name, "torn.xml")
        with open(torn, "w") as f:
            f.write(JUNIT[:300])
        r = self.run_script("plots", junit=torn)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("cannot read the JUnit file", r.stderr)


if __name__ == "__main__":
    unittest.main()
