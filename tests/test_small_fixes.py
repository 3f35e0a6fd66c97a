"""Small things a newcomer tripped over: suggestions by edit distance, `report` on a scenario, the full
description of every scheduler in `simsched list`, the Chromium test's skip reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import did_you_mean, edit_distance
from simsched.schedulers import registry

ROOT = Path(__file__).resolve().parents[1]


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})


@pytest.mark.parametrize(("typo", "meant"), [("hfet", "hlfet"), ("heftt", "heft"), ("minmn", "minmin"),
                                             ("cpopp", "cpop"), ("HEFT", "heft")])
def test_suggestion_is_the_closest_in_edit_distance(typo: str, meant: str) -> None:
    assert registry.suggest(typo) == f" (did you mean {meant!r}?)"
    others = [n for n in registry.names() if n != meant]
    assert all(edit_distance(typo.lower(), n) >= edit_distance(typo.lower(), meant) for n in others)


def test_suggestion_edge_cases() -> None:
    assert did_you_mean("zzzzzz", ["heft", "cpop"]) == ""
    assert did_you_mean("x", []) == ""
    assert did_you_mean("ab", ["ac", "ad"]) == " (did you mean 'ac'?)"  # tie: the first given
    assert edit_distance("", "") == 0 and edit_distance("kitten", "sitting") == 3


def test_cli_suggests_hlfet_for_hfet() -> None:
    result = _invoke("run", str(ROOT / "scenarios" / "topcuoglu2002.yaml"), "-s", "hfet")
    assert result.exit_code == 2 and "did you mean 'hlfet'?" in result.output


def test_report_on_a_scenario_says_what_to_do(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text((ROOT / "scenarios" / "topcuoglu2002.yaml").read_text())
    result = _invoke("report", str(scenario), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "YAML file (a scenario?)" in result.output and "--json" in result.output
    assert not (tmp_path / "r.html").exists()
    broken = tmp_path / "r.json"
    broken.write_text("{")
    out = _invoke("report", str(broken), "-o", str(tmp_path / "b.html")).output
    assert "not valid JSON" in out and "simsched run SCENARIO --json" in out


def test_list_shows_whole_first_sentences() -> None:
    out = _invoke("list").output
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("│ heft-dup "))
    block = [lines[first]]
    for line in lines[first + 1:]:  # the row's wrapped lines: an empty name cell
        if not line.startswith("│" + " " * 10):
            break
        block.append(line)
    description = " ".join(line.split("│")[3].strip() for line in block)
    assert "wins where transfers dominate (high CCR)." in description
    for name in registry.names():
        try:
            text = registry.summary(registry.load_class(name))
        except Exception:  # noqa: BLE001 - learned schedulers without torch
            continue
        assert text and not re.search(r"\b(on|of|the|a|and|to|with|by)$", text), f"{name}: {text!r} is cut off"


def test_summary_of_wrapped_and_single_line_docstrings() -> None:
    class Wrapped:
        """First part (with a.b. inside
        parentheses) continues here.  Second sentence."""

    class Plain:
        """No full stop at the end"""

    class Empty:
        pass

    assert registry.summary(Wrapped) == "First part (with a.b. inside parentheses) continues here."
    assert registry.summary(Plain) == "No full stop at the end" and registry.summary(Empty) == ""


def test_chromium_test_skips_with_a_reason_and_the_readme_says_so() -> None:
    source = (ROOT / "tests" / "test_report.py").read_text()
    assert re.search(r'pytest\.skip\("no chromium binary on PATH', source)
    assert "headless Chromium" in (ROOT / "README.md").read_text()
