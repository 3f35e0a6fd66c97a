"""What ``simsched capacity`` prints and draws of an answer (:mod:`simsched.capacity.answer`).

* a ``"capacity"`` answer: one row per scheduler/policy with its confidence, and one sentence each
  (:func:`print_capacity_table`); two panels against capacity (:func:`write_capacity_plot`);
* a ``"capacity-over"`` answer: one row per value and scheduler (:func:`print_over_table`);
* a ``"mix"`` answer: one row per mix, the cheapest passing one and the front marked
  (:func:`print_mix_table`); service against cost (:func:`write_mix_plot`).

:func:`print_answer` and :func:`write_answer_plot` pick the right one.  Plots are written atomically
(:func:`simsched.fileio.save_figure`); matplotlib is imported only to draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from simsched.capacity.answer import display_of, level_of, one_fewer, shown_level
from simsched.fileio import save_figure
from simsched.report.fit import fit_width, print_table
from simsched.report.labels import place_labels
from simsched.report.plots import plain_numbers


def _fmt(x: float) -> str:
    """Four significant digits; ``inf`` for infinity, ``-`` for NaN."""
    if not math.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.4g}"


COSTS = (("energy_kwh", "kWh/day", "draws"), ("carbon_kg", "kg CO2/day", "emits"), ("cost_usd", "USD/day", "costs"))
"""A day's cost metrics as shown: key, column header, verb of the answer's sentence (their means over the
days are per day; :data:`simsched.capacity.search.COSTS`)."""


def cost_keys(levels: list[Mapping[str, Any]], leave_out: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """The :data:`COSTS` some of ``levels`` carry (a power model, intensities, prices), less ``leave_out``."""
    return [c for c in COSTS if c[0] not in leave_out and any(c[0] in lv["metrics"] for lv in levels)]


def cost_cells(level: Mapping[str, Any], keys: list[tuple[str, str, str]]) -> list[str]:
    """``level``'s mean of each cost in ``keys``, four significant digits (``-`` where it has none)."""
    return [_fmt(level["metrics"][k]["mean"]) if k in level["metrics"] else "-" for k, _h, _v in keys]


def cost_text(level: Mapping[str, Any], leave_out: tuple[str, ...] = ()) -> str:
    """``"; draws 0.613 kWh/day, costs 6.88 USD/day"`` for the costs ``level`` carries ("" without)."""
    keys = cost_keys([level], leave_out)
    parts = [f"{verb} {cell} {unit}" for (_k, unit, verb), cell in zip(keys, cost_cells(level, keys))]
    return "; " + ", ".join(parts) if parts else ""


def days_text(level: Mapping[str, Any]) -> str:
    """``"18/20"``, or for a capacity that stopped early ``"≤17/20"`` (at most that many could
    have met it: it had already missed too many)."""
    k, n, planned = level["met_days"], level["days"], level.get("planned_days", level["days"])
    return f"{k}/{n}" if n >= planned else f"≤{planned - (n - k)}/{planned}"


def confidence_statement(result: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """One sentence: the answer, on how many days it meets the objective with the Wilson interval,
    the first clause's metric mean with its t interval, and what one fewer gives."""
    n = entry["capacity"]
    if n is None:
        top = max(entry["levels"], key=lambda lv: lv["capacity"])
        return (f"{entry['variant']}: not met with up to {result['max']} {result['unit']} "
                f"(best {days_text(top)} days at {top['capacity']})")
    lv = level_of(entry, n)
    assert lv is not None
    lo, hi = lv["wilson"]
    clause = result["clauses"][0]
    m = lv["metrics"][clause["metric"]]
    scale, unit = display_of(result, clause["metric"])
    text = (f"{entry['variant']}: {n} {result['unit']} meets it on {lv['met_days']}/{lv['days']} days "
            f"({lv['rate']:.0%}; 95% Wilson interval {lo:.0%}–{hi:.0%}); {clause['metric']} mean "
            f"{_fmt(m['mean'] / scale)}{unit}" + (f" (95% t interval {_fmt(m['t_low'] / scale)}–"
                                                 f"{_fmt(m['t_high'] / scale)}{unit})"
                                                 if math.isfinite(m["t_low"]) else ""))
    text += cost_text(lv)
    below = level_of(entry, n - 1)
    if below is not None:
        text += f"; with {n - 1}: {days_text(below)} days"
    return text


def mix_statement(result: Mapping[str, Any]) -> str:
    """One sentence: the cheapest passing mix, its days met with the Wilson interval and its mean cost
    with the t interval, or that no mix passes."""
    by = result["cheapest_by"]
    if result["answer"] is None:
        return (f"{result['variant']}: no mix meets {result['objective']} on {result['on_days']:.0%} of "
                f"{result['days']} days")
    p = result["points"][result["answer"]]
    c = p["metrics"][by]
    lo, hi = p["wilson"]
    return (f"{result['variant']}: the cheapest mix by {by} meeting {result['objective']} is {p['label']}: "
            f"{p['met_days']}/{p['days']} days ({p['rate']:.0%}; 95% Wilson interval {lo:.0%}–{hi:.0%}), "
            f"{by} mean {c['mean']:.4g}" + (f" (95% t interval {c['t_low']:.4g}–{c['t_high']:.4g})"
                                            if math.isfinite(c["t_low"]) else "") + cost_text(p))


def _capacity_cells(entry: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """A variant's answer as a cell, the level shown for it and the one below it."""
    n = entry["capacity"]
    return "not reachable" if n is None else str(n), shown_level(entry), one_fewer(entry)


def print_capacity_table(result: Mapping[str, Any], console: Any) -> None:
    """The answer per scheduler/policy with its confidence (one row each) and one sentence each."""
    clause = result["clauses"][0]
    scale, unit = display_of(result, clause["metric"])
    table = Table(title=escape(f"capacity: {result['objective']} on ≥ {result['on_days']:.0%} of days"),
                  caption=escape(f"{result['days']} simulated days (seeds {result['seeds'][0]}–{result['seeds'][1]}"
                                 + (f"; {result['days_note']}" if result.get("days_note") else "") + "); "
                                 "interval of the day success rate: Wilson 95%; of the mean: Student's t 95%; "
                                 "≤k/N: stopped once it could not pass"))
    costs = cost_keys([shown_level(e) for e in result["variants"]], (clause["metric"],))
    for col in ("scheduler", result["unit"], "days met", "95% interval", f"{clause['metric']} mean{unit}",
                "95% t interval", *(h for _k, h, _v in costs), "one fewer", "sims", "s"):
        table.add_column(escape(col), justify="left" if col == "scheduler" else "right",
                         no_wrap=col != "scheduler")
    for e in result["variants"]:
        answer, lv, below = _capacity_cells(e)
        m = lv["metrics"][clause["metric"]]
        table.add_row(escape(e["variant"]), answer,
                      days_text(lv), f"{lv['wilson'][0]:.0%}–{lv['wilson'][1]:.0%}",
                      _fmt(m["mean"] / scale),
                      f"{_fmt(m['t_low'] / scale)}–{_fmt(m['t_high'] / scale)}" if math.isfinite(m["t_low"]) else "-",
                      *cost_cells(lv, costs), "-" if below is None else days_text(below), str(e["simulations"]),
                      f"{e['wall_s']:.1f}")
    print_table(console, table)
    for e in result["variants"]:
        console.print(escape(confidence_statement(result, e)), width=fit_width(console))


def print_over_table(over: Mapping[str, Any], console: Any) -> None:
    """One row per value of the ``--over`` field and scheduler: the fewest capacity, its days met
    with the Wilson interval, the first clause's metric mean, and what one fewer gave."""
    first = over["cells"][0]["result"]
    clause = first["clauses"][0]
    scale, unit = display_of(first, clause["metric"])
    table = Table(title=escape(f"capacity per {over['field']}: {first['objective']} on ≥ {first['on_days']:.0%} "
                               f"of days"),
                  caption=escape(f"{first['days']} simulated days per capacity (seeds {first['seeds'][0]}–"
                                 f"{first['seeds'][1]}, the same for every value); interval of the day success "
                                 "rate: Wilson 95%; ≤k/N: stopped once it could not pass"))
    costs = cost_keys([shown_level(e) for cell in over["cells"] for e in cell["result"]["variants"]],
                      (clause["metric"],))
    for col in (over["field"], "scheduler", first["unit"], "days met", "95% interval",
                f"{clause['metric']} mean{unit}", *(h for _k, h, _v in costs), "one fewer", "sims"):
        table.add_column(escape(col), justify="left" if col == "scheduler" else "right",
                         no_wrap=col not in ("scheduler", over["field"]))
    for cell in over["cells"]:
        for e in cell["result"]["variants"]:
            answer, lv, below = _capacity_cells(e)
            table.add_row(escape(str(cell["value"])), escape(e["variant"]), answer,
                          days_text(lv), f"{lv['wilson'][0]:.0%}–{lv['wilson'][1]:.0%}",
                          _fmt(lv["metrics"][clause["metric"]]["mean"] / scale), *cost_cells(lv, costs),
                          "-" if below is None else days_text(below), str(e["simulations"]))
    print_table(console, table)


def print_mix_table(result: Mapping[str, Any], console: Any) -> None:
    """One row per mix: ``*`` beside the answer, ``f`` beside the front; days met with the Wilson interval,
    the service metric's mean, the ``cheapest_by`` mean with its t interval and the other costs per day."""
    service, by = result["service"], result["cheapest_by"]
    table = Table(title=escape(f"cheapest mix by {by}: {result['objective']} on ≥ {result['on_days']:.0%} of days "
                               f"({result['variant']})"),
                  caption=escape(f"{result['days']} simulated days (seeds {result['seeds'][0]}–{result['seeds'][1]}), "
                                 "the same for every mix; * the answer, f on the front of "
                                 f"{service} against {by}; Wilson 95% (days), Student's t 95% (means)"))
    costs = cost_keys(result["points"], (service, by))
    for col in ("mix", "", "days met", "95% interval", f"{service} mean", f"{by} mean (95% t)",
                *(h for _k, h, _v in costs)):
        table.add_column(escape(col), justify="left" if col == "mix" else "right", no_wrap=True)
    front = set(result["front"])
    for i, p in enumerate(result["points"]):
        s, c = p["metrics"][service], p["metrics"][by]
        mark = ("*" if i == result["answer"] else "") + ("f" if i in front else "")
        table.add_row(escape(p["label"]), mark, f"{p['met_days']}/{p['days']}",
                      f"{p['wilson'][0]:.0%}–{p['wilson'][1]:.0%}", _fmt(s["mean"]),
                      f"{_fmt(c['mean'])} ({_fmt(c['t_low'])}–{_fmt(c['t_high'])})", *cost_cells(p, costs))
    print_table(console, table, key=2)
    console.print(escape(mix_statement(result)), width=fit_width(console))


def print_answer(result: Mapping[str, Any], console: Any) -> None:
    """The table (and sentences) of any capacity answer, by its ``kind``."""
    show = {"capacity-over": print_over_table, "mix": print_mix_table}.get(result.get("kind", ""),
                                                                          print_capacity_table)
    show(result, console)


def write_capacity_plot(result: Mapping[str, Any], path: str | Path) -> None:
    """Two panels against capacity, one line per scheduler: the first clause's metric (mean over
    days, Student's t 95% interval as error bars, the threshold dashed) and the day success rate
    (Wilson 95% error bars, the required rate dashed; hollow markers for capacities that stopped
    early).  Atomic write."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    clause = result["clauses"][0]
    metric = clause["metric"]
    scale, unit = display_of(result, metric)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    any_stopped = False
    for i, e in enumerate(result["variants"]):
        levels = sorted(e["levels"], key=lambda lv: lv["capacity"])
        color = f"C{i}"
        pts = [(lv["capacity"], lv["metrics"][metric]) for lv in levels if math.isfinite(lv["metrics"][metric]["mean"])]
        if pts:
            xs = [p[0] for p in pts]
            ys = [p[1]["mean"] / scale for p in pts]
            lo = [max(0.0, (p[1]["mean"] - p[1]["t_low"]) / scale) if math.isfinite(p[1]["t_low"]) else 0 for p in pts]
            hi = [max(0.0, (p[1]["t_high"] - p[1]["mean"]) / scale) if math.isfinite(p[1]["t_high"]) else 0
                  for p in pts]
            ax1.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=color,
                         label=f"{e['variant']} (answer {e['capacity']})")
        xs = [lv["capacity"] for lv in levels]
        rates = [lv["rate"] for lv in levels]
        ax2.errorbar(xs, rates, yerr=[[max(0.0, r - lv["wilson"][0]) for r, lv in zip(rates, levels)],
                                      [max(0.0, lv["wilson"][1] - r) for r, lv in zip(rates, levels)]],
                     marker="o", capsize=3, color=color, label=e["variant"])
        stopped = [lv for lv in levels if lv.get("stopped_early")]
        if stopped:  # hollow: the days simulated before the capacity could no longer pass
            ax2.scatter([lv["capacity"] for lv in stopped], [lv["rate"] for lv in stopped], s=60, zorder=3,
                        facecolors="white", edgecolors=color)
            any_stopped = True
        if e["capacity"] is not None:
            for ax in (ax1, ax2):
                ax.axvline(e["capacity"], color=color, linestyle=":", alpha=0.6)
    ax1.axhline(clause["threshold"] / scale, color="grey", linestyle="--", label=f"objective {clause['op']} "
                f"{_fmt(clause['threshold'] / scale)}{unit}")
    ax2.axhline(result["on_days"], color="grey", linestyle="--", label=f"required {result['on_days']:.0%} of days")
    ax1.set_ylabel(f"{metric}{unit}: mean over days, 95% t interval")
    ax2.set_ylabel("days meeting the objective (95% Wilson interval)")
    if any_stopped:
        ax2.set_title("hollow: stopped once it could not pass (rate over the days simulated; --all-days "
                      "simulates all)", fontsize=8, color="#555")
    ax2.set_ylim(-0.03, 1.03)
    for ax in (ax1, ax2):
        ax.set_xlabel(result["unit"])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{result['objective']}  ({result['days']} days, seeds {result['seeds'][0]}–{result['seeds'][1]})",
                 fontsize=10)
    fig.tight_layout()
    try:
        save_figure(plain_numbers(fig), Path(path), dpi=110)
    finally:
        plt.close(fig)


def write_mix_plot(result: Mapping[str, Any], path: str | Path) -> None:
    """The service metric against ``cheapest_by`` for every mix (passing ones filled), the front as a
    labelled line, the answer circled; atomic (:func:`simsched.fileio.save_figure`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    service, by = result["service"], result["cheapest_by"]
    pts = result["points"]
    x = [p["metrics"][service]["mean"] for p in pts]
    y = [p["metrics"][by]["mean"] for p in pts]
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    front = result["front"]
    for xi, yi, p in zip(x, y, pts):
        ax.scatter([xi], [yi], c="tab:green" if p["passes"] else "white", edgecolors="tab:green", zorder=3)
    ax.plot([x[i] for i in front], [y[i] for i in front], color="tab:blue", lw=1, label="front")
    a = result["answer"]
    if a is not None:
        ax.scatter([x[a]], [y[a]], s=200, facecolors="none", edgecolors="tab:red", label="cheapest passing")
    for c in result["clauses"]:
        if c["metric"] == service:
            ax.axvline(c["threshold"], color="grey", ls="--", lw=1)
    ax.set_xlabel(f"{service} (mean over days)")
    ax.set_ylabel(f"{by} (mean over days)")
    ax.set_title(f"{result['variant']}: mixes, filled = meets the objective on ≥ {result['on_days']:.0%} of days",
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    # labels on the answer (first, never covered) and the front, each where it overlaps nothing
    order = ([a] if a is not None else []) + [i for i in front if i != a]
    placed = place_labels(ax, [(x[i], y[i]) for i in order],
                          [("answer: " if i == a else "") + pts[i]["label"] for i in order],
                          [{"color": "tab:red", "fontweight": "bold"} if i == a else {} for i in order])
    if not all(placed):
        ax.text(1.01, 0.0, "some front mixes unlabelled\n(no room): see the table", transform=ax.transAxes,
                fontsize=7, color="#555", va="bottom")
    try:
        save_figure(plain_numbers(fig), path)
    finally:
        plt.close(fig)


def write_answer_plot(result: Mapping[str, Any], path: str | Path) -> None:
    """The plot of a ``"capacity"`` or ``"mix"`` answer, by its ``kind`` (an ``--over`` answer has none)."""
    (write_mix_plot if result.get("kind") == "mix" else write_capacity_plot)(result, path)
