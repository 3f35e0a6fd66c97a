"""``simsched baseline record SCENARIO... -o baseline.json`` and ``simsched baseline compare baseline.json``.

``record`` runs the scenarios and writes every repetition's metrics (atomically); ``compare``
re-runs them with the recorded seeds and repetitions and exits 1 when a scheduler's metric got
worse beyond the tolerance and beyond what the noise between repetitions explains (Welch t
interval, see :mod:`simsched.testing.baseline`), printing what changed (:mod:`simsched.report.baseline`).
Exit 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import console as _console
from simsched.cli.common import user_errors

app = typer.Typer(help="Record scenario metrics and check later runs against them.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


@app.command()
@user_errors
def record(
    scenarios: list[Path] = typer.Argument(..., help="Scenario YAML files.", show_default=False),
    output: Path = typer.Option(..., "--output", "-o", help="Baseline file to write (.json).", show_default=False),
    repetitions: int | None = typer.Option(None, "--repetitions", "-r",
                                           help="Repetitions per scheduler (default: each scenario's)."),
    metric: list[str] | None = typer.Option(None, "--metric", "-m",
                                            help="Metric to track (repeatable; default: makespan, "
                                                 "avg_turnaround, avg_waiting)."),
) -> None:
    """Run SCENARIOS and record every scheduler's metrics as a baseline."""
    from simsched.errors import SimschedError
    from simsched.outputs import check_output
    from simsched.testing.baseline import DEFAULT_METRICS, record_baseline, write_baseline

    check_output(output, option="--output", suffixes=[".json"])
    if repetitions is not None and repetitions < 1:
        raise SimschedError(f"--repetitions must be >= 1, got {repetitions}")
    doc = record_baseline(scenarios, output, repetitions=repetitions, metrics=metric or DEFAULT_METRICS)
    write_baseline(doc, output)
    runs = sum(len(s["results"]) * s["repetitions"] for s in doc["scenarios"])
    typer.echo(f"baseline of {len(doc['scenarios'])} scenario(s), {runs} runs, written to {output}")


@app.command()
@user_errors
def compare(
    baseline: Path = typer.Argument(..., help="Baseline file written by `baseline record`.", show_default=False),
    tolerance: float = typer.Option(0.05, "--tolerance", "-t", help="Relative worsening allowed (0.05 = 5%)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of the noise interval."),
    show_all: bool = typer.Option(False, "--all", help="Show unchanged metrics too."),
) -> None:
    """Re-run the baseline's scenarios; exit 1 when a scheduler's metric got worse."""
    from simsched.report.baseline import print_comparison
    from simsched.testing.baseline import compare_baseline

    cmp = compare_baseline(baseline, tolerance=tolerance, confidence=confidence)
    print_comparison(cmp, _console(), show_all)
    if cmp.failed:
        raise typer.Exit(1)
