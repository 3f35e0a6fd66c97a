"""``simsched generalise SCENARIO -s SCHEDULER``: the generalisation matrix of one scheduler on a
stream scenario (:mod:`simsched.learned.generalise_matrix`): a table in the terminal, optionally the
matrix as JSON (``--json``) and as an HTML page (``--html``).  Days come from the scenario's
``evaluate`` seed space, or with ``--fresh`` from a random seed the command prints.  Bad input: exit
2 with one located line, nothing written."""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import console, user_errors, warning_line


@user_errors
def generalise(
    scenario: Path = typer.Argument(..., help="Stream scenario YAML file.", show_default=False),
    scheduler: str = typer.Option(..., "--scheduler", "-s", help="Scheduler under test (rl:checkpoint=rl_dynamic)."),
    days: int = typer.Option(30, "--days", help="Days per cell (the same day numbers in every cell)."),
    cell: list[str] | None = typer.Option(None, "--cell", help="Run only this cell (repeatable); default: all."),
    fresh: bool = typer.Option(False, "--fresh", help="Fresh days from a random seed (printed) instead of the "
                                                      "scenario's evaluation days."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the days' space (default: the scenario's; "
                                                         "with --fresh, the printed one to repeat a run)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the matrix (JSON) here."),
    html_path: Path | None = typer.Option(None, "--html", help="Write the matrix as an HTML page here."),
) -> None:
    """The generalisation matrix: SCHEDULER on SCENARIO and its neighbouring worlds against the best rule."""
    from simsched import __version__
    from simsched.errors import SimschedError
    from simsched.learned.generalise_matrix import CELLS, matrix, summary
    from simsched.limits import check_count, check_seed
    from simsched.outputs import check_output
    from simsched.run.seedspace import check_base, fresh_seed, space_seeds
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
    unknown = [c for c in cell or () if c not in CELLS]
    if unknown:
        raise SimschedError(f"unknown cell {unknown[0]!r}; choose from {', '.join(CELLS)}", field="--cell")
    loaded = load_scenario(scenario)
    if loaded.workload is None or loaded.workload.form != "stream":
        raise SimschedError("the generalisation matrix needs a stream scenario (workload: stream)", file=scenario,
                            field="workload")
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
    space = "fresh" if fresh else "evaluate"
    if fresh and seed is None:
        seed = fresh_seed()
        typer.echo(f"fresh days from seed {seed} (repeat with --fresh --seed {seed})")
    base = loaded.seed if seed is None else seed
    try:  # the base the days derive from is a scenario seed (the option's, or the scenario's own field)
        check_base(base, option="--seed" if seed is not None else None)
    except SimschedError as exc:
        raise (exc if seed is not None else loaded.locate(exc, ("seed",))) from None
    day_seeds = space_seeds(base, space, days)
    typer.echo(f"{space} days {day_seeds[0]} ... {day_seeds[-1]}", err=True)
    rows = matrix(scenario, scheduler, day_seeds, tuple(cell) if cell else CELLS,
                  progress=lambda text: typer.echo(f"  {text}", err=True))
    doc = {"scenario": loaded.name, "simsched_version": __version__, "scheduler": scheduler, "days": days,
           "seed_space": space, "seed": base, "rows": rows, "summary": summary(rows)}
    from simsched.report.generalise import print_matrix

    print_matrix(doc, console())
    for r in rows:
        for line in r.get("warnings", ()):
            warning_line(f"{r['cell']}: {line}")
    if json_path is not None:
        from simsched.run.results import write_document

        write_document(doc, json_path)
        typer.echo(f"matrix written to {json_path}")
    if html_path is not None:
        from simsched.report.generalise import write_matrix_html

        write_matrix_html(doc, html_path)
        typer.echo(f"HTML page written to {html_path}")
