"""Facts the docs state about commands, checked against the commands."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from simsched.bench.dispatch import GROUP_NAMES
from simsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.output


def test_bench_help_lists_every_group_its_error_offers() -> None:
    error = _invoke("bench", "no-such-group")
    offered = re.search(r"choose from (.*) or all", error).group(1).split(", ")
    assert set(offered) <= set(GROUP_NAMES)
    helped = " ".join(_invoke("bench", "--help").split())
    for group in GROUP_NAMES:
        assert group in helped, f"bench --help does not name {group!r}"


def _placements(out: str) -> list[tuple[str, str]]:
    """(task, chosen processor) per step of `explain heft`."""
    return [(row[2].strip(), row[-2].strip()) for row in
            (line.split("│") for line in out.splitlines() if line.startswith("│") and line.count("│") > 6)]


def test_no_insertion_exercise_changes_step_8_on_the_documented_instance() -> None:
    topcuoglu = str(ROOT / "scenarios" / "topcuoglu2002.yaml")
    assert _placements(_invoke("explain", "heft", topcuoglu)) == \
        _placements(_invoke("explain", "heft", topcuoglu, "--no-insertion"))  # why the tutorial moved on
    greedy = str(ROOT / "scenarios" / "tutorials" / "greedy_fails.yaml")
    with_gaps = _invoke("explain", "heft", greedy)
    appended = _invoke("explain", "heft", greedy, "--no-insertion")
    a, b = _placements(with_gaps), _placements(appended)
    assert len(a) == 8 and [k for k in range(8) if a[k] != b[k]] == [7]  # step 8 only, as the answer says
    assert a[7] == ("t6", "P2") and b[7] == ("t6", "P1")
    assert "HEFT makespan: 46" in with_gaps and "HEFT makespan: 46" in appended
    assert "--no-insertion" in appended and "idle gaps may be filled" not in appended
    tutorial = (ROOT / "docs" / "tutorials" / "heft-step-by-step.md").read_text(encoding="utf-8")
    assert "greedy_fails.yaml --no-insertion" in tutorial and "step 8 only" in tutorial


def test_capacity_tutorial_describes_the_picture_it_shows() -> None:
    page = (ROOT / "docs" / "tutorials" / "capacity-what-if.md").read_text(encoding="utf-8")
    picture = page.index("![Fraction of jobs within 6 h")
    assert "picture below" not in page and "The caption says" not in page
    assert page.index("The picture above is that plot") > picture
