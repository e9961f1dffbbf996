"""style.py — the look shared by every chart: names, colours, units, figure frame, saving.

The workshop's names and colours are kept (naive red, interleaved blue, DDP green) so a reader
who knows its charts reads ours without a legend hunt.
"""
import io
import re

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede any pyplot/backend import
from matplotlib.figure import Figure  # noqa: E402  (OO API: no global pyplot state to leak)
import matplotlib.colors as mcolors  # noqa: E402

# The modes, their labels and which are data-parallel come from the report's "modes" table (the
# mode table of contract/modes.cpp, through `dpscale report --format json`): use_modes() fills
# these in place when a report is loaded, so every module that imported them sees the same.
MODE_LABEL = {}
DP_MODES = []
# Colours are this plotter's own look, keyed by mode name; a mode without one is drawn grey.
MODE_COLOR = {"single": "#3b3b3b", "naive": "#d62728", "interleaved": "#1f77b4",
              "bucketed": "#2ca02c"}


def use_modes(modes):
    """Adopt the report's mode table: [{name, label, data_parallel, ...}, ...] in table order."""
    MODE_LABEL.clear()
    MODE_LABEL.update((m["name"], m["label"]) for m in modes)
    DP_MODES[:] = [m["name"] for m in modes if m["data_parallel"]]
    for m in modes:
        MODE_COLOR.setdefault(m["name"], "#777777")
MODEL_LABEL = {"small": "Small", "medium": "Medium", "large": "Large", "xlarge": "XLarge",
               "custom": "Custom"}
# Colours per world size, for charts where lines are grouped by K rather than by mode.
K_COLORS = ["#3b3b3b", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#bcbd22"]
MUTED = "#777777"

matplotlib.rcParams.update({
    "font.size": 10, "axes.titlesize": 11, "axes.titleweight": "bold",
    "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.6,
    "legend.fontsize": 9, "legend.frameon": False,
    "svg.hashsalt": "dpscale",  # stable ids: the same input gives the same SVG
    "svg.fonttype": "none",     # text stays text in the SVG (smaller, searchable)
})


class Skip(Exception):
    """A chart the file has no data for; the message says what is missing."""


def model_label(results, model):
    """'Large (35.2M)': the workshop's way of naming a model."""
    name = MODEL_LABEL.get(model) or _model_name(model)
    n = results.n_params.get(model, 0)
    size = f"{n / 1e6:.1f}M" if n >= 1e5 else f"{n / 1e3:.0f}k"
    return f"{name} ({size})"


def _model_name(model):
    """A preset without a label of its own, a custom MLP or a custom transformer, as a title says it."""
    # A custom transformer is its spec ("gpt:layers=4,dim=256,heads=4,vocab=8192,context=128"),
    # shortened to its shape; a transformer preset keeps its own name ("gpt-tiny", "gpt2-small").
    if model.startswith("gpt:"):
        keys = dict(kv.split("=", 1) for kv in model[len("gpt:"):].split(",") if "=" in kv)
        return "GPT L{} d{} h{} V{}".format(*(keys.get(k, "?") for k in ("layers", "dim", "heads", "vocab")))
    if model.startswith("gpt"):
        return model
    # A custom MLP's point names it by its widths ("784,256,10"), as the harness does.
    return "MLP " + model.replace(",", "-") if "," in model else model.capitalize()


def time_unit(values):
    """Scale and unit for times in seconds: ms below one second, else s."""
    vals = [v for v in values if v is not None]
    return (1e3, "ms") if vals and max(vals) < 1.0 else (1.0, "s")


def fmt_sig(v, digits):
    """V to DIGITS significant digits, trailing zeros kept so neighbours read alike: 1.0 and
    0.78, not 1 and 0.78. Numbers with more integer digits than that are printed whole."""
    if v != 0 and abs(v) >= 10 ** (digits - 1):
        return f"{v:.0f}"
    return format(v, f"#.{digits}g").rstrip(".")


def fmt_time(v, unit):
    return f"{v:.0f}" if unit == "ms" and v >= 10 else fmt_sig(v, 3)


def fmt_rate(v):
    """Samples/s the short way, three significant digits: 909k, 1.05k, 17.0k, 2.40M."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{fmt_sig(v / scale, 3)}{suffix}"
    return fmt_sig(v, 3)


# Behind a value label: lines that pass through it (a baseline, a knee) stay legible.
LABEL_BOX = dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.85)





def shade(color, k, ks):
    """The mode's colour, lighter for smaller K > 1, so bars of one mode read as one family
    (K = 1 and the largest K get the full colour)."""
    ks = [x for x in ks if x > 1]
    if len(ks) < 2 or k not in ks:
        return color
    t = 0.45 * (1 - ks.index(k) / (len(ks) - 1))  # 0 for the largest K
    r, g, b = mcolors.to_rgb(color)
    return (r + (1 - r) * t, g + (1 - g) * t, b + (1 - b) * t)


def new_figure(results, title, subtitle=None, ncols=1, nrows=1, width=None, height=4.0,
               legend=None, **subplot_kw):
    """A figure with a title, an optional explanation and a one-row legend (handles) under it,
    and the data's provenance at the foot. Returns (fig, 2-D axes array)."""
    width = width or max(6.5, 3.5 * ncols + 1.0)
    # Never narrower than the title block needs (a clipped title is unreadable); the factors
    # are the inch width of a character of the bold 13 pt title and the 9 pt subtitle.
    longest_sub = max((len(s) for s in (subtitle or "").split("\n")), default=0)
    width = max(width, 0.118 * len(title) + 0.6, 0.068 * longest_sub + 0.6)
    sub_lines = subtitle.count("\n") + 1 if subtitle else 0
    sub_top = 0.42  # inches from the top edge
    legend_top = sub_top + 0.2 * sub_lines
    header_in = legend_top + (0.35 if legend else 0.05)  # kept free for the title block
    fig_h = height * nrows + header_in + 0.3
    fig = Figure(figsize=(width, fig_h))
    # Constrained layout keeps labels from overlapping; its rect leaves the header to us, so
    # title and explanation sit exactly where placed whatever the panels do.
    fig.set_layout_engine("constrained", rect=(0, 0, 1, 1 - header_in / fig_h))
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    fig.text(0.5, 1 - 0.1 / fig_h, title, ha="center", va="top", fontsize=13,
             fontweight="bold")
    if subtitle:
        fig.text(0.5, 1 - sub_top / fig_h, subtitle, ha="center", va="top", fontsize=9,
                 color="#444444", linespacing=1.3)
    if legend:
        fig.legend(handles=legend, loc="upper center", ncol=len(legend), fontsize=9,
                   bbox_to_anchor=(0.5, 1 - legend_top / fig_h), bbox_transform=fig.transFigure,
                   handlelength=1.6, columnspacing=1.4).set_in_layout(False)
    fig.supxlabel(results.context_line(), fontsize=7.5, color=MUTED)
    return fig, axes


def save(fig, out_dir, name, formats):
    """Write NAME.<fmt> for each format; return the paths, in the order of FORMATS."""
    paths = {}
    # SVG first: each draw re-runs the layout, which moves things by a millionth of a point,
    # so drawing SVG first keeps its bytes the same whatever other formats are asked for.
    for fmt in sorted(formats, key=lambda f: f != "svg"):
        path = out_dir / f"{name}.{fmt}"
        if fmt == "svg":
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            path.write_text(_stable_svg_ids(buf.getvalue()), encoding="utf-8")
        else:
            fig.savefig(path, format=fmt, dpi=150)
        paths[fmt] = path
    return [paths[f] for f in formats]


def _stable_svg_ids(svg):
    """Matplotlib names some clip paths after id() of a Python object, so the same chart gets
    different SVG bytes on every run; renumbering them in order of appearance makes the output
    depend on the input only (committed figures then change only when the numbers do)."""
    ids = {}
    for m in re.finditer(r'id="(p[0-9a-f]{10})"', svg):
        ids.setdefault(m.group(1), f"clip{len(ids)}")
    return re.sub(r"\bp[0-9a-f]{10}\b", lambda m: ids.get(m.group(0), m.group(0)), svg)
