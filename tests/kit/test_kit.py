#!/usr/bin/env python3
"""test_kit.py — the GPU kit (scripts/gpu-kit.sh, scripts/gpu-kit/run.sh), made from this build.

Three groups, each one CTest test (tests/kit/CMakeLists.txt):
  Build     gpu-kit.sh makes the kit into $DPSCALE_KIT_DIR (the fixture the others need), with this
            build as its own base revision too (the side-by-side step then runs the same
            trainers twice), and refuses to overwrite a directory that is not a kit
  Shape     at most 64 MiB; no CUDA or glibc library carried; every program and Open MPI plugin
            resolves OpenBLAS, MPI and everything else it needs inside the kit (ldd with the
            kit's library path); a real two-rank mpirun job with the kit's environment loads no
            shared object from this machine's OpenBLAS / Open MPI / PMIx / hwloc (the dynamic
            loader's own log, LD_DEBUG=files) — and the same check flags the build's own
            binaries, so it can fail
  SelfTest  run.sh OUTDIR --self-test on this CPU: exit 0, the fourteen files with the summary
            first, and their records: counts, fields, finite numbers

    DPSCALE_SOURCE_DIR=. DPSCALE_BUILD_DIR=build DPSCALE_KIT_DIR=/tmp/kit python3 tests/kit/test_kit.py -v Build
"""
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import unittest

SRC = os.environ.get("DPSCALE_SOURCE_DIR", ".")
BUILD = os.environ.get("DPSCALE_BUILD_DIR", "build")
KIT = os.environ.get("DPSCALE_KIT_DIR", os.path.join(BUILD, "kit-test", "kit"))
OUT = KIT + "-selftest-out"
LIMIT = 64 * 1024 * 1024
TRAINERS = ["train_single_gpu", "train_dp_naive", "train_dp_interleaved", "train_ddp_bucketed"]
# The kit's own list (gpu-kit.sh --programs), the one gpu-session.sh builds from.
PROGRAMS = subprocess.run(["bash", os.path.join(SRC, "scripts", "gpu-kit.sh"), "--programs"], capture_output=True,
                          text=True, check=True).stdout.split()
# What the GPU machine must provide itself: the C library family and CUDA's libraries.
SYSTEM = re.compile(r"^(linux-vdso|ld-linux-x86-64|lib(c|m|dl|rt|pthread|resolv|util)\.so)")
CUDA = re.compile(r"^lib(cudart|cublas|cublasLt|nccl|cuda|nvidia-ml)\.so")
# The C++ runtime: the machine's own, or the kit's compat/ copy where the machine's is too old.
CXX_RUNTIME = re.compile(r"^lib(stdc\+\+|gcc_s)\.so")
# This machine's copies of what the kit carries: a job run from the kit must load none of them.
# (/lib and /usr/lib are one directory on Debian 12: the loader reports either.)
FOREIGN = re.compile(r"^(/usr)?/lib/x86_64-linux-gnu/(openmpi/|pmix2/|hwloc/|openblas|lib(openblas|mpi|open-pal|"
                     r"open-rte|pmix|hwloc|event|gfortran|benchmark|munge|udev)[^/]*$)")


def run(argv, timeout=600, env=None):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


def kit_env_command(root, command):
    """bash -c that sources the kit's env.sh, applies kit_env, then runs `command`."""
    return ["bash", "-c", f'. "{KIT}/kit/env.sh" && kit_env "{root}" && {command}']


def ldd(path, libpath):
    """soname -> resolved path (or 'not found') as ldd reports it with LD_LIBRARY_PATH=libpath."""
    env = dict(os.environ, LD_LIBRARY_PATH=libpath)
    r = run(["ldd", path], env=env)
    deps = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?$", line)
        if m:
            deps[m.group(1)] = m.group(2)
    return deps


def loaded_objects(log_prefix):
    """Every shared object the dynamic loader ran an initialiser of, over all processes."""
    paths = set()
    for f in glob.glob(log_prefix + ".*"):
        with open(f, errors="replace") as fh:
            for line in fh:
                m = re.search(r"calling init: (\S+)", line)
                if m:
                    paths.add(m.group(1))
    return paths


class Build(unittest.TestCase):
    def test_makes_the_kit(self):
        if os.path.exists(KIT):
            shutil.rmtree(KIT)
        r = run(["bash", os.path.join(SRC, "scripts", "gpu-kit.sh"), KIT, BUILD, BUILD])
        self.assertEqual(r.returncode, 0, r.stderr)
        for f in ["run.sh", "payload.tar.xz", "src.tar.xz", "MANIFEST.txt", "kit/env.sh", "kit/steps.sh", "kit/ab.sh",
                  "kit/summary.py", "kit/cuda-libs.sh", "kit/build-here.sh", "kit/system.sh"]:
            self.assertTrue(os.path.isfile(os.path.join(KIT, f)), f)
        print(r.stderr.strip())

    def test_refuses_a_directory_that_is_not_a_kit(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "precious.txt"), "w") as f:
                f.write("keep me")
            r = run(["bash", os.path.join(SRC, "scripts", "gpu-kit.sh"), d, BUILD])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("not a kit", r.stderr)
            self.assertEqual(os.listdir(d), ["precious.txt"])


class Shape(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dpscale-kit-shape-")
        cls.root = os.path.join(cls.tmp, "root")
        with tarfile.open(os.path.join(KIT, "payload.tar.xz")) as t:
            t.extractall(cls.root)
        cls.lib = os.path.join(cls.root, "lib")
        with open(os.path.join(KIT, "MANIFEST.txt")) as f:
            cls.manifest = dict(l.split(": ", 1) for l in f.read().splitlines() if ": " in l and not l.startswith(" "))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_at_most_64_mib(self):
        total = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(KIT) for f in fs)
        print(f"kit: {total} bytes = {total / 2**20:.1f} MiB")
        self.assertGreater(total, 1 << 20)  # it holds something
        self.assertLessEqual(total, LIMIT)

    def test_carries_neither_cuda_nor_the_c_library(self):
        carried = [f for d, _, fs in os.walk(self.root) for f in fs if ".so" in f]
        self.assertTrue(any(f.startswith("libopenblas") for f in carried), carried)
        self.assertTrue(any(f.startswith("libmpi.so") for f in carried), carried)
        self.assertEqual([f for f in carried if CUDA.match(f) or SYSTEM.match(f)], [])
        outside_compat = [os.path.relpath(os.path.join(d, f), self.root) for d, _, fs in os.walk(self.root)
                          for f in fs if CXX_RUNTIME.match(f) and os.path.basename(d) != "compat"]
        self.assertEqual(outside_compat, [], "the C++ runtime belongs in compat/ only")

    def test_programs_resolve_openblas_mpi_and_the_rest_inside_the_kit(self):
        self.assertTrue(set(TRAINERS + ["bench_dp_loop", "test_dp_nccl"]) <= set(PROGRAMS), PROGRAMS)
        for p in PROGRAMS + ["orterun", "orted"] + ["../base/bin/" + t for t in TRAINERS]:
            with self.subTest(program=p):
                deps = ldd(os.path.normpath(os.path.join(self.root, "bin", p)), self.lib)
                self.assertTrue(deps, f"ldd said nothing about {p}")
                if os.path.basename(p).startswith("train_") or p in ("bench_allreduce", "bench_dp_loop"):  # link both
                    self.assertTrue(deps.get("libopenblas.so.0", "").startswith(self.lib + "/"), deps)
                    self.assertTrue(deps.get("libmpi.so.40", "").startswith(self.lib + "/"), deps)
                for name, where in deps.items():
                    if SYSTEM.match(name) or CUDA.match(name) or CXX_RUNTIME.match(name):
                        continue
                    self.assertTrue(where.startswith(self.root + "/"), f"{p}: {name} => {where}")

    def test_mpi_plugins_resolve_inside_the_kit(self):
        plugins = glob.glob(os.path.join(self.lib, "openmpi", "mca_*.so"))
        self.assertGreater(len(plugins), 50)
        names = {os.path.basename(p) for p in plugins}
        for needed in ["mca_btl_vader.so", "mca_btl_self.so", "mca_pml_ob1.so", "mca_pmix_ext3x.so",
                       "mca_plm_rsh.so", "mca_ess_hnp.so", "mca_odls_default.so", "mca_coll_tuned.so"]:
            self.assertIn(needed, names)
        for p in plugins + glob.glob(os.path.join(self.lib, "pmix", "*.so")):
            for name, where in ldd(p, self.lib).items():
                if not (SYSTEM.match(name) or CUDA.match(name) or CXX_RUNTIME.match(name)):
                    self.assertTrue(where.startswith(self.root + "/"), f"{os.path.basename(p)}: {name} => {where}")

    def _job_loads(self, argv_prefix, exe, env_cmd):
        """Runs a 2-rank tiny CPU job with LD_DEBUG=files; returns the objects its processes loaded."""
        log = os.path.join(tempfile.mkdtemp(dir=self.tmp), "ld")
        cmd = (f"LD_DEBUG=files LD_DEBUG_OUTPUT={log} {argv_prefix} --allow-run-as-root --oversubscribe -np 2 "
               f"{exe} --backend cpu --model 784,8,10 --samples 64 --batch-size 32 --epochs 1 --quiet")
        r = run(env_cmd(cmd), timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("RESULTS_JSON:", r.stdout)
        return loaded_objects(log)

    def test_an_mpi_job_loads_nothing_of_this_machines_mpi_or_blas(self):
        loaded = self._job_loads(os.path.join(self.root, "bin", "mpirun"),
                                 os.path.join(self.root, "bin", "train_dp_naive"),
                                 lambda c: kit_env_command(self.root, c))
        from_kit = [p for p in loaded if p.startswith(self.root + "/")]
        self.assertTrue(any("/lib/openmpi/mca_" in p for p in from_kit), "no Open MPI plugin came from the kit")
        self.assertTrue(any("libopenblas" in p for p in from_kit), from_kit)
        self.assertEqual(sorted(p for p in loaded if FOREIGN.search(p)), [])

    def test_the_same_check_flags_the_builds_own_binaries(self):
        # Negative control: the build's binaries under this machine's mpirun load Debian's libraries.
        loaded = self._job_loads("mpirun", os.path.join(BUILD, "bin", "train_dp_naive"), lambda c: ["bash", "-c", c])
        flagged = [p for p in loaded if FOREIGN.search(p)]
        self.assertTrue(any("libmpi.so" in p for p in flagged), sorted(loaded))
        self.assertTrue(any("openmpi/" in p for p in flagged), sorted(loaded))

    def test_manifest_says_what_the_gpu_machine_must_have(self):
        m = self.manifest
        glibc = run(["getconf", "GNU_LIBC_VERSION"]).stdout.split()[-1]
        key = lambda v: [int(x) for x in v.split(".")]
        self.assertRegex(m["glibc_needs"], r"^2\.\d+$")
        self.assertLessEqual(key(m["glibc_needs"]), key(glibc))
        self.assertRegex(m["glibcxx_needs"], r"^3\.4\.\d+$")
        self.assertNotEqual(m["base"], "none")
        if m["cuda_build"].startswith("none"):
            self.assertEqual(m["cuda_needs"].strip(), "none")
        else:
            needs = m["cuda_needs"].split()
            self.assertTrue(any(n.startswith("libcudart.so.") for n in needs), needs)
            self.assertTrue(any(n.startswith("libcublas.so.") for n in needs), needs)
            self.assertIn("libnccl.so.2", needs)


def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class SelfTest(unittest.TestCase):
    FILES = ["00-summary.md", "ab.jsonl", "bench_allreduce.txt", "bench_dp_loop-fp32.json", "bench_dp_loop-tf32.json",
             "bench_gemm.json", "bench_kernels.json", "bench_step-fp32.json", "bench_step-tf32.json", "run.log",
             "system.txt", "tests.log", "train-fp32.jsonl", "train-tf32.jsonl"]

    @classmethod
    def setUpClass(cls):
        shutil.rmtree(OUT, ignore_errors=True)
        cls.r = run([os.path.join(KIT, "run.sh"), OUT, "--self-test"], timeout=900)

    def read(self, name):
        with open(os.path.join(OUT, name)) as f:
            return f.read()

    def test_exits_zero(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr + "\n" + self.read("00-summary.md"))

    def test_every_file_summary_first(self):
        self.assertEqual(sorted(os.listdir(OUT)), self.FILES)
        s = self.read("00-summary.md")
        for heading in ["# dpscale GPU kit — CPU self-test", "## Steps", "## Against the goals", "## Tests", "## Single device",
                        "## dpscale report, fp32", "## The base revision against this one",
                        "### The finite check's share of a step", "### Data-parallel trainers at K = 1 against single",
                        "## The DP loop at K = 1 in one process", "## The step's parts",
                        "### The update and its finite check", "## GEMMs of a training step",
                        "## All-reduce at K = 1"]:
            self.assertIn(heading, s)
        # Every step row says ok (a row: | name | status | seconds | note |): with a base revision
        # the side-by-side step replaces the two DP training steps.
        steps = re.findall(r"(?m)^\| ([\w:]+) \| ([a-z ]+) \| [\d.]+ \|", s)
        self.assertEqual([n for n, _ in steps],
                         ["tests:test_nccl_order", "tests:test_dp_nccl_multi", "tests:test_single_gpu", "tests:test_models",
                          "bench:dp_loop", "gemm", "ab", "tests:test_dp_nccl", "bench:step", "train:fp32:single",
                          "train:tf32:single",
                          "bench:kernels", "tests:test_dp_exactness", "allreduce"])
        self.assertEqual([st for _, st in steps if st != "ok"], [])

    def test_training_records(self):
        for precision in ["fp32", "tf32"]:
            with self.subTest(precision=precision):
                lines = [json.loads(l) for l in self.read(f"train-{precision}.jsonl").splitlines() if l.strip()]
                # Two tiny models alone (the DP modes run in the side-by-side step).
                self.assertEqual(sorted((l["point"]["model"], l["mode"]) for l in lines),
                                 sorted([("784,32,10", "single"), ("784,64,32,10", "single")]))
                for l in lines:
                    self.assertEqual(l["status"], "ok", l)
                    self.assertEqual(l["backend"], "cpu")
                    self.assertEqual(l["world_size"], 1)
                    self.assertEqual(len(l["losses"]), 2)
                    self.assertTrue(all(finite(x) and 0 < x < 10 for x in l["losses"]), l["losses"])
                    for k in ["avg_epoch_s", "throughput_samples_per_s", "compute_s"]:
                        self.assertTrue(finite(l[k]) and l[k] > 0, (k, l[k]))
                    self.assertEqual("--tf32" in l["run"]["argv"], precision == "tf32")

    def test_side_by_side_records(self):
        # 22 points (4 groups of single, 3 DP modes, single again; 2 with the check off), each by both revisions.
        lines = [json.loads(l) for l in self.read("ab.jsonl").splitlines() if l.strip()]
        self.assertEqual(len(lines), 44)
        # Each group: single opens and closes it, around the DP modes (both revisions alike).
        for rev in ("base", "new"):
            for precision, model in [("tf32", "large"), ("tf32", "xlarge"), ("fp32", "large"), ("fp32", "xlarge")]:
                group = [l["mode"] for l in lines if (l["rev"], l["precision"], l["model"], l["finite_check_every"])
                         == (rev, precision, model, 1)]
                self.assertEqual(group, ["single", "naive", "interleaved", "bucketed", "single"], (rev, precision, model))
        self.assertEqual(sorted({l["rev"] for l in lines}), ["base", "new"])
        for l in lines:
            self.assertIn("record", l, l)
            r = l["record"]
            self.assertEqual(r["backend"], "cpu")
            self.assertEqual(r["mode"], l["mode"])
            self.assertEqual(r["tf32"], l["precision"] == "tf32")
            self.assertTrue(finite(r["avg_epoch_s"]) and r["avg_epoch_s"] > 0)
            if l["rev"] == "new":
                self.assertEqual(r["finite_check_every"], l["finite_check_every"])
                self.assertEqual(r["finite_check"], "optimizer" if l["finite_check_every"] else "off")
        # The summary's ratio: the mean of the two single runs around the DP modes over each mode's run.
        summary = self.read("00-summary.md")
        for rev in ("base", "new"):
            def epochs(mode):
                return [statistics.median(l["record"]["epoch_times_s"]) for l in lines
                        if (l["rev"], l["precision"], l["model"], l["mode"], l["finite_check_every"])
                        == (rev, "tf32", "large", mode, 1)]
            singles = epochs("single")
            self.assertEqual(len(singles), 2)
            ratios = " | ".join(f"{sum(singles) / 2 / epochs(m)[0]:.3f}" for m in ("naive", "interleaved", "bucketed"))
            self.assertIn(f"| tf32 | large | {rev} | {sum(singles) / 2:.4f} | {ratios} |", summary)
        # The goals' finite-check rows: (check every step − check off) / check every step, each the
        # median epoch, single's "every step" time the mean of its two runs; at most 1 % is met.
        for mode in ("single", "bucketed"):
            def epoch(check):
                e = [statistics.median(l["record"]["epoch_times_s"]) for l in lines
                     if (l["rev"], l["precision"], l["model"], l["mode"], l["finite_check_every"])
                     == ("new", "tf32", "large", mode, check)]
                return sum(e) / len(e)
            share = (epoch(1) - epoch(0)) / epoch(1)
            self.assertIn(f"| finite check's share of a step, large TF32, {mode} (ab.jsonl, new) | <= 1 % | "
                          f"{100 * share:.1f} % | {'met' if share <= 0.01 else 'not met'} |", summary)
        # The six NCCL exactness cases skip on the CPU: counted as such, and no verdict drawn.
        self.assertIn("| NCCL exactness at K = 2 and 4, three modes (test_dp_nccl_multi) | 6 of 6 pass | "
                      "0 passed, 0 failed, 6 skipped | not measured |", summary)
        off = [l for l in lines if l["finite_check_every"] == 0]
        self.assertEqual(sorted((l["mode"], l["rev"]) for l in off),
                         [("bucketed", "base"), ("bucketed", "new"), ("single", "base"), ("single", "new")])

    def test_bench_records(self):
        parts = [b for b in json.loads(self.read("bench_step-fp32.json"))["benchmarks"] if b.get("run_type") != "aggregate"]
        self.assertEqual(len(parts), 1)
        p = parts[0]
        self.assertTrue(p["name"].startswith("parts/cpu/small/batch:64"), p["name"])
        for k in ["step_ms", "gemm_ms", "elementwise_ms", "optimizer_ms", "loss_read_ms", "events_ms"]:
            self.assertTrue(finite(p[k]) and p[k] > 0, (k, p[k]))
        # other = step - the parts (a timing, not asserted beyond being computed from them)
        self.assertAlmostEqual(p["other_ms"], p["step_ms"] - p["gemm_ms"] - p["elementwise_ms"] - p["optimizer_ms"]
                               - p["loss_read_ms"], delta=1e-6 * p["step_ms"])
        opt = [b for b in json.loads(self.read("bench_kernels.json"))["benchmarks"]
               if b["name"].startswith("optimizer/") and b.get("run_type") != "aggregate"]
        self.assertEqual([b["name"].split("/manual_time")[0] for b in opt], ["optimizer/cpu/small/n:1462592"])
        for k in ["plain_ms", "separate_ms", "fused_ms"]:
            self.assertTrue(finite(opt[0][k]) and opt[0][k] > 0, (k, opt[0][k]))

    def test_dp_loop_record(self):
        rows = [b for b in json.loads(self.read("bench_dp_loop-fp32.json"))["benchmarks"] if b.get("run_type") != "aggregate"]
        self.assertEqual([b["name"].split("/manual_time")[0] for b in rows], ["dp_loop/cpu/small/batch:64"])
        b = rows[0]
        variants = ["single", "naive", "naive_logged", "naive_per_call", "naive_fused", "interleaved", "bucketed", "single_events"]
        for v in variants:
            self.assertTrue(finite(b[f"{v}_ms"]) and b[f"{v}_ms"] > 0, (v, b[f"{v}_ms"]))
        # Each ratio is a median of per-iteration ratios, so it need not equal the means' ratio; a
        # step of the same model at K = 1 is within a factor of two of single's on any machine.
        for v in variants[1:]:
            self.assertTrue(finite(b[f"{v}_speedup"]) and 0.5 < b[f"{v}_speedup"] < 2, (v, b[f"{v}_speedup"]))
            self.assertLessEqual(b[f"{v}_speedup_lo"], b[f"{v}_speedup"], v)
            self.assertLessEqual(b[f"{v}_speedup"], b[f"{v}_speedup_hi"], v)
        self.assertNotIn("single_speedup", b)
        self.assertEqual(self.read("bench_dp_loop-tf32.json"), "")  # the self-test runs fp32 only
        # The goals' rows read the same record: the verdict is where the interval lies against 0.99.
        summary = self.read("00-summary.md")
        for v in ("naive", "interleaved", "bucketed"):
            lo, hi = b[f"{v}_speedup_lo"], b[f"{v}_speedup_hi"]
            verdict = "met" if lo >= 0.99 else "not met" if hi < 0.99 else "undecided"
            self.assertIn(f"| {v} at K = 1 against single, small FP32 (bench_dp_loop) | >= 0.99 | "
                          f"{b[f'{v}_speedup']:.3f} ({lo:.3f}–{hi:.3f}) | {verdict} |", summary)

    def test_goal_verdict_from_an_interval(self):
        sys.path.insert(0, os.path.join(KIT, "kit"))
        import summary
        self.assertEqual(summary.interval_verdict(0.99, 1.01, 0.99), "met")
        self.assertEqual(summary.interval_verdict(0.98, 0.9899, 0.99), "not met")
        self.assertEqual(summary.interval_verdict(0.985, 0.99, 0.99), "undecided")
        self.assertEqual(summary.interval_verdict(None, 1.0, 0.99), "not measured")

    def test_gemm_record(self):
        data = json.loads(self.read("bench_gemm.json"))
        rows = [b for b in data["benchmarks"] if b.get("run_type") != "aggregate"]
        # The small preset's shapes (forward, dW, dX per layer, less dX of the first) and the ceiling.
        self.assertGreaterEqual(len(rows), 8)
        for b in rows:
            self.assertTrue(b["name"].startswith("gemm/cpu-openblas/"), b["name"])
            self.assertTrue(finite(b["GFLOPS"]) and b["GFLOPS"] > 0, b)

    def test_allreduce_record(self):
        # The nccl-tests table's data rows (the file also holds Google Benchmark's own listing).
        rows = [l.split() for l in self.read("bench_allreduce.txt").splitlines() if re.match(r"\s*\d+\s+\d+\s+float ", l)]
        sizes = [int(r[0]) for r in rows]
        self.assertEqual(sizes[0], 8)
        self.assertEqual(sizes[-1], 16 << 20)
        self.assertEqual(len(sizes), 22)  # 8 B .. 16 MiB, doubling
        for r in rows:
            self.assertTrue(all(math.isfinite(float(x)) for x in r[4:7]), r)

    def test_tests_ran_and_the_gpu_ones_skipped_saying_why(self):
        log = self.read("tests.log")
        for exe in ["test_models", "test_dp_nccl", "test_dp_nccl_multi", "test_single_gpu", "test_dp_exactness"]:
            self.assertIn(f"===== {exe} ", log)
        s = self.read("00-summary.md")
        self.assertRegex(s, r"\| test_dp_nccl \| 0 \| 0 \| [1-9]\d* \|")
        self.assertRegex(s, r"skipped, (needs 1 GPU|built without)[^|]*DpNcclK1\.BitIdenticalToOneGpu")
        self.assertRegex(s, r"\| test_dp_nccl_multi \| 0 \| 0 \| [1-9]\d* \| skipped, (needs 1 GPU|built without)")
        # The CPU half of the finite-check tests passes; the CUDA comparison skips.
        self.assertRegex(s, r"\| test_single_gpu \| [1-9]\d* \| 0 \| [1-9]\d* \|[^\n]*SingleFiniteStep\.CudaPrintsTheCpusLine")
        self.assertRegex(s, r"\| test_dp_exactness \| [1-9]\d* \| 0 \| 0 \|")
        self.assertRegex(s, r"\| test_models \| [1-9]\d* \| 0 \|")

    def test_system_record(self):
        s = self.read("system.txt")
        for key in ["date", "host", "glibc", "cpu", "gpus"]:
            self.assertRegex(s, rf"(?m)^{key}: \S")
        self.assertIn("## kit", s)

    def test_refuses_an_outdir_that_is_not_empty(self):
        r = run([os.path.join(KIT, "run.sh"), OUT, "--self-test"], timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
