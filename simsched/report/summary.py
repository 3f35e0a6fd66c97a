"""A sweep's summary (mean ± 95% CI per study point and scheduler) as a terminal table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
    from simsched.study.stats import column_decimals, format_mean_ci

    places = {m: column_decimals([(e[m]["mean"], e[m]["ci"]) for e in entries]) for m in metrics}
    for e in entries:
        runs = str(e["runs"]) + (f" ([red]{e['failed']} failed[/red])" if e["failed"] else "")
        table.add_row(*(escape(str(e.get(f))) for f in fields), escape(str(e["scheduler"])), runs,
                      *(format_mean_ci(e[m]["mean"], e[m]["ci"], decimals=places[m]) for m in metrics))
    console.print(table)
