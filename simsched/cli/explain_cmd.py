"""``simsched explain``: teaching views of schedulers (see ``docs/tutorials/``).

* ``simsched explain heft SCENARIO``: HEFT step by step — the upward-rank table, then for every step
  the task placed and its earliest start / finish time on every processor
  (:func:`simsched.analysis.teaching.trace_heft`).
* ``simsched explain greedy-gap``: search random small DAGs for one where HEFT is far above the
  optimum (:func:`simsched.analysis.teaching.search_greedy_gap`), optionally writing it as a scenario.

Heavy imports (numpy, the simulator, OR-Tools) happen inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import typer
import typer.core

from simsched.cli.common import console as _console
from simsched.cli.common import user_errors
from simsched.errors import SimschedError


class _ExplainGroup(typer.core.TyperGroup):
    """``simsched explain NAME`` for any scheduler NAME without a step-by-step view: describe it."""

    def get_command(self, ctx, cmd_name: str):  # noqa: ANN001, ANN201 - click's signature
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        import click

        def describe() -> None:
            user_errors(describe_scheduler)(cmd_name, sorted(self.commands))

        return click.Command(cmd_name, callback=describe, help=f"What scheduler {cmd_name!r} does.",
                             context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


def describe_scheduler(name: str, covered: list[str]) -> None:
    """Print scheduler ``name``'s description (its docstring) and what ``explain`` shows step by step;
    an unknown name is a user error listing both."""
    import inspect

    from simsched.schedulers import registry

    try:
        cls = registry.load_class(name)
    except SimschedError as exc:
        raise SimschedError(f"{exc.message}. `simsched explain` covers: {', '.join(covered)} (step by step), "
                            f"and describes any scheduler of `simsched list`") from None
    typer.echo(f"{name} ({registry.kind(cls)}): {inspect.getdoc(cls) or registry.summary(cls)}")
    typer.echo(f"\nStep by step: `simsched explain heft SCENARIO` (HEFT); `simsched explain` covers "
               f"{', '.join(covered)}. Every scheduler: docs/schedulers.md.")


app = typer.Typer(cls=_ExplainGroup, help="Explain how a scheduler decides: HEFT step by step, the greedy gap, "
                  "or what any other scheduler does (`simsched explain cpop`).", no_args_is_help=True)


def _num(x: float) -> str:
    return "-" if x == float("inf") else f"{x:.6g}"


@app.command("heft")
@user_errors
def explain_heft(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
    no_insertion: bool = typer.Option(False, "--no-insertion", help="Always append (no gap filling)."),
) -> None:
    """Print HEFT's upward ranks and, step by step, each task's EST/EFT on every processor."""
    from rich.table import Table

    from simsched.analysis.teaching import trace_heft

    _, problem = _problem_of(scenario, seed, "heft", 200)
    trace = trace_heft(problem, insertion=not no_insertion)
    names, procs = problem.graph.names, problem.platform.names
    console = _console()

    typer.echo("1. Upward ranks, rank_u(i) = mean cost of i + max over successors j of "
               "(mean transfer i->j + rank_u(j));")
    typer.echo("   tasks are placed in decreasing rank_u.")
    ranks = Table()
    for col in ("order", "task", "mean cost", "rank_u"):
        ranks.add_column(col, justify="right")
    for k, t in enumerate(trace.order.tolist()):
        ranks.add_row(str(k + 1), names[t], _num(problem.mean_cost[t]), _num(trace.rank[t]))
    console.print(ranks)

    typer.echo("2. Placement: each task on the processor where it finishes earliest (EST/EFT: earliest start/finish,")
    gaps = "always appended after the last task (--no-insertion)" if no_insertion else "idle gaps may be filled"
    typer.echo(f"   {gaps}; ready: when its inputs are on the chosen processor; *: chosen).")
    steps = Table()
    steps.add_column("step", justify="right")
    steps.add_column("task")
    steps.add_column("ready", justify="right")
    for p in procs:
        steps.add_column(f"EST/EFT {p}", justify="right")
    steps.add_column("chosen")
    for k, s in enumerate(trace.steps):
        cells = [f"{_num(s.est[q])}/{_num(s.eft[q])}" + (" *" if q == s.chosen else "") for q in range(len(procs))]
        ready = s.ready[s.chosen]
        steps.add_row(str(k + 1), names[s.task], _num(ready), *cells, procs[s.chosen])
    console.print(steps)
    assert trace.plan is not None and trace.plan.finish is not None
    typer.echo(f"HEFT makespan: {_num(float(trace.plan.finish.max()))}")


def _problem_of(scenario: Path, seed: int | None, what: str, limit: int):
    """The scenario's problem for an explain view (at most ``limit`` tasks)."""
    from simsched.scenario import build_problem, load_scenario

    loaded = load_scenario(scenario)
    if not loaded.has_task_graph:
        raise SimschedError(f"{scenario}: explain {what} needs a platform and a workload "
                            f"(this is an autotuning scenario)")
    problem = build_problem(loaded, seed)
    if problem.n_tasks > limit:
        raise SimschedError(f"{scenario}: {problem.n_tasks} tasks; explain {what} shows every task, "
                            f"so it is limited to {limit}")
    return loaded, problem


@app.command("graph")
@user_errors
def explain_graph(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    out: Path = typer.Option(..., "--out", "-o", help="Picture to write (.png or .svg).", show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
) -> None:
    """Draw the weighted task graph: costs on the tasks, data on the edges, the critical path in red."""
    from simsched.outputs import check_output
    from simsched.report.taskgraph_picture import SUFFIXES

    check_output(out, option="--out", suffixes=SUFFIXES)
    loaded, problem = _problem_of(scenario, seed, "graph", 200)
    from simsched.report.taskgraph_picture import describe_graph, write_graph

    pic = describe_graph(problem)
    write_graph(problem, out, title=loaded.name)
    typer.echo(f"critical path: {' - '.join(pic.names[t] for t in pic.critical_path)}")
    typer.echo(f"task graph written to {out}")


@app.command("greedy-gap")
@user_errors
def explain_greedy_gap(
    tasks: int = typer.Option(8, "--tasks", help="Tasks per random DAG."),
    processors: int = typer.Option(3, "--processors", help="Processors (explicit integer cost matrix)."),
    tries: int = typer.Option(50, "--tries", help="Random instances to try."),
    seed: int = typer.Option(0, "--seed", help="Seed of the search."),
    ccr: float = typer.Option(1.0, "--ccr", help="Communication-to-computation ratio of the DAGs."),
    out: Path | None = typer.Option(None, "--out", help="Write the worst instance as a scenario YAML here."),
) -> None:
    """Search random small DAGs for the one where HEFT is furthest above the optimum (CP-SAT)."""
    if tasks < 2 or processors < 1 or tries < 1:
        raise SimschedError("--tasks must be >= 2, --processors and --tries >= 1")
    if out is not None:
        from simsched.outputs import check_output

        check_output(out, option="--out", suffixes=(".yaml", ".yml"))
    try:
        import ortools  # noqa: F401
    except ImportError:
        from simsched.extras import install_hint

        raise SimschedError(f"greedy-gap needs OR-Tools: {install_hint('exact')}") from None
    from simsched.analysis.teaching import instance_yaml, search_greedy_gap

    found = search_greedy_gap(tasks=tasks, processors=processors, tries=tries, seed=seed, ccr=ccr)
    typer.echo(f"worst of {tries} random DAGs ({tasks} tasks, {processors} processors, CCR {ccr:g}, seed {seed}): "
               f"instance {found.seed}: HEFT {_num(found.heft)}, optimum {_num(found.optimum)}"
               f"{'' if found.proven else ' (not proven optimal)'}, HEFT +{100 * found.gap:.1f}%")
    if out is not None:
        from simsched.outputs import atomic_write

        text = instance_yaml(found, name=out.stem, description=(
            f"Found by: simsched explain greedy-gap --tasks {tasks} --processors {processors} --tries {tries} "
            f"--seed {seed} --ccr {ccr:g}\n"
            f"HEFT {_num(found.heft)} vs optimum {_num(found.optimum)} (+{100 * found.gap:.1f}%)."))
        atomic_write(out, lambda fh: fh.write(text.encode()))
        typer.echo(f"scenario written to {out}")
