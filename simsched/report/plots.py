"""Plots of sweep results (``simsched plot`` and the study report): one line (or box) per scheduler.

Line plots show the mean over seeds with 95% confidence-interval error bars (Student's t), one
marker and line style per scheduler and each scheduler's points moved slightly sideways, so that
equal values stay visible; box plots show the distribution over seeds.  When the study varies other
fields than ``x``, there is one panel per combination of their values; panels share the y axis
and one legend above them names the schedulers.  Numeric x values are placed on a numeric axis
(logarithmic when they span two orders of magnitude or more), others are categories.  matplotlib
is imported only inside the functions (Agg backend); files are written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simsched.fileio import save_figure

SUFFIXES = (".png", ".svg")


def _sort_key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def _axis(xs: Sequence[Any], categorical: bool) -> tuple[dict[Any, float], bool]:
    """Position of each x value and whether the axis should be logarithmic."""
    values = sorted(set(xs), key=_sort_key)
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if numeric and not categorical:
        log = len(values) > 2 and min(values) > 0 and max(values) / min(values) >= 100
        return {v: float(v) for v in values}, log
    return {v: float(i) for i, v in enumerate(values)}, False


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
DODGE = 0.012
"""Horizontal offset between neighbouring schedulers' points, as a fraction of the x range (a log
range on a log axis; one category on a categorical axis counts 5 x this), so that equal means and
their error bars stay visible side by side."""


def _dodged(xs: Sequence[float], s: int, n: int, log: bool, span: float) -> list[float]:
    """``xs`` of scheduler ``s`` of ``n`` moved sideways by its share of :data:`DODGE`."""
    shift = (s - (n - 1) / 2) * DODGE
    if log:
        return [x * 10 ** (shift * span) for x in xs]
    return [x + shift * span for x in xs]


def draw_plot(rows: Sequence[dict[str, Any]], x: str, y: str, kind: str = "line") -> Any:
    """The matplotlib figure of ``y`` against ``x`` per scheduler (see the module docstring): one
    marker and line style per scheduler, points dodged sideways, panels sharing the y axis, one
    legend above the panels.  The caller closes it.  O(rows)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from simsched.study.stats import group_rows, mean_ci, override_fields

    others = [f for f in override_fields(rows) if f != x and len({str(r.get(f)) for r in rows}) > 1]
    facets = group_rows(rows, others)
    schedulers = list(dict.fromkeys(r["scheduler"] for r in rows))
    positions, log = _axis([r.get(x) for r in rows], categorical=kind == "box")
    if x == "scheduler":  # in the study's order, as in the legend
        positions = {name: float(i) for i, name in enumerate(schedulers)}
    places = list(positions.values())
    if log:
        span = math.log10(max(places) / min(places))
    elif kind == "box" or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in positions):
        span = 5.0
    else:
        span = (max(places) - min(places)) or 1.0
    n = len(facets)
    cols = min(3, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows + 0.6), squeeze=False, sharey=True,
                             layout="constrained")
    cmap = plt.get_cmap("tab10")
    handles: dict[str, Any] = {}
    for k, (facet, members) in enumerate(facets.items()):
        ax = axes[k // cols, k % cols]
        for s, name in enumerate(schedulers):
            groups = group_rows([r for r in members if r["scheduler"] == name and not r.get("error")], [x])
            keys = sorted(groups, key=lambda key: _sort_key(key[0]))
            values = [[r[y] for r in groups[key] if math.isfinite(r[y])] for key in keys]
            xs = [positions[key[0]] for key in keys]
            colour = cmap(s % 10)
            if kind == "box":
                width = 0.8 / len(schedulers) if x != "scheduler" else 0.6  # one box per category: centred
                offsets = xs if x == "scheduler" else [p + (s - (len(schedulers) - 1) / 2) * width for p in xs]
                ax.boxplot(values, positions=offsets, widths=width * 0.9, patch_artist=True,
                           boxprops={"facecolor": colour, "alpha": 0.6}, medianprops={"color": "black"},
                           manage_ticks=False)
                handles.setdefault(name, ax.plot([], [], color=colour, linewidth=6, alpha=0.6, label=name)[0])
            else:
                stats = [mean_ci(v) for v in values]
                means = [m for m, _, _ in stats]
                errs = [0.0 if not math.isfinite(c) else c for _, c, _ in stats]
                line = ax.errorbar(_dodged(xs, s, len(schedulers), log, span), means, yerr=errs,
                                   marker=MARKERS[s % len(MARKERS)], linestyle=LINESTYLES[s % len(LINESTYLES)],
                                   markersize=6, markerfacecolor="white", markeredgewidth=1.5, capsize=3,
                                   color=colour, label=name, alpha=0.9)
                handles.setdefault(name, line)
        if log:
            ax.set_xscale("log")
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in positions)
        if kind == "box" or not numeric or len(positions) <= 8:
            ax.set_xticks(places)
            ax.set_xticklabels([f"{v:g}" if isinstance(v, float) else str(v) for v in positions],
                               rotation=30 if len(positions) > 6 else 0)
            ax.minorticks_off()
        ax.set_xlabel(x)
        if k % cols == 0:
            ax.set_ylabel(y)
        ax.tick_params(labelleft=True)
        ax.grid(alpha=0.3)
        if others:
            ax.set_title(", ".join(f"{f}={v}" for f, v in zip(others, facet)), fontsize=9)
    for k in range(n, nrows * cols):
        axes[k // cols, k % cols].set_visible(False)
    what = "mean and 95% CI over seeds" if kind == "line" else "distribution over seeds"
    fig.legend(handles=list(handles.values()), labels=list(handles), loc="outside upper center",
               ncol=min(len(handles), 6), fontsize=9, frameon=False, title=f"{y} vs {x} ({what})",
               title_fontsize=11)
    return fig


def plain_numbers(fig: Any) -> Any:
    """Every axis of ``fig`` in plain numbers: no scientific notation and no offset (``+1e6``) on a linear
    axis, ``1``, ``10``, ``1,000`` (not ``10^3``) on a logarithmic one; categorical axes are left as they
    are.  Returns ``fig``.  O(axes)."""
    from matplotlib.ticker import FuncFormatter, ScalarFormatter

    def plain(value: float, _pos: int | None = None) -> str:
        return f"{value:,.0f}" if abs(value) >= 1 and abs(value - round(value)) < 1e-9 else f"{value:,g}"

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not isinstance(axis.get_major_formatter(), ScalarFormatter):
                if axis.get_scale() == "log":
                    axis.set_major_formatter(FuncFormatter(plain))
                continue
            formatter = ScalarFormatter(useOffset=False)
            formatter.set_scientific(False)
            axis.set_major_formatter(formatter)
    return fig


def png_base64(fig: Any, dpi: int = 100) -> str:
    """``fig`` rendered as PNG, base64 text for a ``data:image/png;base64,`` URI in a self-contained
    page; the figure is closed.  O(pixels)."""
    import base64
    import io

    import matplotlib.pyplot as plt

    try:
        buffer = io.BytesIO()
        plain_numbers(fig).savefig(buffer, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def write_plot(rows: Sequence[dict[str, Any]], x: str, y: str, path: str | Path, kind: str = "line") -> Path:
    """Draw :func:`draw_plot` and write it to ``path`` atomically (format from the suffix).  O(rows)."""
    fig = draw_plot(rows, x, y, kind)
    import matplotlib.pyplot as plt

    try:
        return save_figure(plain_numbers(fig), path)
    finally:
        plt.close(fig)
