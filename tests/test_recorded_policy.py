"""The ``recorded`` online policy: each task on a free slot of its recorded host, in recorded order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.recorded import Recorded
from simsched.simulator.engine import run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.importers.wfformat_recorded import read_recorded
from simsched.workloads.taskgraph import TaskGraph

DATA = Path(__file__).resolve().parent / "data"


def _platform(**hosts: int) -> Platform:
    procs = [Processor(f"{h}/c{i}", host=h) for h, n in hosts.items() for i in range(n)]
    return Platform.uniform(procs, bandwidth=float("inf"))


def _run(graph: TaskGraph, platform: Platform, policy: Recorded):
    problem = Problem(graph, platform)
    schedule, _ = run_online(problem, policy, engine="simpy")
    assert validate_schedule(schedule, problem) == []
    hosts = [platform.processors[p].host for p in schedule.processor.tolist()]
    return schedule, hosts


def test_each_task_waits_for_a_free_slot_of_its_own_host() -> None:
    g = TaskGraph.from_named([{"name": n, "work": 10.0} for n in "abcd"])
    policy = Recorded(hosts={"a": "B", "b": "B", "c": "B", "d": "A"})
    schedule, hosts = _run(g, _platform(A=2, B=1), policy)
    assert hosts == ["B", "B", "B", "A"]  # A's second slot stays idle: the recording put them on B
    assert schedule.start.tolist() == [0.0, 10.0, 20.0, 0.0]
    assert schedule.makespan == 30.0


def test_recorded_starts_order_the_queue_and_readiness_otherwise() -> None:
    g = TaskGraph.from_named([{"name": n, "work": 5.0} for n in "abc"])
    hosts = dict.fromkeys("abc", "A")
    by_start = Recorded(hosts=hosts, starts={"a": 20.0, "b": 10.0, "c": 0.0})
    schedule, _ = _run(g, _platform(A=1), by_start)
    assert schedule.start.tolist() == [10.0, 5.0, 0.0]
    schedule, _ = _run(g, _platform(A=1), Recorded(hosts=hosts))  # FIFO, ties by index
    assert schedule.start.tolist() == [0.0, 5.0, 10.0]


def test_fifo_by_readiness_not_by_index() -> None:
    # z (index 0) becomes ready at 4, after y (ready at 0) has queued behind x on the single slot
    g = TaskGraph.from_named([{"name": "z", "work": 1.0}, {"name": "w", "work": 4.0},
                              {"name": "x", "work": 6.0}, {"name": "y", "work": 1.0}],
                             [("w", "z", 0.0)])
    hosts = {"w": "B", "x": "A", "y": "A", "z": "A"}
    schedule, _ = _run(g, _platform(A=1, B=1), Recorded(hosts=hosts))
    assert dict(zip(g.names, schedule.start.tolist())) == {"w": 0.0, "x": 0.0, "y": 6.0, "z": 7.0}


def test_a_task_without_a_recorded_host_takes_any_free_slot() -> None:
    g = TaskGraph.from_named([{"name": n, "work": 3.0} for n in "abc"])
    schedule, hosts = _run(g, _platform(A=1, B=2), Recorded(hosts={"a": "A"}))
    assert hosts == ["A", "B", "B"] and schedule.makespan == 3.0


def test_a_task_needing_several_cores_takes_slots_of_its_host_together() -> None:
    g = TaskGraph.from_named([{"name": "wide", "work": 4.0, "procs": 2}, {"name": "one", "work": 1.0},
                              {"name": "two", "work": 1.0}])
    g = g.with_(same_host=np.array([True, False, False]))
    policy = Recorded(hosts={"wide": "A", "one": "A", "two": "A"})
    assert policy.multiprocessor_tasks
    problem = Problem(g, _platform(A=2, B=2))
    schedule, _ = run_online(problem, policy, engine="simpy")
    assert validate_schedule(schedule, problem) == []
    assert schedule.gang.of(0).tolist() == [0, 1]
    assert schedule.start.tolist() == [0.0, 4.0, 4.0]


def test_from_run_replays_a_real_execution_on_its_machines() -> None:
    graph, run = read_recorded(DATA / "wfinstances" / "blast-chameleon-small-001.json")
    policy = Recorded.from_run(run)
    assert len(policy.hosts) == run.n_tasks and policy.starts == {}  # WfInstances records no starts
    plat = _platform(**{m.name: 2 for m in run.machines})
    schedule, hosts = _run(graph, plat, policy)
    assert hosts == [run.machines[k].name for k in run.machine.tolist()]


def test_bad_parameters_and_unknown_hosts_are_refused() -> None:
    with pytest.raises(SimschedError, match=r"starts\['a'\] must be a finite time >= 0"):
        Recorded(starts={"a": float("nan")})
    with pytest.raises(SimschedError, match="hosts must be a mapping"):
        Recorded(hosts=["a"])  # type: ignore[arg-type]
    g = TaskGraph.from_named([{"name": "a", "work": 1.0}])
    with pytest.raises(SimschedError, match="task 'a' ran on 'C', which is not a host of the platform"):
        run_online(Problem(g, _platform(A=1)), Recorded(hosts={"a": "C"}), engine="simpy")


def test_registered_as_an_online_policy() -> None:
    assert registry.spec("recorded").kind == "online"
    assert type(registry.create("recorded")) is Recorded
