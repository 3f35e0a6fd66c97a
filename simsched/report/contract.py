"""A contract report (:mod:`simsched.testing.contract`, and the autotuning and batch contracts) as a person
reads it: the properties checked, each defect with its smallest failing example, and a verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from simsched.testing.contract import ContractReport


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
