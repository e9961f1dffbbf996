"""store.py — the history store: one SQLite file (Python's sqlite3), one row per run.

Tables: `revisions` (what was measured: a commit id and its commit time, or a label and the time
given for it), `machines` (the lines' `system` fingerprint: CPU model, CPU count, GPU model),
`points` (the point key the C++ side made, its description and curve) and `runs` (one row per
run: its metrics, the machine's state around it, whether it was disturbed, the file it came
from), `pairs` (an A/B session's rounds, B's run over A's) and `marks` (where each series is
judged from). A run's `run_key` is unique, so adding a run twice keeps one row.

Reading back, every stored run is checked as `import` checks a row (rows.py): a run that is not
one (a file written by an older dpscale, or by hand) is named in a warning and left out, with
the pairs it is half of, so one bad row never stops `show`, `changes` or `html`.

The file is recognised by its SQLite application id; its schema version is SQLite's
user_version, and MIGRATIONS takes an older file forward in one transaction. A file that is not
an SQLite database, another program's database, a damaged one or one of a newer schema is
refused before anything is written to it (StoreError: one line). WAL journal and a busy timeout
let several CI jobs add at once; each add is one transaction, so a killed add leaves all of its
rows or none.
"""
import json
import os
import sqlite3
import time
import urllib.parse

from . import rows as rowmod

APPLICATION_ID = 0x64707368  # "dpsh"
BUSY_TIMEOUT_S = 60.0
_HEADER = b"SQLite format 3\x00"

# MIGRATIONS[v] takes a file from schema v to v + 1; the schema version is len(MIGRATIONS).
MIGRATIONS = [
    [
        """CREATE TABLE revisions (
             id INTEGER PRIMARY KEY,
             key TEXT NOT NULL UNIQUE,      -- the commit id; the name where git knew none
             name TEXT NOT NULL,            -- as first given to --rev
             commit_id TEXT,
             commit_time TEXT NOT NULL)""",
        """CREATE TABLE machines (
             id INTEGER PRIMARY KEY,
             fingerprint TEXT NOT NULL UNIQUE,
             cpu_model TEXT, cpu_count INTEGER, gpu_model TEXT)""",
        """CREATE TABLE points (
             id INTEGER PRIMARY KEY,
             point_key TEXT NOT NULL UNIQUE,
             point TEXT NOT NULL,           -- the point as JSON
             describe TEXT NOT NULL,
             curve TEXT NOT NULL,
             model TEXT NOT NULL, mode TEXT NOT NULL, world_size INTEGER NOT NULL)""",
        """CREATE TABLE runs (
             id INTEGER PRIMARY KEY,
             run_key TEXT NOT NULL UNIQUE,
             point_id INTEGER NOT NULL REFERENCES points(id),
             machine_id INTEGER NOT NULL REFERENCES machines(id),
             revision_id INTEGER NOT NULL REFERENCES revisions(id),
             run_id TEXT, repeat INTEGER NOT NULL, attempt INTEGER NOT NULL,
             config TEXT, started TEXT, build TEXT, source TEXT NOT NULL,
             epoch_s REAL NOT NULL, throughput REAL NOT NULL, speedup REAL, efficiency REAL,
             comm_share REAL, overlap_pct REAL,
             disturbed TEXT,
             has_state INTEGER NOT NULL,
             load1_before REAL, load1_after REAL, steal_pct REAL, iowait_pct REAL, others_cpus REAL,
             cpu_mhz REAL, nice INTEGER, probe_before_gflops REAL, probe_after_gflops REAL,
             sweep_verdict TEXT,
             added TEXT NOT NULL)""",
        "CREATE INDEX runs_series ON runs (machine_id, point_id)",
    ],
    # The ranks' contention, where records carry it: the largest rank's run delay over the
    # timed epochs, as a share of their time.
    ["ALTER TABLE runs ADD COLUMN run_delay_share REAL"],
    # An A/B session's pairs: B's throughput over A's of the same round, and (a data-parallel
    # point) B's speedup over A's, each build's DP run over its own single run of the round. The
    # drift between sessions hours apart cancels in the ratio (docs/history.md, "Anchored series").
    [
        """CREATE TABLE pairs (
             id INTEGER PRIMARY KEY,
             pair_key TEXT NOT NULL UNIQUE,  -- A's run_key then B's
             point_id INTEGER NOT NULL REFERENCES points(id),
             machine_id INTEGER NOT NULL REFERENCES machines(id),
             anchor_id INTEGER NOT NULL REFERENCES revisions(id),    -- A's revision
             revision_id INTEGER NOT NULL REFERENCES revisions(id),  -- B's revision
             session TEXT NOT NULL,          -- b.jsonl's path as given
             repeat INTEGER NOT NULL,
             throughput_ratio REAL NOT NULL, speedup_ratio REAL,
             disturbed TEXT,                 -- why either half was disturbed, or null
             added TEXT NOT NULL)""",
        "CREATE INDEX pairs_series ON pairs (machine_id, point_id, anchor_id)",
    ],
    # What has been judged: a series (one point on one machine, plain or against one anchor)
    # and metric is judged from the newest of its marks on, so a change that `changes --record`
    # reported, or that `accept` accepted, stands as history (docs/history.md, "What CI judges").
    [
        """CREATE TABLE marks (
             id INTEGER PRIMARY KEY,
             machine TEXT NOT NULL,          -- machines.fingerprint
             point_key TEXT NOT NULL,
             anchor_key TEXT NOT NULL,       -- the anchor revision's key; '' for a plain series
             metric TEXT NOT NULL,
             revision_id INTEGER NOT NULL REFERENCES revisions(id),  -- the first revision judged
             kind TEXT NOT NULL,             -- 'reported' (changes --record) or 'accepted' (accept)
             effect_pct REAL,                -- the reported change's effect; null for an accept
             added TEXT NOT NULL,
             UNIQUE (machine, point_key, anchor_key, metric, revision_id, kind))""",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

_STATE = ("load1_before", "load1_after", "steal_pct", "iowait_pct", "others_cpus", "cpu_mhz", "nice",
          "probe_before_gflops", "probe_after_gflops")
_METRICS = ("epoch_s", "throughput", "speedup", "efficiency", "comm_share", "overlap_pct", "run_delay_share")


class StoreError(Exception):
    """The store cannot be used as asked; one line naming the file and why."""


def _quick_check(db, path):
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: a damaged database ({e})") from None
    if rows != [("ok",)]:
        raise StoreError(f"{path}: a damaged database (integrity check: {rows[0][0]})")


def _identify(db, path, check):
    """Refuses what is not a history of a schema this code reads."""
    try:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.OperationalError as e:
        if "locked" in str(e):
            raise StoreError(f"{path}: locked by another process for over {BUSY_TIMEOUT_S:g} s") from None
        raise StoreError(f"{path}: not a dpscale history ({e})") from None
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: not a dpscale history ({e})") from None
    if app != APPLICATION_ID and not (app == 0 and tables == 0):
        raise StoreError(f"{path}: not a dpscale history (an SQLite database of another program)")
    if check:
        _quick_check(db, path)
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path}: history schema {version} is newer than this dpscale reads ({SCHEMA_VERSION}): "
                         "use a newer dpscale")
    return version


def _migrate(db, path):
    """Takes the file to SCHEMA_VERSION in one transaction (a second process waits, then finds
    it done)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for step in MIGRATIONS[version:]:
            for statement in step:
                db.execute(statement)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def open_store(path, create=False):
    """The store at `path`, at the current schema. `create`: a missing (or empty) file becomes a
    new store; otherwise a missing file is refused."""
    if os.path.isdir(path):
        raise StoreError(f"{path}: is a directory, not a history file")
    exists = os.path.exists(path)
    if not exists and not create:
        raise StoreError(f"{path}: no history there (dpscale history add makes one)")
    size = os.path.getsize(path) if exists else 0
    if size > 0:
        try:
            with open(path, "rb") as f:
                header = f.read(len(_HEADER))
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        if header != _HEADER:
            raise StoreError(f"{path}: not a dpscale history (not an SQLite database)")
    elif not create:
        raise StoreError(f"{path}: an empty file, no history (dpscale history add makes one)")
    if not exists:
        # `add` makes the store's directories (results/ on a fresh checkout), as a sweep's --out.
        parent = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{path}: cannot make its directory ({e.strerror})") from None
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + ("?mode=rwc" if create else "?mode=rw")
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as e:
        raise StoreError(f"{path}: cannot open ({e})") from None
    try:
        version = _identify(db, path, check=size > 0)
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode = WAL")
        if version < SCHEMA_VERSION:
            _migrate(db, path)
    except sqlite3.DatabaseError as e:
        db.close()
        raise StoreError(f"{path}: {e}") from None
    except BaseException:
        db.close()
        raise
    db.row_factory = sqlite3.Row
    return Store(db, path)


def _pause_for_test(where, written):
    """Test hook (tests/history/test_history_reliability.py): with DPSCALE_TEST_HISTORY_PAUSE=FILE
    an add stops inside its transaction — halfway through its runs, or with
    DPSCALE_TEST_HISTORY_PAUSE_AT=pairs before its first pair — writes "PID WRITTEN" to FILE and
    waits to be killed."""
    marker = os.environ.get("DPSCALE_TEST_HISTORY_PAUSE")
    if not marker or os.environ.get("DPSCALE_TEST_HISTORY_PAUSE_AT", "runs") != where:
        return
    with open(marker, "w") as f:
        f.write(f"{os.getpid()} {written}")
    time.sleep(120)


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Store:
    def __init__(self, db, path):
        self.db = db
        self.path = path

    def close(self):
        self.db.close()

    def _id(self, table, key_col, key, values):
        """The id of the row of `table` whose `key_col` is `key`, inserting `values` if none."""
        cur = self.db.execute(f"SELECT id FROM {table} WHERE {key_col} = ?", (key,))
        found = cur.fetchone()
        if found:
            return found[0]
        cols = ", ".join(values)
        marks = ", ".join("?" * len(values))
        return self.db.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(values.values())).lastrowid

    def _revision_id(self, rev):
        key = rev["commit_id"] or rev["name"]
        row = self.db.execute("SELECT id, commit_time FROM revisions WHERE key = ?", (key,)).fetchone()
        if row:
            if row[1] != rev["commit_time"]:
                raise StoreError(f"{self.path}: revision {rev['name']} is held with time {row[1]}, not "
                                 f"{rev['commit_time']} (--rev-time)")
            return row[0]
        return self.db.execute("INSERT INTO revisions (key, name, commit_id, commit_time) VALUES (?, ?, ?, ?)",
                               (key, rev["name"], rev["commit_id"], rev["commit_time"])).lastrowid

    def add(self, rows, b_rows=None):
        """Adds checked rows in one transaction. Returns (added, already held). `b_rows`: the rows
        of an A/B session's B build, `rows` then being A's: both are added as runs, and the
        session's pairs (pair_session) beside them. Returns (runs added, runs held, pairs added)
        then."""
        added = 0
        stamp = _now()
        pairs = pair_session(rows, b_rows) if b_rows is not None else None
        everything = list(rows) + list(b_rows or [])
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for i, row in enumerate(everything):
                if i == len(everything) // 2:
                    _pause_for_test("runs", added)
                if self.db.execute("SELECT 1 FROM runs WHERE run_key = ?", (row["run_key"],)).fetchone():
                    continue
                p = row["point"]
                point_id = self._id("points", "point_key", row["point_key"], {
                    "point_key": row["point_key"], "point": json.dumps(p, sort_keys=True), "describe": row["describe"],
                    "curve": row["curve"], "model": p["model"], "mode": p["mode"], "world_size": p["world_size"]})
                m = row["machine"]
                machine_id = self._id("machines", "fingerprint", m["fingerprint"], {
                    "fingerprint": m["fingerprint"], "cpu_model": m.get("cpu_model"), "cpu_count": m.get("cpu_count"),
                    "gpu_model": m.get("gpu_model")})
                revision_id = self._revision_id(row["revision"])
                run, met, state = row["run"], row["metrics"], row["state"] or {}
                values = {
                    "run_key": row["run_key"], "point_id": point_id, "machine_id": machine_id,
                    "revision_id": revision_id, "run_id": run.get("run_id"), "repeat": run["repeat"],
                    "attempt": run["attempt"], "config": run.get("config"),
                    "started": run.get("started"), "build": run.get("build"), "source": row["source"],
                    "disturbed": row["disturbed"], "has_state": int(row["state"] is not None),
                    "sweep_verdict": state.get("disturbed"), "added": stamp}
                values.update((k, met.get(k)) for k in _METRICS)
                values.update((k, state.get(k)) for k in _STATE)
                cols = ", ".join(values)
                self.db.execute(f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(values))})",
                                tuple(values.values()))
                added += 1
            n_pairs = self._add_pairs(pairs, stamp) if pairs is not None else None
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        if pairs is None:
            return added, len(rows) - added
        return added, len(everything) - added, n_pairs

    def _add_pairs(self, pairs, stamp):
        """Stores the pairs not held yet (their runs are stored already); returns how many."""
        _pause_for_test("pairs", self.db.execute("SELECT count(*) FROM runs").fetchone()[0])
        added = 0
        for p in pairs:
            if self.db.execute("SELECT 1 FROM pairs WHERE pair_key = ?", (p["pair_key"],)).fetchone():
                continue
            ids = {}
            for side in ("a", "b"):
                ids[side] = self.db.execute(
                    "SELECT point_id, machine_id, revision_id FROM runs WHERE run_key = ?", (p[side + "_run_key"],)).fetchone()
            self.db.execute(
                "INSERT INTO pairs (pair_key, point_id, machine_id, anchor_id, revision_id, session, repeat, "
                "throughput_ratio, speedup_ratio, disturbed, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (p["pair_key"], ids["b"][0], ids["b"][1], ids["a"][2], ids["b"][2], p["session"], p["repeat"],
                 p["throughput_ratio"], p["speedup_ratio"], p["disturbed"], stamp))
            added += 1
        return added

    _PAIRS = """SELECT q.*, p.point_key, p.point, p.describe, p.curve, p.model, p.mode, p.world_size,
                       m.fingerprint, m.cpu_model, m.cpu_count, m.gpu_model,
                       v.key AS rev_key, v.name AS rev_name, v.commit_id, v.commit_time,
                       w.key AS anchor_key, w.name AS anchor_name, w.commit_id AS anchor_commit_id
                FROM pairs q JOIN points p ON p.id = q.point_id JOIN machines m ON m.id = q.machine_id
                JOIN revisions v ON v.id = q.revision_id JOIN revisions w ON w.id = q.anchor_id"""

    def pairs(self):
        """Every stored pair, joined with its point, machine, B revision and anchor, in B's commit
        order, then as added."""
        return self.db.execute(self._PAIRS + " ORDER BY v.commit_time, v.id, q.id").fetchall()

    _SELECT = """SELECT r.*, p.point_key, p.point, p.describe, p.curve, p.model, p.mode, p.world_size,
                        m.fingerprint, m.cpu_model, m.cpu_count, m.gpu_model,
                        v.key AS rev_key, v.name AS rev_name, v.commit_id, v.commit_time, v.id AS rev_order
                 FROM runs r JOIN points p ON p.id = r.point_id JOIN machines m ON m.id = r.machine_id
                 JOIN revisions v ON v.id = r.revision_id"""

    def runs(self):
        """Every run, joined with its point, machine and revision, in commit order (commit time,
        then the order revisions were first added), then as added."""
        return self.db.execute(self._SELECT + " ORDER BY v.commit_time, v.id, r.id").fetchall()

    def export_rows(self, warn=None):
        """Every sound run as a row of the contract (rows.py), in the order runs() gives."""
        for r in self.checked_runs(warn)[0]:
            yield row_of(r)

    def checked_runs(self, warn=None):
        """runs(), less those that are not rows of the contract (rows.py's checks: a number out
        of its range, a field missing), and the run keys left out; each is named through
        `warn` (one line)."""
        good, bad = [], set()
        for r in self.runs():
            where = f"{self.path}: run {r['run_key']} ({r['describe']} at {r['rev_name']})"
            try:
                try:
                    row = row_of(r)
                except ValueError:
                    raise rowmod.RowError(f"{where}: its point is not JSON") from None
                rowmod.check_row(row, where)
            except rowmod.RowError as e:
                bad.add(r["run_key"])
                if warn:
                    warn(f"{e}; left out")
                continue
            good.append(r)
        return good, bad

    def checked_pairs(self, bad_runs, warn=None):
        """pairs(), less those with a ratio that is no positive number and those half of a run
        in `bad_runs` (checked_runs left it out); each left out is named through `warn`."""
        good = []
        for q in self.pairs():
            where = f"{self.path}: A/B pair {q['pair_key']} ({q['describe']} at {q['rev_name']} vs {q['anchor_name']})"
            why = None
            if q["pair_key"][:16] in bad_runs or q["pair_key"][16:] in bad_runs:
                why = "one of its runs is left out"
            for col in ("throughput_ratio", "speedup_ratio"):
                v = q[col]
                if why is None and v is not None and not (isinstance(v, (int, float)) and 0 < v < float("inf")):
                    why = f"{col} must be a positive number (got {v!r})"
            if why:
                if warn:
                    warn(f"{where}: {why}; left out")
                continue
            good.append(q)
        return good

    def revision_by_label(self, text):
        """The stored revision that `text` names — its name, its commit id or a prefix of it of
        at least 7 digits (the tables show 8) — as (id, key, name, commit_time); StoreError when
        none or several do."""
        found = self.db.execute(
            "SELECT id, key, name, commit_time FROM revisions WHERE name = ? OR key = ? OR "
            "(length(?) >= 7 AND substr(commit_id, 1, length(?)) = ?) ORDER BY commit_time, id",
            (text, text, text, text, text)).fetchall()
        if not found:
            raise StoreError(f"{self.path}: no revision {text} in the history")
        if len(found) > 1:
            raise StoreError(f"{self.path}: {text} names {len(found)} revisions "
                             f"({', '.join(r[2] for r in found[:4])}): give more of the commit id")
        return tuple(found[0])

    def add_marks(self, marks, kind):
        """Stores marks (series, metric, revision id, effect) of one kind in one transaction;
        returns how many were new. A series is judged from its newest mark on (judge.py)."""
        stamp = _now()
        added = 0
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for m in marks:
                cur = self.db.execute(
                    "INSERT OR IGNORE INTO marks (machine, point_key, anchor_key, metric, revision_id, kind, effect_pct, "
                    "added) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (m["machine"], m["point_key"], m["anchor_key"], m["metric"], m["revision_id"], kind,
                     m.get("effect_pct"), stamp))
                added += cur.rowcount
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return added

    def marks(self):
        """Every mark with its revision's key, name and commit time."""
        return self.db.execute(
            "SELECT k.*, v.key AS rev_key, v.name AS rev_name, v.commit_time FROM marks k "
            "JOIN revisions v ON v.id = k.revision_id ORDER BY v.commit_time, v.id, k.id").fetchall()

    def revision_ids(self):
        """revision key -> id, for marking what a series was judged from."""
        return {k: i for i, k in self.db.execute("SELECT id, key FROM revisions")}


def row_of(r):
    """A stored run (runs()) as a row of the contract (rows.py)."""
    state = None
    if r["has_state"]:
        state = {k: r[k] for k in _STATE}
        state["disturbed"] = r["sweep_verdict"]
    return {
        "schema": "dpscale.history.row/1", "run_key": r["run_key"], "point_key": r["point_key"],
        "point": json.loads(r["point"]), "describe": r["describe"], "curve": r["curve"],
        "machine": {"fingerprint": r["fingerprint"], "cpu_model": r["cpu_model"], "cpu_count": r["cpu_count"],
                    "gpu_model": r["gpu_model"]},
        "revision": {"name": r["rev_name"], "commit_id": r["commit_id"], "commit_time": r["commit_time"]},
        "run": {"run_id": r["run_id"], "repeat": r["repeat"], "attempt": r["attempt"], "config": r["config"],
                "started": r["started"], "build": r["build"]},
        "source": r["source"],
        "metrics": {k: r[k] for k in _METRICS},
        "disturbed": r["disturbed"], "state": state,
    }


def _latest_by_round(rows):
    """(machine, point_key, repeat) -> the row of that round (its last attempt)."""
    out = {}
    for r in rows:
        k = (r["machine"]["fingerprint"], r["point_key"], r["run"]["repeat"])
        if k not in out or r["run"]["attempt"] >= out[k]["run"]["attempt"]:
            out[k] = r
    return out


def pair_session(a_rows, b_rows):
    """An A/B session's pairs, as `dpscale ab` pairs its rounds (harness/ab/ab_judge.cpp): each B
    run with A's run of the same point, machine and round. throughput_ratio is B's throughput
    over A's; speedup_ratio B's speedup over A's where both builds paired their DP run with their
    own single run of the round (the rows' speedup), else None. `disturbed` names the half (or
    halves) the rows mark disturbed. A round that one build lacks pairs with nothing."""
    a_by = _latest_by_round(a_rows)
    out = []
    for k, b in sorted(_latest_by_round(b_rows).items()):
        a = a_by.get(k)
        if a is None:
            continue
        ta, tb = a["metrics"]["throughput"], b["metrics"]["throughput"]
        if not (ta > 0 and tb > 0):
            continue
        sa, sb = a["metrics"].get("speedup"), b["metrics"].get("speedup")
        why = "; ".join(f"{side} {r['disturbed']}" for side, r in (("A", a), ("B", b)) if r["disturbed"])
        out.append({"pair_key": a["run_key"] + b["run_key"], "a_run_key": a["run_key"], "b_run_key": b["run_key"],
                    "session": b["source"], "repeat": k[2], "throughput_ratio": tb / ta,
                    "speedup_ratio": sb / sa if sa and sb and sa > 0 and sb > 0 else None,
                    "disturbed": why or None})
    return out
