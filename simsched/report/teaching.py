"""The step-by-step views of ``simsched explain``: HEFT, CPOP, PEFT and Min-Min worked as tables and prose.

Each ``print_*`` function prints one trace of :mod:`simsched.analysis.teaching` (the numbers) as the tables
of Topcuoglu, Hariri & Wu (2002) worked by hand: the priorities first, then every step's earliest start and
finish on every processor with the choice marked ``*``.  Tables with one column per processor fit 100
columns by printing consecutive processors in parts (:func:`simsched.report.fit.print_in_parts`), or whole
with ``wide``; the prose is wrapped at 100 columns.  Task and processor names come from the user's files:
they are printed without terminal escape sequences or rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simsched.report.fit import MAX_COLUMNS, print_in_parts, print_table

if TYPE_CHECKING:
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from simsched.analysis.teaching import HeftTrace, ListTrace, MinMinTrace
    from simsched.simulator.problem import Problem


def num(x: float) -> str:
    """A time or cost as the tables show it: six significant digits, ``-`` for infinity (a processor the
    task may not run on)."""
    return "-" if x == float("inf") else f"{x:.6g}"


def say(text: str, indent: str = "   ") -> None:
    """One paragraph of prose on stdout, wrapped at the terminal's width, at most 100 columns
    (continuation lines indented by ``indent``)."""
    from simsched.report.terminal import output_width, wrap

    print(wrap(text, min(output_width(), MAX_COLUMNS), indent), flush=True)


def printable_names(problem: Problem) -> tuple[list[str], list[str]]:
    """Task and processor names as table cells: no terminal escape sequences, no rich markup."""
    from rich.markup import escape

    from simsched.outputs import printable

    return ([escape(printable(n)) for n in problem.graph.names],
            [escape(printable(p)) for p in problem.platform.names])


def by_priority(priority: np.ndarray) -> list[int]:
    """Task indices by decreasing priority (compared to 9 significant digits, so float noise does not
    reorder equal priorities), ties by index.  O(n log n)."""
    import numpy as np

    key = np.round(priority / (float(np.abs(priority).max()) or 1.0), 9)
    return np.lexsort((np.arange(priority.size), -key)).tolist()


def print_steps(console: Console, problem: Problem, steps: Sequence[Any], score_name: str | None,
                wide: bool) -> None:
    """The step table: task, ready, EST/EFT per processor (and the score the processor is chosen by), chosen,
    why (left out when every step has the same reason, or none: the prose above says it)."""
    from rich.table import Table

    names, procs = printable_names(problem)
    show_why = len({getattr(st, "why", None) for st in steps}) > 1

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
                cell = f"{num(st.est[q])}/{num(st.eft[q])}"
                if score_name is not None:
                    cell += f"/{num(st.score[q])}"
                cells.append(cell + (" *" if q == st.chosen else ""))
            why = [st.why] if show_why else []
            table.add_row(str(k + 1), names[st.task], num(st.ready[st.chosen]), *cells, procs[st.chosen], *why)
        return table

    print_in_parts(console, build, procs, first=3, wide=wide)


def print_heft(console: Console, problem: Problem, trace: HeftTrace, *, insertion: bool, wide: bool) -> None:
    """HEFT's upward ranks, then each step's EST/EFT on every processor, then its makespan."""
    from rich.table import Table

    names, _ = printable_names(problem)
    say("1. Upward ranks, rank_u(i) = mean cost of i + max over successors j of (mean transfer i->j + "
        "rank_u(j)); tasks are placed in decreasing rank_u.")
    ranks = Table()
    for col in ("order", "task", "mean cost", "rank_u"):
        ranks.add_column(col, justify="right")
    for k, t in enumerate(trace.order.tolist()):
        ranks.add_row(str(k + 1), names[t], num(problem.mean_cost[t]), num(trace.rank[t]))
    console.print(ranks)
    gaps = "idle gaps may be filled" if insertion else "always appended after the last task (--no-insertion)"
    say(f"2. Placement: each task on the processor where it finishes earliest (EST/EFT: earliest start/finish, "
        f"{gaps}; ready: when its inputs are on the chosen processor; *: chosen).")
    print_steps(console, problem, trace.steps, None, wide)
    assert trace.plan is not None and trace.plan.finish is not None
    print(f"HEFT makespan: {num(float(trace.plan.finish.max()))}", flush=True)


def print_cpop(console: Console, problem: Problem, trace: ListTrace, *, wide: bool) -> None:
    """CPOP's priorities, its critical path and that path's processor, each step, then the makespan."""
    from rich.table import Table

    from simsched.outputs import printable

    cells, _ = printable_names(problem)  # the table's task names: escaped for rich
    names = [printable(n) for n in problem.graph.names]  # the prose's: plain text
    procs = [printable(p) for p in problem.platform.names]
    say("1. Priorities: rank_u(i) = mean cost + max over successors (mean transfer + rank_u); rank_d(i) = max "
        "over predecessors (rank_d + mean cost + mean transfer); priority = rank_u + rank_d.")
    table = Table()
    for col in ("task", *trace.columns, "critical path"):
        table.add_column(col, justify="right")
    cp = set(trace.critical_path)
    for t in by_priority(trace.priority):
        table.add_row(cells[t], *(num(x) for x in trace.table[t]), "yes" if t in cp else "")
    print_table(console, table, wide=wide)
    cost = problem.W[list(trace.critical_path)].sum(axis=0)
    say(f"2. Critical path {' - '.join(names[t] for t in trace.critical_path)} (priority "
        f"{num(trace.priority[trace.critical_path[0]])}): critical-path processor {procs[trace.cp_processor]}, "
        "where it costs least (" + ", ".join(f"{q} {num(c)}" for q, c in zip(procs, cost)) + ").")
    say("3. Ready tasks by highest priority; a critical-path task goes to the critical-path processor (CP task "
        "-> CP processor), any other to its earliest finish (*: chosen).")
    print_steps(console, problem, trace.steps, None, wide)
    print(f"CPOP makespan: {num(float(trace.plan.finish.max()))}", flush=True)


def print_peft(console: Console, problem: Problem, trace: ListTrace, *, wide: bool) -> None:
    """PEFT's optimistic cost table and rank_oct, each step's EST/EFT/O_EFT, then the makespan."""
    from rich.table import Table

    names, procs = printable_names(problem)
    say("1. Optimistic cost table: OCT(t, p) = max over successors s of min over processors q of (OCT(s, q) + "
        "cost(s, q) + mean transfer t->s if q != p); rank_oct(t) = mean of OCT(t, .).")
    oct_table = trace.oct
    assert oct_table is not None
    ranked = by_priority(trace.priority)

    def octs(cols: Sequence[int]) -> Table:
        table = Table()
        for col in ("task", *(f"OCT {procs[q]}" for q in cols), "rank_oct"):
            table.add_column(col, justify="right", no_wrap=True)
        for t in ranked:
            table.add_row(names[t], *(num(oct_table[t, q]) for q in cols), num(trace.priority[t]))
        return table

    print_in_parts(console, octs, procs, first=1, wide=wide)
    say("2. Ready tasks by highest rank_oct, each on the processor with the smallest O_EFT = EFT + OCT, "
        "looking one step ahead at what its successors will still cost (*: chosen).")
    print_steps(console, problem, trace.steps, "O_EFT", wide)
    print(f"PEFT makespan: {num(float(trace.plan.finish.max()))}", flush=True)


def print_minmin(console: Console, problem: Problem, trace: MinMinTrace, *, wide: bool) -> None:
    """Every Min-Min decision point: the ready tasks' completion times on every processor and the order
    they are mapped in; then the makespan the simulator measured."""
    import numpy as np
    from rich.table import Table

    names, procs = printable_names(problem)
    say("At each decision point Min-Min takes the ready task whose minimum expected completion time (CT) is "
        "smallest, maps it there, updates that processor's availability, and repeats (*: its minimum).", "")
    for k, d in enumerate(trace.decisions):
        order = {t: i + 1 for i, (t, _) in enumerate(d.mapped)}
        where = dict(d.mapped)
        title = f"decision {k + 1} at time {num(d.time)}: {d.tasks.size} ready"
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
                cells = [num(d.completion[i, q]) + (" *" if q == best else "") for q in cols]
                table.add_row(names[t], *cells, num(d.completion[i, best]), str(order[t]), procs[where[t]])
            return table

        print_in_parts(console, decision, procs, first=1, wide=wide)
    print(f"Min-Min makespan (measured by the simulator): {num(float(trace.schedule.makespan))}", flush=True)
