#!/usr/bin/python3
"""test_history_page_text.py — what the history stores is drawn on the page as the text it is.

A history whose revision label, anchor revision, machine, series description and curve (and the
store's file name) hold what breaks a page — HTML (`<x-evil>`, a quote closing an attribute,
`&amp;`) and matplotlib's mathtext (`$`, `\\`, `_`, `^`, `{`: `$\\nosuchsymbol$` is a traceback) —
is drawn by `dpscale history html`, and the page is parsed: no element or attribute comes from
the stored text, and each text is found whole, as stored, in every place the page draws it (the
change table's cells and link, the figure's data attributes, the curve's heading, the
revision's heading and anchor, the chart's title, axis label, tick and change label). A place
drawn without html.escape makes an element or an attribute of it; one drawn as mathtext splits
it into glyphs or crashes; one escaped twice shows `&amp;amp;`. Each fails a check below.
"""
import hashlib
import shutil
import subprocess
import sys
import tempfile
import unittest
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True
import synth  # noqa: E402
from synth import dpscale  # noqa: E402

HISTORY_PY = synth.SRC / "harness" / "history" / "history.py"
EVIL = '--><x-evil>&amp;"x-evil="1'
# A revision name is one word (no space, not an option), as `--rev` takes it.
REV = r"r$\nosuchsymbol$_^{" + EVIL
ANCHOR = r"a$\frac{1}{2}$_^{" + EVIL
MACHINE = r"CPU $x^2_{i}$ \alpha " + EVIL + " x2 CPUs, no GPU"
DESCRIBE = r"small naive K=2 $\sqrt{b}$ _^{ " + EVIL
CURVE = r"small naive $\sqrt{b}$ _^{ " + EVIL
CHANGE_AT = 6


class Page(HTMLParser):
    """Every element (tag, attributes) and every piece of text with the elements open around it."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.texts, self.open = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), [t for t, _ in self.open]))
        if tag not in ("meta", "br", "img", "use", "path", "rect", "circle", "line", "polyline", "stop"):
            self.open.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), [t for t, _ in self.open]))

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                del self.open[i:]
                break

    def handle_data(self, data):
        if data.strip():
            self.texts.append((data.strip(), list(self.open)))

    def text_in(self, tag):
        """The texts directly inside elements `tag`."""
        return [t for t, opened in self.texts if opened and opened[-1][0] == tag]

    def attr(self, tag, name):
        return [a[name] for t, a, _ in self.elements if t == tag and name in a]

    def svg_texts(self):
        return [t for t, opened in self.texts if any(o[0] == "svg" for o in opened)]


class HostileText(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp())
        rows = []
        for i in range(12):
            rev = synth.revision(i, name=REV if i == CHANGE_AT else None)
            for j in range(3):
                r = synth.row("naive", rev, (1.5 if i < CHANGE_AT else 1.35) * (1 + 0.002 * ((i + j) % 3)), run=j,
                              machine=MACHINE)
                r["describe"], r["curve"] = DESCRIBE, CURVE
                rows.append(r)
        synth.write_rows(cls.dir / "rows.jsonl", rows)
        cls.db = cls.dir / 'h<x-evil>&amp;"x-evil="1.sqlite'
        r = dpscale("history", "import", cls.dir / "rows.jsonl", "--db", cls.db)
        assert r.returncode == 0, r.stderr
        # An A/B session against an anchor of a hostile name, B at the history's last revision:
        # its runs join the plain series too (the anchor its first revision, at the level before
        # the change).
        anchor = {"name": ANCHOR, "commit_id": None, "commit_time": "2025-12-31T00:00:00Z"}
        halves = {}
        for side, rev, speedup in (("a", anchor, 1.503), ("b", synth.revision(11), 1.35)):
            halves[side] = []
            for j in range(3):
                r = synth.row("naive", rev, speedup, run=j, machine=MACHINE)
                r["describe"], r["curve"] = DESCRIBE, CURVE
                r["run_key"] = hashlib.sha256(f"ab|{side}|{j}".encode()).hexdigest()[:16]
                halves[side].append(r)
            synth.write_rows(cls.dir / f"{side}.jsonl", halves[side])
        r = subprocess.run(["/usr/bin/python3", str(HISTORY_PY), "add", "--db", str(cls.db), "--rows",
                            str(cls.dir / "a.jsonl"), "--b-rows", str(cls.dir / "b.jsonl")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        cls.html = dpscale("history", "html", cls.dir / "out", "--db", cls.db)
        path = cls.dir / "out" / "index.html"
        cls.text = path.read_text() if path.exists() else ""
        cls.page = Page(cls.text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_the_page_is_written(self):
        # Before: matplotlib read `$\nosuchsymbol$` in a tick label as mathtext, a traceback (exit 4).
        self.assertEqual(self.html.returncode, 0, self.html.stderr)
        self.assertEqual(self.text.count('<figure class="series"'), 2)  # the plain series and the anchored one

    def test_no_element_or_attribute_comes_from_stored_text(self):
        # An unescaped place makes <x-evil> an element, or its quote closes an attribute and
        # x-evil becomes one.
        self.assertEqual([t for t, _, _ in self.page.elements if "evil" in t], [])
        self.assertEqual([(t, a) for t, a, _ in self.page.elements if any("evil" in k for k in a)], [])
        # Every text and attribute that holds the marker holds one stored text whole.
        whole = (REV, ANCHOR, MACHINE, DESCRIBE, CURVE, self.db.name)
        pieces = [t for t, _ in self.page.texts] + [v for _, a, _ in self.page.elements for v in a.values() if v]
        broken = [p for p in pieces if "evil" in p and not any(w in p for w in whole)]
        self.assertEqual(broken, [])

    def test_the_revision_label_in_every_place(self):
        p = self.page
        # The change table: the link to the revision's table, and its text.
        self.assertEqual(p.text_in("a"), [REV])
        self.assertEqual(p.attr("a", "href"), ["#rev-" + REV])
        # The plain series' figure lists its change.
        self.assertEqual(p.attr("figure", "data-changes"), [REV, ""])
        # The revision's own table: its heading and anchor.
        heads = [a["id"] for t, a, _ in p.elements if t == "h3" and a.get("id", "").startswith("rev-")]
        self.assertEqual(heads, ["rev-" + ANCHOR] + [f"rev-rev{i:03d}" if i != CHANGE_AT else "rev-" + REV
                                                     for i in range(12)])
        self.assertEqual(p.text_in("h3").count(REV), 1)
        # The chart: the tick under its revision and the change line's label, drawn as text.
        svg = p.svg_texts()
        self.assertEqual(svg.count(REV), 1, [t for t in svg if "evil" in t])
        self.assertEqual(svg.count(ANCHOR), 1)  # the plain series' first tick
        self.assertEqual([t for t in svg if t.startswith(REV + ":")], [REV + ": -10.0%"])

    def test_the_anchor_machine_and_series_in_every_place(self):
        p = self.page
        anchored = f"{DESCRIBE} — speedup vs {ANCHOR}"
        self.assertEqual(p.attr("figure", "data-series"), [DESCRIBE, anchored])
        self.assertEqual(p.attr("figure", "data-machine"), [MACHINE, MACHINE])
        # The change table: the series and its machine.
        cells = p.text_in("td")
        self.assertEqual(cells.count(DESCRIBE), 1 + 13, cells[:4])  # the change, and each revision's table
        self.assertEqual(cells.count(MACHINE), 1 + 13)
        # The curves' headings and their machines.
        self.assertEqual([t for t in p.text_in("h3") if "evil" in t],
                         [CURVE, f"{CURVE} speedup vs {ANCHOR}", ANCHOR, REV])
        self.assertEqual(p.text_in("span").count(MACHINE), 2)
        # The charts' titles and the anchored one's axis label.
        svg = p.svg_texts()
        self.assertEqual(svg.count(f"{DESCRIBE} — {MACHINE}"), 1)
        self.assertEqual(svg.count(f"{anchored} — {MACHINE}"), 1)
        self.assertEqual(svg.count(f"speedup vs {ANCHOR}"), 1)
        # The store's name, as the page says where it is from.
        self.assertEqual(p.text_in("code"), [self.db.name])


if __name__ == "__main__":
    unittest.main()
