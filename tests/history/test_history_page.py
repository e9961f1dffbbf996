#!/usr/bin/python3
"""test_history_page.py — `dpscale history html` on a history with known changes, rendered in
headless Chromium (Debian's `chromium`), as tests/plots/test_reproduction.py renders the
reproduction page: the page loads from file://, every series has its chart drawn (an SVG with
one median marker per revision), and each change line is drawn between the marker of the last
revision before the change and the first after it, on the side the data moved (a 10% loss of
bucketed's speedup at revision 20: its markers lower after the line than before), and nowhere
else. Negative controls: the same page with the change line moved to revision 10, or with a
chart removed, is caught by the same check. And the real history's committed pages
(docs/history/*/index.html) load with every chart drawn. Skips (77) without chromium."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True
import synth  # noqa: E402
from synth import dpscale  # noqa: E402

CHECK = """<script>
window.addEventListener('load', () => {
  const mid = r => r.x + r.width / 2;
  for (const fig of document.querySelectorAll('figure.series')) {
    const i = fig.id.slice(1);
    const svg = fig.querySelector('svg');
    const med = fig.querySelector(`g[id="s${i}-median"]`);
    const marks = med ? [...med.querySelectorAll('use')].map(u => u.getBoundingClientRect()) : [];
    const lines = [...fig.querySelectorAll(`g[id^="s${i}-change-"]`)].map(g => mid(g.getBoundingClientRect()));
    fig.setAttribute('data-drawn', JSON.stringify({
      svg: !!svg && svg.getBoundingClientRect().width > 0,
      marks: marks.map(r => [mid(r), r.y + r.height / 2]),
      lines: lines}));
  }
  document.body.setAttribute('data-checked', 'yes');
});
</script>"""


def render(page):
    """The page's DOM after load in headless Chromium, each figure with what was drawn."""
    tmp = Path(tempfile.mkdtemp())
    try:
        copy = tmp / "index.html"
        copy.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
        out = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                              "--dump-dom", copy.as_uri()], capture_output=True, text=True, timeout=120)
        return out.stdout
    finally:
        shutil.rmtree(tmp)


def figures(dom):
    out = {}
    for attrs in re.findall(r'<figure class="series"([^>]*)>', dom):
        get = lambda k: re.search(k + r'="([^"]*)"', attrs)  # noqa: E731
        drawn = get("data-drawn")
        out[get("data-series").group(1)] = {
            "changes": [c for c in get("data-changes").group(1).split(",") if c],
            "drawn": json.loads(drawn.group(1).replace("&quot;", '"')) if drawn else None}
    return out


def problems(dom, expected):
    """What a reader would find wrong, against `expected`: series -> (revisions, {change index:
    direction}), direction -1 when the metric fell at it."""
    found = []
    if 'data-checked="yes"' not in dom:
        return ["the page's load event never came"]
    figs = figures(dom)
    if sorted(figs) != sorted(expected):
        found.append(f"charts {sorted(figs)}, expected {sorted(expected)}")
    for name, (n_revs, changes) in expected.items():
        f = figs.get(name)
        if not f or not f["drawn"] or not f["drawn"]["svg"]:
            found.append(f"{name}: no chart drawn")
            continue
        marks, lines = f["drawn"]["marks"], f["drawn"]["lines"]
        if len(marks) != n_revs:
            found.append(f"{name}: {len(marks)} median markers for {n_revs} revisions")
            continue
        xs = [x for x, _ in marks]
        at = sorted(next((k for k, x in enumerate(xs) if x > line), None) for line in lines)
        if at != sorted(changes):
            found.append(f"{name}: change lines before revisions {at}, expected {sorted(changes)}")
            continue
        if f["changes"] != [f"rev{k:03d}" for k in sorted(changes)]:
            found.append(f"{name}: labelled {f['changes']}")
        for k, direction in changes.items():
            before = sum(y for _, y in marks[max(0, k - 3):k]) / len(marks[max(0, k - 3):k])
            after = sum(y for _, y in marks[k:k + 3]) / len(marks[k:k + 3])
            # Screen y grows downwards: a fall of the metric puts the markers lower.
            if (after > before) != (direction < 0):
                found.append(f"{name}: the data at revision {k} is drawn moving the wrong way")
    return found


@unittest.skipUnless(shutil.which("chromium"), "no chromium")
class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp())
        rng = random.Random(5)
        rows = []
        for i in range(30):
            for mode, base in (("naive", 0.9), ("interleaved", 1.3), ("bucketed", 1.55)):
                level = base * (0.9 if mode == "bucketed" and i >= 20 else 1.0)
                for j in range(4):
                    rows.append(synth.row(mode, synth.revision(i), level * (1 + rng.gauss(0, 0.003)), run=j))
        # A disturbed run, drawn apart and never tested: far below, yet no change.
        rows.append(synth.row("interleaved", synth.revision(12), 0.8, run=9, disturbed="round 1: others 1.0 CPU"))
        synth.write_rows(cls.dir / "rows.jsonl", rows)
        cls.db = cls.dir / "h.sqlite"
        r = dpscale("history", "import", cls.dir / "rows.jsonl", "--db", cls.db)
        assert r.returncode == 0, r.stderr
        r = dpscale("history", "html", cls.dir / "out", "--db", cls.db)
        assert r.returncode == 0, r.stderr
        cls.page = cls.dir / "out" / "index.html"
        cls.expected = {"small bucketed K=2 cap 25 MB 50:300": (30, {20: -1}),
                        "small interleaved K=2 50:300": (30, {}),
                        "small naive K=2 50:300": (30, {})}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_every_chart_and_change_where_the_data_put_it(self):
        self.assertEqual(problems(render(self.page), self.expected), [])

    def test_the_page_is_self_contained(self):
        text = self.page.read_text()
        self.assertNotRegex(text, r'(src|href)="(https?:|/)')  # nothing fetched: it opens from file://
        self.assertIn("rev020", text)
        self.assertEqual(text.count('<figure class="series"'), 3)
        self.assertIn('<h3 id="rev-rev029">', text)  # a table per revision

    def test_a_moved_line_and_a_missing_chart_are_caught(self):
        text = self.page.read_text()
        m = re.search(r'<g id="s0-change-0">\s*<path d="M ([0-9.]+) ', text)
        self.assertIsNotNone(m)
        marks = re.search(r'<g id="s0-median">.*?</g>\s*</g>', text, re.S).group(0)
        xs = [float(x) for x in re.findall(r'<use [^>]*x="([0-9.]+)"', marks)]
        moved = text.replace(f'M {m.group(1)} ', f'M {(xs[9] + xs[10]) / 2:.6f} ', 1)
        moved = re.sub(r'(<g id="s0-change-0">\s*<path d="M [0-9.]+ [0-9.]+\s*L )[0-9.]+',
                       lambda g: g.group(1) + f"{(xs[9] + xs[10]) / 2:.6f}", moved, count=1)
        bad = self.dir / "moved.html"
        bad.write_text(moved)
        found = problems(render(bad), self.expected)
        self.assertTrue(any("change lines before revisions [10], expected [20]" in p for p in found), found)
        gone = re.sub(r'<figure class="series" id="s1".*?</figure>', "", text, count=1, flags=re.S)
        bad.write_text(gone)
        found = problems(render(bad), self.expected)
        self.assertTrue(any(p.startswith("charts ") for p in found), found)


@unittest.skipUnless(shutil.which("chromium"), "no chromium")
class CommittedPages(unittest.TestCase):
    """The real history's pages in docs/history/: each loads, every chart is drawn, and each
    drawn change line is one the page lists."""

    def test_each_committed_page_renders(self):
        pages = sorted((synth.SRC / "docs" / "history").glob("*/index.html"))
        self.assertTrue(pages, "no committed history page")
        for page in pages:
            with self.subTest(page=page.parent.name):
                dom = render(page)
                self.assertIn('data-checked="yes"', dom)
                figs = figures(dom)
                self.assertEqual(len(figs), page.read_text().count('<figure class="series"'))
                self.assertGreater(len(figs), 0)
                for name, f in figs.items():
                    self.assertTrue(f["drawn"] and f["drawn"]["svg"], name)
                    self.assertEqual(len(f["drawn"]["lines"]), len(f["changes"]), name)


if __name__ == "__main__":
    if not shutil.which("chromium"):
        print("skip: no chromium", file=sys.stderr)
        sys.exit(77)
    unittest.main()
