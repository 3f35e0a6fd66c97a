"""The comparison table ``simsched run`` prints: one row per scheduler, columns chosen by what the scenario is.

A task-graph scenario is judged by its makespan: the table shows the makespan (mean ± std over the
repetitions), its distance to a lower bound, utilisation and the scheduler's own wall time.  A job stream
(or a scenario with failures or stragglers) is judged job by job: job completion time (JCT: arrival of a
job to the finish of its last task) as mean ± std and its 50th/95th/99th percentiles, mean slowdown,
deadline misses when jobs have deadlines, utilisation and lost work when processors fail.  Task-graph
figures (turnaround, lower bound, SLR, speedup) mean little for a stream and are left to ``--wide``.

Headers are short, with a legend under the table, so that the table fits 100 columns with the usual
scheduler names; ``wide=True`` shows every column with ± std (the previous, ~130-200 column layout).

With two or more repetitions and schedulers, the last column is the paired comparison on the same seeds
(:func:`simsched.study.stats.paired_comparison`): the geometric mean of the per-seed ratio to the
reference with its 95% interval, the reference being the scheduler with the best geometric mean (the
same mean the ratios show), so no row shows a ratio below 1 against a "best" it beats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from simsched.run.runner import RunReport


@dataclass(frozen=True)
class Column:
    """One numeric column of the run table: the row ``key`` it shows, its short ``header``, the ``legend``
    entry saying what it is, a display ``scale`` and ``unit``, significant ``digits`` of its largest value,
    and whether the compact table shows ``± std`` for it (``spread``)."""

    key: str
    header: str
    legend: str
    scale: float = 1.0
    unit: str = ""
    digits: int = 3
    spread: bool = False


GAP = "gap_to_lower_bound"
TIME = "scheduler_time_s"

STATIC = (
    Column("makespan", "makespan", "finish of the last task", digits=4, spread=True),
    Column("avg_turnaround", "turnaround", "mean per task of finish - arrival", digits=4),
    Column("avg_waiting", "waiting", "mean per task of start - ready", digits=3),
    Column("utilization", "util", "busy time / (processors x makespan)", 100.0, "%", 3),
    Column(GAP, "vs LB", "makespan above a lower bound (critical path, total work)", 100.0, "%"),
    Column(TIME, "time", "the scheduler's own wall time"),
)
STREAM = (
    Column("jct_mean", "JCT", "job completion time, arrival to last task: mean", digits=3, spread=True),
    Column("jct_p50", "p50", "its median"),
    Column("jct_p95", "p95", "its 95th percentile"),
    Column("jct_p99", "p99", "its 99th percentile"),
    Column("slowdown_mean", "slowdown", "mean of JCT / the job's time alone"),
    Column("deadline_miss_rate", "missed", "jobs finished after their deadline", 100.0, "%"),
    Column("utilization", "util", "busy time / (processors x makespan)", 100.0, "%", 3),
    Column("lost_work", "lost", "work lost to processor failures (time units)"),
)


ENERGY = Column("energy_j", "kWh", "energy of the run: busy, idle, off and switching (platform.power)", 1 / 3.6e6)
"""Shown whenever the scenario has a power model (the results JSON also has ``carbon_g`` and ``cost_usd``)."""


def is_stream(report: RunReport) -> bool:
    """True when the run's rows carry job metrics (a job stream, or failures/stragglers)."""
    return bool(report.rows) and "jct_mean" in report.rows[0]


NARROW_DROPS = ("jct_p50", "utilization", "lost_work", "jct_p99", GAP)
"""Columns the compact table leaves out, in this order, while it is wider than the terminal."""


def columns(report: RunReport, wide: bool = False) -> list[Column]:
    """The numeric columns for ``report``: by what the scenario is (see the module docstring), dropping
    the deadline column when no job has a deadline and lost work when no processor can fail.  ``wide``:
    every task-graph column, then every stream column.  O(rows)."""
    rows = report.rows
    energy = [ENERGY] if rows and ENERGY.key in rows[0] and getattr(report.scenario, "energy", None) else []
    if not is_stream(report):
        static = list(STATIC) if wide else [c for c in STATIC if c.key not in ("avg_turnaround", "avg_waiting")]
        return static + energy

    def present(c: Column) -> bool:
        if c.key == "deadline_miss_rate":
            return any(r.get(c.key) == r.get(c.key) for r in rows)  # some job has a deadline (else NaN)
        if c.key == "lost_work":
            d = report.scenario.disruptions
            if d is None:
                return False
            import numpy as np

            return bool(np.any(np.asarray(d.failure_rate) > 0) or d.down_trace)
        return c.key in rows[0]

    stream = [c for c in STREAM if present(c)] + energy
    if not wide:
        return stream
    return [*STATIC, *(c for c in stream if c.key != "utilization")]


def _cells(column: Column, summary: list[dict[str, Any]], reps: int, wide: bool) -> list[str]:
    from simsched.report.numbers import format_column, format_duration

    means = [s[column.key][0] for s in summary]
    stds = [s[column.key][1] for s in summary]
    show_spread = reps > 1 and (wide or column.spread)
    if column.key == TIME:
        return [format_duration(m, sd if show_spread else math.nan) for m, sd in zip(means, stds)]
    if column.key == GAP:
        return ["-" if not math.isfinite(m) else f"+{100 * m:.1f}%" for m in means]
    return format_column([m * column.scale for m in means],
                         [sd * column.scale for sd in stds] if show_spread else None,
                         digits=column.digits, unit=column.unit)


def ratio_cell(entry: dict[str, Any], reference: bool) -> str:
    """A paired ratio in the compact table: ``ref`` for the reference, else ``×1.06 [1.04, 1.08]``
    (3 significant digits: differences below 1% are within noise for a handful of seeds)."""
    if reference:
        return "ref"
    r, lo, hi = (entry.get(k, math.nan) for k in ("ratio", "low", "high"))
    if not math.isfinite(r):
        return "-"
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == hi == r:
        return f"×{_sig3(r)}"
    return f"×{_sig3(r)} [{_sig3(lo)}, {_sig3(hi)}]"


def _sig3(x: float) -> str:
    """3 significant digits, trailing zeros kept (``1.20``, ``0.957``, ``12.0``, ``123``)."""
    return f"{x:#.3g}".rstrip(".") if abs(x) < 1e6 else f"{x:.3g}"


def run_table(report: RunReport, wide: bool = False, drop: tuple[str, ...] = ()) -> Table:
    """The rich table for ``report`` (see the module docstring) without the columns whose keys are in
    ``drop``; declined schedulers get a row of ``-`` and their reason is printed after the table by
    :func:`print_run_table`.  O(rows x columns)."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.errors import cut
    from simsched.run.runner import summarize

    problem, scenario, reps = report.problem, report.scenario, report.repetitions
    kinds: dict[str, int] = {}
    for p in problem.platform.processors:
        kinds[p.type] = kinds.get(p.type, 0) + 1
    platform = ", ".join(f"{k} {cut(t, 24)}" for t, k in kinds.items())
    noise = scenario.noise
    noise_text = "no noise" if noise.deterministic else f"{noise.model} noise (sigma {noise.sigma:g})"
    cols = [c for c in columns(report, wide) if c.key not in drop]
    stream = is_stream(report)
    key, what = ("jct_mean", "mean JCT") if stream else ("makespan", "makespan")
    summary = summarize(report, [c.key for c in cols])

    paired = None
    if reps > 1 and len(summary) > 1:  # the same seeds for every scheduler: compare them pair by pair
        from simsched.study.stats import paired_comparison

        paired = paired_comparison(report.rows, key)

    table = Table(title=escape(f"{cut(scenario.name)}: {problem.n_tasks} tasks, {problem.graph.n_edges} edges on "
                               f"{problem.platform.size_text()} ({platform})"), title_justify="left")
    longest = max((len(s["scheduler"]) for s in summary), default=9)
    table.add_column("scheduler", style="bold", overflow="fold", min_width=min(max(9, longest), 24))
    for c in cols:
        table.add_column(c.header, justify="right", no_wrap=True)
    if paired is not None:
        table.add_column(f"{what} vs ref" if wide else "vs ref", justify="right", no_wrap=True)
    cells = [_cells(c, summary, reps, wide) for c in cols]
    first = cols.index(next(c for c in cols if c.key == key))
    best = min((s[key][0] for s in summary), default=math.nan)
    for i, s in enumerate(summary):
        row = [escape(s["scheduler"]), *(col[i] for col in cells)]
        green = (s[key][0] <= best * (1 + 1e-12)) if paired is None else paired["best"] == s["scheduler"]
        if green and len(summary) > 1:
            row[1 + first] = f"[green]{row[1 + first]}[/green]"
        if paired is not None:
            entry = paired["ratios"].get(s["scheduler"], {})
            is_ref = paired["reference"] == s["scheduler"]
            if wide:
                from simsched.study.stats import format_ratio

                row.append(escape(format_ratio(entry) + (" ref" if is_ref else "")))
            else:
                row.append(escape(ratio_cell(entry, is_ref)))
        table.add_row(*row)
    for label in report.declined:
        row = [escape(label), *(["declined"] + ["-"] * (len(cols) - 1))]
        table.add_row(*row, *(["-"] if paired is not None else []))

    bound = "" if stream else f"; makespan lower bound {report.lower_bound:.5g}"
    table.caption = escape(f"seed {report.seed}, {reps} repetition{'s' if reps > 1 else ''}, {noise_text}{bound}")
    table.caption_justify = "left"
    return table


def legend(report: RunReport, wide: bool = False, drop: tuple[str, ...] = ()) -> str:
    """What the columns of :func:`run_table` are, in one paragraph printed under it."""
    cols = [c for c in columns(report, wide) if c.key not in drop]
    reps = report.repetitions
    what = "mean JCT" if is_stream(report) else "makespan"
    spread = [c.header for c in cols if (wide or c.spread) and c.key != GAP]
    parts = [f"{c.header}: {c.legend}" for c in cols]
    if reps > 1:
        parts.insert(0, f"mean of {reps} repetitions" + (f", ± std for {', '.join(spread)}" if spread else ""))
        if len(report.schedulers) > 1:
            parts.append(f"vs ref: {what} / the reference's, geometric mean over the paired seeds with its 95% "
                         f"interval; ref: the scheduler with the best geometric mean; green: significantly best")
    left_out = [c.header for c in columns(report, wide) if c.key in drop]
    if left_out:
        parts.append(f"left out to fit the terminal: {', '.join(left_out)}")
    return "; ".join(parts) + ("." if wide else ". --wide: every column with ± std.")


def print_run_table(report: RunReport, console: Console, wide: bool = False) -> None:
    """Print :func:`run_table` and one line per declined scheduler with its reason."""
    from rich.markup import escape

    from simsched.report.fit import fit_width, print_natural, table_width

    table, drop = run_table(report, wide), ()
    if not wide:  # a terminal narrower than the table: leave out the least telling columns, not wrap cells
        present = {c.key for c in columns(report, wide)}
        candidates = [k for k in NARROW_DROPS if k in present]
        while candidates and table_width(console, table) > console.width:
            drop = (*drop, candidates.pop(0))
            table = run_table(report, wide, drop)
    title, caption = table.title, table.caption  # printed outside, unwrapped by a narrow table
    table.title = table.caption = None
    width = fit_width(console)
    console.print(title, width=width, highlight=False)
    if wide:  # every cell whole at the table's natural width (the terminal wraps)
        print_natural(console, table)
    else:
        console.print(table)
    console.print(caption, width=width, highlight=False)
    console.print(escape(legend(report, wide, drop)), width=width, style="dim")
    for label, reason in report.declined.items():
        console.print(escape(f"{label} declined: {reason}"))
