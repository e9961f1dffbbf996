"""reproduction_page.py — docs/REPRODUCTION.md and its HTML twin from the judged findings.

Both are written from the same Finding objects (findings.py), so the page and the Markdown
cannot disagree. The HTML carries each finding's verdict in a `data-verdict` attribute and its
charts as <img> tags relative to the page, which tests/plots/test_reproduction.py checks in
headless Chromium (every image decodes, every finding has a verdict).
"""
import html

VERDICT_COLOUR = {"reproduced": "#1b7837", "partly": "#b35806", "not reproduced": "#b2182b",
                  "differs": "#5e3c99", "not run": "#777777"}


def _sentence(text):
    text = text.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def _summary(findings):
    counts = {}
    for f in findings:
        counts[f.verdict] = counts.get(f.verdict, 0) + 1
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def markdown(findings, meta, chart_dir):
    out = ["# Reproduction report", "",
           "What the workshop (\"Data Parallelism on GPU\", 4× A100) and the textbook (sections 15.2, 15.9) "
           "claim, what dpscale measured or predicted on this machine, and a verdict for each. Written by "
           "`make reproduce` (`scripts/reproduce.sh`); every number comes from the raw files in "
           f"`{meta['raw_dir']}`, named in each finding with the command that made it.", "",
           f"- Machine: {meta['machine']}", f"- Date: {meta['date']}", f"- Verdicts: {_summary(findings)}",
           f"- HTML version with the charts: [REPRODUCTION.html](REPRODUCTION.html)", "",
           "Measured means run here; predicted means `dpscale predict`, calibrated from the runs here, and is "
           "never reported as measured. K = 4 runs put 4 ranks on 2 cores: they measure communication, but "
           "compute does not shrink with K there.", ""]
    out += ["| # | finding | verdict |", "|---|---|---|"]
    out += [f"| {f.number} | {f.title} | **{f.verdict}** |" for f in findings]
    for f in findings:
        out += ["", f"## {f.number}. {f.title}", "", f"**Claim** ({f.source}): {f.claim}", "",
                f"**Verdict: {f.verdict}.** {_sentence(f.reason)}", ""]
        if f.rows:
            out += ["| what | source | here | how |", "|---|---|---|---|"]
            out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in f.rows]
            out.append("")
        if f.commands:
            out += ["Commands:", "", "```"] + list(f.commands) + ["```"]
        for c in f.charts:
            out += ["", f"![{c}]({chart_dir}/{c}.png)"]
    return "\n".join(out) + "\n"


def page(findings, meta, chart_dir):
    e = html.escape
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>dpscale reproduction report</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.4}"
             "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
             "text-align:left}.verdict{color:#fff;padding:.1em .5em;border-radius:.3em;font-weight:bold}"
             "img{max-width:100%;border:1px solid #eee;margin:.5em 0}pre{background:#f6f6f6;padding:.5em;"
             "overflow-x:auto}</style></head><body>",
             "<h1>Reproduction report</h1>",
             f"<p>Machine: {e(meta['machine'])}. Date: {e(meta['date'])}. Verdicts: {e(_summary(findings))}. "
             f"Raw results: <code>{e(meta['raw_dir'])}</code>; the same report as "
             "<a href=\"REPRODUCTION.md\">Markdown</a>.</p>",
             "<p>Measured means run here; predicted means <code>dpscale predict</code> calibrated from the runs "
             "here. K = 4 runs put 4 ranks on 2 cores: compute does not shrink with K there.</p>",
             "<table><tr><th>#</th><th>finding</th><th>verdict</th></tr>"]
    for f in findings:
        parts.append(f"<tr><td>{f.number}</td><td><a href=\"#f{f.number}\">{e(f.title)}</a></td>"
                     f"<td>{e(f.verdict)}</td></tr>")
    parts.append("</table>")
    for f in findings:
        col = VERDICT_COLOUR.get(f.verdict, "#000")
        parts += [f"<section class=\"finding\" id=\"f{f.number}\" data-verdict=\"{e(f.verdict)}\">",
                  f"<h2>{f.number}. {e(f.title)}</h2>",
                  f"<p><b>Claim</b> ({e(f.source)}): {e(f.claim)}</p>",
                  f"<p><span class=\"verdict\" style=\"background:{col}\">{e(f.verdict)}</span> {e(_sentence(f.reason))}</p>"]
        if f.rows:
            parts.append("<table><tr><th>what</th><th>source</th><th>here</th><th>how</th></tr>")
            parts += ["<tr>" + "".join(f"<td>{e(str(x))}</td>" for x in r) + "</tr>" for r in f.rows]
            parts.append("</table>")
        if f.commands:
            parts.append("<pre>" + e("\n".join(f.commands)) + "</pre>")
        parts += [f"<img src=\"{e(chart_dir)}/{e(c)}.png\" alt=\"{e(c)}\">" for c in f.charts]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
