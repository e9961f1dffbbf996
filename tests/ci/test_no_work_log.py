#!/usr/bin/env python3
"""test_no_work_log.py — keeps a work log out of the product: no ticket labels ("issue" followed
by a number, in text or in a tracked file's path), no absolute paths of a developer's machine
(under /work, /home or /root), no dates (a day written YYYY-MM-DD, or as one number YYYYMMDD, a
seed say) and no diary phrases (who else was building on the machine, which day a run was, what
comes next) in the tracked source, scripts, configs, CMake files and Markdown docs. Comments and
docs say why a thing is as it is; when it came, who else was working, and what comes next are
git's and the issue tracker's to say. A timestamp (2025-01-31T10:00:00Z) is a value, not a date.

Data (results files: results/, an experiment's data/ folder, CI's baseline in .ci/baseline/,
*.jsonl, *.json other than configs — configs/ and an experiment's own *.json beside its script;
measurement logs and raw outputs: *.txt, *.log, docs/reproduction/raw/, the GPU kit's outputs under
docs/gpu/<run>/; fuzz corpora, images and archives) is left alone but for one thing: a committed
results file (*.jsonl, *.json under results/, docs/, experiments/*/data/ and .ci/baseline/) names
each program it ran, never the program's path on the machine that ran it. Every offence is printed as FILE:LINE: TEXT.

Run by CTest (label ci), or by hand from the source tree:
    python3 tests/ci/test_no_work_log.py            # the tree's check and its negative control
    python3 tests/ci/test_no_work_log.py --list     # only print the offences, exit 1 if any
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("DPSCALE_SOURCE_DIR") or os.path.normpath(os.path.join(HERE, "..", ".."))

# "issue" or "issues", any case, then a number (a "#" between them too), in a path too
# (a results folder named after a ticket).
ISSUE_LABEL = re.compile(r"(?<![\w])issues?[\s_-]*#?[0-9]+", re.IGNORECASE)
# An absolute path that starts at /work, /home or /root — not one that merely contains such a
# folder further down ("build-fuzz/fuzz/work/", "$W/root/bin").
DEVELOPER_PATH = re.compile(r"(?<![\w.$}/~-])/(?:work|home|root)/")
# A day: YYYY-MM-DD (not a timestamp's date, which a T follows), or YYYYMMDD as one number.
DATE = re.compile(r"(?<![\w-])20[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])(?![\wT:])"
                  r"|(?<![\w.])20[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])(?![\w.])")
# Prose of a diary: who else used the machine, which day, what comes next.
DIARY = re.compile(r"\b(?:other engin" r"eers?|another engin" r"eer|of the d" r"ay|(?:which|that) is the next st" r"ep|"
                   r"next sess" r"ion|this sess" r"ion)\b", re.IGNORECASE)

TEXT_SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".py", ".sh", ".md", ".cmake", ".yml", ".yaml", ".toml",
                 ".supp", ".cfg", ".ini")
TEXT_NAMES = ("CMakeLists.txt", "Makefile", ".gitignore")
# Folders whose files are executable scripts without a suffix.
SCRIPT_DIRS = ("scripts/", ".ci/")
DATA_PREFIXES = ("results/", "fuzz/corpus/", "docs/reproduction/raw/")
DATA_PATTERNS = (re.compile(r"^docs/gpu/[^/]+/"),  # a GPU kit run's outputs, as it wrote them
                 re.compile(r"^experiments/[^/]+/data/"),  # an experiment's measurements
                 re.compile(r"^\.ci/baseline/"))  # CI's baseline sweep


# In committed results: a program named by an absolute path of the machine that ran it. The sweep
# records a run's program by its name (harness/sweep/sweep.cpp), bench_allreduce's JSON is
# written from its bin dir (scripts/reproduce.sh).
DATA_SUFFIXES = (".jsonl", ".json")
PROGRAM_PATH = re.compile(r'"/(?:[^"/]+/)+(?:train|bench|test)_[A-Za-z0-9_]+"')


def is_data_checked(path):
    """Whether `path` is a committed results file whose programs must be named, not located."""
    return (path.startswith(DATA_PREFIXES + ("docs/",)) or any(p.match(path) for p in DATA_PATTERNS)) \
        and path.endswith(DATA_SUFFIXES) and not path.startswith("fuzz/corpus/")


def is_checked(path):
    """Whether `path` (relative, with /) is source, script, config, CMake or docs, not data."""
    if path.startswith(DATA_PREFIXES) or any(p.match(path) for p in DATA_PATTERNS):
        return False
    name = os.path.basename(path)
    if name in TEXT_NAMES or path.endswith(TEXT_SUFFIXES):
        return True
    if re.match(r"^(?:configs|experiments/[^/]+)/[^/]+\.json$", path):
        return True  # a config: a user's, or an experiment's beside its script
    return path.startswith(SCRIPT_DIRS) and "." not in name


def tracked_files(root):
    """The files git tracks under `root`; every file when `root` is no git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")]
        files += [os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/") for n in names]
    return files


def offences(root, files=None):
    """['FILE:LINE: TEXT', ...] for every ticket label, developer path, date and diary phrase in
    the checked files, and 'PATH: a path named after a ticket' for every tracked file so named."""
    found = []
    for rel in sorted(files if files is not None else tracked_files(root)):
        if ISSUE_LABEL.search(rel):
            found.append(f"{rel}: a path named after a ticket")
        if is_data_checked(rel):
            try:
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = PROGRAM_PATH.search(line)
                        if m:
                            found.append(f"{rel}:{n}: a program at this machine's path {m.group(0)}")
            except OSError:
                pass
        if not is_checked(rel):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue  # listed by git but not in this checkout
        for n, line in enumerate(lines, 1):
            if any(p.search(line) for p in (ISSUE_LABEL, DEVELOPER_PATH, DATE, DIARY)):
                found.append(f"{rel}:{n}: {line.strip()[:160]}")
    return found


class NegativeControl(unittest.TestCase):
    """The check finds what it must, and leaves alone what it must, on a tree made here."""

    def test_finds_labels_and_paths_and_skips_data(self):
        with tempfile.TemporaryDirectory() as d:
            planted = {
                "a/x.cpp": "int x;  // fine\n// added for issue " + "12: why\n",
                "b/y.py": "# see Issue #" + "9\n",
                "c/CMakeLists.txt": "# built from /" + "work/me/tree\n",
                "scripts/run": "cd /" + "home/me\n",
                "docs/page.md": "## A heading (issue " + "11)\n",
                "configs/c.json": '{"description": "issue ' + '9"}\n',
                # data, and paths that only contain such a folder: not offences
                "results/r.jsonl": '{"argv": ["/' + 'work/x"]} issue ' + "1\n",
                "docs/gpu/h200/log.md": "issue " + "3 /" + "root/x\n",
                "d/z.sh": 'w="$BUILD/fuzz/' + 'work/t"; "$W/' + 'root/bin/mpirun"\n',
                "d/n.txt": "issue " + "4\n",
                "d/ok.h": "// the issue is the order, not the count\n",
                "e/ok.md": "stamped 2025-01-" + "31T10:00:00Z; the next step's micro-batches; 1.25e6\n",
                "e/run.md": "builds of three other engin" + "eers; calibrate from a run of the " + "day\n",
                "e/x.py": "SEED = 2026" + "1125\n# found (2026-11" + "-24)\n",
                "results/issue" + "11/r.jsonl": "{}\n",
                "e/y.md": "the sweep in `results/issue" + "11/a.jsonl`\n",
                "results/p.jsonl": '{"run": {"argv": ["mpirun", "-np", "2", "/' + 'tmp/b/bin/train_dp_naive"]}}\n',
                "results/q.jsonl": '{"run": {"argv": ["mpirun", "-np", "2", "train_dp_naive"]}}\n',
                # an experiment's data is data, its config is not, and its data names programs
                "experiments/ab/data/r.jsonl": '{"note": "issue ' + '5"}\n',
                "experiments/ab/data/p.jsonl": '{"run": {"argv": ["/' + 'tmp/b/bin/train_single_gpu"]}}\n',
                "experiments/ab/config.json": '{"description": "issue ' + '6"}\n',
            }
            for rel, text in planted.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            got = offences(d, list(planted))
            self.assertEqual([g.split(": ")[0] for g in got],
                             ["a/x.cpp:2", "b/y.py:1", "c/CMakeLists.txt:1", "configs/c.json:1",
                              "docs/page.md:1", "e/run.md:1", "e/x.py:1", "e/x.py:2", "e/y.md:1",
                              "experiments/ab/config.json:1", "experiments/ab/data/p.jsonl:1",
                              "results/issue" + "11/r.jsonl", "results/p.jsonl:1", "scripts/run:1"])


class Tree(unittest.TestCase):
    def test_no_ticket_labels_or_developer_paths(self):
        found = offences(ROOT)
        for line in found:
            print(line)
        if found:
            print(f"{len(found)} line(s) name a ticket or a developer's path", file=sys.stderr)
        self.assertEqual(found, [], f"{len(found)} line(s): say why, not when; no machine's paths")


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        lines = offences(ROOT)
        print("\n".join(lines))
        print(f"{len(lines)} offence(s)", file=sys.stderr)
        sys.exit(1 if lines else 0)
    unittest.main(verbosity=2)
