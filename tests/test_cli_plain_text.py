"""No reStructuredText markup reaches a reader: not the terminal (``simsched list``, ``simsched explain NAME``
for every scheduler, every ``--help``) nor the generated pages; ``explain`` treats every scheduler alike
(``explain heft`` without a scenario describes HEFT as ``explain cpop`` does CPOP) and refuses, in one line,
a scenario it would not use (``explain mct SCENARIO``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.outputs import plain_docstring

ROOT = Path(__file__).resolve().parent.parent
RST = re.compile(r":(?:py:)?(?:meth|func|class|mod|data|attr|exc|obj|const):`|(?<!`)``(?!`)")
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"


def _invoke(*args: str):
    from simsched.cli.main import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_plain_docstring() -> None:
    text = "see :meth:`~simsched.simulator.problem.Problem.W`, :class:`simsched.Plan` and ``False``"
    assert plain_docstring(text) == "see W, simsched.Plan and False"
    assert plain_docstring(text, markdown=True) == "see `W`, `simsched.Plan` and `False`"
    assert plain_docstring(":ref:`the model <model>` and :py:func:`f`") == "the model and f"
    assert plain_docstring("no markup, a `single` tick") == "no markup, a `single` tick"


def test_list_shows_no_markup() -> None:
    result = _invoke("list")
    assert result.exit_code == 0 and "fair-eft" in result.stdout
    assert not RST.search(result.stdout), RST.findall(result.stdout)


def _names() -> list[str]:
    from simsched.schedulers import registry

    return registry.names(registry.KINDS)


def test_explain_any_scheduler_shows_no_markup() -> None:
    leaks = {}
    for name in _names():
        result = _invoke("explain", name)
        if result.exit_code == 0 and RST.search(result.stdout):
            leaks[name] = RST.findall(result.stdout)
    assert not leaks, leaks


def test_help_and_generated_pages_show_no_markup() -> None:
    from simsched.cli.main import app
    from simsched.report.reference_docs.cli_page import click_commands, help_text

    for path, _ in click_commands(app):
        text = help_text(app, path)
        assert not RST.search(text), (path, RST.findall(text))
    for page in ("cli.md", "scenario-reference.md", "schedulers.md"):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert not RST.search(text), (page, RST.findall(text)[:5])


@pytest.mark.parametrize("name", ["heft", "cpop", "peft", "minmin"])
def test_every_step_by_step_view_describes_without_a_scenario(name: str) -> None:
    result = _invoke("explain", name)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{name} (static)") or result.stdout.startswith(f"{name} (online)")
    assert f"simsched explain {name} SCENARIO" in result.stdout


def test_heft_step_by_step_still_reproduces_the_paper() -> None:
    result = _invoke("explain", "heft", str(TOPCUOGLU))
    assert result.exit_code == 0 and "HEFT makespan: 80" in result.stdout


def test_a_scenario_given_to_a_scheduler_without_steps_is_refused_in_one_line() -> None:
    result = _invoke("explain", "mct", str(TOPCUOGLU))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: explain mct:") and "is not used" in lines[0]
    assert "heft, cpop, peft, minmin" in lines[0] and result.stdout == ""
