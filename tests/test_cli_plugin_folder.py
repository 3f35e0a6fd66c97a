"""A plug-in named in a scenario by import path (``ltf:ShortestTaskFirst``) is found beside the scenario as
well as on the import path, from any working directory, without PYTHONPATH; when it is found nowhere, the
one error line says where simsched looked."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app

STF = Path(__file__).parent / "fixtures" / "example_plugin" / "simsched_example_plugin" / "stf.py"
SCENARIO = """\
name: local-plugin
seed: 1
repetitions: 1
platform:
  processors: [{{name: cpu, count: 2}}, {{name: gpu, type: gpu, speed: 2.0}}]
workload: {{generator: random, tasks: 12}}
schedulers: [heft, "{module}:ShortestTaskFirst"]
"""


@pytest.fixture
def beside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A scenario folder holding the example planner as a plain module of a name found nowhere else, and a
    working directory elsewhere; the module is dropped from Python's cache afterwards."""
    module = f"ltf_{tmp_path.name.replace('-', '_')}"
    folder = tmp_path / "scenarios"
    folder.mkdir()
    shutil.copy(STF, folder / f"{module}.py")
    (folder / "s.yaml").write_text(SCENARIO.format(module=module))
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    yield folder / "s.yaml", module
    sys.modules.pop(module, None)


def test_plugin_beside_the_scenario_runs(beside: tuple[Path, str]) -> None:
    scenario, module = beside
    path_before = list(sys.path)
    result = CliRunner().invoke(app, ["run", str(scenario)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if f"{module}:ShortestTaskFirst" in line)
    assert "│" in row and "declined" not in row
    assert sys.path == path_before  # the scenario's folder was on the path only for the import


def test_plugin_beside_the_scenario_validates_and_results_match_the_installed_path(
        beside: tuple[Path, str], tmp_path: Path) -> None:
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    scenario, module = beside
    assert CliRunner().invoke(app, ["validate", str(scenario)]).exit_code == 0
    local = run_scenario(load_scenario(scenario))
    ours = {r["scheduler"]: r["makespan"] for r in local.rows}
    # the same class through the normal import path gives the same makespan (it is the same planner)
    shutil.copy(STF, tmp_path / "stf_on_path.py")
    sys.path.insert(0, str(tmp_path))
    try:
        other = scenario.with_name("p.yaml")
        other.write_text(scenario.read_text().replace(f"{module}:", "stf_on_path:"))
        theirs = {r["scheduler"]: r["makespan"] for r in run_scenario(load_scenario(other)).rows}
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("stf_on_path", None)
    assert ours[f"{module}:ShortestTaskFirst"] == theirs["stf_on_path:ShortestTaskFirst"]
    assert ours["heft"] == theirs["heft"]


def test_missing_plugin_error_names_where_it_looked(beside: tuple[Path, str]) -> None:
    scenario, module = beside
    scenario.write_text(scenario.read_text().replace(f"{module}:", "no_such_ltf:"))
    result = CliRunner().invoke(app, ["validate", str(scenario)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert "s.yaml:7" in line and "schedulers[1]" in line and "No module named 'no_such_ltf'" in line
    assert f"the scenario's folder {scenario.parent}" in line and "PYTHONPATH" in line


def test_a_broken_import_inside_the_plugin_is_not_hidden(beside: tuple[Path, str]) -> None:
    scenario, module = beside
    (scenario.parent / f"{module}.py").write_text("import no_such_dependency_xyz\n")
    result = CliRunner().invoke(app, ["validate", str(scenario)])
    assert result.exit_code == 2
    assert "No module named 'no_such_dependency_xyz'" in result.stderr
    assert "looked in" not in result.stderr  # the plug-in was found; its own import failed
