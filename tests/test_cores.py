"""Hosts with cores (docs/model.md, "Hosts with cores"): ``cores: c`` on a processor entry is a host of
c one-core slots, a task's ``cores: k`` a rigid gang of k slots of one host.  Golden cases computed by
hand, the concurrency property on random DAGs, energy per core, and bad input refused with file, line
and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.run.runner import run_scenario
from simsched.scenario import ScenarioError, build_graph, build_problem, load_scenario
from simsched.scenario.cores import CoresError, check_cores_fit, core_gangs, on_cores
from simsched.schedulers import registry
from simsched.simulator.engine import run_online
from simsched.simulator.gang import busy_intervals
from simsched.simulator.platform import Platform, Processor, host_slots
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.taskgraph import TaskGraph


def scenario(tmp_path: Path, processors: list[dict[str, Any]], tasks: list[dict[str, Any]],
             schedulers: list[Any], edges: list[dict[str, Any]] = (), **extra: Any) -> Path:
    doc = {"name": "cores", "platform": {"processors": processors, **extra.pop("platform", {})},
           "workload": {"tasks": tasks, "edges": list(edges)}, "schedulers": schedulers, **extra}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def rows(path: Path) -> dict[str, dict[str, Any]]:
    report = run_scenario(load_scenario(path))
    return {r["scheduler"]: r for r in report.rows}


def tasks(n: int, work: float = 10.0, **fields: Any) -> list[dict[str, Any]]:
    return [{"name": f"t{i}", "work": work, **fields} for i in range(n)]


def most_cores_at_once(problem: Problem, schedule: Any) -> np.ndarray:
    """(hosts,) the most slots of each host busy at one instant (a finish at t frees before a start at t)."""
    task, proc, start, finish = busy_intervals(schedule.processor, schedule.start, schedule.finish, schedule.gang)
    host = problem.platform.host_index[proc]
    out = np.zeros(problem.platform.n_hosts, dtype=np.int64)
    for h in range(problem.platform.n_hosts):
        sel = (host == h) & (finish > start)
        times = np.r_[start[sel], finish[sel]]
        steps = np.r_[np.ones(sel.sum(), dtype=np.int64), -np.ones(sel.sum(), dtype=np.int64)]
        order = np.lexsort((steps, times))  # at one time, ends (-1) before starts (+1)
        out[h] = max(0, int(np.cumsum(steps[order]).max(initial=0)))
    return out


# --------------------------------------------------------------------------- golden cases
@pytest.mark.parametrize("cores, makespan", [(4, 10.0), (2, 20.0), (1, 40.0)])
def test_four_ten_second_tasks_on_one_host(tmp_path: Path, cores: int, makespan: float) -> None:
    # 4 independent 10 s tasks: 4 cores run them at once (10 s), 2 cores in two rounds (20 s), 1 core in turn (40 s)
    out = rows(scenario(tmp_path, [{"name": "node", "cores": cores}], tasks(4), ["mct", "heft"]))
    assert out["mct"]["makespan"] == out["heft"]["makespan"] == makespan


def test_a_two_core_task_beside_one_core_tasks(tmp_path: Path) -> None:
    # 2 + 1 + 1 cores fit a 4-core host at once: all three run from 0 to 10
    path = scenario(tmp_path, [{"name": "node", "cores": 4}],
                    [{"name": "wide", "work": 10.0, "cores": 2}, *tasks(2)], ["heft", "online-heft", "srjf-eft"])
    for label, row in rows(path).items():
        assert row["makespan"] == 10.0, label
    s = load_scenario(path)
    problem = build_problem(s)
    report = run_scenario(s, schedulers=["heft"])
    sched = report.schedules["heft"]
    assert sched.start.tolist() == [0.0, 0.0, 0.0] and sched.finish.tolist() == [10.0, 10.0, 10.0]
    wide = sched.gang.of(0)
    assert wide.size == 2 and len(set(problem.platform.host_index[wide].tolist())) == 1
    # and a third one-core task no longer fits beside them: 2 + 1 + 1 + 1 = 5 cores of 10 s on 4 take 20 s
    path = scenario(tmp_path, [{"name": "node", "cores": 4}],
                    [{"name": "wide", "work": 10.0, "cores": 2}, *tasks(3)], ["heft", "online-heft", "srjf-eft"])
    for label, row in rows(path).items():
        assert row["makespan"] == 20.0, label


def test_a_gang_of_cores_never_spans_two_hosts(tmp_path: Path) -> None:
    # two hosts of 2 cores (count: 2): three 2-core tasks of 10 s run two at once (one per host), then one
    path = scenario(tmp_path, [{"name": "w", "count": 2, "cores": 2}],
                    [{"name": f"g{i}", "work": 10.0, "cores": 2} for i in range(3)], ["heft", "srjf-eft"])
    s = load_scenario(path)
    assert s.platform.names == ["w0/c0", "w0/c1", "w1/c0", "w1/c1"]
    assert s.platform.host_names == ("w0", "w1") and s.platform.host_cores.tolist() == [2, 2]
    for label, row in rows(path).items():
        assert row["makespan"] == 20.0, label


def test_slots_share_their_host_link(tmp_path: Path) -> None:
    # a chain a -> b with 100 units of data over a network of bandwidth 1: on one host's cores the transfer is
    # free (the host's link), so both run on the host of 2 cores back to back (20 s), not 10 + 100 + 10
    path = scenario(tmp_path, [{"name": "node", "cores": 2}], tasks(2),
                    ["heft", "mct"], edges=[{"from": "t0", "to": "t1", "data": 100.0}],
                    platform={"network": {"bandwidth": 1.0, "latency": 5.0}})
    for label, row in rows(path).items():
        assert row["makespan"] == 20.0, label


def test_the_workload_graph_stays_what_the_file_said(tmp_path: Path) -> None:
    path = scenario(tmp_path, [{"name": "node", "cores": 4}],
                    [{"name": "wide", "work": 10.0, "cores": 3}, *tasks(1)], ["heft"])
    s = load_scenario(path)
    g = build_graph(s, s.seed)
    assert g.cores.tolist() == [3, 1] and g.procs_max.tolist() == [1, 1] and not g.same_host.any()
    p = build_problem(s).graph
    assert p.cores.tolist() == [3, 1] and p.procs_min.tolist() == p.procs_max.tolist() == [3, 1]
    assert p.same_host.tolist() == [True, False]


def test_core_gangs_is_the_identity_without_cores_and_idempotent() -> None:
    g = TaskGraph(["a", "b"], [(0, 1)], work=[1.0, 2.0])
    assert core_gangs(g) is g
    h = core_gangs(g.with_(cores=[2, 1]))
    assert h.procs_min.tolist() == [2, 1] and h.same_host.tolist() == [True, False]
    assert core_gangs(h) is h
    with pytest.raises(CoresError, match="'a' needs 2 cores and procs \\[1, 3\\]"):
        core_gangs(g.with_(cores=[2, 1], procs=[[1, 3], [1, 1]]))


def test_energy_counts_per_core_busy_time(tmp_path: Path) -> None:
    # one 10 s task on a host of 2 cores, each core idle 10 W, busy 50 W: 50 x 10 + 10 x 10 = 600 J;
    # two tasks keep both cores busy: 2 x 50 x 10 = 1000 J
    power = {"power": {"types": {"cpu": {"idle": 10.0, "busy": 50.0}}}}
    one = rows(scenario(tmp_path, [{"name": "node", "cores": 2}], tasks(1), ["heft"], platform=power))
    assert one["heft"]["energy_j"] == 600.0
    two = rows(scenario(tmp_path, [{"name": "node", "cores": 2}], tasks(2), ["heft"], platform=power))
    assert two["heft"]["energy_j"] == 1000.0
    # a power entry naming the host applies to each of its cores
    by_host = {"power": {"types": {"cpu": {"idle": 10.0, "busy": 50.0}},
                         "processors": {"node": {"idle": 0.0, "busy": 20.0}}}}
    mixed = rows(scenario(tmp_path, [{"name": "node", "cores": 2}, {"name": "solo"}], tasks(2), ["heft"],
                          platform=by_host))
    assert mixed["heft"]["makespan"] == 10.0
    assert mixed["heft"]["energy_j"] == 2 * 20.0 * 10 + 10.0 * 10  # both tasks on node's cores, solo idle


def test_validate_and_the_run_header_count_hosts_and_slots(tmp_path: Path) -> None:
    path = scenario(tmp_path, [{"name": "w", "count": 2, "cores": 4}, {"name": "gpu", "type": "gpu"}],
                    tasks(2), ["heft"])
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0 and "on 3 hosts, 9 slots (8 cpu, 1 gpu)" in result.stdout
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 0 and "3 hosts, 9 slots (8 cpu, 1 gpu)" in result.stdout
    plain = scenario(tmp_path, [{"name": "w", "count": 2}], tasks(2), ["heft"])
    result = CliRunner().invoke(app, ["validate", str(plain)])
    assert "on 2 processors (2 cpu)" in result.stdout


def test_host_slots_and_platform_hosts() -> None:
    slots = host_slots("n", 3, type="gpu", speed=2.0)
    assert [p.name for p in slots] == ["n/c0", "n/c1", "n/c2"] and {p.host for p in slots} == {"n"}
    assert all(p.cores == 1 and p.type == "gpu" and p.speed == 2.0 for p in slots)
    assert [p.core for p in slots] == [0, 1, 2]
    assert host_slots("solo", 1) == [Processor("solo")]
    pf = Platform.uniform([*slots, Processor("x", cores=8)])
    assert pf.host_names == ("n", "x") and pf.host_cores.tolist() == [3, 8] and pf.core_slots
    assert pf.size_text() == "2 hosts, 4 slots"
    assert Platform.uniform([Processor("a"), Processor("b")]).size_text() == "2 processors"
    with pytest.raises(SimschedError, match="cores must be >= 1"):
        host_slots("n", 0)


# --------------------------------------------------------------------------- the property
@st.composite
def core_problems(draw: Any) -> tuple[Problem, np.ndarray]:
    """A random DAG of tasks needing 1-4 cores on 1-3 hosts of 1-4 cores each (the largest host holds
    every task), heterogeneous speeds, data on some edges."""
    cores = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 3)))]
    procs = [p for h, c in enumerate(cores)
             for p in host_slots(f"h{h}", c, speed=draw(st.sampled_from([0.5, 1.0, 2.0])))]
    platform = Platform.uniform(procs, bandwidth=draw(st.sampled_from([1.0, 4.0])),
                                latency=draw(st.sampled_from([0.0, 0.5])))
    n = draw(st.integers(1, 10))
    edges = [(i, j) for j in range(n) for i in range(j) if draw(st.booleans()) and draw(st.booleans())]
    need = [draw(st.integers(1, max(cores))) for _ in range(n)]
    work = [draw(st.sampled_from([0.0, 1.0, 3.0, 7.5])) for _ in range(n)]
    g = TaskGraph([f"t{i}" for i in range(n)], edges, edge_data=[draw(st.sampled_from([0.0, 2.0])) for _ in edges],
                  work=work, cores=need)
    return Problem(on_cores(g, platform), platform), np.array(cores)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(core_problems(), st.sampled_from(["online-heft", "srjf-eft", "fair-eft", "heft"]))
def test_a_host_never_runs_more_cores_than_it_has(case: tuple[Problem, np.ndarray], name: str) -> None:
    problem, cores = case
    scheduler = registry.create(name)
    if registry.kind(type(scheduler)) == "static":
        from simsched.simulator.engine import execute_plan

        schedule = execute_plan(problem, scheduler.plan(problem, np.random.default_rng(0)))
    else:
        schedule, _ = run_online(problem, scheduler, None, np.random.default_rng(0))
    assert validate_schedule(schedule, problem) == []
    g = problem.graph
    k = schedule.gang.k if schedule.gang is not None else np.ones(g.n_tasks, dtype=np.int64)
    assert k.tolist() == g.cores.tolist()  # each task holds exactly its cores
    if schedule.gang is not None:
        for t in range(g.n_tasks):  # all of one host
            assert len(set(problem.platform.host_index[schedule.gang.of(t)].tolist())) == 1
    assert (most_cores_at_once(problem, schedule) <= cores).all()


# --------------------------------------------------------------------------- bad input
def refused(path: Path, *needles: str) -> str:
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_zero_and_huge_cores_are_refused(tmp_path: Path) -> None:
    refused(scenario(tmp_path, [{"name": "n", "cores": 0}], tasks(1), ["heft"]),
            "s.yaml:5: platform.processors[0].cores", "greater than or equal to 1")
    refused(scenario(tmp_path, [{"name": "n", "cores": 1e9}], tasks(1), ["heft"]),
            "s.yaml:5: platform.processors[0].cores", "1,000,000,000 processors (each core of a host is one: "
            "count x cores) is more than the limit of 2,000")
    refused(scenario(tmp_path, [{"name": "n", "cores": 2**70}], tasks(1), ["heft"]), "platform.processors[0].cores")
    refused(scenario(tmp_path, [{"name": "n", "cores": 2}], [{"name": "a", "work": 1.0, "cores": 0}], ["heft"]),
            "workload.tasks[0].cores", "greater than or equal to 1")
    refused(scenario(tmp_path, [{"name": "n", "cores": 2}], [{"name": "a", "work": 1.0, "cores": 10**9}], ["heft"]),
            "workload.tasks[0].cores", "processor limit")
    # 1,500 cores pass one by one but not as two hosts (3,000 slots): count x cores of one entry, or two entries
    refused(scenario(tmp_path, [{"name": "n", "cores": 1500, "count": 2}], tasks(1), ["heft"]),
            "s.yaml:5: platform.processors[0].cores", "3,000 processors")
    refused(scenario(tmp_path, [{"name": "n", "cores": 1500}, {"name": "m", "cores": 1500}], tasks(1), ["heft"]),
            "s.yaml:3: platform.processors:", "3,000 processors")
    # a scenario that raises the limit may have a host of more cores than the default limit
    big = scenario(tmp_path, [{"name": "n", "cores": 2500}], tasks(1), ["mct"], limits={"max_processors": 3000})
    assert load_scenario(big).platform.n_processors == 2500


def test_a_task_needing_more_cores_than_any_host_is_refused(tmp_path: Path) -> None:
    line = refused(scenario(tmp_path, [{"name": "w", "count": 4, "cores": 2}],
                            [*tasks(1), {"name": "big", "work": 1.0, "cores": 3}], ["heft"]),
                   "s.yaml:13: workload.tasks[1].cores", "'big' needs 3 cores", "'w0', has 2 cpu slots")
    assert "cores: 3 or more" in line
    refused(scenario(tmp_path, [{"name": "p", "count": 4}], [{"name": "a", "work": 1.0, "cores": 2}], ["heft"]),
            "workload.tasks[0].cores", "no host has more than one slot")
    with pytest.raises(CoresError):
        check_cores_fit(TaskGraph(["a"], [], work=[1.0], cores=[5]), Platform.uniform(host_slots("h", 4)))


def test_cores_beside_procs_a_non_gang_scheduler_and_disruptions_are_refused(tmp_path: Path) -> None:
    refused(scenario(tmp_path, [{"name": "n", "cores": 4}], [{"name": "a", "work": 1.0, "cores": 2, "procs": 2}],
                     ["heft"]), "workload.tasks[0]", "give cores or procs, not both")
    path = scenario(tmp_path, [{"name": "n", "cores": 4}], [{"name": "a", "work": 1.0, "cores": 2}], ["mct"])
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 2 and "schedulers[0]" in result.stderr and "gang-aware" in result.stderr
    assert "needs 2 cores (a gang of 2 one-core slots of one host)" in result.stderr
    refused(scenario(tmp_path, [{"name": "n", "cores": 4}], tasks(1), ["heft"], failures={"mtbf": 100, "mttr": 1}),
            "failures", "a host's failures are not modelled")


def test_a_host_name_is_not_taken_twice(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="'n' is used twice"):
        load_scenario(scenario(tmp_path, [{"name": "n", "cores": 2}, {"name": "n"}], tasks(1), ["heft"]))
    with pytest.raises(ScenarioError, match="'n/c1' is used twice"):
        load_scenario(scenario(tmp_path, [{"name": "n", "cores": 2}, {"name": "n/c1"}], tasks(1), ["heft"]))


def test_a_stream_job_of_cores_runs_as_a_gang_and_is_refused_where_no_host_holds_it(tmp_path: Path) -> None:
    (tmp_path / "job.csv").write_text("name,work,cores,depends\nwide,10,2,\nnarrow,10,1,wide\n", encoding="utf-8")
    doc = {"name": "cores-stream", "platform": {"processors": [{"name": "node", "cores": 2}]},
           "workload": {"stream": {"jobs": [{"tasklist": "job.csv"}], "arrivals": {"poisson": 0.5}, "count": 3}},
           "schedulers": ["online-heft", "srjf-eft"]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    report = run_scenario(load_scenario(path))
    for label, schedule in report.schedules.items():
        g = report.problem.graph
        assert g.cores.tolist() == [2, 1] * 3 and g.procs_min.tolist() == [2, 1] * 3, label
        assert schedule.gang is not None and schedule.gang.k.tolist() == [2, 1] * 3, label
        assert (most_cores_at_once(report.problem, schedule) <= 2).all()
    doc["platform"]["processors"] = [{"name": "node", "count": 2}]
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    line = refused(path, "s.yaml:", "workload.stream", "jobs[0]", "'wide' needs 2 cores at once")
    assert "no host has more than one slot" in line
