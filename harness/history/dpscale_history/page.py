"""page.py — the history as one static HTML page (opens from file://, no server, no script):
per series the metric over revisions in commit order — each undisturbed run a dot, the
revision's median a line, disturbed runs drawn apart as grey crosses that the line ignores —
with each change point marked between the last revision before it and the first after it,
labelled with that revision and the effect; then a table per revision.

Charts are matplotlib SVG written into the page. Stored text (revision labels, machines, series)
is drawn as text: HTML-escaped in the page, and never read as mathtext by matplotlib
(parse_math=False), where `$...$` in a label would be typeset or, unknown, crash the page. Every chart is a <figure class="series"> whose
data-changes attribute lists the first revision after each change; in its SVG the medians are
the group "s<N>-median" (one marker per revision, in order) and each change line the group
"s<N>-change-<K>", so a browser test can find where a change was drawn and check it against the
data (tests/history/test_history_page.py)."""
import html
import io
import re

import matplotlib

matplotlib.use("Agg")  # files only; must precede the Figure import
from matplotlib.figure import Figure  # noqa: E402

matplotlib.rcParams.update({
    "font.size": 9, "axes.titlesize": 10, "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": True, "grid.alpha": 0.3, "svg.hashsalt": "dpscale-history", "svg.fonttype": "none",
})

RUN = "#1f77b4"
REGRESSION, IMPROVEMENT, DISTURBED = "#d62728", "#2ca02c", "#999999"
_MAX_TICKS = 24

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
figure.series { margin: 0 0 1.5em; } figure.series svg { max-width: 100%; height: auto; }
.regression { color: #d62728; } .improvement { color: #2ca02c; } .muted { color: #777; }
"""


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline: no XML prolog or doctype


def _y_range(values, medians):
    """The medians in full, and the runs between their 2nd and 98th percentiles: one wild run
    (a speedup of 4 paired with a starved single run) would flatten every other point."""
    v = sorted(values)
    lo, hi = v[int(0.02 * (len(v) - 1))], v[int(round(0.98 * (len(v) - 1)))]
    lo, hi = min([lo] + medians), max([hi] + medians)
    pad = 0.08 * (hi - lo or abs(hi) or 1.0)
    return lo - pad, hi + pad


def chart(i, series, found, include_disturbed=False):
    """The SVG of series number i, with its change points `found`."""
    steps = series.steps
    fig = Figure(figsize=(9, 3.2))
    ax = fig.add_subplot()
    xs = list(range(len(steps)))
    run_x = [x for x, st in zip(xs, steps) for _ in st.values]
    run_y = [v for st in steps for v in st.values]
    ax.plot(run_x, run_y, ".", color=RUN, alpha=0.35, ms=4, gid=f"s{i}-runs")
    bad_x = [] if include_disturbed else [x for x, st in zip(xs, steps) for _ in st.disturbed]
    if bad_x:
        ax.plot(bad_x, [v for st in steps for v, _ in st.disturbed], "x", color=DISTURBED, ms=5, gid=f"s{i}-disturbed",
                label="disturbed run (not tested)")
    tested = [(x, st.median) for x, st in zip(xs, steps) if st.values]
    ax.plot([x for x, _ in tested], [m for _, m in tested], "-o", color=RUN, ms=4, lw=1.2, gid=f"s{i}-median",
            label="median of the runs, disturbed included" if include_disturbed else "median of undisturbed runs")
    every = run_y + [v for st in steps for v, _ in st.disturbed if not include_disturbed]
    if every:
        lo, hi = _y_range(every, [m for _, m in tested])
        ax.set_ylim(lo, hi)
        off = sum(1 for v in every if v < lo or v > hi)
        if off:
            ax.text(1.0, 1.0, f"{off} run(s) off the scale", transform=ax.transAxes, ha="right", va="bottom",
                    fontsize=7, color=DISTURBED)
    top = ax.get_ylim()[1]
    for k, c in enumerate(found):
        # Between the last tested revision before the change and the first after it.
        after_x = tested[c.index][0]
        before_x = tested[c.index - 1][0]
        at = (after_x + before_x) / 2
        color = REGRESSION if c.regression else IMPROVEMENT
        ax.axvline(at, color=color, ls="--", lw=1.2, gid=f"s{i}-change-{k}")
        ax.text(at, top, f" {c.revision.label}: {c.effect_pct:+.1f}%", color=color, fontsize=8, va="top",
                ha="left" if at < len(steps) / 2 else "right", parse_math=False)
    step = max(1, -(-len(steps) // _MAX_TICKS))
    ax.set_xticks(xs[::step])
    ax.set_xticklabels([st.revision.label for st in steps][::step], rotation=45, ha="right", fontsize=7,
                       parse_math=False)
    ax.set_xlim(-0.5, len(steps) - 0.5)
    ax.set_ylabel(series.quantity, parse_math=False)
    ax.set_title(f"{series.label} — {series.machine}", loc="left", parse_math=False)
    ax.legend(loc="lower left", fontsize=7)
    fig.tight_layout()
    return _svg(fig)


def _cell(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def _median(v):
    s = sorted(v)
    n = len(s)
    return None if not n else s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def revision_tables(series_list):
    """One table per revision (commit order): each series' runs and medians there. Anchored
    series are left out: their values are ratios to another build, not these metrics, and their
    charts draw them."""
    order, rows = [], {}
    for s in series_list:
        if s.anchor:
            continue
        for st in s.steps:
            r = st.revision
            if r.key not in rows:
                order.append(r)
                rows[r.key] = []
            rows[r.key].append((s, st))
    order.sort(key=lambda r: r.commit_time)
    out = []
    for r in order:
        title = html.escape(r.label + (f" ({r.name})" if r.commit_id and not r.commit_id.startswith(r.name) else ""))
        out.append(f'<h3 id="rev-{html.escape(r.key)}">{title} <span class="muted">{html.escape(r.commit_time)}</span></h3>')
        out.append("<table><tr><th>series</th><th>machine</th><th>runs</th><th>disturbed</th><th>speedup</th>"
                   "<th>efficiency</th><th>comm share</th><th>epoch s</th></tr>")
        for s, st in rows[r.key]:
            o = st.others
            out.append(f"<tr><td>{html.escape(s.label)}</td><td>{html.escape(s.machine)}</td><td>{len(st.values)}</td>"
                       f"<td>{len(st.disturbed)}</td><td>{_cell(_median(o.get('speedup', [])))}</td>"
                       f"<td>{_cell(_median(o.get('efficiency', [])))}</td>"
                       f"<td>{_cell(_median(o.get('comm_share', [])))}</td>"
                       f"<td>{_cell(_median(o.get('epoch_s', [])), 4)}</td></tr>")
        out.append("</table>")
    return "\n".join(out)


def write_page(series_list, changes_of, db_name, metric, params, include_disturbed=False):
    """The page's HTML. `changes_of`: series -> its changes (oldest first)."""
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dpscale history</title>"
             f"<style>{STYLE}</style></head><body>",
             "<h1>Scaling curves over revisions</h1>",
             f"<p>From <code>{html.escape(db_name)}</code>: {len(series_list)} series, metric <b>{html.escape(metric)}</b>. "
             "Each chart is one point of a scaling curve on one machine, over revisions in commit order: dots are "
             + ("runs (disturbed ones included), the line their median per revision. " if include_disturbed else
                "undisturbed runs, the line their median per revision, grey crosses runs the machine disturbed (left "
                "out of the test). ")
             + "Dashed lines are change points found by E-divisive means with a permutation test "
             f"({html.escape(params)}), labelled with the first revision after the change and its effect "
             "(red a regression, green an improvement).</p>"]
    all_changes = [c for s in series_list for c in changes_of[id(s)]]
    parts.append("<h2>Change points</h2>")
    tested = sum(1 for s in series_list if s.tested())
    if tested < len(series_list):
        parts.append(f"<p>{tested} of {len(series_list)} series have revisions with undisturbed runs to test; "
                     "the others were disturbed throughout.</p>")
    if all_changes:
        parts.append("<table><tr><th>series</th><th>machine</th><th>first revision after</th><th>before → after</th>"
                     "<th>effect [95% interval]</th><th>p</th></tr>")
        for c in all_changes:
            cls = "regression" if c.regression else "improvement"
            parts.append(f"<tr class=\"{cls}\"><td>{html.escape(c.series.label)}</td><td>{html.escape(c.series.machine)}</td>"
                         f"<td><a href=\"#rev-{html.escape(c.revision.key)}\">{html.escape(c.revision.label)}</a></td>"
                         f"<td>{_cell(c.before)} → {_cell(c.after)}</td><td>{c.effect_pct:+.1f}% "
                         f"[{c.interval_pct[0]:+.1f}%, {c.interval_pct[1]:+.1f}%]</td><td>{c.p:.3f}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>None found.</p>")
    parts.append("<h2>Series</h2>")
    curve = None
    for i, s in enumerate(series_list):
        if (s.machine, s.curve) != curve:
            curve = (s.machine, s.curve)
            parts.append(f"<h3>{html.escape(s.curve)} <span class=\"muted\">{html.escape(s.machine)}</span></h3>")
        found = changes_of[id(s)]
        revs = ",".join(c.revision.label for c in found)
        parts.append(f'<figure class="series" id="s{i}" data-series="{html.escape(s.label)}" '
                     f'data-machine="{html.escape(s.machine)}" data-changes="{html.escape(revs)}" '
                     f'data-revisions="{len(s.steps)}">')
        parts.append(chart(i, s, found, include_disturbed))
        parts.append("</figure>")
    parts.append("<h2>Revisions</h2>")
    parts.append(revision_tables(series_list))
    parts.append("</body></html>\n")
    text = "\n".join(parts)
    # Byte-stable output: matplotlib's SVG carries its creation date.
    return re.sub(r"<dc:date>[^<]*</dc:date>", "", text)
