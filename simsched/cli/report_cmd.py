"""``simsched report RESULTS.json -o report.html [--trace trace.json]``.

Turns a results document of ``simsched run --json`` into a self-contained HTML page
(:mod:`simsched.cli.report_html`) and, with ``--trace``, a Chrome/Perfetto trace
(:mod:`simsched.cli.trace`).  Output paths are checked before anything is written; both files are
written atomically.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.errors import SimschedError


def _report(results: Path, output: Path | None, trace: Path | None) -> None:
    from simsched.cli.outputs import check_output
    from simsched.cli.report_data import load_document
    from simsched.cli.report_html import write_report

    output = output if output is not None else results.with_suffix(".html")
    check_output(output, option="-o", suffixes=(".html", ".htm"))
    if trace is not None:
        check_output(trace, option="--trace", suffixes=(".json",))
        if trace.resolve() == output.resolve():
            raise SimschedError("-o and --trace name the same file")
    doc = load_document(results)
    write_report(doc, output)
    typer.echo(f"report written to {output}")
    if trace is not None:
        from simsched.cli.trace import write_trace_document

        write_trace_document(doc, trace)
        typer.echo(f"trace written to {trace} (open it in https://ui.perfetto.dev or chrome://tracing)")


def report(
    results: Path = typer.Argument(..., help="Results document of `simsched run --json`.", show_default=False),
    output: Path | None = typer.Option(None, "--output", "-o", help="HTML file (default: RESULTS with .html)."),
    trace: Path | None = typer.Option(None, "--trace", help="Also write a Chrome/Perfetto trace (.json) here."),
) -> None:
    """Write a self-contained HTML report (metrics, interactive Gantt charts, utilisation) of a run."""
    from simsched.cli.common import user_errors

    user_errors(_report)(results, output, trace)
