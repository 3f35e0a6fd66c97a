"""What ``simsched capacity`` prints and draws for a ``capacity.mix`` question
(:func:`simsched.run.mix.find_mix`): one row per mix, the cheapest passing one and the front marked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simsched.cli.common import console as common_console


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.4g}"


def print_mix_table(result: Mapping[str, Any], console: Any = None) -> None:
    """One row per mix: days met with the Wilson interval, the service metric's mean and the
    ``cheapest_by`` mean with their t intervals; ``*`` marks the answer, ``f`` the front."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.run.mix import mix_statement

    service, by = result["service"], result["cheapest_by"]
    table = Table(title=escape(f"cheapest mix by {by}: {result['objective']} on ≥ {result['on_days']:.0%} of days "
                               f"({result['variant']})"),
                  caption=escape(f"{result['days']} simulated days (seeds {result['seeds'][0]}–{result['seeds'][1]}), "
                                 "the same for every mix; * the answer, f on the front of "
                                 f"{service} against {by}; Wilson 95% (days), Student's t 95% (means)"))
    for col in ("mix", "days met", "95% interval", f"{service} mean", f"{by} mean", f"{by} 95% t", ""):
        table.add_column(escape(col), justify="left" if col == "mix" else "right")
    front = set(result["front"])
    for i, p in enumerate(result["points"]):
        s, c = p["metrics"][service], p["metrics"][by]
        mark = ("*" if i == result["answer"] else "") + ("f" if i in front else "")
        table.add_row(escape(p["label"]), f"{p['met_days']}/{p['days']}", f"{p['wilson'][0]:.0%}–{p['wilson'][1]:.0%}",
                      _fmt(s["mean"]), _fmt(c["mean"]), f"{_fmt(c['t_low'])}–{_fmt(c['t_high'])}", mark)
    out = console or common_console()
    out.print(table)
    out.print(escape(mix_statement(result)), soft_wrap=True)


def write_mix_plot(result: Mapping[str, Any], path: str | Path) -> None:
    """The service metric against ``cheapest_by`` for every mix (passing ones filled), the front as a
    labelled line, the answer circled; atomic (:func:`simsched.fileio.save_figure`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simsched.fileio import save_figure

    service, by = result["service"], result["cheapest_by"]
    pts = result["points"]
    x = [p["metrics"][service]["mean"] for p in pts]
    y = [p["metrics"][by]["mean"] for p in pts]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    front = result["front"]
    for i, (xi, yi, p) in enumerate(zip(x, y, pts)):
        ax.scatter([xi], [yi], c="tab:green" if p["passes"] else "white", edgecolors="tab:green", zorder=3)
        if i in front or i == result["answer"]:  # labels on the front only: the rest would overlap
            ax.annotate(p["label"], (xi, yi), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.plot([x[i] for i in front], [y[i] for i in front], color="tab:blue", lw=1, label="front")
    if result["answer"] is not None:
        a = result["answer"]
        ax.scatter([x[a]], [y[a]], s=200, facecolors="none", edgecolors="tab:red", label="cheapest passing")
    for c in result["clauses"]:
        if c["metric"] == service:
            ax.axvline(c["threshold"], color="grey", ls="--", lw=1)
    ax.set_xlabel(f"{service} (mean over days)")
    ax.set_ylabel(f"{by} (mean over days)")
    ax.set_title(f"{result['variant']}: mixes, filled = meets the objective on ≥ {result['on_days']:.0%} of days",
                 fontsize=9)
    ax.legend(fontsize=8)
    save_figure(fig, path)
    plt.close(fig)
