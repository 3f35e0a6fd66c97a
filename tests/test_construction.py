"""A scenario resolves each scheduler name once and a run constructs each scheduler once per repetition;
schedulers not selected are never constructed, and checkpoint paths are relative to the scenario file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from simsched.errors import SimschedError
from simsched.run.runner import run_scenario
from simsched.scenario import ScenarioError, load_scenario

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture()
def counting(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    import counting_scheduler

    counting_scheduler.CONSTRUCTED.clear()
    yield counting_scheduler.CONSTRUCTED
    sys.modules.pop("counting_scheduler", None)


def _scenario(tmp_path: Path, schedulers: str, reps: int = 3) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(f"""
seed: 1
repetitions: {reps}
platform: {{processors: [{{name: p, count: 2}}], network: {{bandwidth: 1.0, latency: 0.0}}}}
workload: {{generator: random, tasks: 12}}
schedulers: {schedulers}
""")
    return path


@pytest.mark.parametrize("reps", [1, 3])
def test_each_scheduler_is_constructed_once_per_repetition(tmp_path, counting, reps):
    path = _scenario(tmp_path, "[heft, {name: 'counting_scheduler:Counting', tag: a}]", reps)
    scenario = load_scenario(path)
    assert counting == []  # loading resolves names and checks parameters, constructing nothing
    report = run_scenario(scenario)
    assert counting == ["a"] * reps
    assert len(report.rows) == 2 * reps


def test_validate_constructs_each_scheduler_once(tmp_path, counting):
    load_scenario(_scenario(tmp_path, "[{name: 'counting_scheduler:Counting', tag: v}]"), construct=True)
    assert counting == ["v"]


def test_a_scheduler_not_selected_is_not_constructed(tmp_path, counting):
    path = _scenario(tmp_path, "[heft, {name: 'counting_scheduler:Refusing'}, 'counting_scheduler:Counting']")
    report = run_scenario(load_scenario(path), schedulers=["heft"])
    assert [r["scheduler"] for r in report.rows] == ["heft"] * 3 and counting == []


def test_a_refusing_constructor_is_located_before_any_run(tmp_path, counting):
    path = _scenario(tmp_path, "[counting_scheduler:Counting, {name: 'counting_scheduler:Refusing'}]")
    with pytest.raises(SimschedError) as info:
        run_scenario(load_scenario(path))
    assert info.value.line == 6 and info.value.field == "schedulers[1].name"
    assert "checkpoint not found" in info.value.message and str(path) in str(info.value)
    assert counting == [""]  # only the first repetition's instances were made: no run started
    with pytest.raises(ScenarioError) as located:  # validate reports the same, at the same place
        load_scenario(path, construct=True)
    assert located.value.problems[0].line == 6


def test_checkpoint_paths_are_relative_to_the_scenario_file(tmp_path, counting):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "s.yaml"
    path.write_text(_scenario(tmp_path, "[{name: 'counting_scheduler:Refusing', checkpoint: ck/model.pt},"
                                        " {name: 'counting_scheduler:Refusing', checkpoint: rl_dynamic}]").read_text())
    choices = load_scenario(path).schedulers
    assert choices[0].params["checkpoint"] == str(tmp_path / "sub" / "ck" / "model.pt")
    assert choices[1].params["checkpoint"] == "rl_dynamic"  # a shipped checkpoint's name stays a name
