"""A baseline comparison (:func:`simsched.testing.baseline.compare_baseline`) as a person reads it: the
metrics that changed, coloured by verdict, then one line with the count of regressions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console

    from simsched.testing.baseline import Comparison


def print_comparison(cmp: Comparison, console: Console, show_all: bool = False) -> None:
    """Changed metrics (all with ``show_all``) as a table, then a one-line verdict."""
    from rich.markup import escape
    from rich.table import Table

    for w in cmp.warnings:
        console.print(f"[yellow]{escape(w)}[/yellow]")
    shown = [c for c in cmp.changes if show_all or c.verdict != "unchanged"]
    if shown:
        table = Table(title="changes against the baseline")
        for col in ("scenario", "scheduler", "metric", "old", "new", "change", "verdict"):
            table.add_column(col, justify="right" if col in ("old", "new", "change") else "left")
        colour = {"regression": "red", "missing": "red", "improvement": "green", "new": "cyan"}
        for c in shown:
            cells = ("-", "-", "-") if c.metric == "-" else (
                f"{c.old_mean:.6g}", f"{c.new_mean:.6g}", f"{100 * c.relative:+.1f}%" if c.old_mean else "-")
            table.add_row(escape(c.scenario), escape(c.scheduler), c.metric, *cells,
                          f"[{colour.get(c.verdict, 'default')}]{c.verdict}[/]")
        print_table(console, table)
    n_reg = len(cmp.regressions)
    verdict = f"[red]{n_reg} regression(s)[/red]" if n_reg else "[green]no regression[/green]"
    console.print(f"{len(cmp.changes)} metrics compared: {verdict} (tolerance {100 * cmp.tolerance:g}%, "
                  f"{100 * cmp.confidence:g}% confidence)")
