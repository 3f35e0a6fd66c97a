"""ECS (Lee & Zomaya, IEEE TPDS 22(8), 2011): the relative-superiority rule, the hand-computed golden
case of docs/energy.md, and what the paper promises of MCER on random DAGs and P-state tables —
never a longer makespan nor more energy than phase 1 — with every plan valid and replayed by the
SimPy engine at its planned times."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.schedulers.ecs import ECS, ecs_phase_one, mcer_pass, relative_superiority, unit_tables
from simsched.simulator.engine import execute_plan
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.power import Intervals, PowerTables, ProcessorPower, PState, account
from simsched.simulator.problem import Problem
from simsched.testing.energy_check import random_tables
from simsched.workloads.generators import random_dag
from simsched.workloads.taskgraph import TaskGraph

ROOT = Path(__file__).resolve().parents[1]


def _problem(seed: int, n: int, m: int) -> Problem:
    rng = np.random.default_rng(seed)
    procs = [Processor(f"p{i}", speed=float(rng.choice([1.0, 2.0, 3.0]))) for i in range(m)]
    return Problem(random_dag(n, ccr=float(rng.choice([0.0, 1.0, 3.0])), shape=float(rng.choice([0.5, 1, 2])), rng=rng),
                   Platform.uniform(procs, bandwidth=float(rng.uniform(0.5, 5)), latency=0.1))


def _ran(problem: Problem, plan, tables: PowerTables):
    """The SimPy engine's run of ``plan`` (durations stretched by its P-states) and its joules."""
    pstate = plan.info["pstate"]
    ran = execute_plan(problem, plan, tables.slowdown(plan.processor, pstate))
    g = problem.graph
    moved = float(g.edge_data[ran.processor[g.edge_src] != ran.processor[g.edge_dst]].sum()) if g.n_edges else 0.0
    acc = account(tables, Intervals.of_schedule(ran, pstate), float(ran.finish.max()), problem.n_tasks, moved)
    return ran, acc.total_j


def test_relative_superiority_signs_and_degenerate_windows() -> None:
    # half the energy for a finish 4 later over a window of 8: 0.6667 saved against 0.5 lost
    assert relative_superiority(240, 0, 8, 400, 0, 4) == pytest.approx(-((240 - 400) / 240 + 4 / 8))
    assert relative_superiority(240, 0, 8, 400, 0, 4) > 0
    assert relative_superiority(400, 0, 4, 240, 0, 8) > 0  # finish twice as early outweighs 0.4 more energy
    assert relative_superiority(200, 8, 10, 120, 0, 4) < 0  # more energy and later: inferior
    assert relative_superiority(5, 0, 1, 5, 0, 1) == 0  # equal pairs: keep the incumbent
    assert relative_superiority(0, 0, 1, 3, 0, 1) == math.inf  # free against costly
    assert relative_superiority(0, 0, 0, 0, 0, 0) == 0  # zero-cost task
    assert relative_superiority(0, 2, 2, 0, 2, 3) == math.inf  # same energy, strictly earlier in a zero window


def _golden() -> tuple[Problem, PowerTables]:
    graph = TaskGraph(["a", "b"], cost=[[4.0, 4.0], [2.0, 2.0]])
    problem = Problem(graph, Platform.uniform([Processor("p0"), Processor("p1")]))
    cpu = ProcessorPower((PState(1.0, 100.0, 10.0), PState(0.5, 30.0, 5.0)))
    return problem, PowerTables.build([cpu, cpu])


def test_golden_case_by_hand() -> None:
    """docs/energy.md, "ECS by hand": a on p1 at half speed (0-8), b on p0 at half speed (0-4), 380 J."""
    problem, tables = _golden()
    one = ecs_phase_one(problem, tables)
    assert one.processor.tolist() == [1, 0] and one.info["pstate"].tolist() == [1, 1]
    np.testing.assert_array_equal(one.start, [0, 0])
    np.testing.assert_array_equal(one.finish, [8, 4])
    sched = ECS()
    sched.use_power(tables)
    plan = sched.plan(problem)
    assert plan.processor.tolist() == [1, 0] and plan.info["pstate"].tolist() == [1, 1]  # MCER: no move pays
    ran, joules = _ran(problem, plan, tables)
    np.testing.assert_array_equal(ran.finish, [8, 4])
    assert joules == pytest.approx(240 + 120 + 4 * 5)


def test_golden_scenario_against_heft() -> None:
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/ecs_golden.yaml"))
    heft, ecs = (report.rows_of(label)[0] for label in ("heft", "ecs"))
    assert (heft["makespan"], heft["energy_j"]) == (4, pytest.approx(620))
    assert (ecs["makespan"], ecs["energy_j"]) == (8, pytest.approx(380))
    assert not report.warnings


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 25), st.integers(1, 4))
def test_mcer_never_lengthens_nor_costs_and_plans_replay(seed: int, n: int, m: int) -> None:
    problem = _problem(seed, n, m)
    tables = random_tables(m, np.random.default_rng(seed))
    one = ecs_phase_one(problem, tables)
    two = mcer_pass(problem, one, tables)
    for plan in (one, two):
        ran, _ = _ran(problem, plan, tables)
        np.testing.assert_allclose(ran.start, plan.start, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(ran.finish, plan.finish, rtol=1e-9, atol=1e-9)
        g = problem.graph
        arrive = ran.finish[g.edge_src] + problem.edge_delays(ran.processor)
        assert (ran.start[g.edge_dst] >= arrive - 1e-9).all()  # precedence with transfers
        order = np.lexsort((ran.start, ran.processor))
        same = ran.processor[order][1:] == ran.processor[order][:-1]
        assert (ran.start[order][1:][same] >= ran.finish[order][:-1][same] - 1e-9).all()  # no overlap
    (r1, e1), (r2, e2) = _ran(problem, one, tables), _ran(problem, two, tables)
    assert r2.finish.max() <= r1.finish.max() * (1 + 1e-9) + 1e-9
    assert e2 <= e1 * (1 + 1e-9) + 1e-9


def test_without_power_model_energy_is_busy_time() -> None:
    problem = _problem(3, 30, 3)
    plan = ECS().plan(problem)
    assert plan.info["pstate"].tolist() == [0] * 30
    ran, joules = _ran(problem, plan, unit_tables(3))
    assert joules == pytest.approx(float((ran.finish - ran.start).sum()))
    np.testing.assert_allclose(ran.finish, plan.finish, rtol=1e-9)


def test_one_processor_one_pstate_is_the_topological_chain() -> None:
    problem = _problem(5, 12, 1)
    plan = ECS().plan(problem)
    assert (plan.processor == 0).all()
    assert plan.finish.max() == pytest.approx(float(problem.W[:, 0].sum()))


def test_dvfs_scenario_ecs_row() -> None:
    """On the bundled DVFS scenario (a measured fact of this graph, not a promise of the paper) ECS
    draws less energy than HEFT at a longer makespan; its planned times are the simulated ones."""
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/dvfs.yaml"), schedulers=["heft", "ecs"])
    heft, ecs = (report.rows_of(label)[0] for label in ("heft", "ecs"))
    assert ecs["energy_j"] < heft["energy_j"]
    assert not report.warnings


# --------------------------------------------------------------------------- online: P-states through the engine
class _Scripted:
    name = "scripted"

    def __init__(self, answer) -> None:
        self.answer = answer

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, view):
        return self.answer(view)


def _two_tasks() -> tuple[Problem, PowerTables]:
    return _golden()


def test_engine_runs_a_task_at_the_pstate_its_policy_names() -> None:
    from simsched.simulator.engine import run_online

    problem, tables = _two_tasks()
    slow = tables.speed[:, :1] / tables.speed
    schedule, stats = run_online(problem, _Scripted(lambda v: [(int(t), int(t), 1) for t in v.ready]),
                                 pstate_slowdown=slow)
    np.testing.assert_array_equal(schedule.finish, [8.0, 4.0])  # 4 and 2 at half speed
    assert stats.pstate.tolist() == [1, 1]
    acc = account(tables, Intervals.of_schedule(schedule, stats.pstate), 8.0, 2)
    assert acc.total_j == pytest.approx(8 * 30 + 4 * 30 + 4 * 5)


@pytest.mark.parametrize(("answer", "slow", "message"), [
    (lambda v: [(0, 0, 1)], None, "no power model"),
    (lambda v: [(0, 0, 2)], True, "no such P-state"),
    (lambda v: [(0, 0, True)], True, "triple"),
    (lambda v: [(0, 0, 1, 1)], True, "triple"),
])
def test_engine_refuses_a_pstate_it_cannot_run(answer, slow, message) -> None:
    from simsched.errors import SimschedError
    from simsched.simulator.engine import run_online

    problem, tables = _two_tasks()
    table = tables.speed[:, :1] / tables.speed if slow else None
    with pytest.raises(SimschedError, match=message):
        run_online(problem, _Scripted(answer), pstate_slowdown=table)


def test_online_ecs_without_power_returns_pairs_and_runs() -> None:
    from simsched.schedulers.ecs import OnlineECS
    from simsched.simulator.engine import run_online

    problem = _problem(4, 20, 3)
    seen: list = []

    class Spy(OnlineECS):
        def decide(self, view):
            out = super().decide(view)
            seen.extend(out)
            return out

    schedule, _ = run_online(problem, Spy())
    assert seen and all(len(a) == 2 for a in seen)
    assert schedule.validate(problem) == []


def test_dvfs_stream_online_ecs_uses_pstates_and_saves_energy() -> None:
    """A measured fact of the bundled DVFS stream (one day), not a promise of the paper: ecs-online
    runs some tasks below full speed and draws less than mct; the engine's attempts are stretched."""
    from simsched.run.streams import simulate_stream

    scenario = load_scenario(ROOT / "scenarios/energy/dvfs_stream.yaml")
    mct = simulate_stream(scenario, "mct", 5)
    ecs = simulate_stream(scenario, "ecs-online", 5)
    assert (ecs.stats.pstate > 0).any() and not (mct.stats.pstate > 0).any()
    assert ecs.energy["energy_j"] < mct.energy["energy_j"]
    log = ecs.stats.log
    assert len(log.pstates) == len(log.attempts)


def test_online_ecs_on_the_golden_task_graph_matches_the_hand_computation() -> None:
    """Both tasks ready at 0, a then b: the same RS scans as phase one by hand (docs/energy.md), so
    a on p1 and b on p0, both at half speed: 8 s, 380 J; the engine ran them stretched."""
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/ecs_golden.yaml"), schedulers=["ecs-online"])
    row = report.rows_of("ecs-online")[0]
    assert (row["makespan"], row["energy_j"]) == (8, pytest.approx(380))
    schedule = report.schedules["ecs-online"]
    assert schedule.processor.tolist() == [1, 0]
    np.testing.assert_array_equal(schedule.finish, [8.0, 4.0])
