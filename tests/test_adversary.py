"""Adversarial instance search: reproducible, and the written scenario replays to the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.analysis.adversary import anneal, makespan_of, perturb, random_instance
from simsched.cli.main import app
from simsched.run.runner import run_scenario
from simsched.scenario import SchedulerChoice, build_problem, load_scenario


def _spec(name: str) -> SchedulerChoice:
    return SchedulerChoice(name, {}, name)


@pytest.mark.parametrize(("tasks", "processors"), [(7, 3), (1, 1)])
def test_written_instance_loads_to_the_same_problem(tmp_path, tasks, processors):
    rng = np.random.default_rng(3)
    inst = random_instance(tasks, processors, rng)
    for _ in range(20):
        inst = perturb(inst, rng)
    path = tmp_path / "i.yaml"
    path.write_text(inst.scenario_yaml(name="x", description="d", schedulers=("heft", "cpop"), seed=5))
    loaded = build_problem(load_scenario(path))
    direct = inst.problem()
    np.testing.assert_array_equal(loaded.W, direct.W)
    np.testing.assert_array_equal(loaded.inv_bandwidth, direct.inv_bandwidth)
    np.testing.assert_array_equal(loaded.graph.edge_data, direct.graph.edge_data)


def test_search_is_reproducible_and_only_improves():
    a, b = makespan_of(_spec("heft"), 0), makespan_of(_spec("cpop"), 0)
    one = anneal(a, b, tasks=6, processors=2, seed=1, iterations=60)
    two = anneal(a, b, tasks=6, processors=2, seed=1, iterations=60)
    assert one.ratio == two.ratio and one.iterations == 60
    assert np.all(np.diff(one.history) >= 0) and one.ratio >= one.history[0]


def test_tiny_search_writes_a_scenario_that_replays(tmp_path):
    result = CliRunner().invoke(app, ["adversary", "heft", "cpop", "--iterations", "40", "--tasks", "6",
                                      "--processors", "2", "--seed", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gantt.png").stat().st_size > 0
    report = run_scenario(load_scenario(tmp_path / "instance.yaml"))
    heft, cpop = (report.rows_of(name)[0]["makespan"] for name in ("heft", "cpop"))
    assert f"ratio {heft / cpop:.4g}" in result.output


def test_bad_adversary_input_is_one_line():
    for args, words in ((["heft", "nosuch"], "nosuch"), (["heft", "heft"], "two different"),
                        (["heft", "cpop", "--tasks", "0"], "--tasks")):
        result = CliRunner().invoke(app, ["adversary", *args, "--iterations", "1"])
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0]
