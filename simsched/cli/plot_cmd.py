"""``simsched plot RESULTS --x FIELD --y METRIC``: one line (or box) per scheduler, PNG or SVG.

The drawing is :func:`simsched.report.plots.draw_plot` (see there for what the picture shows); this
command checks its arguments and writes the file atomically.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import user_errors, warning_line
from simsched.errors import SimschedError
from simsched.report.plots import SUFFIXES, write_plot


@user_errors
def plot(
    results: Path = typer.Argument(..., help="Results of a sweep (.csv or .parquet).", show_default=False),
    x: str = typer.Option(..., "--x", help="Field on the x axis (a study override field, seed, tasks, ...)."),
    y: str = typer.Option(..., "--y", help="Metric on the y axis (makespan, slr, ...)."),
    output: Path | None = typer.Option(None, "--output", "-o",
                                       help="Output file, .png or .svg (default: RESULTS_Y_vs_X.png)."),
    kind: str = typer.Option("line", "--kind", help="line (mean ± 95% CI) or box (distribution)."),
) -> None:
    """Plot a metric against a field, one line or box per scheduler."""
    from simsched.outputs import check_output
    from simsched.run.store import completion, load_rows
    from simsched.study.work import METRICS, check_metric

    check_metric(y, "--y")
    if kind not in ("line", "box"):
        raise SimschedError(f"--kind {kind!r}: choose line or box")
    import re

    def safe(name: str) -> str:  # a field name may hold "/" or other characters a file name cannot
        return re.sub(r"[^\w.-]+", "-", name)[:60] or "-"

    output = output if output is not None else results.with_name(f"{results.stem}_{safe(y)}_vs_{safe(x)}.png")
    check_output(output, option="-o", suffixes=SUFFIXES, inputs=[results])
    rows = load_rows(results, need=[y])
    columns = list(dict.fromkeys(k for r in rows for k in r if k not in METRICS))
    if x not in columns or x in ("task_id", "point_id", "error", "run_id"):
        from simsched.study.stats import override_fields

        choices = [*override_fields(rows), "seed", "tasks", "scheduler", "point"]
        raise SimschedError(f"--x {x!r} is not a column of {results}; choose from {', '.join(choices)}")
    if not any(not r["error"] for r in rows):
        raise SimschedError("every run in the results failed: nothing to plot", file=results)
    done = completion(results, rows)
    if not done.complete:
        warning_line(f"{results}: {done.note()}")
    write_plot(rows, x, y, output, kind)
    typer.echo(f"plot written to {output}" + ("" if done.complete else f" (INCOMPLETE study: {done.runs()})"))
