"""``simsched docs generate [--check]`` (hidden): regenerate the docs pages made from the code.

See :mod:`simsched.report.reference_docs`: ``docs/scenario-reference.md``, ``docs/cli.md`` and the parameter
tables of ``docs/schedulers.md``.  ``--check`` writes nothing and exits 1 when a page is stale.
"""

from __future__ import annotations

import typer


def attach(root: typer.Typer) -> typer.Typer:
    """The ``docs`` command group for the command-line app ``root`` (whose commands ``docs/cli.md``
    documents); ``cli/main.py`` adds it, so neither this module nor ``report/`` imports the app."""
    app = typer.Typer(help="Maintain the generated documentation (for contributors).", no_args_is_help=True)

    @app.command("generate")
    def generate(check: bool = typer.Option(False, "--check", help="Only report stale pages; exit 1 if any.")) -> None:
        """Regenerate docs/scenario-reference.md, docs/cli.md and the tables of docs/schedulers.md."""
        from simsched.report import reference_docs as docs_gen

        if check:
            stale = docs_gen.check(root)
            for path in stale:
                typer.echo(f"stale: {path} (run `simsched docs generate`)")
            if stale:
                raise typer.Exit(1)
            typer.echo("generated docs are up to date")
            return
        written = docs_gen.generate(root)
        typer.echo("\n".join(f"written: {p}" for p in written) or "generated docs were already up to date")

    return app
