"""Memory shared by the tasks running on one host (``host_memory``; simsched.simulator.engine.hostmem):
golden cases computed by hand, properties on random hosts and tasks, and the refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import refused
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SchedulerDeclined, SimschedError
from simsched.fidelity.model import Parameters, build_problem, simulate
from simsched.schedulers import registry
from simsched.simulator.engine import Disruptions, Overheads, execute_plan, run_online
from simsched.simulator.engine.replay import PlanSequencer
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.evaluate_batch import evaluate_sequences
from simsched.simulator.platform import Platform, Processor, host_slots
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.importers.wfformat_recorded import read_recorded
from simsched.workloads.taskgraph import TaskGraph

GB = 1.0  # the unit of memory: whatever the tasks' memory is written in


def three_on_four_cores(host_memory: float = 10 * GB) -> Problem:
    """A 4-core host with 10 GB and three independent 4 GB tasks of 10 s."""
    graph = TaskGraph(["a", "b", "c"], work=10.0, memory=4 * GB)
    return Problem(graph, Platform.uniform(host_slots("node", 4, host_memory=host_memory)))


# --------------------------------------------------------------------------- golden cases
def test_two_of_three_four_gb_tasks_fit_ten_gb_the_third_waits() -> None:
    schedule, stats = run_online(three_on_four_cores(), registry.create("mct"))
    assert schedule.start.tolist() == [0.0, 0.0, 10.0]
    assert schedule.finish.tolist() == [10.0, 10.0, 20.0]
    assert schedule.makespan == 20.0
    assert stats.memory_waits == 1
    # twelve GB: all three at once, nobody waits
    schedule, stats = run_online(three_on_four_cores(12 * GB), registry.create("mct"))
    assert schedule.makespan == 10.0 and stats.memory_waits == 0


def test_a_static_plan_is_executed_under_host_memory() -> None:
    problem = three_on_four_cores()
    plan = registry.create("heft").plan(problem, np.random.default_rng(0))
    schedule = execute_plan(problem, plan)
    assert sorted(schedule.start.tolist()) == [0.0, 0.0, 10.0] and schedule.makespan == 20.0


def test_memory_is_held_on_the_slot_and_freed_before_post() -> None:
    """Overheads: pre 1 s on the slot, post 5 s off it; the third task takes the memory the first two
    gave back at the end of their runtime (11), not when they are done (16)."""
    schedule, stats = run_online(three_on_four_cores(), registry.create("mct"), engine="simpy",
                                 overheads=Overheads(pre=1.0, post=5.0))
    assert schedule.start.tolist() == [0.0, 0.0, 11.0]
    assert schedule.finish.tolist() == [11.0, 11.0, 22.0]
    assert stats.done.tolist() == [16.0, 16.0, 27.0] and stats.memory_waits == 1


def test_a_gang_task_needs_its_memory_once_on_its_host() -> None:
    """A 2-core task needing 6 of 10 beside two 1-core tasks of 4 each (all 10 s): the gang (index 0,
    placed first) and one small task run at 0, the other small one waits until 10."""
    graph = TaskGraph(["wide", "x", "y"], work=10.0, memory=[6.0, 4.0, 4.0], procs=[2, 1, 1],
                      same_host=[True, False, False])
    problem = Problem(graph, Platform.uniform(host_slots("node", 4, host_memory=10.0)))
    schedule, stats = run_online(problem, registry.create("online-heft"))
    assert schedule.start.tolist() == [0.0, 0.0, 10.0] and stats.memory_waits == 1


def test_a_waiting_slot_lets_a_smaller_task_pass_first_fit() -> None:
    """Host 10: a (8, 10 s) runs; b (4) waits on its slot; c (2) fits beside a and starts at 0."""
    graph = TaskGraph(["a", "b", "c"], work=10.0, memory=[8.0, 4.0, 2.0])
    problem = Problem(graph, Platform.uniform(host_slots("node", 3, host_memory=10.0)))
    schedule, stats = run_online(problem, registry.create("mct"))
    assert schedule.start.tolist() == [0.0, 10.0, 0.0] and stats.memory_waits == 1


def test_validate_and_the_run_header_say_which_hosts_share_memory() -> None:
    assert three_on_four_cores().platform.size_text() == "1 host, 4 slots, 1 host with shared memory"
    mixed = Platform.uniform([Processor("a", host_memory=4.0), Processor("b"), Processor("c", host_memory=2.0)])
    assert mixed.size_text() == "3 processors, 2 hosts with shared memory"
    assert Platform.uniform(host_slots("node", 4)).size_text() == "1 host, 4 slots"


def test_the_scenario_golden_case(tmp_path: Path) -> None:
    path = tmp_path / "golden.yaml"
    path.write_text("name: golden\nplatform:\n  processors:\n    - {name: node, cores: 4, host_memory: 10}\n"
                    "workload:\n  tasks:\n" + "".join(f"    - {{name: {t}, work: 10, memory: 4}}\n" for t in "abc")
                    + "schedulers: [mct, heft, ga]\n")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    rows = {r["scheduler"]: r for r in doc["results"]}
    assert rows["mct"]["makespan"] == 20.0 and rows["heft"]["makespan"] == 20.0
    [declined] = doc["declined"]  # ga searches with the fast evaluator, which refuses host memory
    assert declined["scheduler"] == "ga" and "fast evaluator does not model memory" in declined["reason"]


# --------------------------------------------------------------------------- properties
@st.composite
def memory_worlds(draw):
    """Hosts of 1-4 cores with a memory of 1-20 (or none), and a random DAG of tasks needing 0-10."""
    n_hosts = draw(st.integers(1, 3))
    procs: list[Processor] = []
    for h in range(n_hosts):
        cores = draw(st.integers(1, 4))
        mem = draw(st.one_of(st.none(), st.integers(10, 20).map(float)))
        procs += host_slots(f"h{h}", cores, speed=draw(st.sampled_from([1.0, 2.0])),
                            host_memory=math.inf if mem is None else mem)
    n = draw(st.integers(1, 14))
    edges = [(u, v) for v in range(n) for u in range(v) if draw(st.booleans()) and draw(st.booleans())]
    work = draw(st.lists(st.integers(1, 9).map(float), min_size=n, max_size=n))
    memory = draw(st.lists(st.sampled_from([0.0, 1.5, 3.0, 4.25, 7.0, 10.0]), min_size=n, max_size=n))
    arrival = draw(st.lists(st.sampled_from([0.0, 0.0, 2.0, 5.5]), min_size=n, max_size=n))
    graph = TaskGraph([f"t{i}" for i in range(n)], edges, [1.0] * len(edges), work=work, memory=memory,
                      arrival=arrival)
    return graph, procs


def _held_within(problem: Problem, processor: np.ndarray, start: np.ndarray, finish: np.ndarray) -> None:
    """At every start instant, the memory of the tasks running on each host is within its memory."""
    host, total, need = problem.platform.host_index[processor], problem.platform.host_memory, problem.graph.memory
    for t in np.unique(start):
        running = (start <= t) & (t < finish)
        for h in np.unique(host[running]):
            assert math.fsum(need[running & (host == h)].tolist()) <= total[h], (t, h)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=memory_worlds(), policy=st.sampled_from(["mct", "srjf-eft", "heft"]))
def test_running_tasks_never_exceed_their_host_memory(world, policy) -> None:
    graph, procs = world
    problem = Problem(graph, Platform.uniform(procs, bandwidth=4.0))
    scheduler = registry.create(policy)
    if registry.kind(type(scheduler)) == "static":
        schedule = execute_plan(problem, scheduler.plan(problem, np.random.default_rng(0)))
    else:
        schedule, _ = run_online(problem, scheduler)
    assert np.isfinite(schedule.finish).all()
    _held_within(problem, schedule.processor, schedule.start, schedule.finish)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=memory_worlds(), wide=st.lists(st.booleans(), min_size=14, max_size=14),
       policy=st.sampled_from(["online-heft", "heft"]), pre=st.sampled_from([0.0, 0.5]))
def test_gang_tasks_and_overheads_never_exceed_their_host_memory(world, wide, policy, pre) -> None:
    """Some tasks need 2 cores of one host (where a host has 2); with a pre step on the slot, memory is held
    from the start (the pre step) to the end of the runtime."""
    graph, procs = world
    most = max(sum(p.host == q.host for q in procs) for p in procs)
    k = np.where(np.array(wide[:graph.n_tasks]) & (most >= 2), 2, 1)
    graph = graph.with_(procs=np.stack([k, k], axis=1), same_host=k > 1)
    problem = Problem(graph, Platform.uniform(procs, bandwidth=4.0))
    scheduler = registry.create(policy)
    overheads = Overheads(pre=pre) if pre else None
    if registry.kind(type(scheduler)) == "static":
        plan = scheduler.plan(problem, np.random.default_rng(0))
        schedule, _ = run_online(problem, PlanSequencer(problem, plan), engine="simpy", overheads=overheads)
    else:
        schedule, _ = run_online(problem, scheduler, engine="simpy", overheads=overheads)
    assert np.isfinite(schedule.finish).all()
    _held_within(problem, schedule.processor, schedule.start, schedule.finish)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=memory_worlds(), policy=st.sampled_from(["mct", "srjf-eft", "heft"]))
def test_memory_that_never_binds_changes_no_float(world, policy) -> None:
    """Every host given more memory than all tasks together: the host-memory run (composed with its
    mixin, no direct starts) gives the schedule of the run without host memory, float for float."""
    graph, procs = world
    plenty = float(graph.memory.sum()) + 1.0
    rich = Problem(graph, Platform.uniform([Processor(**{**p.__dict__, "host_memory": plenty}) for p in procs],
                                           bandwidth=4.0))
    plain = Problem(graph, Platform.uniform([Processor(**{**p.__dict__, "host_memory": math.inf}) for p in procs],
                                            bandwidth=4.0))
    assert rich.host_memory_binds == bool((graph.memory > 0).any()) and not plain.host_memory_binds
    runs = []
    for problem in (rich, plain):
        scheduler = registry.create(policy)
        if registry.kind(type(scheduler)) == "static":  # both through the online loop: the plan's replay
            runs.append(run_online(problem, PlanSequencer(problem, scheduler.plan(problem, np.random.default_rng(0))),
                                   engine="simpy")[0])
        else:
            runs.append(run_online(problem, scheduler, engine="simpy")[0])
    first, got = runs
    assert np.array_equal(first.start, got.start) and np.array_equal(first.finish, got.finish)
    assert np.array_equal(first.processor, got.processor)


# --------------------------------------------------------------------------- refusals
def test_a_host_gives_one_memory_and_a_positive_one() -> None:
    with pytest.raises(SimschedError, match="different host_memory"):
        Platform.uniform([Processor("a", host="n", host_memory=4.0), Processor("b", host="n")])
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(SimschedError, match="host_memory must be > 0"):
            Processor("a", host_memory=bad)


def test_a_task_needing_more_than_any_host_is_refused_up_front() -> None:
    graph = TaskGraph(["a", "big"], work=1.0, memory=[1.0, 11.0])
    with pytest.raises(SimschedError, match="needs memory 11.*host_memory included"):
        Problem(graph, Platform.uniform(host_slots("node", 4, host_memory=10.0)))
    # one host too small, another large enough: it may run on the large one only
    two = Platform.uniform(host_slots("small", 2, host_memory=10.0) + host_slots("large", 2, host_memory=20.0))
    problem = Problem(graph, two)
    assert np.isinf(problem.cost_row(1)[:2]).all() and np.isfinite(problem.cost_row(1)[2:]).all()


def test_the_fast_evaluator_and_disruptions_refuse_host_memory() -> None:
    problem = three_on_four_cores()
    plan = Plan(np.array([0, 1, 2]), np.array([0, 0, 0]))
    with pytest.raises(SchedulerDeclined, match="fast evaluator does not model memory"):
        evaluate_plan(problem, plan)
    with pytest.raises(SchedulerDeclined, match="fast evaluator does not model memory"):
        evaluate_sequences(problem, np.array([0, 1, 2]), np.array([0, 1, 2]))
    with pytest.raises(SimschedError, match="does not combine with failures"):
        run_online(problem, registry.create("mct"), disruptions=Disruptions(failure_rate=0.01))


BAD_VALUES = [("-1", "greater than 0"), ("0", "greater than 0"), ("abc", "valid number"), ("true", "boolean"),
              (".inf", "finite")]


@pytest.mark.parametrize(("value", "says"), BAD_VALUES)
def test_bad_host_memory_is_refused_located(tmp_path: Path, value: str, says: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nplatform:\n  processors:\n    - {name: cpu, count: 2}\n"
                    f"    - {{name: node, cores: 4, host_memory: {value}}}\n"
                    "workload:\n  tasks:\n    - {name: a, work: 1, memory: 2}\nschedulers: [mct]\n")
    line = refused(["validate", str(path)], inputs=(path,), says=says)
    assert f"{path}:5: platform.processors[1].host_memory" in line


def test_two_values_for_one_host_and_a_task_too_big_are_refused_located(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("name: two\nplatform:\n  processors:\n    - {name: a, host: n, host_memory: 10}\n"
                    "    - {name: b, host: n, host_memory: 12}\n"
                    "workload:\n  tasks:\n    - {name: t, work: 1, memory: 2}\nschedulers: [mct]\n")
    line = refused(["run", str(path)], inputs=(path,), says="give a host one value")
    assert f"{path}:5: platform.processors[1].host_memory" in line
    path.write_text("name: big\nplatform:\n  processors:\n    - {name: a, host: n, host_memory: 10}\n"
                    "    - {name: b, host: n}\n"
                    "workload:\n  tasks:\n    - {name: t, work: 1}\n    - {name: u, work: 1, memory: 11}\n"
                    "schedulers: [mct]\n")
    line = refused(["run", str(path)], inputs=(path,), says="needs memory 11")
    assert f"{path}:9: workload.tasks[1]" in line


def test_one_entry_gives_its_whole_host_the_memory(tmp_path: Path) -> None:
    """``b`` on host ``n`` declares nothing: it shares the 10 that ``a`` declares for ``n``."""
    path = tmp_path / "shared.yaml"
    path.write_text("name: shared\nplatform:\n  processors:\n    - {name: a, host: n}\n"
                    "    - {name: b, host: n, host_memory: 10}\n"
                    "workload:\n  tasks:\n    - {name: t, work: 5, memory: 6}\n    - {name: u, work: 5, memory: 6}\n"
                    "schedulers: [mct]\n")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["results"][0]["makespan"] == 10.0


# --------------------------------------------------------------------------- the fidelity model
def fan_with_memory(path: Path, task_memory: list[float | None], machine_memory: float | None) -> Path:
    """A WfFormat 1.5 fan of 10 s tasks on one 4-core machine, memory in bytes where given."""
    ids = [f"w_ID{i:02d}" for i in range(len(task_memory))]
    tasks = [{"name": "w", "id": t, "parents": [], "children": [], "inputFiles": [], "outputFiles": []} for t in ids]
    machine = {"nodeName": "m1", "cpu": {"coreCount": 4}}
    if machine_memory is not None:
        machine["memoryInBytes"] = machine_memory
    execution = [{"id": t, "runtimeInSeconds": 10.0, "machines": ["m1"],
                  **({} if mem is None else {"memoryInBytes": mem})} for t, mem in zip(ids, task_memory)]
    doc = {"name": path.stem, "schemaVersion": "1.5", "runtimeSystem": {"name": "Makeflow", "version": "7"},
           "workflow": {"specification": {"tasks": tasks, "files": []},
                        "execution": {"makespanInSeconds": 20.0, "machines": [machine], "tasks": execution}}}
    path.write_text(json.dumps(doc))
    return path


def test_the_fidelity_model_passes_machine_and_task_memory(tmp_path: Path) -> None:
    graph, run = read_recorded(fan_with_memory(tmp_path / "f-1.json", [4e9, 4e9, 4e9, None], 10e9))
    problem = build_problem(graph, run, Parameters())
    assert problem.platform.host_memory.tolist() == [10e9]
    assert problem.graph.memory.tolist() == [4e9, 4e9, 4e9, 0.0]
    sim = simulate(graph, run, Parameters())
    assert sim.makespan == 20.0 and sim.stats.memory_waits == 1  # the fourth needs nothing: it runs at 0
    # a machine without memory: nothing shared, all four at once
    graph, run = read_recorded(fan_with_memory(tmp_path / "f-2.json", [4e9] * 4, None))
    assert not build_problem(graph, run, Parameters()).host_memory_binds
    assert simulate(graph, run, Parameters()).makespan == 10.0


def test_a_cluster_log_with_host_memory_is_refused_located(tmp_path: Path) -> None:
    """The batch engines count processors, never a host's memory: refused, by validate and run alike."""
    log = Path(__file__).resolve().parents[1] / "scenarios" / "data" / "traces" / "lublin_256.swf"
    path = tmp_path / "log.yaml"
    path.write_text("name: log\nplatform:\n  processors:\n    - {name: node, count: 16, host: rack, host_memory: 64}\n"
                    f"workload:\n  stream:\n    swf: {log}\nschedulers: [fcfs]\n")
    for command in ("validate", "run"):
        line = refused([command, str(path)], inputs=(path,), says="do not model memory shared by a host's tasks")
        assert f"{path}:3: platform.processors" in line


def test_a_plan_replay_follows_tasks_that_arrive_out_of_index_order() -> None:
    """The plan's replay maps the view's numbering (arrival order) back to the plan's by name, also once
    every task has arrived: t1 arrives at 0, t0 at 2, both planned on one processor (t1 first)."""
    graph = TaskGraph(["t0", "t1"], work=1.0, memory=[0.0, 4.0], arrival=[2.0, 0.0])
    for host_memory in (10.0, math.inf):
        problem = Problem(graph, Platform.uniform([Processor("h0", host_memory=host_memory), Processor("h1")]))
        plan = Plan(np.array([0, 0]), np.array([1.0, 0.0]))
        schedule, _ = run_online(problem, PlanSequencer(problem, plan), engine="simpy", overheads=Overheads(pre=0.5))
        assert schedule.start.tolist() == [2.0, 0.0] and schedule.finish.tolist() == [3.5, 1.5]


def test_a_plan_with_copies_is_declined_under_host_memory() -> None:
    graph = TaskGraph(["s", "a", "b"], [(0, 1), (0, 2)], [10.0, 10.0], work=[1.0, 10.0, 10.0], memory=4.0)
    problem = Problem(graph, Platform.uniform([Processor(f"p{i}", host_memory=10.0) for i in range(3)], bandwidth=0.1))
    plan = registry.create("heft-dup").plan(problem, np.random.default_rng(0))
    assert plan.copies is not None
    with pytest.raises(SchedulerDeclined, match="task copies"):
        execute_plan(problem, plan)


def test_the_compiled_loop_leaves_host_memory_to_simpy() -> None:
    pytest.importorskip("numba")
    problem = three_on_four_cores()
    with pytest.raises(SimschedError, match="host memory run on the SimPy engine"):
        run_online(problem, registry.create("mct"), engine="compiled")
    schedule, stats = run_online(problem, registry.create("mct"), engine="auto")
    assert stats.engine == "simpy" and schedule.makespan == 20.0
