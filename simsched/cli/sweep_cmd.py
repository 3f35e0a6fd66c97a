"""``simsched sweep STUDY.yaml``: run a study on a process pool or a Dask cluster, resumably.

Prints what will run, a rich progress bar (runs, rate, ETA; on a terminal only) and a closing
line.  Exit 0 when the study finished (failed runs are rows with an ``error``, listed briefly), 2 on
bad input or a lost worker (finished rows are kept: ``--resume`` continues), 130 on Ctrl-C (same).
See docs/studies.md.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import keeps_finished_work, user_errors, warning_line
from simsched.report.terminal import say


@user_errors
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
    from simsched.outputs import check_output
    from simsched.report.terminal import RunsBar
    from simsched.run.store import common_errors
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
    say(f"study {loaded.name}: {len(loaded.points)} point{'s' if len(loaded.points) != 1 else ''} x "
        f"{n_sched} scheduler{'s' if n_sched != 1 else ''} x {n_seeds} seed{'s' if n_seeds != 1 else ''}"
        f" = {total} runs -> {output}")
    bar = RunsBar(f"{loaded.name} on {executor.description}")
    with keeps_finished_work(bar.close, f"; finished runs are saved in {output}: continue with --resume"):
        outcome = run_sweep(loaded, output, executor, resume=resume, progress=bar)
    if outcome.recomputed:
        warning_line(f"{output}: {outcome.recomputed} stored run{'s were' if outcome.recomputed != 1 else ' was'} "
                     f"computed by another simsched version or carried no digest (an earlier simsched): recomputed "
                     f"and replaced, not reused")
    skipped = f", {outcome.skipped} already done" if outcome.skipped else ""
    rate = f" ({outcome.rate:.1f} runs/s)" if outcome.ran else ""
    say(f"{outcome.ran} runs in {outcome.seconds:.1f} s{rate} on {executor.description}, "
        f"{outcome.failed} failed{skipped}; {outcome.rows} rows in {output}")
    for message, count in common_errors(output, outcome.run_id) if outcome.failed else ():
        say(f"  {count} x {message}")
