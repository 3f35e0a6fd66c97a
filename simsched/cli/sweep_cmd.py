"""``simsched sweep STUDY.yaml``: run a study on a process pool or a Dask cluster, resumably.

Prints what will run, a rich progress bar (runs, rate, ETA; on a terminal only) and a closing
line.  Exit 0 when the study finished (failed runs are rows with an ``error``, listed briefly), 2 on
bad input or a lost worker (finished rows are kept: ``--resume`` continues), 130 on Ctrl-C (same).
See docs/studies.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simsched.cli.common import keeps_finished_work


class _Bar:
    """A rich progress bar on stderr with runs done, rate and ETA (terminal only)."""

    def __init__(self, description: str) -> None:
        from simsched.cli.common import console as _console

        self.console = _console(stderr=True)
        self.description = description
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int, failed: int) -> None:
        if not self.console.is_terminal or total == 0:
            return
        if self.bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                ProgressColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.text import Text

            class Rate(ProgressColumn):
                def render(self, task: Any) -> Text:
                    return Text("-- runs/s" if task.speed is None else f"{task.speed:.1f} runs/s")

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TaskProgressColumn(), Rate(), TimeElapsedColumn(), TextColumn("ETA"),
                                TimeRemainingColumn(), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.description, total=total)
        note = f" ({failed} failed)" if failed else ""
        self.bar.update(self.task, completed=done, description=self.description + note)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _sweep(study: Path, workers: int | None, dask: str | None, resume: bool, output: Path | None) -> None:
    from simsched.outputs import check_output
    from simsched.run.tables import SUFFIXES, pyarrow_module, table_format
    from simsched.study.spec import load_study
    from simsched.study.sweep import run_sweep

    output = output if output is not None else Path(study.stem + ".csv")
    check_output(output, option="-o", suffixes=SUFFIXES)
    if table_format(output) == "parquet":
        pyarrow_module()
    from simsched.run.executors import executor_for

    executor = executor_for(workers, dask)
    if dask is not None:
        from simsched.run.executors import require_distributed

        require_distributed()
    loaded = load_study(study)
    n_sched = len(loaded.points[0].scenario.schedulers)
    n_seeds = len(loaded.points[0].seeds)
    total = len(loaded.tasks())
    typer.echo(f"study {loaded.name}: {len(loaded.points)} point{'s' if len(loaded.points) != 1 else ''} x "
               f"{n_sched} scheduler{'s' if n_sched != 1 else ''} x {n_seeds} seed{'s' if n_seeds != 1 else ''}"
               f" = {total} runs -> {output}")
    bar = _Bar(f"{loaded.name} on {executor.description}")
    with keeps_finished_work(bar.close, f"; finished runs are saved in {output}: continue with --resume"):
        outcome = run_sweep(loaded, output, executor, resume=resume, progress=bar)
    skipped = f", {outcome.skipped} already done" if outcome.skipped else ""
    rate = f" ({outcome.rate:.1f} runs/s)" if outcome.ran else ""
    typer.echo(f"{outcome.ran} runs in {outcome.seconds:.1f} s{rate} on {executor.description}, "
               f"{outcome.failed} failed{skipped}; {outcome.rows} rows in {output}")
    if outcome.failed:
        _print_failures(output, outcome.run_id)


def _print_failures(output: Path, run_id: str, limit: int = 3) -> None:
    """The most common error messages of this sweep's failed runs."""
    from collections import Counter

    from simsched.run.store import load_rows

    errors = Counter(r["error"] for r in load_rows(output) if r["error"] and r["run_id"] == run_id)
    for message, count in errors.most_common(limit):
        typer.echo(f"  {count} x {message}")


def sweep(
    study: Path = typer.Argument(..., help="Study YAML file (see docs/studies.md).", show_default=False),
    workers: int | None = typer.Option(None, "--workers", "-w",
                                       help="Local worker processes (default: every CPU), or LocalCluster workers."),
    dask: str | None = typer.Option(None, "--dask",
                                    help="Run on Dask: 'local' (a LocalCluster) or a scheduler address tcp://HOST:PORT."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted study: skip runs already saved."),
    output: Path | None = typer.Option(None, "--output", "-o",
                                       help="Results file, .csv or .parquet (default: STUDY's name + .csv)."),
) -> None:
    """Run every (study point, scheduler, seed) of STUDY and save one row per run as it finishes."""
    from simsched.cli.common import user_errors

    user_errors(_sweep)(study, workers, dask, resume, output)
