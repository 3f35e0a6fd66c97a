"""``simsched generalise SCENARIO -s SCHEDULER``: the generalisation matrix of one scheduler on a
stream scenario (:mod:`simsched.learned.generalise_matrix`) or of one batch policy on a cluster log with
windows (:mod:`simsched.learned.generalise_windows`): a table in the terminal, optionally the matrix as
JSON (``--json``) and as an HTML page (``--html``).  Days (windows of a log) come from the scenario's
``evaluate`` seed space, another with ``--seed-space``, or with ``--fresh`` from a random seed the
command prints; a log drawn as RLScheduler draws (``draw: rlscheduler``) uses its own windows.  Bad
input: exit 2 with one located line, nothing written."""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import user_errors


@user_errors
def generalise(
    scenario: Path = typer.Argument(..., help="Stream scenario YAML file, or a cluster log with windows.",
                                   show_default=False),
    scheduler: str = typer.Option(..., "--scheduler", "-s",
                                  help="Scheduler under test (rl:checkpoint=rl_dynamic; on a log as run -s writes it: "
                                       "learned-priority(checkpoint=m.json))."),
    days: int = typer.Option(30, "--days", help="Days per cell (the same day numbers in every cell)."),
    cell: list[str] | None = typer.Option(None, "--cell", help="Run only this cell (repeatable); default: all."),
    fresh: bool = typer.Option(False, "--fresh", help="Fresh days from a random seed (printed) instead of the "
                                                      "scenario's evaluation days."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the days' space (default: the scenario's; "
                                                         "with --fresh, the printed one to repeat a run)."),
    seed_space: str | None = typer.Option(None, "--seed-space", help="Days from this seed space: evaluate (the "
                                                                      "default), select or train.",
                                          show_default=False),
    json_path: Path | None = typer.Option(None, "--json", help="Write the matrix (JSON) here."),
    html_path: Path | None = typer.Option(None, "--html", help="Write the matrix as an HTML page here."),
) -> None:
    """The generalisation matrix: SCHEDULER on SCENARIO and its neighbouring worlds against the best rule (on a
    cluster log: window by window against the best of RLScheduler's ten heuristics, by mean bounded slowdown)."""
    from simsched import __version__
    from simsched.errors import SimschedError
    from simsched.learned.generalise_matrix import CELLS, matrix, summary
    from simsched.limits import check_count, check_seed
    from simsched.outputs import check_output
    from simsched.run.seedspace import check_base
    from simsched.scenario import load_scenario

    for option, out, suffixes in (("--json", json_path, None), ("--html", html_path, (".html",))):
        if out is not None:
            check_output(out, option=option, suffixes=suffixes, inputs=[scenario])
    if json_path is not None and html_path is not None and json_path.resolve() == html_path.resolve():
        raise SimschedError("--json and --html must name different files")
    check_seed(seed)
    if seed is not None:  # before the scenario is read
        check_base(seed)
    check_count(days, option="--days", low=2, high=10_000, hint="at least 2 days give an interval")
    if seed_space is not None and (seed_space not in ("evaluate", "select", "train") or fresh):
        raise SimschedError("--fresh gives fresh days; --seed-space alone names evaluate, select or train"
                            if fresh else f"unknown seed space {seed_space!r}; choose from evaluate, select, train "
                            f"(fresh: --fresh)", field="--seed-space")
    loaded = load_scenario(scenario)
    if loaded.workload is not None and loaded.workload.form == "batch":
        from simsched.cli.generalise_logs import generalise_log

        generalise_log(scenario, loaded, scheduler, days=days, cells=cell, fresh=fresh, seed=seed,
                       seed_space=seed_space, json_path=json_path, html_path=html_path)
        return
    unknown = [c for c in cell or () if c not in CELLS]
    if unknown:
        raise SimschedError(f"unknown cell {unknown[0]!r}; choose from {', '.join(CELLS)}", field="--cell")
    if loaded.workload is None or loaded.workload.form != "stream":
        raise SimschedError("the generalisation matrix needs a stream scenario (workload: stream) or a cluster log "
                            "with windows (workload.stream.windows)", file=scenario, field="workload")
    from simsched.learned.rl.dynamic import parse_spec
    from simsched.schedulers import registry

    try:
        name, params = parse_spec(scheduler)
    except ValueError as exc:
        raise SimschedError(str(exc), field="--scheduler") from None
    try:  # an unknown name or a bad parameter fails here, before any run
        registry.create(name, **params)
    except SimschedError as exc:  # a name or parameter at the option; a checkpoint's own error names its file
        raise (exc if exc.file is not None else exc.located(field="--scheduler")) from None
    if (why := registry.unmet_needs(name, power=loaded.energy is not None)) is not None:
        raise SimschedError(f"{why}: add platform.power to {scenario} or choose another scheduler", field="--scheduler")
    from simsched.cli.generalise_io import choose_days, write_outputs

    space, base, day_seeds = choose_days(loaded, days, fresh=fresh, seed=seed, seed_space=seed_space)
    typer.echo(f"{space} days {day_seeds[0]} ... {day_seeds[-1]}", err=True)
    rows = matrix(scenario, scheduler, day_seeds, tuple(cell) if cell else CELLS,
                  progress=lambda text: typer.echo(f"  {text}", err=True))
    doc = {"scenario": loaded.name, "simsched_version": __version__, "scheduler": scheduler, "days": days,
           "seed_space": space, "seed": base, "rows": rows, "summary": summary(rows)}
    write_outputs(doc, rows, json_path, html_path)
