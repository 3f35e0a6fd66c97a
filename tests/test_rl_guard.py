"""The guard of learned schedulers: a world outside the checkpoint's training range (platform, job
sizes, offered load, single-DAG checkpoints on streams, checkpoints that saw future jobs) hands every
decision to srjf-eft, with one warning; inside the range the network decides."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from simsched.errors import SimschedError  # noqa: E402
from simsched.learned.rl.dynamic import shifted  # noqa: E402
from simsched.learned.rl.policy import GuardWarning, RLPolicy  # noqa: E402
from simsched.learned.training_range import LOAD_MIN_JOBS, TrainingRange, offered_load, prefix_loads  # noqa: E402
from simsched.run.streams import simulate_stream, stream_of  # noqa: E402
from simsched.schedulers import registry  # noqa: E402
from simsched.simulator.platform import Platform, Processor  # noqa: E402
from simsched.simulator.problem import Problem  # noqa: E402
from simsched.workloads.generators import random_dag  # noqa: E402
from simsched.workloads.jobs import merge_jobs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAR = str(ROOT / "scenarios" / "streams" / "rl_dynamic.yaml")


def _run(scenario, name, params, seed=3):
    spec = registry.create(name, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = simulate_stream(scenario, name, seed, stream_of(scenario, seed), spec)
    return run, spec, [w for w in caught if issubclass(w.category, GuardWarning)]


def test_outside_the_platform_range_rl_is_exactly_srjf_eft_with_one_warning() -> None:
    sc = shifted(BAR, "2x processors")  # 12 CPUs + 4 GPUs: trained on 6 + 2
    rl, agent, warned = _run(sc, "rl", {"checkpoint": "rl_dynamic"})
    rule, _, _ = _run(sc, "srjf-eft", {})
    assert agent.rule is not None and any("processors" in r for r in agent.fallback_reasons)
    # the platform is the world's description: the run's one range warning says it, not the guard again
    assert warned == []
    line = agent.range_warning(rl.problem, "rl")
    head = line.splitlines()[0]
    assert head.startswith("rl falls back to srjf-eft: ") and head.endswith("processors outside its training range")
    assert "16 processors" in line.splitlines()[1]
    np.testing.assert_array_equal(rl.schedule.processor, rule.schedule.processor)
    np.testing.assert_array_equal(rl.schedule.start, rule.schedule.start)
    assert rl.metrics.summary["jct_mean"] == rule.metrics.summary["jct_mean"]


def test_a_checkpoint_that_saw_future_jobs_is_withdrawn_to_the_rule(tmp_path: Path) -> None:
    """A job-stream checkpoint trained without ``arrived_only`` (it observed jobs before they arrived):
    ``rl_dynamic`` relabelled so, on the bar's own world, where nothing else is outside its range."""
    import torch

    from simsched.learned.rl.checkpoint import shipped_path

    ck = torch.load(shipped_path("rl").parent / "rl_dynamic.pt", map_location="cpu", weights_only=True)
    ck["config"]["arrived_only"] = False
    torch.save(ck, tmp_path / "future.pt")
    sc = shifted(BAR, None)
    rl, agent, warned = _run(sc, "rl", {"checkpoint": str(tmp_path / "future.pt")})
    rule, _, _ = _run(sc, "srjf-eft", {})
    assert agent.fallback_reasons == ["a checkpoint trained on observations of jobs not yet arrived (withdrawn)"]
    assert len(warned) == 1
    np.testing.assert_array_equal(rl.schedule.processor, rule.schedule.processor)
    np.testing.assert_array_equal(rl.schedule.start, rule.schedule.start)


def test_the_single_dag_checkpoint_falls_back_on_streams_and_guard_false_keeps_the_network() -> None:
    plat = Platform.uniform([Processor(f"p{i}") for i in range(4)], bandwidth=1.0, latency=0.0)
    rng = np.random.default_rng(0)
    js = merge_jobs([random_dag(30, processors=4, rng=rng) for _ in range(3)], [0.0, 5.0, 9.0])
    prob = Problem(js.graph, plat)
    from simsched.simulator.engine import run_online

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = RLPolicy(checkpoint="rl")  # named: the default switches to rl_worlds on streams
        run_online(prob, agent)
    assert agent.rule is not None and any("single DAGs" in r for r in agent.fallback_reasons)
    said = [str(w.message) for w in caught if issubclass(w.category, GuardWarning)]
    assert len(said) == 1 and said[0].startswith("rl falls back to srjf-eft: ")
    assert "job streams (trained on single DAGs)" in said[0].splitlines()[0]
    free = RLPolicy(checkpoint="rl", guard=False)
    run_online(prob, free)
    assert free.rule is None
    with pytest.raises(SimschedError, match="guard"):
        RLPolicy(guard="yes")


def test_one_task_graph_of_several_components_is_not_a_job_stream() -> None:
    """kasahara_stg's graph (one STG file) has an isolated task, so :func:`job_ids` numbers two
    components: still one DAG, one job of 40 tasks (inside ``rl.pt``'s 20-50), so the single-DAG
    checkpoint decides, with no word of job streams; a stream of the same checkpoint's family is one."""
    from simsched.scenario import build_problem, load_scenario
    from simsched.simulator.engine import run_online
    from simsched.workloads.jobs import is_job_stream, job_ids

    problem = build_problem(load_scenario(ROOT / "scenarios" / "kasahara_stg.yaml"))
    assert int(job_ids(problem.graph).max()) + 1 == 2 and not is_job_stream(problem.graph)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = RLPolicy(checkpoint="rl")
        run_online(problem, agent)
    assert agent.rule is None and not [w for w in caught if issubclass(w.category, GuardWarning)]
    rng = np.random.default_rng(0)
    both = merge_jobs([random_dag(30, processors=4, rng=rng) for _ in range(2)], [0.0, 0.0])
    assert is_job_stream(both.graph)  # two jobs by name, both at time 0
    from simsched.workloads.taskgraph import TaskGraph

    apart = TaskGraph(["a", "b", "c"])  # three independent tasks, all at time 0: one task graph
    assert int(job_ids(apart).max()) == 2 and not is_job_stream(apart)
    assert is_job_stream(TaskGraph(["a", "b", "c"], arrival=[0.0, 0.0, 2.0]))  # tasks arriving over time


@pytest.mark.parametrize(("scenario", "streams"), [("kasahara_stg.yaml", False), ("execution/host_memory.yaml", False),
                                                   ("cloud_tasklist.yaml", True)])
def test_run_says_job_streams_only_of_streams(scenario: str, streams: bool) -> None:
    """``simsched run S -s rl``: a single DAG (kasahara: two components; host_memory: four independent
    tasks, a size outside the range, said once by the range warning) never hears of job streams; a
    task list whose tasks arrive over time does.  Every line fits 100 columns."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / scenario), "-s", "rl"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert ("job streams" in result.output) is streams
    assert all(len(line) <= 100 for line in result.output.splitlines())
    firsts = [line for line in result.output.splitlines() if line.startswith("warning: rl")]
    assert firsts and len(firsts) == len(set(firsts)) == (2 if streams else 1)


def test_inside_its_world_the_network_decides() -> None:
    from simsched.learned.rl.dynamic import shifted as load

    sc = load(BAR, None)
    agent = registry.create("rl", checkpoint="rl_dynamic")
    problem = Problem(stream_of(sc, 20000).graph, sc.platform, sc.affinity)
    agent.reset(problem, np.random.default_rng(0))  # every job of the day arrived: the whole world at once
    assert agent.rule is None


def test_offered_load_and_the_stream_range() -> None:
    plat = Platform.uniform([Processor("a"), Processor("b", speed=2.0)], bandwidth=1.0, latency=0.0)
    n_jobs = LOAD_MIN_JOBS
    js = merge_jobs([random_dag(4, rng=np.random.default_rng(i)) for i in range(n_jobs)],
                    [10.0 * i for i in range(n_jobs)])
    prob = Problem(js.graph, plat)
    period = 10.0 * (n_jobs - 1) * n_jobs / (n_jobs - 1)
    assert offered_load(prob, js.jobs, js.job_arrival) == pytest.approx(prob.mean_cost.sum() / (2 * period))
    few = merge_jobs([random_dag(4, rng=np.random.default_rng(i)) for i in range(3)], [0.0, 5.0, 9.0])
    assert offered_load(Problem(few.graph, plat), few.jobs, few.job_arrival) is None  # too few jobs for a rate
    loads = prefix_loads(prob, js.jobs, js.job_arrival)
    assert loads.size == 1 and loads[-1] == offered_load(prob, js.jobs, js.job_arrival)
    rng = TrainingRange("x", (4, 4), (2, 2), speed_ratio=(2.0, 2.0), load=(0.0, 1e9))
    assert rng.outside_stream(prob, js.jobs, js.job_arrival) == []
    tight = TrainingRange("x", (10, 20), (3, 3), speed_ratio=(5.0, 5.0), load=(1e6, 1e9))
    out = tight.outside_stream(prob, js.jobs, js.job_arrival)
    assert [o.split()[0] for o in out] == ["2", "speed", "job", "offered"]
