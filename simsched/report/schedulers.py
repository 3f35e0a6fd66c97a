"""What the registry knows about schedulers, as a person reads it: the table of ``simsched list`` and the
description ``simsched explain NAME`` gives of one scheduler.  Every fact comes from the registry's
entries and the classes they name (:mod:`simsched.schedulers.registry`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from simsched.errors import SimschedError
from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console


def print_scheduler_list(console: Console) -> None:
    """The registered schedulers and autotuning policies, one row each: name, kind, description, origin
    (builtin, or the installed package that registers a plug-in).  A scheduler whose module does not
    import is listed as unavailable, with the reason, so it cannot hide the others.  O(schedulers)."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.outputs import plain_docstring
    from simsched.schedulers import registry

    table = Table(title="schedulers")
    table.add_column("name", style="bold")
    table.add_column("kind")
    table.add_column("description", overflow="fold")
    table.add_column("origin", no_wrap=True)
    for name in registry.names(registry.KINDS):
        try:
            cls = registry.load_class(name)
            kind, description = registry.kind(cls, name), registry.summary(cls, name)
        except Exception as exc:  # a broken or missing optional module must not hide the others
            spec = registry.spec(name)
            kind, description = spec.kind if spec else "?", f"unavailable: {type(exc).__name__}: {exc}"
        table.add_row(escape(name), kind, escape(plain_docstring(description)), escape(registry.origin(name)))
    print_table(console, table)


def scheduler_description(name: str, covered: Sequence[str]) -> list[str]:
    """The lines describing scheduler ``name`` (its docstring as plain text) and what ``simsched explain``
    shows step by step (``covered``); an unknown name is a :class:`SimschedError` listing both.  O(1)."""
    import inspect

    from simsched.schedulers import registry

    try:
        cls = registry.load_class(name)
    except SimschedError as exc:
        raise SimschedError(f"{exc.message}. `simsched explain` covers: {', '.join(covered)} (step by step), "
                            f"and describes any scheduler of `simsched list`") from None
    from simsched.outputs import plain_docstring

    return [f"{name} ({registry.kind(cls, name)}): {plain_docstring(inspect.getdoc(cls) or registry.summary(cls))}",
            f"\nStep by step: `simsched explain heft SCENARIO` (HEFT); `simsched explain` covers "
            f"{', '.join(covered)}. Every scheduler: docs/schedulers.md."]
