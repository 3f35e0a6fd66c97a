"""Every kind of bad input ends with exit code 2, one actionable line naming the file (and field and
line where there is one), no traceback, and no output file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app

GOOD = """\
name: tiny
platform:
  processors: [{name: P1}, {name: P2}]
workload:
  tasks:
    - {name: a, cost: [1, 2]}
    - {name: b, cost: [3, 4]}
  edges:
    - {from: a, to: b, data: 1}
schedulers: [heft, mct]
"""


def run_bad(tmp_path: Path, text: str | None, *extra: str, name: str = "bad.yaml") -> tuple[str, Path]:
    """Run ``simsched run`` on ``text`` (None: a file that does not exist) with --json and --gantt;
    check the common promises and return the single error line and the scenario path."""
    scenario = tmp_path / name
    if text is not None:
        scenario.write_text(text)
    out_json, out_png = tmp_path / "out.json", tmp_path / "out.png"
    result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(out_json), "--gantt", str(out_png), *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert not out_json.exists() and not out_png.exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]
    assert leftovers == []
    return lines[0], scenario


def test_good_fixture_runs(tmp_path: Path) -> None:
    """The fixture the bad cases are derived from is itself valid (so each case fails for its own reason)."""
    (tmp_path / "good.yaml").write_text(GOOD)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "good.yaml"), "--json", str(tmp_path / "o.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o.json").exists()


def test_missing_file(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, None)
    assert line == f"error: {scenario}: no such file"


def test_yaml_syntax_error(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, "name: tiny\nplatform:\n  processors: [{name: P1},\n")
    assert line.startswith(f"error: {scenario}:4: YAML syntax error")


def test_unknown_field(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("{name: P2}", "{name: P2, spead: 2}"))
    assert line.startswith(f"error: {scenario}:3: platform.processors[1].spead: unknown field 'spead'")
    assert "did you mean 'speed'?" in line


def test_unknown_top_level_field(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD + "repetition: 3\n")
    assert line.startswith(f"error: {scenario}:11: repetition: unknown field 'repetition'")
    assert "did you mean 'repetitions'?" in line


def test_unknown_scheduler_suggests_closest(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("[heft, mct]", "[heft, hefft]"))
    assert line.startswith(f"error: {scenario}:10: schedulers[1]: unknown scheduler 'hefft'")
    assert "did you mean 'heft'?" in line


def test_unknown_scheduler_on_command_line(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    line, _ = run_bad(tmp_path, GOOD, "--scheduler", "minmn")
    assert "unknown scheduler 'minmn'" in line and "did you mean 'minmin'?" in line


def test_wrong_type(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("{name: P2}", "{name: P2, speed: fast}"))
    # ours: the file, line, field and the value; the words after are pydantic's, whose wording may change
    assert line.startswith(f"error: {scenario}:3: platform.processors[1].speed: ")
    assert "'fast'" in line


def test_negative_cost(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("cost: [3, 4]", "cost: [3, -4]"))
    assert line.startswith(f"error: {scenario}:7: workload.tasks[1].cost[1]: ")
    assert "greater than or equal to 0" in line and "-4" in line


def test_negative_edge_data(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("data: 1", "data: -1"))
    assert line.startswith(f"error: {scenario}:9: workload.edges[0].data: ")


def test_cycle(tmp_path: Path) -> None:
    edge = "    - {from: a, to: b, data: 1}\n"
    text = GOOD.replace(edge, edge + "    - {from: b, to: a}\n")
    line, scenario = run_bad(tmp_path, text)
    assert line.startswith(f"error: {scenario}:10: workload.edges[1]: the task graph has a cycle")
    assert "'b' -> 'a' -> 'b'" in line


def test_task_no_processor_may_run_by_cost(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("cost: [3, 4]", "cost: [.inf, null]"))
    assert line.startswith(f"error: {scenario}:7: workload.tasks[1]: task 'b'")
    assert "infinite cost on every processor" in line


def test_task_no_processor_may_run_by_affinity(tmp_path: Path) -> None:
    text = """\
name: affinity
platform:
  processors: [{name: c, type: cpu}, {name: g, type: gpu}]
  affinity: {measure: {cpu: 0, gpu: 0}}
workload:
  tasks:
    - {name: a, work: 3}
    - {name: m, work: 3, kind: measure}
schedulers: [heft]
"""
    line, scenario = run_bad(tmp_path, text)
    assert line.startswith(f"error: {scenario}:8: workload.tasks[1]: no processor may run task 'm' of kind 'measure'")


def test_task_too_large_for_every_processor(tmp_path: Path) -> None:
    text = GOOD.replace("{name: P1}, {name: P2}", "{name: P1, memory: 4}, {name: P2, memory: 8}").replace(
        "{name: b, cost: [3, 4]}", "{name: b, cost: [3, 4], memory: 16}")
    line, scenario = run_bad(tmp_path, text)
    assert line.startswith(f"error: {scenario}:7: workload.tasks[1]: no processor may run task 'b'")
    assert "needs memory 16" in line


def test_empty_graph(tmp_path: Path) -> None:
    text = "name: empty\nplatform:\n  processors: [{name: P1}]\nworkload:\n  tasks: []\nschedulers: [heft]\n"
    line, scenario = run_bad(tmp_path, text)
    assert line == f"error: {scenario}:5: workload.tasks: the task graph is empty: it needs at least one task"


def test_yaml_alias_bomb(tmp_path: Path) -> None:
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        levels.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = "name: bomb\n" + "\n".join(levels) + "\n"
    line, scenario = run_bad(tmp_path, text)
    assert line.startswith(f"error: {scenario}:")
    assert "expands to too many nodes" in line and "alias bomb" in line


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, "- just\n- a list\n")
    assert line.startswith(f"error: {scenario}:1: the top level must be a mapping")


def test_duplicate_key(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD + "schedulers: [cpop]\n")
    assert line.startswith(f"error: {scenario}:11: duplicate key 'schedulers'")


def test_cost_count_differs_from_processors(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("cost: [3, 4]", "cost: [3, 4, 5]"))
    assert line.startswith(f"error: {scenario}:7: workload.tasks[1].cost: task 'b' gives 3 costs")


def test_bad_scheduler_parameter(tmp_path: Path) -> None:
    line, scenario = run_bad(tmp_path, GOOD.replace("[heft, mct]", "[heft, {name: mct, speed: 3}]"))
    assert line.startswith(f"error: {scenario}:10: schedulers[1].speed: ")  # located at the parameter
    assert "'speed'" in line


def test_several_problems_are_counted(tmp_path: Path) -> None:
    text = GOOD.replace("{name: P2}", "{name: P2, speed: -1}").replace("[heft, mct]", "[heft, mtc]")
    line, _ = run_bad(tmp_path, text)
    assert "(and 1 more problem;" in line and "simsched validate" in line


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--gantt", "chart.jpg", "must end in .png or .svg"),
    ("--json", "missing-dir/out.json", "does not exist"),
    ("--gantt", "missing-dir/out.png", "does not exist"),
])
def test_bad_output_path_fails_before_running(tmp_path: Path, option: str, value: str, message: str) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    target = tmp_path / value
    result = CliRunner().invoke(app, ["run", str(tmp_path / "good.yaml"), option, str(target)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert "Traceback" not in result.output
    assert not target.exists()


def test_negative_seed_and_repetitions(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    for args, message in ((["--seed", "-1"], "--seed must be >= 0"), (["-r", "0"], "--repetitions must be >= 1")):
        result = CliRunner().invoke(app, ["run", str(tmp_path / "good.yaml"), *args])
        assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output
