"""ci_tree.py — what the tests in tests/ci that scan the source tree share: the tree they read
(ROOT: DPSCALE_SOURCE_DIR, as CTest sets it, or the checkout this file is in), the Tree test's
check that a scan found nothing (each finding printed first, so that CTest's log names them all,
not only the assertion's diff), and their main (`--list` prints what a scan finds instead of
testing, for a developer fixing the findings).

The tests import it from their own folder (Python puts a script's folder first on sys.path).
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("DPSCALE_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))


def assert_none_found(case, found, msg=None):
    """Print each of a scan's findings, then fail `case` unless there are none."""
    for line in found:
        print(line)
    case.assertEqual(found, [], msg)


def main(scan=None):
    """Run the calling script's tests; with `--list` and a `scan` (ROOT -> findings), print its
    findings one a line and exit 0 instead."""
    if scan is not None and sys.argv[1:] == ["--list"]:
        print("\n".join(scan(ROOT)))
        sys.exit(0)
    unittest.main(module="__main__", verbosity=2)
