"""``simsched explain``: teaching views of schedulers (see ``docs/tutorials/``).

* ``simsched explain heft SCENARIO``: HEFT step by step — the upward-rank table, then for every step
  the task placed and its earliest start / finish time on every processor
  (:func:`simsched.analysis.teaching.trace_heft`).
* ``simsched explain cpop|peft|minmin SCENARIO``: the same for CPOP (priorities, the critical path and its
  processor), PEFT (the optimistic cost table, O_EFT = EFT + OCT per step) and Min-Min (every decision
  point: the ready tasks' completion times and the order they are mapped in)
  (:mod:`simsched.analysis.teaching`); without a scenario, what the scheduler does.
* ``simsched explain graph SCENARIO -o FILE.png``: the weighted task graph with its critical path.
* ``simsched explain greedy-gap``: search random small DAGs for one where HEFT is far above the
  optimum (:func:`simsched.analysis.teaching.search_greedy_gap`), optionally writing it as a scenario.

The traces are :mod:`simsched.analysis.teaching`'s, their tables and prose :mod:`simsched.report.teaching`'s.
Heavy imports (numpy, the simulator, OR-Tools) happen inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import typer
import typer.core

from simsched.cli.common import console as _console
from simsched.cli.common import print_error, user_errors
from simsched.errors import SimschedError
from simsched.report.teaching import num


class _ExplainGroup(typer.core.TyperGroup):
    """``simsched explain NAME`` for any scheduler NAME without a step-by-step view: describe it."""

    def get_command(self, ctx, cmd_name: str):  # noqa: ANN001, ANN201 - click's signature
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found

        group = self

        class Describe(typer.core.TyperCommand):  # typer's own command class: `click` need not be installed
            def invoke(self, sub_ctx):  # noqa: ANN001, ANN201 - click's signature
                extra = sub_ctx.args
                if extra:  # e.g. `explain mct SCENARIO`: there is no step-by-step view to give it to
                    print_error(f"explain {cmd_name}: there is no step-by-step view of {cmd_name}, so "
                                f"{' '.join(extra)!r} is not used; `simsched explain {cmd_name}` says what it "
                                f"does, and {', '.join(STEP_BY_STEP)} go step by step on a scenario")
                    raise typer.Exit(2)
                user_errors(describe_scheduler)(cmd_name, sorted(group.commands))

        return Describe(cmd_name, callback=None, help=f"What scheduler {cmd_name!r} does.",
                        context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


def describe_scheduler(name: str, covered: list[str]) -> None:
    """Print scheduler ``name``'s description and what ``explain`` shows step by step
    (:func:`simsched.report.schedulers.scheduler_description`)."""
    from simsched.report.schedulers import scheduler_description
    from simsched.report.terminal import say

    for line in scheduler_description(name, covered):
        say(line)


app = typer.Typer(cls=_ExplainGroup, help="Explain how a scheduler decides: HEFT step by step, the greedy gap, "
                  "or what any other scheduler does (`simsched explain cpop`).", no_args_is_help=True)


WIDE_HELP = ("Every processor's column in one table, however wide (default: tables within 100 columns, "
             "split into parts of consecutive processors).")


STEP_BY_STEP = ("heft", "cpop", "peft", "minmin")
"""Schedulers ``simsched explain NAME SCENARIO`` shows decision by decision."""

SCENARIO_HELP = "Scenario YAML (without it: what {} does)."
SEED_HELP = "Seed for a generated workload (default: the scenario's)."


def _scenario_or_describe(name: str, scenario: Path | None) -> bool:
    """Without a scenario, describe the scheduler (as `simsched explain NAME` always did); True if done."""
    if scenario is None:
        describe_scheduler(name, [*STEP_BY_STEP, "graph", "greedy-gap"])
        typer.echo(f"Step by step on a scenario: simsched explain {name} SCENARIO")
        return True
    return False


@app.command("heft")
@user_errors
def explain_heft(
    scenario: Path | None = typer.Argument(None, help=SCENARIO_HELP.format("HEFT"), show_default=False),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
    no_insertion: bool = typer.Option(False, "--no-insertion", help="Always append (no gap filling)."),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print HEFT's upward ranks and, step by step, each task's EST/EFT on every processor."""
    if _scenario_or_describe("heft", scenario):
        return
    from simsched.analysis.teaching import teaching_problem, trace_heft
    from simsched.report.teaching import print_heft

    _, problem = teaching_problem(scenario, seed, "heft", 200)
    print_heft(_console(), problem, trace_heft(problem, insertion=not no_insertion), insertion=not no_insertion,
               wide=wide)


@app.command("cpop")
@user_errors
def explain_cpop(
    scenario: Path | None = typer.Argument(None, help=SCENARIO_HELP.format("CPOP"), show_default=False),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print CPOP's priorities, critical path and processor, then each step's EST/EFT on every processor."""
    if _scenario_or_describe("cpop", scenario):
        return
    from simsched.analysis.teaching import teaching_problem, trace_cpop
    from simsched.report.teaching import print_cpop

    _, problem = teaching_problem(scenario, seed, "cpop", 200)
    print_cpop(_console(), problem, trace_cpop(problem), wide=wide)


@app.command("peft")
@user_errors
def explain_peft(
    scenario: Path | None = typer.Argument(None, help=SCENARIO_HELP.format("PEFT"), show_default=False),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print PEFT's optimistic cost table and rank_oct, then each step's EST/EFT/O_EFT on every processor."""
    if _scenario_or_describe("peft", scenario):
        return
    from simsched.analysis.teaching import teaching_problem, trace_peft
    from simsched.report.teaching import print_peft

    _, problem = teaching_problem(scenario, seed, "peft", 200)
    print_peft(_console(), problem, trace_peft(problem), wide=wide)


@app.command("minmin")
@user_errors
def explain_minmin(
    scenario: Path | None = typer.Argument(None, help=SCENARIO_HELP.format("Min-Min"), show_default=False),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print every Min-Min decision point: the ready tasks' completion times and the order they are mapped."""
    if _scenario_or_describe("minmin", scenario):
        return
    from simsched.analysis.teaching import teaching_problem, trace_minmin
    from simsched.report.teaching import print_minmin

    _, problem = teaching_problem(scenario, seed, "minmin", 200)
    print_minmin(_console(), problem, trace_minmin(problem), wide=wide)


@app.command("gantt")
@user_errors
def explain_gantt(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    out: Path = typer.Option(..., "--output", "-o", "--out", help="HTML page to write.", show_default=False),
    scheduler: str = typer.Option("heft", "--scheduler", "-s", help="The scheduler whose decisions to show."),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
) -> None:
    """Write a Gantt chart to show decision by decision: an HTML page with a slider, one frame per decision,
    the critical path marked and every bar labelled."""
    from simsched.outputs import check_output
    from simsched.schedulers import registry

    check_output(out, option="--output", suffixes=(".html", ".htm"))
    try:  # an unknown name: one line with a suggestion, before any work
        registry.load_class(scheduler)
    except SimschedError as exc:  # a name at the option (a plug-in's file error names its file)
        raise (exc if exc.file is not None else exc.located(field="--scheduler")) from None
    from simsched.analysis.teaching import decision_order, teaching_problem
    from simsched.report.gantt_steps import write_gantt_steps

    loaded, problem = teaching_problem(scenario, seed, "gantt", 500)
    schedule, order = decision_order(problem, scheduler)
    write_gantt_steps(problem, schedule, order, out,
                      title=f"{loaded.name}: {scheduler}, decision by decision (makespan {num(schedule.makespan)})")
    typer.echo(f"{problem.n_tasks} decisions of {scheduler}, makespan {num(schedule.makespan)}; "
               f"step-by-step Gantt written to {out}")


@app.command("graph")
@user_errors
def explain_graph(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    out: Path = typer.Option(..., "--output", "-o", "--out", help="Picture to write (.png or .svg).",
                              show_default=False),
    seed: int | None = typer.Option(None, "--seed", help=SEED_HELP),
) -> None:
    """Draw the weighted task graph: costs on the tasks, data on the edges, the critical path in red."""
    from simsched.analysis.teaching import teaching_problem
    from simsched.outputs import check_output
    from simsched.report.taskgraph_picture import SUFFIXES, describe_graph, write_graph

    check_output(out, option="--output", suffixes=SUFFIXES)
    loaded, problem = teaching_problem(scenario, seed, "graph", 200)
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
    out: Path | None = typer.Option(None, "--output", "-o", "--out",
                                   help="Write the worst instance as a scenario YAML here."),
) -> None:
    """Search random small DAGs for the one where HEFT is furthest above the optimum (CP-SAT)."""
    from simsched.analysis.teaching import GREEDY_GAP_MAX_PROCESSORS, GREEDY_GAP_MAX_TASKS
    from simsched.limits import check_count, check_seed

    # CP-SAT proves optimality of small instances only: bound the sizes before any search
    check_count(tasks, option="--tasks", low=2, high=GREEDY_GAP_MAX_TASKS, hint="the optimum is exact search")
    check_count(processors, option="--processors", low=1, high=GREEDY_GAP_MAX_PROCESSORS,
                hint="the optimum is exact search")
    check_count(tries, option="--tries", low=1, high=10_000)
    check_seed(seed)
    if not (ccr >= 0 and ccr <= 1e6):
        raise SimschedError(f"--ccr must be between 0 and 1e6, got {ccr}")
    if out is not None:
        from simsched.outputs import check_output

        check_output(out, option="--output", suffixes=(".yaml", ".yml"))
    try:
        import ortools  # noqa: F401
    except ImportError:
        from simsched.extras import install_hint

        raise SimschedError(f"greedy-gap needs OR-Tools: {install_hint('exact')}") from None
    from simsched.analysis.teaching import instance_yaml, search_greedy_gap

    found = search_greedy_gap(tasks=tasks, processors=processors, tries=tries, seed=seed, ccr=ccr)
    from simsched.report.terminal import say

    say(f"worst of {tries} random DAGs ({tasks} tasks, {processors} processors, CCR {ccr:g}, seed {seed}): "
        f"instance {found.seed}: HEFT {num(found.heft)}, optimum {num(found.optimum)}"
        f"{'' if found.proven else ' (not proven optimal)'}, HEFT +{100 * found.gap:.1f}%")
    if out is not None:
        from simsched.outputs import atomic_write

        text = instance_yaml(found, name=out.stem, description=(
            f"Found by: simsched explain greedy-gap --tasks {tasks} --processors {processors} --tries {tries} "
            f"--seed {seed} --ccr {ccr:g}\n"
            f"HEFT {num(found.heft)} vs optimum {num(found.optimum)} (+{100 * found.gap:.1f}%)."))
        atomic_write(out, lambda fh: fh.write(text.encode()))
        typer.echo(f"scenario written to {out}")
