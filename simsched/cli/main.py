"""The ``simsched`` command line.

Commands: ``run`` (run a scenario, print a comparison table, optionally write the results JSON and a
Gantt chart), ``validate`` (check a scenario), ``list`` (the registered schedulers) and ``bench``.

Every :class:`~simsched.errors.SimschedError` ends as one line ``error: <message>`` on stderr and
exit code 2, never a traceback; output paths are checked before anything runs and files are written
atomically, so a failed command leaves no partial file.  Start-up stays fast: numpy, the simulator,
matplotlib and (above all) torch are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from simsched import __version__
from simsched.cli.common import OneLineUsageErrors, usage_line, user_errors
from simsched.cli.common import console as _console
from simsched.cli.common import print_error as _error
from simsched.cli.common import standalone as _standalone
from simsched.cli.common import warning_line as _warning
from simsched.errors import SimschedError
from simsched.report.terminal import say

app = typer.Typer(
    cls=OneLineUsageErrors,
    name="simsched",
    help="simsched: a discrete-event testbed for scheduling on heterogeneous systems.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"simsched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """simsched: a discrete-event testbed for scheduling on heterogeneous systems."""


# --------------------------------------------------------------------------- run
@app.command()
@user_errors
def run(
    scenario: Path = typer.Argument(..., help="Scenario YAML file.", show_default=False),
    scheduler: list[str] | None = typer.Option(
        None, "--scheduler", "-s", help="Run only this scheduler (repeatable): a label of the scenario's, a "
        "name naming one of its entries, or any registered NAME or \"NAME(param=value, ...)\"; default: the "
        "scenario's."),
    seed: int | None = typer.Option(None, "--seed", help="Base seed (default: the scenario's)."),
    repetitions: int | None = typer.Option(
        None, "--repetitions", "-r", help="Repetitions (default: the scenario's)."),
    json_path: Path | None = typer.Option(
        None, "--json", help="Write the results document (JSON) here."),
    gantt: Path | None = typer.Option(
        None, "--gantt", help="Write a Gantt chart of the first repetition (.png or .svg)."),
    transfers: bool = typer.Option(
        False, "--transfers", help="Draw data transfers between processors as arrows on the --gantt chart."),
    trace: Path | None = typer.Option(
        None, "--trace", help="Write a Chrome/Perfetto trace (.json) of the first repetition."),
    wide: bool = typer.Option(
        False, "--wide", help="Every column with ± std (the default table fits 100 columns)."),
    seed_space: str | None = typer.Option(
        None, "--seed-space", help="Draw the days from this seed space (train, select, evaluate, fresh), "
                                   "derived from --seed or the scenario's seed; see docs/evaluation.md."),
    fresh: bool = typer.Option(
        False, "--fresh", help="Evaluate on fresh days nobody tuned on: a random seed of the fresh space, printed."),
    swf: Path | None = typer.Option(
        None, "--swf", help="Cluster logs: write the jobs as one policy ran them (choose it with -s) to this "
                            "SWF file, for other batch simulators."),
) -> None:
    """Run every scheduler of SCENARIO in the simulator and print a comparison table."""
    from simsched.outputs import check_output
    from simsched.report.gantt import SUFFIXES

    if json_path is not None:
        check_output(json_path, option="--json", suffixes=None, inputs=[scenario])
    if gantt is not None:
        check_output(gantt, option="--gantt", suffixes=SUFFIXES, inputs=[scenario])
    elif transfers:
        raise SimschedError("--transfers draws on the Gantt chart: add --gantt FILE.png")
    if trace is not None:
        check_output(trace, option="--trace", suffixes=(".json",), inputs=[scenario])
    if swf is not None:
        check_output(swf, option="--swf", suffixes=(".swf",), inputs=[scenario])
    outputs = [p.resolve() for p in (json_path, gantt, trace, swf) if p is not None]
    if len(set(outputs)) < len(outputs):
        raise SimschedError("--json, --gantt, --trace and --swf must name different files")
    from simsched.limits import check_seed

    check_seed(seed)
    if seed_space is not None and seed is not None:  # before the scenario is read
        from simsched.run.seedspace import check_base

        check_base(seed)
    if repetitions is not None and repetitions < 1:
        raise SimschedError(f"--repetitions must be >= 1, got {repetitions}")
    if fresh:
        from simsched.run.seedspace import fresh_seed

        if seed_space not in (None, "fresh") or seed is not None:
            raise SimschedError("--fresh draws its own seed: give it without --seed and --seed-space "
                                "(to repeat a fresh run: --seed-space fresh --seed S)")
        seed_space, seed = "fresh", fresh_seed()
        say(f"fresh days from seed {seed} (repeat with --seed-space fresh --seed {seed})")

    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    loaded = load_scenario(scenario)  # refuses an output that is a file it reads (simsched.fileio's read set)
    if seed_space is not None:
        from simsched.run.seedspace import check_base, space_seeds

        if seed is None:  # the scenario's own seed is the base: located at its field
            try:
                check_base(loaded.seed, option=None)
            except SimschedError as exc:
                raise loaded.locate(exc, ("seed",)) from None
        days = space_seeds(loaded.seed if seed is None else seed, seed_space,
                           loaded.repetitions if repetitions is None else repetitions)
        seed = days[0]
        say(f"seed space {seed_space}: days {days[0]} ... {days[-1]}")
    from simsched.run.batch import batch_path, is_batch

    if swf is not None and not (loaded.has_task_graph and is_batch(loaded)):
        raise SimschedError("writes a cluster log's jobs as they ran (workload: {stream: {swf: ...}}); "
                            "this scenario has none", field="--swf")
    if not loaded.has_task_graph:
        _run_autotuning(loaded, scheduler, seed, repetitions, json_path, gantt, trace)
        return
    if is_batch(loaded) and loaded.workload.form == "batch" and loaded.workload.options["batch"].windows is not None:
        _run_windows(loaded, scheduler, seed, repetitions, json_path, gantt, trace, swf)
        return
    if batch_path(loaded, scheduler):  # a cluster log, DAG jobs of rigid tasks, or batch policies named on a stream
        if repetitions is not None and repetitions > 1:
            raise SimschedError("the batch path runs one day per run (a log's replay is deterministic; a stream's "
                                "day is its --seed): run again with another --seed, or sweep seeds",
                                field="--repetitions")
        _run_batch(loaded, scheduler, seed, json_path, gantt, trace, swf)
        return
    from simsched.limits import fewer_collections
    from simsched.report.run_table import print_run_table
    from simsched.report.terminal import Progress
    from simsched.run.streams import Days

    days = Days(loaded)  # a job stream's day, drawn once for the load line, the problem and every run
    _offered_load(loaded, loaded.seed if seed is None else seed, days)
    progress = Progress()
    with fewer_collections():
        try:
            report = run_scenario(loaded, schedulers=scheduler or None, seed=seed, repetitions=repetitions,
                                  progress=progress, days=days)
        finally:
            progress.close()
    print_run_table(report, _console(), wide)
    for warning in report.warnings:
        _warning(warning)
    if json_path is not None:
        from simsched.run.results import write_results

        with fewer_collections():
            write_results(report, json_path)
        typer.echo(f"results written to {json_path}")
    if gantt is not None:
        from simsched.report.gantt import write_gantt

        write_gantt(report, gantt, transfers=transfers)
        typer.echo(f"Gantt chart written to {gantt}")
    if trace is not None:
        from simsched.report.trace import write_trace

        write_trace(report, trace)
        typer.echo(f"trace written to {trace}")


def _offered_load(loaded: Any, seed: int, days: Any) -> None:
    """For a job stream: print its offered load per processor type on day ``seed`` (of ``days``, a
    :class:`simsched.run.streams.Days`), and warn above 1."""
    from simsched.run.streams import offered_load_of

    if loaded.workload is not None and loaded.workload.form == "stream":
        _print_load(offered_load_of(loaded, seed, days.stream(seed)))


def _print_load(load: Any) -> None:
    """A job stream's offered load (:class:`simsched.run.streams.OfferedLoad`) and its warning above 1."""
    if load is None:
        return
    say(load.line())
    warning = load.warning()
    if warning is not None:
        _warning(warning)


def _run_batch(loaded: Any, policies: list[str] | None, seed: int | None, json_path: Path | None,
               gantt: Path | None, trace: Path | None, swf: Path | None = None) -> None:
    """``run`` for a cluster log (simsched.run.batch): one row per batch policy; ``--swf``: the
    jobs as the one chosen policy ran them, written back to SWF."""
    if gantt is not None or trace is not None:
        raise SimschedError("--gantt and --trace draw task schedules; a cluster log's jobs go to --json",
                            field="--gantt" if gantt is not None else "--trace")
    from simsched.report.batch import print_batch_report
    from simsched.run.batch import batch_document, run_batch_scenario, write_run_swf

    chosen = policies or loaded.scheduler_labels
    if swf is not None and len(chosen) != 1:
        raise SimschedError(f"writes the jobs as one policy ran them: choose it with -s (this run has "
                            f"{len(chosen)}: {', '.join(chosen)})", field="--swf")
    report = run_batch_scenario(loaded, schedulers=policies or None, seed=seed)
    print_batch_report(report, _console())
    if json_path is not None:
        from simsched.run.results import write_document

        write_document(batch_document(report), json_path)
        typer.echo(f"results written to {json_path}")
    if swf is not None:
        write_run_swf(report, swf)
        typer.echo(f"jobs as {report.rows[0]['scheduler']} ran them written to {swf} (SWF)")


def _run_windows(loaded: Any, policies: list[str] | None, seed: int | None, repetitions: int | None,
                 json_path: Path | None, gantt: Path | None, trace: Path | None, swf: Path | None) -> None:
    """``run`` for a cluster log with ``windows`` (simsched.run.log_windows): one window per day, the
    mean bounded slowdown per policy over them with its 95% interval."""
    for flag, value in (("--gantt", gantt), ("--trace", trace), ("--swf", swf)):
        if value is not None:
            raise SimschedError("a windowed log's runs go to --json (one row per window and policy)", field=flag)
    from simsched.report.batch import print_windows_report
    from simsched.run.log_windows import run_windows, windows_document

    report = run_windows(loaded, schedulers=policies or None, seed=seed,
                         repetitions=loaded.repetitions if repetitions is None else repetitions)
    print_windows_report(report, _console())
    if json_path is not None:
        from simsched.run.results import write_document

        write_document(windows_document(report), json_path)
        typer.echo(f"results written to {json_path}")


def _run_autotuning(loaded: Any, policies: list[str] | None, seed: int | None, repetitions: int | None,
                    json_path: Path | None, gantt: Path | None, trace: Path | None = None) -> None:
    """``run`` for a scenario with only an ``autotuning:`` section (simsched.run.autotune)."""
    if gantt is not None or trace is not None:
        raise SimschedError("--gantt and --trace draw task schedules; this scenario has only an autotuning section")
    from simsched import __version__
    from simsched.report.autotune import print_autotuning_table
    from simsched.run.autotune import run_autotuning

    base = loaded.seed if seed is None else seed
    reps = loaded.repetitions if repetitions is None else repetitions
    result = run_autotuning(loaded.autotuning, base_dir=loaded.file.parent if loaded.file else None,
                            seed=base, policies=policies or None, repetitions=reps,
                            line_of=loaded.document.line_of if loaded.document else None)
    print_autotuning_table(result, _console())
    if json_path is not None:
        from simsched.run.results import write_document

        write_document({"scenario": loaded.name, "simsched_version": __version__, "seed": base,
                        "repetitions": reps, **result}, json_path)
        typer.echo(f"results written to {json_path}")


# --------------------------------------------------------------------------- validate
@app.command()
@user_errors
def validate(scenario: Path = typer.Argument(..., help="Scenario YAML file.", show_default=False)) -> None:
    """Check SCENARIO: print "ok: ..." and exit 0, or one line per problem and exit 2."""
    from simsched.run.validate import validate_scenario
    from simsched.scenario import ScenarioError, load_scenario

    try:
        loaded = load_scenario(scenario, construct=True)  # validate: every constructor's own checks too
    except ScenarioError as exc:
        for problem in exc.problems:
            _error(str(problem))
        raise typer.Exit(2) from None
    checked = validate_scenario(loaded, scenario)
    say(checked.line)
    _print_load(checked.load)


# --------------------------------------------------------------------------- list
@app.command("list")
@user_errors
def list_schedulers() -> None:
    """List the registered schedulers and autotuning policies: kind, description, origin.

    The origin is builtin, or the installed package that registers a plug-in."""
    from simsched.report.schedulers import print_scheduler_list

    print_scheduler_list(_console())


# --------------------------------------------------------------------------- bench
@app.command()
@user_errors
def bench(
    what: str = typer.Argument("spine", help="Benchmark group: spine, schedulers, workloads, sweep, capacity, "
                               "deepsched, quality, stg, scale, streams, world, batch, rl or all."),
    quick: bool = typer.Option(False, "--quick", help="Small sizes only (seconds, not minutes)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="stg: only the first N cases."),
    size: str = typer.Option(None, "--size", help="streams only: JOBSxPROCESSORS (e.g. 10000x1000, the issue's "
                             "target) or quick/default/target."),
) -> None:
    """Time the simulator and schedulers on generated workloads and print the figures."""
    try:
        from simsched.bench.dispatch import main as bench_main
    except ImportError as exc:
        raise SimschedError(f"the benchmarks are not available: {exc}") from None
    from simsched.report.bench import show_rows
    from simsched.report.terminal import Progress

    out, bar = _console(), Progress()
    try:
        bench_main(what, quick=quick, show=lambda rows, title: show_rows(rows, title, out), say=out.print,
                   progress=bar, limit=limit, size=size)
    finally:
        bar.close()


# --------------------------------------------------------------------------- check, baseline
from simsched.cli import baseline_cmd, check_cmd  # noqa: E402  (light: they import typer only)

app.command("check")(check_cmd.check)
app.add_typer(baseline_cmd.app, name="baseline")

# --------------------------------------------------------------------------- workloads, autotuning capacity
from simsched.cli import capacity_cmd, workload_cmd  # noqa: E402  (light: heavy imports inside commands)

app.add_typer(workload_cmd.app, name="workload")
app.command("capacity")(user_errors(capacity_cmd.capacity_command))  # numbers checked first

# --------------------------------------------------------------------------- recorded runs: calibration, fidelity
from simsched.cli import fidelity_cmd  # noqa: E402  (light: the corpus and the simulator load inside the commands)

app.command("calibrate")(user_errors(fidelity_cmd.calibrate))
app.command("fidelity")(user_errors(fidelity_cmd.fidelity))
app.command("calibrate-curve")(user_errors(fidelity_cmd.calibrate_curve))

# --------------------------------------------------------------------------- learned schedulers
from simsched.cli import train_cmd  # noqa: E402  (light: torch loads inside the commands)

app.add_typer(train_cmd.app, name="train")

# --------------------------------------------------------------------------- teaching, generated docs
from simsched.cli import docs_cmd, explain_cmd  # noqa: E402  (light: heavy imports inside commands)

app.add_typer(explain_cmd.app, name="explain")
app.add_typer(docs_cmd.attach(app), name="docs", hidden=True)

# --------------------------------------------------------------------------- studies, summaries, reports
from simsched.cli import plot_cmd, report_cmd, summarize_cmd, sweep_cmd  # noqa: E402  (light: heavy imports inside)

app.command("sweep")(sweep_cmd.sweep)
app.command("summarize")(summarize_cmd.summarize)
app.command("plot")(plot_cmd.plot)
app.command("report")(report_cmd.report)

# --------------------------------------------------------------------------- adversarial instances
from simsched.cli import adversary_cmd  # noqa: E402  (light: the search loads inside the command)

app.command("adversary")(adversary_cmd.adversary)

# --------------------------------------------------------------------------- generalisation matrix
from simsched.cli import generalise_cmd  # noqa: E402  (light: the matrix loads inside the command)

app.command("generalise")(generalise_cmd.generalise)


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (``simsched``).  A usage mistake (an unknown option, a missing argument,
    a value of the wrong type) ends like every other user error: one ``error: COMMAND: ...`` line naming
    the ``--help`` to read, exit code 2, instead of a boxed panel (click's own exceptions are caught here,
    through the public ``standalone_mode=False``)."""

    if args is None:  # the program itself (its arguments from sys.argv), not a caller's in-process call
        _standalone()  # a SIGTERM'd command ends within a bounded time (simsched.cli.common.TERM_GRACE_S)
    try:
        code = app(args=args, prog_name="simsched", standalone_mode=False)
    except KeyboardInterrupt:
        _error("interrupted")
        sys.exit(130)
    except Exception as exc:  # click's ClickException family, recognised by what every one of them has
        if not (callable(getattr(exc, "format_message", None)) and isinstance(getattr(exc, "exit_code", None), int)):
            raise
        _error(usage_line(exc))
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
