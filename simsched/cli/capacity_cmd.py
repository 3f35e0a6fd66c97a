"""``simsched capacity SCENARIO.yaml``: the fewest processors (or servers) meeting a service objective.

A thin command over :mod:`simsched.capacity`: checks the options, asks :func:`simsched.capacity.ask`
(the scenario — task-graph, stream, autotuning, cluster log or a mix of processor types — its
objective from ``--objective`` or ``capacity.objective``, ``--days`` simulated days, here or on
``--workers N`` / ``--dask`` executors and in a ``--results`` store that ``--resume`` continues after
a kill) with live progress on stderr, and prints the answer with the confidence of each number
(:mod:`simsched.report.capacity`); ``--plot`` (PNG, atomic; matplotlib imported only then) and
``--json`` write it too.  Bad input: exit 2 with one located line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import typer

from simsched.cli.common import console as common_console
from simsched.cli.common import keeps_finished_work, recorded_reads
from simsched.cli.flags import quoted, retired
from simsched.errors import SimschedError
from simsched.report.terminal import say


class _LiveProgress:
    """Progress on stderr: a rich spinner line on a terminal, else one plain line per capacity."""

    def __init__(self) -> None:
        self.console = common_console(stderr=True)
        self.live: Any = None
        self.task: Any = None
        self.t0 = time.perf_counter()
        self.where = ""
        """Where the days run (`` on 2 local processes``), shown after the count; empty: here."""

    def __call__(self, text: str, sims: int, level_done: bool) -> None:
        if not self.console.is_terminal:
            if level_done:
                say(f"[{time.perf_counter() - self.t0:5.1f}s] {text}", stderr=True)
            return
        if self.live is None:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 TextColumn("[dim]{task.completed} simulations{task.fields[where]}"),
                                 TimeElapsedColumn(), console=self.console, transient=True)
            self.live.start()
            self.task = self.live.add_task(text, total=None, where=self.where)
        self.live.update(self.task, description=text, completed=sims)

    def started(self, where: str) -> None:
        """The days run on ``where`` (an executor): shown after the count."""
        self.where = f" on {where}"

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


@recorded_reads
def capacity_command(
    scenario: Path = typer.Argument(..., help="Scenario YAML: task-graph, stream or autotuning."),
    objective: str = typer.Option(None, "--objective",
                                  help="Service objective, e.g. 'jct_p95 <= 6h', 'makespan <= 120', "
                                       "'deadline_miss_rate <= 1%'; default: the scenario's capacity.objective."),
    resource: str = typer.Option(None, "--resource",
                                 help="Processor type or entry name to size (task-graph scenarios)."),
    days: int = typer.Option(None, "--days", "-d", help="Simulated days (seeds) per capacity (default 20)."),
    on_days: float = typer.Option(None, "--on-days",
                                  help="Fraction of days that must meet the objective (default 0.95)."),
    policy: list[str] = typer.Option(None, "--scheduler", "-s", "--policy",
                                     help="Scheduler/policy to size (repeatable); default: all."),
    seed: int = typer.Option(None, "--seed", help="First day's seed (default: the scenario's, else 0)."),
    max_capacity: int = typer.Option(None, "--max", help="Largest capacity tried (default 256)."),
    plot: Path = typer.Option(None, "--plot", help="Also write objective and day success rate against capacity (PNG)."),
    json_path: Path = typer.Option(None, "--json", help="Also write the answer as JSON."),
    all_days: bool = typer.Option(False, "--all-days",
                                  help="Simulate every day of every capacity tried (else a capacity stops "
                                       "once it has missed too many days to pass)."),
    over: str = typer.Option(None, "--over",
                             help="Search once per value of a scenario field, e.g. "
                                  "workload.stream.arrivals.poisson=0.01,0.015,0.02 (same days for each)."),
    workers: int = typer.Option(None, "--workers", "-w", "--jobs", "-j",
                                help="Simulate the days on N local worker processes, as sweep does (default: "
                                     "in this process, one after another); the answer is the same."),
    dask: str = typer.Option(None, "--dask",
                             help="Simulate the days on Dask: 'local' (a LocalCluster of --workers) or a "
                                  "scheduler address tcp://HOST:PORT."),
    results: Path = typer.Option(None, "--results",
                                 help="Save every simulated day in this results store (.csv or .parquet) as it "
                                      "finishes, like a sweep's results; a killed search continues with --resume."),
    resume: bool = typer.Option(False, "--resume",
                                help="Continue a killed search: reuse the days saved in --results, simulate the rest."),
    _old_o: str | None = retired("capacity", "-o", lambda v: f"give the objective with --objective {quoted(v)}"),
    _old_r: str | None = retired("capacity", "-r", lambda v: f"give the resource with --resource {quoted(v)}"),
    _old_p: str | None = retired("capacity", "-p", lambda v: f"give the scheduler with -s/--scheduler {quoted(v)}"),
) -> None:
    """Find the fewest processors/servers meeting a service objective over N simulated days, with confidence."""

    from simsched.capacity import Choices, ask, parse_over, where_days_run
    from simsched.fileio import atomic_write_text
    from simsched.limits import check_seed
    from simsched.outputs import check_output, release_outputs, strict_json
    from simsched.report.capacity import print_answer, write_answer_plot

    try:
        check_seed(seed)
        where = where_days_run(scenario, workers, dask, results, resume, (plot, json_path))
        if plot is not None:
            check_output(plot, option="--plot", suffixes=(".png", ".svg", ".pdf"), inputs=[scenario])
        if json_path is not None:
            check_output(json_path, option="--json", inputs=[scenario])
        if plot is not None and json_path is not None and plot.resolve() == json_path.resolve():
            raise SimschedError("--plot and --json must name different files")
        for name, value in (("--days", days), ("--max", max_capacity)):
            if value is not None and value < 1:
                raise SimschedError(f"must be >= 1, got {value}", field=name)
        if on_days is not None and not 0 < on_days <= 1:
            raise SimschedError(f"must be in (0, 1], got {on_days}", field="--on-days")
        grid = parse_over(over) if over is not None else None
        if grid is not None and plot is not None:
            raise SimschedError("--plot draws one search; run without --over for it", field="--plot")
        choices = Choices(objective=objective, resource=resource, days=days, on_days=on_days, seed=seed,
                          high=max_capacity, variants=policy or None, all_days=all_days, over=grid)
        progress = _LiveProgress()
        keep = f"; the days that finished are saved in {results}: continue with --resume" if results else ""
        with keeps_finished_work(progress.close, keep):
            asked = ask(scenario, choices, where, progress, started=progress.started,
                        notice=lambda line: say(line, stderr=True))
        if asked.note is not None:
            say(asked.note, stderr=True)
        print_answer(asked.answer, common_console())
        if plot is not None:
            write_answer_plot(asked.answer, plot)
            typer.echo(f"plot written to {plot}")
        if json_path is not None:
            atomic_write_text(json_path, strict_json(asked.answer))
    except SimschedError as exc:
        print(f"error: {exc.located(file=scenario) if exc.file is None else exc}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    finally:
        release_outputs()
