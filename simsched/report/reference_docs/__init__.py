"""Generated documentation: the parts of ``docs/`` that must not drift from the code.

* :func:`~.scenario_page.scenario_reference` -> ``docs/scenario-reference.md``: every field, type, default and an
  example of every scenario section, read from the pydantic models of
  :mod:`simsched.scenario` (and of the ``autotuning:`` section); the generator and
  importer parameter tables from the signatures and docstrings of ``GENERATORS`` and ``IMPORTERS``.
* :func:`~.cli_page.cli_reference` -> ``docs/cli.md``: every command and subcommand of the Typer app, with its
  usage, help and options, read from the click command tree.
* :func:`~.scheduler_page.scheduler_parameters` -> the block between the ``GENERATED`` markers of
  ``docs/schedulers.md``: the table of every registered scheduler (name, kind, extras, description,
  from the registry's specs) and every built-in task-graph scheduler's parameters, from the class
  signature.

The markdown pieces they share (type names, cells, a model's field table, a function's parameter table)
are :mod:`~.tables`.  :func:`generate` writes them (``simsched docs generate``); :func:`check` says which committed file
differs (``simsched docs generate --check``, and ``tests/test_docs.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simsched.report.reference_docs.cli_page import cli_reference
from simsched.report.reference_docs.scenario_page import scenario_reference
from simsched.report.reference_docs.scheduler_page import scheduler_parameters, with_block

DOCS = Path(__file__).resolve().parents[3] / "docs"
"""The repository's ``docs/`` folder, where the generated pages live."""


def targets(app: Any, docs: Path = DOCS) -> dict[Path, Callable[[str], str]]:
    """Each generated file and how to make its new text from the current one (``app``: the Typer
    command-line app whose commands ``docs/cli.md`` documents)."""
    return {
        docs / "scenario-reference.md": lambda _old: scenario_reference(),
        docs / "cli.md": lambda _old: cli_reference(app),
        docs / "schedulers.md": lambda old: with_block(old, scheduler_parameters()),
    }


def check(app: Any, docs: Path = DOCS) -> list[Path]:
    """The generated files whose committed text differs from what the code generates now."""
    stale = []
    for path, make in targets(app, docs).items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if make(old) != old:
            stale.append(path)
    return stale


def generate(app: Any, docs: Path = DOCS) -> list[Path]:
    """Write every generated file that changed; returns them."""
    written = []
    for path, make in targets(app, docs).items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = make(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            written.append(path)
    return written
