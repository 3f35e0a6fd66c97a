"""``simsched check IMPORT_PATH_OR_NAME [--examples N]``: run the scheduler contract and report.

Exit codes: 0 when every property holds, 1 when a defect was found (each printed with the smallest
failing example hypothesis found), 2 on bad input (an unknown name, a plug-in that does not import
or implements no interface, a bad parameter).  hypothesis is imported only when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from simsched.testing.contract import ContractReport


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict, each value read as YAML (``insertion=false`` -> False)."""
    from simsched.errors import SimschedError
    from simsched.yamlio import parse_yaml

    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SimschedError(f"--param {item!r}: write it as NAME=VALUE")
        try:
            params[key.strip()] = parse_yaml(value).data
        except SimschedError as exc:
            raise SimschedError(f"--param {item!r}: {exc.message}") from None
    return params


def print_contract_report(report: ContractReport, console: Console) -> None:
    """The report as rich text: a title line and a table of properties within 100 columns
    (:func:`simsched.report.fit.fit_width`; only the "what it checks" column may wrap), then every
    defect with its example, one line each as the terminal allows (so that a pipe can grep them)."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.report.fit import fit_width

    width = fit_width(console)
    console.print(escape(f"contract of {report.scheduler}: {report.kind} scheduler ({report.origin}), "
                         f"seed {report.seed}, {report.scope}"), width=width, highlight=False)
    table = Table()
    table.add_column("property", style="bold", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    table.add_column("what it checks")
    for p in report.properties:
        table.add_row(p.name, "[green]ok[/green]" if p.passed else f"[red]{len(p.defects)} defect(s)[/red]",
                      str(p.examples), escape(p.description))
    console.print(table, width=width)
    for i, d in enumerate(report.defects, 1):
        console.print(f"[bold red]defect {i}[/bold red] [bold]{escape(d.property)}[/bold] / {escape(d.category)}: "
                      f"{escape(d.message)}" + (" [yellow](not reproducible on every run: nondeterministic)"
                                                "[/yellow]" if d.flaky else ""))
        seed = f" (scheduler seed {d.seed})" if d.seed is not None else ""
        console.print(f"  smallest failing example{seed}:")
        for line in d.example_text.splitlines():
            console.print("    " + escape(line), highlight=False)
    verdict = "[green]passed[/green]" if report.passed else f"[red]{len(report.defects)} defect(s) found[/red]"
    console.print(f"{escape(report.scheduler)}: {verdict} in {report.elapsed_s:.1f} s")


def _check(target: str, examples: int, seed: int, param: list[str] | None, prop: list[str] | None) -> None:
    from simsched.cli.common import console as _console
    from simsched.errors import SimschedError
    from simsched.schedulers import registry

    if examples < 1:
        raise SimschedError(f"--examples must be >= 1, got {examples}")
    spec = registry.spec(target)
    if spec is not None and spec.kind == "autotune":
        from simsched.testing.autotune_contract import check_autotune_policy as check_scheduler
    elif spec is not None and spec.kind == "batch":
        from simsched.testing.batch_contract import check_batch_policy as check_scheduler
    else:
        from simsched.testing.contract import check_scheduler
    from simsched.testing.contract_search import hypothesis_home_outside_cwd

    with hypothesis_home_outside_cwd():  # nothing written into the user's current folder
        report = check_scheduler(target, examples=examples, seed=seed, params=parse_params(param),
                                 properties=prop or None)
    print_contract_report(report, _console())
    if not report.passed:
        raise typer.Exit(1)


def check(
    target: str = typer.Argument(..., help="A registered scheduler name or an import path module:Class.",
                                 show_default=False),
    examples: int = typer.Option(50, "--examples", "-n", min=1, max=100_000, help="Examples per property."),
    seed: int = typer.Option(0, "--seed", help="Seed of the example search (reproducible runs)."),
    param: list[str] | None = typer.Option(None, "--param", "-p",
                                           help="Scheduler parameter NAME=VALUE (repeatable)."),
    prop: list[str] | None = typer.Option(None, "--property", "-P",
                                          help="Check only this property (repeatable): valid, bound, "
                                               "determinism, replay, no-mutation, infeasible, no-future; for "
                                               "an autotuning policy complete, conflict-free, determinism; "
                                               "for a batch policy complete, capacity, determinism."),
) -> None:
    """Check a scheduler against the contract every built-in meets; exit 1 on a defect."""
    from simsched.cli.common import user_errors

    user_errors(_check)(target, examples, seed, param, prop)
