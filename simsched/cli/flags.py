"""One meaning per flag across every command, and the old spellings that are refused.

The short flags that several commands share mean the same thing in all of them:

* ``-o/--output``: a file (or folder) the command writes;
* ``-r/--repetitions``: repetitions (seeds) per scheduler;
* ``-s/--scheduler``: a scheduler to run (repeatable);
* ``-m/--metric``: a metric column.

A service objective is given with ``--objective`` (no short flag: ``-o`` is the output) and the resource
that ``capacity`` sizes with ``--resource`` (no short flag: ``-r`` is repetitions).

:func:`retired` makes a hidden option for an old spelling, which stops the command before it does anything
with one line that names the new spelling (exit 2).  ``tests/test_flags.py`` walks the command table and
holds every short flag to one long name.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

import typer

SHARED: dict[str, str] = {
    "-o": "--output",
    "-r": "--repetitions",
    "-s": "--scheduler",
    "-m": "--metric",
}
"""Short flags used by more than one command -> the one long name they stand for everywhere."""


def retired(command: str, flag: str, now: Callable[[str], str]) -> Any:
    """A hidden ``typer.Option`` for the old spelling ``flag`` of ``command``: given any value, it prints
    ``error: <command>: <flag> ...; <now(value)>`` on stderr and exits 2, while the command line is
    parsed (before anything is read or written).  ``now`` turns the value given into the sentence that
    names the new spelling, e.g. ``give the objective with --objective "jct_p95 <= 300"``.  O(1)."""

    def refuse(value: str | None) -> None:
        if value is None:
            return
        from simsched.cli.common import print_error

        meaning = f"{flag} is {SHARED[flag]} in every command" if flag in SHARED else f"{flag} is retired"
        print_error(f"{command}: {meaning}; {now(value)}")
        raise typer.Exit(2)

    return typer.Option(None, flag, hidden=True, expose_value=False, callback=refuse, show_default=False)


def quoted(value: str) -> str:
    """``value`` as it would be typed in a shell, double quotes for anything with a space or operator."""
    return value if shlex.quote(value) == value else '"' + value.replace('"', '\\"') + '"'
