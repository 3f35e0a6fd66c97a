"""``simsched summarize RESULTS``: mean ± 95% confidence interval per study point and scheduler.

Reads a sweep's results (CSV or Parquet, including the parts of a sweep still running or
interrupted) and prints a rich table; ``--json PATH`` also writes the figures (atomically).
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.errors import SimschedError

DEFAULT_METRICS = ("makespan", "slr", "utilization")


def check_metric(name: str, option: str) -> str:
    """``name`` if it is a metric column; a :class:`SimschedError` listing them otherwise."""
    from simsched.study.work import METRICS

    if name not in METRICS:
        raise SimschedError(f"{option} {name!r} is not a metric; choose from {', '.join(METRICS)}")
    return name




def _summarize(results: Path, metric: list[str] | None, json_path: Path | None) -> None:
    from simsched.study.stats import override_fields, summarize_rows
    from simsched.study.store import load_rows

    metrics = [check_metric(m, "--metric") for m in (metric or DEFAULT_METRICS)]
    if json_path is not None:
        from simsched.outputs import check_output

        check_output(json_path, option="--json", suffixes=(".json",))
    rows = load_rows(results)
    if not rows:
        raise SimschedError("the results file has no rows", file=results)
    fields = override_fields(rows)
    entries = summarize_rows(rows, metrics)
    from simsched.cli.common import console
    from simsched.report.summary import print_summary

    print_summary(entries, fields, metrics, f"{results}: {len(rows)} runs", console())
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
