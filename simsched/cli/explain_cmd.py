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

Heavy imports (numpy, the simulator, OR-Tools) happen inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
import typer.core

from simsched.cli.common import console as _console
from simsched.cli.common import user_errors
from simsched.errors import SimschedError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from rich.table import Table


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
                    from simsched.cli.common import print_error

                    print_error(f"explain {cmd_name}: there is no step-by-step view of {cmd_name}, so "
                                f"{' '.join(extra)!r} is not used; `simsched explain {cmd_name}` says what it "
                                f"does, and {', '.join(STEP_BY_STEP)} go step by step on a scenario")
                    raise typer.Exit(2)
                user_errors(describe_scheduler)(cmd_name, sorted(group.commands))

        return Describe(cmd_name, callback=None, help=f"What scheduler {cmd_name!r} does.",
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
    from simsched.outputs import plain_docstring

    typer.echo(f"{name} ({registry.kind(cls)}): {plain_docstring(inspect.getdoc(cls) or registry.summary(cls))}")
    typer.echo(f"\nStep by step: `simsched explain heft SCENARIO` (HEFT); `simsched explain` covers "
               f"{', '.join(covered)}. Every scheduler: docs/schedulers.md.")


app = typer.Typer(cls=_ExplainGroup, help="Explain how a scheduler decides: HEFT step by step, the greedy gap, "
                  "or what any other scheduler does (`simsched explain cpop`).", no_args_is_help=True)


GREEDY_GAP_MAX_TASKS = 20
"""Largest DAG ``explain greedy-gap`` searches: each try solves the instance exactly with CP-SAT."""

GREEDY_GAP_MAX_PROCESSORS = 16
"""Most processors ``explain greedy-gap`` accepts (the exact model grows with tasks x processors)."""


def _num(x: float) -> str:
    return "-" if x == float("inf") else f"{x:.6g}"


WIDE_HELP = ("Every processor's column in one table, however wide (default: tables within 100 columns, "
             "split into parts of consecutive processors).")


def _say(text: str, indent: str = "   ") -> None:
    """One paragraph of prose, wrapped at 100 columns (continuation lines indented by ``indent``)."""
    import textwrap

    from simsched.report.fit import MAX_COLUMNS

    typer.echo(textwrap.fill(text, MAX_COLUMNS, subsequent_indent=indent, break_on_hyphens=False))


@app.command("heft")
@user_errors
def explain_heft(
    scenario: Path | None = typer.Argument(None, help="Scenario YAML (without it: what HEFT does).",
                                           show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
    no_insertion: bool = typer.Option(False, "--no-insertion", help="Always append (no gap filling)."),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print HEFT's upward ranks and, step by step, each task's EST/EFT on every processor."""
    if _scenario_or_describe("heft", scenario):
        return
    from rich.table import Table

    from simsched.analysis.teaching import trace_heft
    from simsched.report.fit import print_in_parts

    _, problem = _problem_of(scenario, seed, "heft", 200)
    trace = trace_heft(problem, insertion=not no_insertion)
    from rich.markup import escape

    from simsched.outputs import printable

    # names come from the user's files: no terminal escape sequences, no rich markup
    names = [escape(printable(n)) for n in problem.graph.names]
    procs = [escape(printable(p)) for p in problem.platform.names]
    console = _console()

    _say("1. Upward ranks, rank_u(i) = mean cost of i + max over successors j of (mean transfer i->j + "
         "rank_u(j)); tasks are placed in decreasing rank_u.")
    ranks = Table()
    for col in ("order", "task", "mean cost", "rank_u"):
        ranks.add_column(col, justify="right")
    for k, t in enumerate(trace.order.tolist()):
        ranks.add_row(str(k + 1), names[t], _num(problem.mean_cost[t]), _num(trace.rank[t]))
    console.print(ranks)

    gaps = "always appended after the last task (--no-insertion)" if no_insertion else "idle gaps may be filled"
    _say(f"2. Placement: each task on the processor where it finishes earliest (EST/EFT: earliest start/finish, "
         f"{gaps}; ready: when its inputs are on the chosen processor; *: chosen).")

    def steps(cols: Sequence[int]) -> Table:
        table = Table()
        table.add_column("step", justify="right", no_wrap=True)
        table.add_column("task", no_wrap=True)
        table.add_column("ready", justify="right", no_wrap=True)
        for q in cols:
            table.add_column(f"EST/EFT {procs[q]}", justify="right", no_wrap=True)
        table.add_column("chosen", no_wrap=True)
        for k, s in enumerate(trace.steps):
            cells = [f"{_num(s.est[q])}/{_num(s.eft[q])}" + (" *" if q == s.chosen else "") for q in cols]
            table.add_row(str(k + 1), names[s.task], _num(s.ready[s.chosen]), *cells, procs[s.chosen])
        return table

    print_in_parts(console, steps, procs, first=3, wide=wide)
    assert trace.plan is not None and trace.plan.finish is not None
    typer.echo(f"HEFT makespan: {_num(float(trace.plan.finish.max()))}")


def _problem_of(scenario: Path, seed: int | None, what: str, limit: int):
    """The scenario's problem for an explain view (at most ``limit`` tasks; a negative seed refused)."""
    from simsched.limits import check_seed
    from simsched.scenario import build_problem, load_scenario

    check_seed(seed)
    loaded = load_scenario(scenario)
    if not loaded.has_task_graph:
        raise SimschedError(f"{scenario}: explain {what} needs a platform and a workload "
                            f"(this is an autotuning scenario)")
    problem = build_problem(loaded, seed)
    if problem.n_tasks > limit:
        raise SimschedError(f"{scenario}: {problem.n_tasks} tasks; explain {what} shows every task, "
                            f"so it is limited to {limit}")
    return loaded, problem


def _printable_names(problem) -> tuple[list[str], list[str]]:  # noqa: ANN001 - a Problem
    """Task and processor names as they may be printed: they come from the user's files, so no terminal
    escape sequences and no rich markup."""
    from rich.markup import escape

    from simsched.outputs import printable

    return ([escape(printable(n)) for n in problem.graph.names],
            [escape(printable(p)) for p in problem.platform.names])


def _print_steps(problem, steps, score_name: str | None, wide: bool) -> None:  # noqa: ANN001
    """Step table: task, ready, EST/EFT per processor (and the score the processor is chosen by), chosen,
    why (left out when every step has the same reason: the prose above says it); within 100 columns
    unless ``wide`` (:func:`simsched.report.fit.print_in_parts`)."""
    from rich.table import Table

    from simsched.report.fit import print_in_parts

    names, procs = _printable_names(problem)
    show_why = len({st.why for st in steps}) > 1

    def build(cols: Sequence[int]) -> Table:
        table = Table()
        for col in ("step", "task", "ready"):
            table.add_column(col, justify="right" if col != "task" else "left", no_wrap=True)
        for q in cols:
            table.add_column(f"EST/EFT {procs[q]}" if score_name is None else f"EST/EFT/{score_name} {procs[q]}",
                             justify="right", no_wrap=True)
        table.add_column("chosen", no_wrap=True)
        if show_why:
            table.add_column("why")  # the one column that may wrap (at its spaces)
        for k, st in enumerate(steps):
            cells = []
            for q in cols:
                cell = f"{_num(st.est[q])}/{_num(st.eft[q])}"
                if score_name is not None:
                    cell += f"/{_num(st.score[q])}"
                cells.append(cell + (" *" if q == st.chosen else ""))
            why = [st.why] if show_why else []
            table.add_row(str(k + 1), names[st.task], _num(st.ready[st.chosen]), *cells, procs[st.chosen], *why)
        return table

    print_in_parts(_console(), build, procs, first=3, wide=wide)


def _by_priority(priority: np.ndarray) -> list[int]:
    """Task indices by decreasing priority (compared to 9 significant digits, so float noise does not
    reorder equal priorities), ties by index."""
    import numpy as np

    key = np.round(priority / (float(np.abs(priority).max()) or 1.0), 9)
    return np.lexsort((np.arange(priority.size), -key)).tolist()


STEP_BY_STEP = ("heft", "cpop", "peft", "minmin")
"""Schedulers ``simsched explain NAME SCENARIO`` shows decision by decision."""


def _scenario_or_describe(name: str, scenario: Path | None) -> bool:
    """Without a scenario, describe the scheduler (as `simsched explain NAME` always did); True if done."""
    if scenario is None:
        describe_scheduler(name, [*STEP_BY_STEP, "graph", "greedy-gap"])
        typer.echo(f"Step by step on a scenario: simsched explain {name} SCENARIO")
        return True
    return False


@app.command("cpop")
@user_errors
def explain_cpop(
    scenario: Path | None = typer.Argument(None, help="Scenario YAML (without it: what CPOP does).",
                                           show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print CPOP's priorities, critical path and processor, then each step's EST/EFT on every processor."""
    if _scenario_or_describe("cpop", scenario):
        return
    from rich.table import Table

    from simsched.analysis.teaching import trace_cpop

    _, problem = _problem_of(scenario, seed, "cpop", 200)
    trace = trace_cpop(problem)
    from simsched.outputs import printable

    cells, _ = _printable_names(problem)  # the table's task names: escaped for rich
    names = [printable(n) for n in problem.graph.names]  # the prose's: plain text
    procs = [printable(p) for p in problem.platform.names]
    _say("1. Priorities: rank_u(i) = mean cost + max over successors (mean transfer + rank_u); rank_d(i) = max "
         "over predecessors (rank_d + mean cost + mean transfer); priority = rank_u + rank_d.")
    table = Table()
    for col in ("task", *trace.columns, "critical path"):
        table.add_column(col, justify="right")
    cp = set(trace.critical_path)
    for t in _by_priority(trace.priority):
        table.add_row(cells[t], *(_num(x) for x in trace.table[t]), "yes" if t in cp else "")
    _console().print(table)
    cost = problem.W[list(trace.critical_path)].sum(axis=0)
    _say(f"2. Critical path {' - '.join(names[t] for t in trace.critical_path)} (priority "
         f"{_num(trace.priority[trace.critical_path[0]])}): critical-path processor {procs[trace.cp_processor]}, "
         "where it costs least (" + ", ".join(f"{q} {_num(c)}" for q, c in zip(procs, cost)) + ").")
    _say("3. Ready tasks by highest priority; a critical-path task goes to the critical-path processor (CP task "
         "-> CP processor), any other to its earliest finish (*: chosen).")
    _print_steps(problem, trace.steps, None, wide)
    typer.echo(f"CPOP makespan: {_num(float(trace.plan.finish.max()))}")


@app.command("peft")
@user_errors
def explain_peft(
    scenario: Path | None = typer.Argument(None, help="Scenario YAML (without it: what PEFT does).",
                                           show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print PEFT's optimistic cost table and rank_oct, then each step's EST/EFT/O_EFT on every processor."""
    if _scenario_or_describe("peft", scenario):
        return
    from rich.table import Table

    from simsched.analysis.teaching import trace_peft
    from simsched.report.fit import print_in_parts

    _, problem = _problem_of(scenario, seed, "peft", 200)
    trace = trace_peft(problem)
    names, procs = _printable_names(problem)
    _say("1. Optimistic cost table: OCT(t, p) = max over successors s of min over processors q of (OCT(s, q) + "
         "cost(s, q) + mean transfer t->s if q != p); rank_oct(t) = mean of OCT(t, .).")
    oct_table = trace.oct
    assert oct_table is not None
    ranked = _by_priority(trace.priority)

    def octs(cols: Sequence[int]) -> Table:
        table = Table()
        for col in ("task", *(f"OCT {procs[q]}" for q in cols), "rank_oct"):
            table.add_column(col, justify="right", no_wrap=True)
        for t in ranked:
            table.add_row(names[t], *(_num(oct_table[t, q]) for q in cols), _num(trace.priority[t]))
        return table

    print_in_parts(_console(), octs, procs, first=1, wide=wide)
    _say("2. Ready tasks by highest rank_oct, each on the processor with the smallest O_EFT = EFT + OCT, "
         "looking one step ahead at what its successors will still cost (*: chosen).")
    _print_steps(problem, trace.steps, "O_EFT", wide)
    typer.echo(f"PEFT makespan: {_num(float(trace.plan.finish.max()))}")


@app.command("minmin")
@user_errors
def explain_minmin(
    scenario: Path | None = typer.Argument(None, help="Scenario YAML (without it: what Min-Min does).",
                                           show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
) -> None:
    """Print every Min-Min decision point: the ready tasks' completion times and the order they are mapped."""
    if _scenario_or_describe("minmin", scenario):
        return
    import numpy as np
    from rich.table import Table

    from simsched.analysis.teaching import trace_minmin
    from simsched.report.fit import print_in_parts

    _, problem = _problem_of(scenario, seed, "minmin", 200)
    trace = trace_minmin(problem)
    names, procs = _printable_names(problem)
    _say("At each decision point Min-Min takes the ready task whose minimum expected completion time (CT) is "
         "smallest, maps it there, updates that processor's availability, and repeats (*: its minimum).", "")
    console = _console()
    for k, d in enumerate(trace.decisions):
        order = {t: i + 1 for i, (t, _) in enumerate(d.mapped)}
        where = dict(d.mapped)
        title = f"decision {k + 1} at time {_num(d.time)}: {d.tasks.size} ready"
        rows = np.argsort(d.completion.min(axis=1), kind="stable").tolist()

        def decision(cols: Sequence[int], d=d, order=order, where=where, title=title, rows=rows) -> Table:  # noqa: ANN001
            table = Table(title=title, title_justify="left")
            table.add_column("task", no_wrap=True)
            for q in cols:
                table.add_column(f"CT {procs[q]}", justify="right", no_wrap=True)
            table.add_column("min CT", justify="right", no_wrap=True)
            table.add_column("mapped", justify="right", no_wrap=True)
            table.add_column("to", no_wrap=True)
            for i in rows:
                t = int(d.tasks[i])
                best = int(np.argmin(d.completion[i]))
                cells = [_num(d.completion[i, q]) + (" *" if q == best else "") for q in cols]
                table.add_row(names[t], *cells, _num(d.completion[i, best]), str(order[t]), procs[where[t]])
            return table

        print_in_parts(console, decision, procs, first=1, wide=wide)
    typer.echo(f"Min-Min makespan (measured by the simulator): {_num(float(trace.schedule.makespan))}")


@app.command("gantt")
@user_errors
def explain_gantt(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    out: Path = typer.Option(..., "--output", "-o", "--out", help="HTML page to write.", show_default=False),
    scheduler: str = typer.Option("heft", "--scheduler", "-s", help="The scheduler whose decisions to show."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
) -> None:
    """Write a Gantt chart to show decision by decision: an HTML page with a slider, one frame per decision,
    the critical path marked and every bar labelled."""
    from simsched.outputs import check_output
    from simsched.schedulers import registry

    check_output(out, option="--output", suffixes=(".html", ".htm"))
    registry.load_class(scheduler)  # an unknown name: one line with a suggestion, before any work
    loaded, problem = _problem_of(scenario, seed, "gantt", 500)
    from simsched.analysis.teaching import decision_order
    from simsched.report.gantt_steps import write_gantt_steps

    schedule, order = decision_order(problem, scheduler)
    write_gantt_steps(problem, schedule, order, out,
                      title=f"{loaded.name}: {scheduler}, decision by decision (makespan {_num(schedule.makespan)})")
    typer.echo(f"{problem.n_tasks} decisions of {scheduler}, makespan {_num(schedule.makespan)}; "
               f"step-by-step Gantt written to {out}")


@app.command("graph")
@user_errors
def explain_graph(
    scenario: Path = typer.Argument(..., help="Scenario YAML file (its task graph and platform).", show_default=False),
    out: Path = typer.Option(..., "--output", "-o", "--out", help="Picture to write (.png or .svg).",
                              show_default=False),
    seed: int | None = typer.Option(None, "--seed", help="Seed for a generated workload (default: the scenario's)."),
) -> None:
    """Draw the weighted task graph: costs on the tasks, data on the edges, the critical path in red."""
    from simsched.outputs import check_output
    from simsched.report.taskgraph_picture import SUFFIXES

    check_output(out, option="--output", suffixes=SUFFIXES)
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
    out: Path | None = typer.Option(None, "--output", "-o", "--out",
                                   help="Write the worst instance as a scenario YAML here."),
) -> None:
    """Search random small DAGs for the one where HEFT is furthest above the optimum (CP-SAT)."""
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
