#!/usr/bin/env python3
"""test_emulated_nodes.py — scripts/emulated-nodes.sh itself, on the nodes the CTest fixture
twonode_up made: status answers, a second `up --owner` and a `down --owner` of someone else leave
the nodes as they are, a bad rate is refused with one line and exit 2, and the tbf cap is real:
8 MiB sent from dpnode0 to dpnode1 over TCP take at least (8 MiB - burst) / rate.

Exit 77 (CTest's skip code) with the reason where namespaces cannot be made here.
Run: ctest -R twonode.script -V
"""
import os
import re
import subprocess
import sys
import time

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
NODES = os.path.join(SCRIPTS, "emulated-nodes.sh")
DIR = os.environ.get("DPSCALE_NODES_DIR", "/run/dpscale-nodes")


def sh(*args, check=False):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def rate_bytes_per_s(rate):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)(bit|bps)", rate)
    if not m:
        fail(f"unexpected rate {rate!r}")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    v = float(m.group(1)) * scale
    return v / 8 if m.group(3) == "bit" else v


def main():
    check = sh(NODES, "check")
    if check.returncode == 77:
        print(f"skipped: {check.stdout.strip()}")
        return 77
    before = sh(NODES, "status", check=True).stdout
    if "tbf" not in before or "10.77.0.1/24" not in before:
        fail(f"status does not show the address and the cap:\n{before}")

    # Idempotent, and the fixture's `up` leaves nodes that exist as they are.
    r = sh(NODES, "up", "--if-possible", "--owner", "someone-else", check=True)
    if sh(NODES, "status", check=True).stdout != before:
        fail(f"a second up changed the nodes:\n{r.stdout}")
    # down of another owner: nothing happens.
    sh(NODES, "down", "--owner", "someone-else", check=True)
    if sh(NODES, "status").returncode != 0:
        fail("down --owner someone-else removed nodes it did not make")

    # A bad rate: one line, exit 2, nodes untouched.
    bad = sh(NODES, "up", "--rate", "fast")
    if bad.returncode != 2 or len(bad.stderr.strip().splitlines()) != 1 or "--rate 'fast'" not in bad.stderr:
        fail(f"bad rate: exit {bad.returncode}, stderr {bad.stderr!r}")
    if sh(NODES, "status", check=True).stdout != before:
        fail("a refused up changed the nodes")

    # The cap is real: 8 MiB over TCP from dpnode0 to dpnode1.
    rate = open(os.path.join(DIR, "rate")).read().strip()
    nbytes = 8 << 20
    server = subprocess.Popen(
        ["ip", "netns", "exec", "dpnode1", sys.executable, "-c",
         "import socket\n"
         "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('10.77.0.2', 47123)); s.listen(1); print('ready', flush=True)\n"
         "c,_=s.accept(); n=0\n"
         "while True:\n"
         "  b=c.recv(1<<20)\n"
         "  if not b: break\n"
         "  n+=len(b)\n"
         "c.sendall(str(n).encode()); c.close()\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != "ready":
            fail("the receiver in dpnode1 did not start")
        client = sh("ip", "netns", "exec", "dpnode0", sys.executable, "-c",
                    "import socket,time\n"
                    f"c=socket.create_connection(('10.77.0.2', 47123)); t=time.monotonic()\n"
                    f"c.sendall(b'x'*{nbytes}); c.shutdown(socket.SHUT_WR)\n"
                    "n=int(c.recv(64)); print(n, time.monotonic()-t)\n", check=True)
    finally:
        server.wait(timeout=60)
    got, seconds = client.stdout.split()
    if int(got) != nbytes:
        fail(f"dpnode1 received {got} of {nbytes} bytes")
    floor = (nbytes - 256 * 1024) / rate_bytes_per_s(rate)
    print(f"8 MiB dpnode0 -> dpnode1 at {rate}: {float(seconds):.3f} s (the cap allows no less than {floor:.3f} s)")
    if float(seconds) < floor:
        fail(f"8 MiB took {seconds} s, faster than {rate} allows ({floor:.3f} s): the tbf cap is not in the path")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
