"""plot_test_env.py — what every chart test of tests/plots needs before it imports the plotter:
the source tree and the `dpscale` binary (DPSCALE_SOURCE_DIR, DPSCALE_BIN, else this checkout's),
the plotter's package on the path, the shared fixture, and a skip (exit 77, CTest's SKIP_RETURN_CODE)
where matplotlib is missing.
"""
import os
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("DPSCALE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DPSCALE = Path(os.environ.get("DPSCALE_BIN", SOURCE / "build" / "bin" / "dpscale"))
FIXTURE = SOURCE / "tests" / "plots" / "fixture.jsonl"
sys.path.insert(0, str(SOURCE / "plots"))

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is missing: skipped")
    sys.exit(77)
