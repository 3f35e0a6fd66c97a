"""``simsched capacity SCENARIO.yaml``: the fewest processors (or servers) meeting a service objective.

A thin command over :mod:`simsched.run.capacity`: reads the scenario (task-graph, stream or
autotuning), the objective (``--objective`` or the scenario's ``capacity.objective``), searches over
``--days`` simulated days with live progress on stderr, prints a table with the confidence of each
answer, and optionally writes a plot (``--plot``, PNG, atomic; matplotlib imported only then) and
the answer as JSON (``--json``).  The days run here, or on the sweep's executors (``--workers N``,
``--dask``) and in a sweep's results store (``--results``, ``--resume`` after a kill): see
:mod:`simsched.study.capacity_days`; the answer is the same.  Bad input: exit 2 with one located line.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import typer

from simsched.cli.common import console as common_console
from simsched.cli.common import keeps_finished_work, recorded_reads
from simsched.cli.flags import quoted, retired
from simsched.errors import SimschedError
from simsched.fileio import save_figure


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.4g}"


def print_capacity_table(result: Mapping[str, Any], console: Any = None) -> None:
    """The answer per scheduler/policy with its confidence (one row each) and one sentence each."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.run.capacity import confidence_statement, days_text, display_of, level_of

    clause = result["clauses"][0]
    scale, unit = display_of(result, clause["metric"])
    table = Table(title=escape(f"capacity: {result['objective']} on ≥ {result['on_days']:.0%} of days"),
                  caption=escape(f"{result['days']} simulated days (seeds {result['seeds'][0]}–{result['seeds'][1]}"
                                 + (f"; {result['days_note']}" if result.get("days_note") else "") + "); "
                                 "interval of the day success rate: Wilson 95%; of the mean: Student's t 95%; "
                                 "≤k/N: stopped once it could not pass"))
    for col in ("scheduler", result["unit"], "days met", "95% interval", f"{clause['metric']} mean{unit}",
                "95% t interval", "one fewer", "sims", "s"):
        table.add_column(escape(col), justify="left" if col == "scheduler" else "right")
    for e in result["variants"]:
        n = e["capacity"]
        lv = level_of(e, n) if n is not None else max(e["levels"], key=lambda x: x["capacity"])
        below = level_of(e, n - 1) if n is not None else None
        m = lv["metrics"][clause["metric"]]
        table.add_row(escape(e["variant"]), "not reachable" if n is None else str(n),
                      days_text(lv), f"{lv['wilson'][0]:.0%}–{lv['wilson'][1]:.0%}",
                      _fmt(m["mean"] / scale),
                      f"{_fmt(m['t_low'] / scale)}–{_fmt(m['t_high'] / scale)}" if math.isfinite(m["t_low"]) else "-",
                      "-" if below is None else days_text(below), str(e["simulations"]),
                      f"{e['wall_s']:.1f}")
    out = console or common_console()
    out.print(table)
    for e in result["variants"]:
        out.print(escape(confidence_statement(result, e)), soft_wrap=True)


def print_over_table(over: Mapping[str, Any], console: Any = None) -> None:
    """One row per value of the ``--over`` field and scheduler: the fewest capacity, its days met
    with the Wilson interval, the first clause's metric mean, and what one fewer gave."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.run.capacity import days_text, display_of, level_of

    first = over["cells"][0]["result"]
    clause = first["clauses"][0]
    scale, unit = display_of(first, clause["metric"])
    table = Table(title=escape(f"capacity per {over['field']}: {first['objective']} on ≥ {first['on_days']:.0%} "
                               f"of days"),
                  caption=escape(f"{first['days']} simulated days per capacity (seeds {first['seeds'][0]}–"
                                 f"{first['seeds'][1]}, the same for every value); interval of the day success "
                                 "rate: Wilson 95%; ≤k/N: stopped once it could not pass"))
    for col in (over["field"], "scheduler", first["unit"], "days met", "95% interval",
                f"{clause['metric']} mean{unit}", "one fewer", "sims"):
        table.add_column(escape(col), justify="left" if col == "scheduler" else "right")
    for cell in over["cells"]:
        for e in cell["result"]["variants"]:
            n = e["capacity"]
            lv = level_of(e, n) if n is not None else max(e["levels"], key=lambda x: x["capacity"])
            below = level_of(e, n - 1) if n is not None else None
            table.add_row(escape(str(cell["value"])), escape(e["variant"]), "not reachable" if n is None else str(n),
                          days_text(lv), f"{lv['wilson'][0]:.0%}–{lv['wilson'][1]:.0%}",
                          _fmt(lv["metrics"][clause["metric"]]["mean"] / scale),
                          "-" if below is None else days_text(below), str(e["simulations"]))
    (console or common_console()).print(table)


def write_capacity_plot(result: Mapping[str, Any], path: str | Path) -> None:
    """Two panels against capacity, one line per scheduler: the first clause's metric (mean over
    days, Student's t 95% interval as error bars, the threshold dashed) and the day success rate
    (Wilson 95% error bars, the required rate dashed; hollow markers for capacities that stopped
    early).  Atomic write."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from simsched.run.capacity import display_of

    clause = result["clauses"][0]
    metric = clause["metric"]
    scale, unit = display_of(result, metric)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    any_stopped = False
    for i, e in enumerate(result["variants"]):
        levels = sorted(e["levels"], key=lambda lv: lv["capacity"])
        color = f"C{i}"
        pts = [(lv["capacity"], lv["metrics"][metric]) for lv in levels if math.isfinite(lv["metrics"][metric]["mean"])]
        if pts:
            xs = [p[0] for p in pts]
            ys = [p[1]["mean"] / scale for p in pts]
            lo = [max(0.0, (p[1]["mean"] - p[1]["t_low"]) / scale) if math.isfinite(p[1]["t_low"]) else 0 for p in pts]
            hi = [max(0.0, (p[1]["t_high"] - p[1]["mean"]) / scale) if math.isfinite(p[1]["t_high"]) else 0
                  for p in pts]
            ax1.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=color,
                         label=f"{e['variant']} (answer {e['capacity']})")
        xs = [lv["capacity"] for lv in levels]
        rates = [lv["rate"] for lv in levels]
        ax2.errorbar(xs, rates, yerr=[[max(0.0, r - lv["wilson"][0]) for r, lv in zip(rates, levels)],
                                      [max(0.0, lv["wilson"][1] - r) for r, lv in zip(rates, levels)]],
                     marker="o", capsize=3, color=color, label=e["variant"])
        stopped = [lv for lv in levels if lv.get("stopped_early")]
        if stopped:  # hollow: the days simulated before the capacity could no longer pass
            ax2.scatter([lv["capacity"] for lv in stopped], [lv["rate"] for lv in stopped], s=60, zorder=3,
                        facecolors="white", edgecolors=color)
            any_stopped = True
        if e["capacity"] is not None:
            for ax in (ax1, ax2):
                ax.axvline(e["capacity"], color=color, linestyle=":", alpha=0.6)
    ax1.axhline(clause["threshold"] / scale, color="grey", linestyle="--", label=f"objective {clause['op']} "
                f"{_fmt(clause['threshold'] / scale)}{unit}")
    ax2.axhline(result["on_days"], color="grey", linestyle="--", label=f"required {result['on_days']:.0%} of days")
    ax1.set_ylabel(f"{metric}{unit}: mean over days, 95% t interval")
    ax2.set_ylabel("days meeting the objective (95% Wilson interval)")
    if any_stopped:
        ax2.set_title("hollow: stopped once it could not pass (rate over the days simulated; --all-days "
                      "simulates all)", fontsize=8, color="#555")
    ax2.set_ylim(-0.03, 1.03)
    for ax in (ax1, ax2):
        ax.set_xlabel(result["unit"])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{result['objective']}  ({result['days']} days, seeds {result['seeds'][0]}–{result['seeds'][1]})",
                 fontsize=10)
    fig.tight_layout()
    try:
        save_figure(fig, Path(path), dpi=110)
    finally:
        plt.close(fig)


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
                print(f"[{time.perf_counter() - self.t0:5.1f}s] {text}", file=sys.stderr, flush=True)
            return
        if self.live is None:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 TextColumn("[dim]{task.completed} simulations{task.fields[where]}"),
                                 TimeElapsedColumn(), console=self.console, transient=True)
            self.live.start()
            self.task = self.live.add_task(text, total=None, where=self.where)
        self.live.update(self.task, description=text, completed=sims)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def _check_runner_options(scenario: Path, workers: int | None, dask: str | None, results: Path | None,
                          resume: bool, outputs: tuple[Path | None, ...]) -> Any:
    """Check ``--workers``, ``--dask``, ``--results`` and ``--resume`` before anything runs; the
    executor they ask for (not started), or None for days simulated here."""
    from simsched.outputs import check_output

    if resume and results is None:
        raise SimschedError("--resume continues the search saved by --results PATH: give --results", field="--resume")
    if results is not None:
        from simsched.study.tables import SUFFIXES, pyarrow_module, table_format

        check_output(results, option="--results", suffixes=SUFFIXES, inputs=[scenario])
        if any(o is not None and o.resolve() == results.resolve() for o in outputs):
            raise SimschedError("--results must name a file of its own, not the --json or --plot output",
                                field="--results")
        if table_format(results) == "parquet":
            pyarrow_module()
    if workers is None and dask is None:
        return None
    from simsched.study.executors import executor_for, require_distributed

    executor = executor_for(workers, dask)
    if dask is not None:
        require_distributed()
    return executor


@contextlib.contextmanager
def _runner(executor: Any, results: Path | None, resume: bool, name: str, progress: _LiveProgress) -> Iterator[Any]:
    """Where the search's days run (:mod:`simsched.study.capacity_days`): here, or on ``executor``,
    through the results store ``results`` when given; a line on stderr says where and what was reused.
    A lost worker or Ctrl-C keeps the days that finished (exit 2 / 130, naming ``--resume``)."""
    from simsched.run.capacity import IN_PROCESS
    keep = f"; the days that finished are saved in {results}: continue with --resume" if results else ""
    with contextlib.ExitStack() as stack:
        runner: Any = IN_PROCESS
        stored = None
        if executor is not None:
            from simsched.study.capacity_days import ExecutorDays

            runner = stack.enter_context(ExecutorDays(executor))
        if results is not None:
            from simsched.study.capacity_days import StoredDays

            stored = StoredDays(runner, results, resume=resume, name=name)
            stack.callback(stored.close)
            runner = stored
        if executor is not None:
            progress.where = f" on {runner.description}"
        t0 = time.perf_counter()
        with keeps_finished_work(progress.close, keep):
            yield runner
            if stored is not None:
                stored.finish()
        if executor is not None or stored is not None:
            where = getattr(runner, "description", "this process")
            note = (f"; {stored.ran} simulated, {stored.reused} reused from {results}" if stored is not None else "")
            print(f"days simulated on {where} in {time.perf_counter() - t0:.1f} s{note}", file=sys.stderr)


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

    from simsched.limits import check_seed
    from simsched.outputs import check_output, release_outputs
    from simsched.run.capacity import answer, question_from
    from simsched.yamlio import load_yaml

    progress = None
    try:
        check_seed(seed)
        executor = _check_runner_options(scenario, workers, dask, results, resume, (plot, json_path))
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
        if over is not None:
            from simsched.study.capacity_over import answer_over, parse_over

            field, values = parse_over(over)
            if plot is not None:
                raise SimschedError("--plot draws one search; run without --over for it", field="--plot")
        doc = load_yaml(scenario)

        def ask(d: Any) -> Any:
            return question_from(d, objective=objective, resource=resource, days=days, on_days=on_days,
                                 seed=seed, high=max_capacity, variants=policy or None, all_days=all_days)

        name = str(doc.data.get("name") or scenario.stem) if isinstance(doc.data, dict) else scenario.stem
        if over is not None:
            progress = _LiveProgress()
            with _runner(executor, results, resume, name, progress) as runner:
                grid = answer_over(doc, field, values, ask, progress, runner)
            print_over_table(grid)
            if json_path is not None:
                from simsched.fileio import atomic_write_text
                from simsched.outputs import strict_json

                atomic_write_text(json_path, strict_json(grid))
            return
        from simsched.run.mix import answer_mix, mix_question

        mix = mix_question(doc, objective=objective, resource=resource, days=days, on_days=on_days, seed=seed,
                           variants=policy or None)  # capacity.mix: the cheapest mix of processor types
        question = ask(doc) if mix is None else None
        progress = _LiveProgress()
        with _runner(executor, results, resume, name, progress) as runner:
            result = answer(question, progress, runner) if mix is None else answer_mix(mix, progress, runner)
        if result.get("kind") == "mix":  # capacity.mix: the cheapest mix of processor types
            from simsched.cli.mix_view import print_mix_table, write_mix_plot

            print_table, write_plot = print_mix_table, write_mix_plot
        else:
            print_table, write_plot = print_capacity_table, write_capacity_plot
        print_table(result)
        if plot is not None:
            write_plot(result, plot)
            typer.echo(f"plot written to {plot}")
        if json_path is not None:
            from simsched.fileio import atomic_write_text
            from simsched.outputs import strict_json

            atomic_write_text(json_path, strict_json(result))
    except SimschedError as exc:
        print(f"error: {exc.located(file=scenario) if exc.file is None else exc}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    finally:
        release_outputs()
