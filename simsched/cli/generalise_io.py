"""What ``simsched generalise`` does the same for streams and cluster logs: the days of a seed space,
and the matrix printed and written (JSON, HTML)."""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import console, warning_line


def choose_days(loaded, days: int, *, fresh: bool, seed: int | None,
                seed_space: str | None) -> tuple[str, int, list[int]]:
    """``(space, base, day seeds)``: ``days`` days of the ``evaluate`` space (or ``seed_space``), or with
    ``fresh`` of the fresh space from ``seed`` (a new one, printed, when None); the base a space derives
    from is a scenario seed (refused otherwise, at the option or the scenario's ``seed``).  O(days)."""
    from simsched.errors import SimschedError
    from simsched.run.seedspace import check_base, fresh_seed, space_seeds

    space = "fresh" if fresh else seed_space or "evaluate"
    if fresh and seed is None:
        seed = fresh_seed()
        typer.echo(f"fresh days from seed {seed} (repeat with --fresh --seed {seed})")
    base = loaded.seed if seed is None else seed
    try:  # the base the days derive from is a scenario seed (the option's, or the scenario's own field)
        check_base(base, option="--seed" if seed is not None else None)
    except SimschedError as exc:
        raise (exc if seed is not None else loaded.locate(exc, ("seed",))) from None
    return space, base, space_seeds(base, space, days)


def write_outputs(doc: dict, rows: list[dict], json_path: Path | None, html_path: Path | None) -> None:
    """Print the matrix and each cell's warnings; write the JSON document and the HTML page if asked."""
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
