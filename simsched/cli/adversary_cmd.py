"""``simsched adversary A B``: search for the instance where scheduler A is furthest behind B.

Runs :func:`simsched.analysis.adversary.anneal`, writes the worst instance as a scenario (``instance.yaml``,
inline tasks with explicit costs, edges with data, one link per processor pair), then loads that file and
runs it exactly as ``simsched run`` does (:func:`~simsched.analysis.adversary.replay`) — the table printed,
the ratio reported and the Gantt charts (``gantt.png``, drawn by :mod:`simsched.report.gantt`) all come
from that replay, and the command checks it reproduces the search's makespans.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import console, user_errors
from simsched.errors import SimschedError


@user_errors
def adversary(
    a: str = typer.Argument(..., help="Scheduler whose bad case is searched (name or module:Class).",
                            show_default=False),
    b: str = typer.Argument(..., help="Scheduler it is compared with.", show_default=False),
    tasks: int = typer.Option(10, "--tasks", help="Tasks per instance."),
    processors: int = typer.Option(3, "--processors", help="Processors per instance."),
    minutes: float | None = typer.Option(None, "--minutes", help="Time budget (default 1 minute "
                                         "unless --iterations is given)."),
    iterations: int | None = typer.Option(None, "--iterations", min=1, max=1_000_000,
                                          help="Iteration budget (reproducible for a given --seed)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the search and of the schedulers' random streams."),
    out: Path | None = typer.Option(None, "--output", "-o", "--out",
                                   help="Output directory (default out/adversary-A-vs-B)."),
) -> None:
    """Search instances where A's makespan is as many times B's as possible; write the worst as a
    scenario plus both Gantt charts, replayed by the simulator."""
    from simsched.analysis.adversary import anneal, makespan_of, replay, write_found
    from simsched.outputs import check_output, output_dir
    from simsched.report.gantt import write_gantt
    from simsched.report.run_table import print_run_table
    from simsched.report.terminal import search_bar
    from simsched.scenario import SchedulerChoice
    from simsched.schedulers import registry

    if tasks < 1 or tasks > 200:
        raise SimschedError(f"--tasks must be in 1..200, got {tasks}")
    if processors < 1 or processors > 32:
        raise SimschedError(f"--processors must be in 1..32, got {processors}")
    if minutes is not None and not minutes > 0:
        raise SimschedError(f"--minutes must be > 0, got {minutes}")
    if iterations is not None and iterations < 1:
        raise SimschedError(f"--iterations must be >= 1, got {iterations}")
    if seed < 0:
        raise SimschedError(f"--seed must be >= 0, got {seed}")
    if a == b:
        raise SimschedError(f"compare two different schedulers, got {a!r} twice")
    specs = []
    for name, option in ((a, "A"), (b, "B")):
        try:
            registry.create(name)
        except SimschedError as exc:
            raise exc.located(field=option) from None
        specs.append(SchedulerChoice(name, {}, name))
    safe = [n.replace(":", "-").replace("/", "-") for n in (a, b)]
    folder = out if out is not None else Path("out") / f"adversary-{safe[0]}-vs-{safe[1]}"
    output_dir(folder, option="--output")
    yaml_path = check_output(folder / "instance.yaml", option="--output")
    gantt_path = check_output(folder / "gantt.png", option="--output")
    seconds = minutes * 60 if minutes is not None else (None if iterations is not None else 60.0)
    bar, update = search_bar(iterations, seconds)
    with bar:
        found = anneal(makespan_of(specs[0], seed), makespan_of(specs[1], seed), tasks=tasks,
                       processors=processors, seed=seed, iterations=iterations, seconds=seconds,
                       progress=update)
    write_found(found, yaml_path, a, b, name=f"adversary-{safe[0]}-vs-{safe[1]}", tasks=tasks,
                processors=processors, seed=seed)
    report = replay(yaml_path, found.makespan_a, found.makespan_b)
    write_gantt(report, gantt_path)
    out_console = console()
    print_run_table(report, out_console)
    replayed = [report.rows_of(label)[0]["makespan"] for label in (a, b)]
    out_console.print(f"{found.iterations} iterations in {found.seconds:.1f} s; worst instance: {a} "
                      f"{replayed[0]:.6g} vs {b} {replayed[1]:.6g}, ratio {replayed[0] / replayed[1]:.4g}")
    if found.rejected_errors:
        out_console.print(f"{found.rejected_errors} candidate instances were skipped because a scheduler "
                          f"failed on them, e.g.: {found.first_error}")
    typer.echo(f"scenario written to {yaml_path}\nGantt charts written to {gantt_path}")
