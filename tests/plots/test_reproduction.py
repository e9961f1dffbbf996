#!/usr/bin/python3
"""test_reproduction.py — the reproduction report: verdicts follow the numbers, and the committed
page renders in a real browser with every image and every verdict.

  Verdicts  findings.py on hand-made evidence: each verdict flips when its numbers flip, and a
            missing input gives "not run", never a verdict.
  Page      docs/REPRODUCTION.html in headless Chromium (Debian's `chromium`): every <img> decodes,
            all 12 findings carry a known verdict; negative controls (a broken image, a finding
            without a verdict) are caught by the same check. Skips (77) without chromium.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SRC = Path(os.environ.get("DPSCALE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SRC / "plots"))
sys.dont_write_bytecode = True

from dpscale_plots import findings, sources  # noqa: E402
from dpscale_plots.findings import Evidence  # noqa: E402


def point(model, mode, k, speedup, cap=None, **kw):
    p = {"model": model, "mode": mode, "world_size": k, "bucket_cap_mb": cap if mode == "bucketed" else None,
         "speedup": {"median": speedup}, "throughput_samples_per_s": {"median": 1000 * speedup},
         "avg_epoch_s": {"median": 1.0 / speedup}, "n_buckets": None}
    if mode == "bucketed" and cap is None:
        p["bucket_cap_mb"] = 25.0
    p.update(kw)
    return p


class Verdicts(unittest.TestCase):
    def test_small_slower_flips_with_one_fast_mode(self):
        slow = {"points": [point("small", m, 2, 0.5) for m in ("naive", "interleaved", "bucketed")]}
        self.assertEqual(findings.f1_small_slower(Evidence(runs=slow)).verdict, "reproduced")
        slow["points"][2] = point("small", "bucketed", 2, 1.02, n_buckets=2)
        f = findings.f1_small_slower(Evidence(runs=slow))
        self.assertEqual(f.verdict, "partly")
        self.assertIn("2 all-reduce calls", f.reason)
        fast = {"points": [point("small", m, 2, 1.1) for m in ("naive", "interleaved", "bucketed")]}
        self.assertEqual(findings.f1_small_slower(Evidence(runs=fast)).verdict, "not reproduced")

    def test_missing_input_is_not_run(self):
        for fn in findings.ALL:
            f = fn(Evidence())
            self.assertIn(f.verdict, ("not run", "differs"), fn.__name__)
        # f8 is about the workshop's own arithmetic: it needs no run, and it is the only one.
        self.assertEqual(findings.f8_amdahl(Evidence()).verdict, "differs")
        self.assertIn("2.84×", findings.f8_amdahl(Evidence()).reason)

    def test_grows_with_size_needs_strict_order(self):
        pts = [point(m, mode, 2, s) for mode in ("naive", "interleaved", "bucketed")
               for m, s in (("small", 0.4), ("medium", 1.1), ("large", 1.5))]
        self.assertEqual(findings.f2_grows_with_size(Evidence(runs={"points": pts})).verdict, "reproduced")
        pts[2] = point("large", "naive", 2, 1.0)  # naive: large below medium
        self.assertEqual(findings.f2_grows_with_size(Evidence(runs={"points": pts})).verdict, "partly")

    def test_textbook_15_9_1_row_by_row(self):
        ok = findings.f10_textbook_15_9_1(Evidence(textbook_15_9_1=sources.TEXTBOOK_15_9_1))
        self.assertEqual((ok.verdict, ok.rows[0][2]), ("reproduced", "9"))
        off = sources.TEXTBOOK_15_9_1.replace("5.9x    73", "5.8x    73")
        self.assertEqual(findings.f10_textbook_15_9_1(Evidence(textbook_15_9_1=off)).verdict, "partly")

    def test_ring_star_bytes_against_formulas(self):
        d = 64 << 20

        def bench(k, ring_sent, star_sent, star_recv):
            return [{"name": f"allreduce/ring/np:{k}/bytes:{d}", "bytes": d, "real_time": 10.0,
                     "rank0_sent_bytes": ring_sent},
                    {"name": f"allreduce/star/np:{k}/bytes:{d}", "bytes": d, "real_time": 10.0 * k,
                     "rank0_sent_bytes": star_sent, "rank0_received_bytes": star_recv}]

        good = {4: bench(4, 1.5 * d, 3 * d, 3 * d)}
        self.assertEqual(findings.f9_ring_vs_star(Evidence(allreduce=good)).verdict, "reproduced")
        bad = {4: bench(4, 2 * d, 3 * d, 3 * d)}  # a ring sending whole buffers
        self.assertEqual(findings.f9_ring_vs_star(Evidence(allreduce=bad)).verdict, "not reproduced")

    def test_loss_logging_needs_the_global_loss_to_collapse(self):
        single = point("small", "single", 1, 1.0, loss_global=[2.3, 2.2])
        dp = point("small", "naive", 2, 0.5, loss_global=[2.3, 2.2], loss_rank0=[2.31, 2.21])
        self.assertEqual(findings.f7_loss_logging(Evidence(runs={"points": [single, dp]})).verdict, "reproduced")
        dp["loss_global"] = [2.31, 2.21]
        self.assertEqual(findings.f7_loss_logging(Evidence(runs={"points": [single, dp]})).verdict,
                         "not reproduced")


CHECK = """<script>
window.addEventListener('load', () => {
  for (const img of document.images) img.setAttribute('data-ok', String(img.complete && img.naturalWidth > 0));
  document.body.setAttribute('data-checked', 'yes');
});
</script>"""


def render(html_path):
    """The page's DOM after load in headless Chromium, with each image's decode state."""
    tmp = Path(tempfile.mkdtemp())
    try:
        page = tmp / html_path.name
        page.write_text(html_path.read_text().replace("</body>", CHECK + "</body>"))
        for sub in ("reproduction",):
            if (html_path.parent / sub).exists():
                os.symlink((html_path.parent / sub).resolve(), tmp / sub)
        out = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                              "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                             capture_output=True, text=True, timeout=120)
        return out.stdout
    finally:
        shutil.rmtree(tmp)


def problems(dom):
    """What a reader would find wrong: images that did not load, findings without a verdict."""
    found = []
    if 'data-checked="yes"' not in dom:
        found.append("the page's load event never came")
    imgs = re.findall(r"<img[^>]*>", dom)
    if not imgs:
        found.append("no images")
    src = re.compile(r'src="([^"]*)"')
    found += ["image not loaded: " + src.search(i).group(1) for i in imgs if 'data-ok="true"' not in i]
    sections = re.findall(r'<section class="finding" id="f(\d+)"([^>]*)>', dom)
    if [int(n) for n, _ in sections] != list(range(1, 13)):
        found.append(f"findings {[int(n) for n, _ in sections]}, not 1..12")
    for n, attrs in sections:
        m = re.search(r'data-verdict="([^"]*)"', attrs)
        if not m or m.group(1) not in findings.VERDICTS:
            found.append(f"finding {n} has no verdict")
    return found


@unittest.skipUnless(shutil.which("chromium"), "no chromium")
class Page(unittest.TestCase):
    page = SRC / "docs" / "REPRODUCTION.html"

    def test_committed_page_renders_with_every_image_and_verdict(self):
        self.assertTrue(self.page.exists(), "docs/REPRODUCTION.html is not committed")
        self.assertEqual(problems(render(self.page)), [])

    def test_a_broken_image_and_a_missing_verdict_are_caught(self):
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "REPRODUCTION.html"
            text = self.page.read_text()
            first_img = re.search(r'<img src="([^"]*)"', text).group(1)
            text = text.replace(f'src="{first_img}"', 'src="reproduction/charts/no-such-chart.png"', 1)
            text = re.sub(r'data-verdict="[^"]*"', "", text, count=1)
            bad.write_text(text)
            os.symlink((self.page.parent / "reproduction").resolve(), Path(d) / "reproduction")
            found = problems(render(bad))
        self.assertTrue(any("no-such-chart.png" in p for p in found), found)
        self.assertTrue(any("finding 1 has no verdict" in p for p in found), found)


if __name__ == "__main__":
    if "Page" in sys.argv and not shutil.which("chromium"):
        print("skip: no chromium", file=sys.stderr)
        sys.exit(77)
    unittest.main()
