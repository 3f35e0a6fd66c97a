"""``simsched summarize RESULTS``: mean ± 95% confidence interval per study point and scheduler.

Reads a sweep's results (CSV or Parquet, including the parts of a sweep still running or
interrupted) and prints a rich table; ``--json PATH`` also writes the figures (atomically).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from simsched.errors import SimschedError

DEFAULT_METRICS = ("makespan", "slr", "utilization")


def check_metric(name: str, option: str) -> str:
    """``name`` if it is a metric column; a :class:`SimschedError` listing them otherwise."""
    from simsched.study.work import METRICS

    if name not in METRICS:
        raise SimschedError(f"{option} {name!r} is not a metric; choose from {', '.join(METRICS)}")
    return name




def print_summary(entries: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str],
                  title: str) -> None:
    """The summary as a rich table: override fields, scheduler, runs, one column per metric."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.cli.common import console as _console

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
    _console().print(table)


def _summarize(results: Path, metric: list[str] | None, json_path: Path | None) -> None:
    from simsched.study.stats import override_fields, summarize_rows
    from simsched.study.store import load_rows

    metrics = [check_metric(m, "--metric") for m in (metric or DEFAULT_METRICS)]
    if json_path is not None:
        from simsched.outputs import check_output

        check_output(json_path, option="--json", suffixes=(".json",), inputs=[results])
    rows = load_rows(results)
    if not rows:
        raise SimschedError("the results file has no rows", file=results)
    fields = override_fields(rows)
    entries = summarize_rows(rows, metrics)
    print_summary(entries, fields, metrics, f"{results}: {len(rows)} runs")
    if json_path is not None:
        from simsched.run.results import write_document

        write_document({"results": str(results), "level": 0.95, "fields": fields, "metrics": metrics,
                        "groups": entries}, json_path)
        typer.echo(f"summary written to {json_path}")


def summarize(
    results: Path = typer.Argument(..., help="Results of a sweep (.csv or .parquet).", show_default=False),
    metric: list[str] | None = typer.Option(None, "--metric", "-m",
                                            help="Metric to show (repeatable; default: makespan, slr, utilization)."),
    json_path: Path | None = typer.Option(None, "--json", help="Also write the summary as JSON here."),
) -> None:
    """Print mean ± 95% confidence interval per study point and scheduler."""
    from simsched.cli.common import user_errors

    user_errors(_summarize)(results, metric, json_path)
