"""A sweep's summary (mean ± 95% CI per study point and scheduler), its paired comparison and the
days meeting an objective, as terminal tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console


def print_summary(entries: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str],
                  title: str, console: Console) -> None:
    """The summary as a rich table: override fields, scheduler, runs, one column per metric."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title), caption="mean ± half-width of the 95% confidence interval (Student's t) "
                                               "over seeds (left out where below the last digit); "
                                               "failed runs are counted, not averaged")
    for f in fields:
        table.add_column(escape(f), justify="right")
    table.add_column("scheduler", style="bold")
    table.add_column("runs", justify="right")
    for m in metrics:
        table.add_column(m, justify="right")
    from simsched.study.stats import PERCENT, column_decimals, format_mean_ci

    places = {m: column_decimals([(e[m]["mean"], e[m]["ci"]) for e in entries], m in PERCENT) for m in metrics}
    for e in entries:
        runs = str(e["runs"]) + (f" ([red]{e['failed']} failed[/red])" if e["failed"] else "")
        table.add_row(*(escape(str(e.get(f))) for f in fields), escape(str(e["scheduler"])), runs,
                      *(format_mean_ci(e[m]["mean"], e[m]["ci"], m in PERCENT, places[m]) for m in metrics))
    print_table(console, table)


def print_paired(paired: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str],
                 console: Console) -> None:
    """Per point and scheduler: the paired ratio to the point's best mean (same seeds) with its 95%
    interval per metric, and wins/ties/losses against that reference on the first metric; the
    significantly best scheduler of a point in bold green."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.study.stats import format_ratio, format_wtl

    table = Table(title="paired comparison (same seeds)",
                  caption="ratio: geometric mean over seeds of value / the point's best mean (ref) on the same "
                          "seed, paired 95% interval; bold green: significantly best at the point (its paired "
                          f"interval against every other excludes no difference); W/T/L on {metrics[0]} against "
                          "ref, * when significant")
    for f in fields:
        table.add_column(escape(f), justify="right")
    table.add_column("scheduler")
    for m in metrics:
        table.add_column(f"{m} ratio", justify="right")
    table.add_column(f"W/T/L vs ref ({metrics[0]})", justify="right")
    for p in paired:
        first = p[metrics[0]]
        names = list(first["ratios"])
        for name in names:
            cells = []
            for m in metrics:
                comp = p[m]
                ref_mark = " ref" if comp["reference"] == name else ""
                text = escape(format_ratio(comp["ratios"].get(name, {})) + ref_mark)
                cells.append(f"[bold green]{text}[/bold green]" if comp["best"] == name else text)
            ref = first["reference"]
            cell = first["matrix"].get(f"{name} vs {ref}")
            table.add_row(*(escape(str(p.get(f))) for f in fields), escape(name), *cells,
                          "-" if cell is None else format_wtl(cell))
    print_table(console, table)


def print_objective(entries: Sequence[dict[str, Any]], fields: Sequence[str], text: str, console: Console) -> None:
    """The days-met table of :func:`simsched.study.stats.objective_entries`."""
    from rich.markup import escape
    from rich.table import Table


    table = Table(title=escape(f"objective {text}: seeds (days) that meet it"),
                  caption="95% interval: Wilson, of the day success rate; a failed run misses the objective")
    for f in fields:
        table.add_column(escape(f), justify="right")
    for col in ("scheduler", "days met", "rate", "95% interval"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    for e in entries:
        table.add_row(*(escape(str(e.get(f))) for f in fields), escape(str(e["scheduler"])),
                      f"{e['met_days']}/{e['days']}", f"{e['rate']:.0%}",
                      f"{e['wilson'][0]:.0%}–{e['wilson'][1]:.0%}")
    print_table(console, table)
