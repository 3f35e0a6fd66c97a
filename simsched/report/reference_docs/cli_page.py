"""``docs/cli.md``: every command and subcommand of the Typer app, with its usage, help and options, read
from the click command tree, and the table of short flags.  The command line passes its app: this floor
never imports ``cli/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simsched.report.reference_docs.tables import HEADER


def click_commands(app: Any) -> Iterator[tuple[str, Any]]:
    """``(path, click command)`` for the root of the Typer ``app`` and every visible command and
    subcommand (the command line passes its app: this floor never imports ``cli/``).

    Commands, groups and arguments are recognised by their attributes, not by class: recent Typer
    releases vendor their own copy of click, whose classes are not ``click``'s."""
    import typer

    root = typer.main.get_command(app)

    def walk(path: str, cmd: Any) -> Iterator[tuple[str, Any]]:
        yield path, cmd
        if _is_group(cmd):
            for name in sorted(cmd.commands):
                sub = cmd.commands[name]
                if not sub.hidden:
                    yield from walk(f"{path} {name}", sub)

    yield from walk("simsched", root)


def _is_group(cmd: Any) -> bool:
    return isinstance(getattr(cmd, "commands", None), dict)


def help_text(app: Any, path: str, width: int = 100) -> str:
    """What ``PATH --help`` prints (e.g. ``"simsched run"``), without colour, at a fixed width, with
    trailing spaces removed so the page is stable."""
    from typer.testing import CliRunner

    args = [*path.split()[1:], "--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(width), "NO_COLOR": "1", "TERM": "dumb"},
                                terminal_width=width)
    lines = [line.rstrip() for line in result.output.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def short_flags_table(app: Any) -> str:
    """A markdown table of every visible short flag: the long name it stands for and the commands that
    take it, read from the command tree (each short flag has one meaning everywhere; ``tests/test_flags.py``
    holds it).  O(options)."""
    uses: dict[str, tuple[str, list[str]]] = {}
    for path, cmd in click_commands(app):
        for p in getattr(cmd, "params", ()):
            if getattr(p, "param_type_name", "") != "option" or getattr(p, "hidden", False):
                continue
            longs = [o for o in p.opts if o.startswith("--")]
            for short in (o for o in p.opts if not o.startswith("--")):
                uses.setdefault(short, (longs[0] if longs else "", []))[1].append(path.removeprefix("simsched "))
    rows = ["## Short flags\n",
            "A short flag means the same in every command. A service objective has no short flag "
            "(`--objective`: `-o` is always the output) nor has the resource `capacity` sizes (`--resource`: "
            "`-r` is always repetitions); the old spellings `capacity -o/-r/-p` and `summarize -o` stop with "
            "one line naming the new one.\n",
            "| flag | stands for | commands |", "|---|---|---|"]
    for short in sorted(uses, key=lambda f: (f.lower(), f)):
        long, paths = uses[short]
        rows.append(f"| `{short}` | `{long}` | {', '.join(f'`{c}`' for c in paths)} |")
    return "\n".join(rows) + "\n"


def cli_reference(app: Any) -> str:
    """The text of ``docs/cli.md``: every visible command's own ``--help``.  Generated from the
    rendered help rather than from parameter objects, whose classes differ between Typer releases."""
    out = [HEADER, "# CLI reference\n",
           "Every command of `simsched`, generated from the command-line app (`simsched/cli/`): each "
           "section is what `COMMAND --help` prints. Bad input exits 2 with one `error: ...` line.\n",
           "Every output fits the terminal's width, at most 100 columns; piped to a file or `less` (no "
           "terminal), `$COLUMNS` columns, else 100. Tables too wide for it leave out their least telling "
           "columns (say which) or print in parts that repeat the row's name; a number is never cut; "
           "`--wide` (run, explain, fidelity) prints every column whole.\n"]
    out.append(short_flags_table(app))
    for path, _cmd in click_commands(app):
        depth = path.count(" ")
        out.append(f"{'#' * min(depth + 2, 4)} `{path}`\n")
        out.append(f"```\n{help_text(app, path)}\n```\n")
    return "\n".join(out)
