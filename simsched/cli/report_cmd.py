"""``simsched report RESULTS.json -o report.html [--trace trace.json]`` and
``simsched report STUDY.csv -o study.html [--metric NAME]...``.

Turns a results document of ``simsched run --json`` into a self-contained HTML page
(:mod:`simsched.report.html`) and, with ``--trace``, a Chrome/Perfetto trace
(:mod:`simsched.report.trace`); a sweep's results (``.csv`` or ``.parquet``) into a study report
(:mod:`simsched.report.study`).  Output paths are checked before anything is written; both files are
written atomically.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import user_errors
from simsched.errors import SimschedError


@user_errors
def report(
    results: Path = typer.Argument(..., help="Results document of `simsched run --json`, or a sweep's results "
                                   "(.csv or .parquet).", show_default=False),
    output: Path | None = typer.Option(None, "--output", "-o", help="HTML file (default: RESULTS with .html)."),
    trace: Path | None = typer.Option(None, "--trace", help="Also write a Chrome/Perfetto trace (.json) of a run."),
    metric: list[str] | None = typer.Option(None, "--metric", "-m", help="Study reports: metric of the table and "
                                            "plots (repeatable; default: makespan, slr, utilization)."),
    transfers: bool = typer.Option(False, "--transfers", help="Run reports: show the data transfers between "
                                   "processors on the Gantt charts when the page opens (a check box toggles them)."),
) -> None:
    """Write a self-contained HTML report: of a run (metrics, interactive Gantt charts, utilisation) or
    of a sweep (summary table with 95% intervals, plots)."""
    from simsched.outputs import check_output
    from simsched.report.html import write_report
    from simsched.report.study import is_study_results, write_study_report
    from simsched.run.document import load_document

    output = output if output is not None else results.with_suffix(".html")
    check_output(output, option="-o", suffixes=(".html", ".htm"), inputs=[results])
    if is_study_results(results):
        from simsched.study.work import check_metric

        if trace is not None or transfers:
            raise SimschedError("--trace and --transfers draw a run's schedules: give them the JSON of "
                                "`simsched run --json`, not a sweep's results")
        metrics = [check_metric(m, "--metric") for m in (metric or ())] or None
        write_study_report(results, output, metrics)
        typer.echo(f"study report written to {output}")
        return
    if metric:
        raise SimschedError("--metric chooses the metrics of a study report: give a sweep's results (.csv or "
                            ".parquet)")
    if trace is not None:
        check_output(trace, option="--trace", suffixes=(".json",), inputs=[results])
        if trace.resolve() == output.resolve():
            raise SimschedError("-o and --trace name the same file")
    doc = load_document(results)
    write_report(doc, output, transfers)
    typer.echo(f"report written to {output}")
    if trace is not None:
        from simsched.report.trace import write_trace_document

        write_trace_document(doc, trace)
        typer.echo(f"trace written to {trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
