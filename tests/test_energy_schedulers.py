"""Energy-aware schedulers: heft-slack keeps HEFT's starts and makespan and never uses more energy;
power-cap never lets the platform draw more than its cap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.schedulers.heft import heft_schedule
from simsched.schedulers.powercap import PowerCap
from simsched.schedulers.slack import HEFTSlack, latest_finish
from simsched.simulator.engine import Disruptions, execute_plan, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.power import Intervals, account
from simsched.simulator.problem import Problem
from simsched.testing.energy_check import random_tables
from simsched.workloads.generators import random_dag

ROOT = Path(__file__).resolve().parents[1]


def _problem(seed: int, n: int, m: int) -> Problem:
    rng = np.random.default_rng(seed)
    procs = [Processor(f"p{i}", speed=float(rng.choice([1.0, 2.0, 3.0]))) for i in range(m)]
    return Problem(random_dag(n, ccr=float(rng.choice([0.0, 1.0, 3.0])), shape=float(rng.choice([0.5, 1, 2])), rng=rng),
                   Platform.uniform(procs, bandwidth=float(rng.uniform(0.5, 5)), latency=0.1))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40), st.integers(1, 5))
@example(10, 23, 5)  # a slower P-state idling hotter than the nominal one until the processor's next task
def test_slack_reclamation_keeps_starts_and_makespan_and_saves(seed: int, n: int, m: int) -> None:
    problem = _problem(seed, n, m)
    tables = random_tables(m, np.random.default_rng(seed))
    base = heft_schedule(problem)
    sched = HEFTSlack()
    sched.use_power(tables)
    plan = sched.plan(problem)
    pstate = plan.info["pstate"]
    slow = tables.slowdown(plan.processor, pstate)
    ran = execute_plan(problem, plan, slow)  # the ground truth, durations stretched by the P-states
    np.testing.assert_allclose(ran.start, base.start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ran.finish, plan.finish, rtol=1e-9, atol=1e-9)
    assert ran.finish.max() == pytest.approx(base.finish.max(), rel=1e-12)
    assert (plan.finish <= latest_finish(problem, base) + 1e-9).all()
    ref = execute_plan(problem, base)
    e_heft = account(tables, Intervals.of_schedule(ref), float(ref.finish.max()), n).energy_j
    e_slack = account(tables, Intervals.of_schedule(ran, pstate), float(ran.finish.max()), n).energy_j
    # each task's choice minimises busy + idle energy over the window it owns; switch lumps may add
    lumps = tables.switch_energy_j.sum() * n
    assert e_slack.sum() <= e_heft.sum() + lumps + 1e-6 * max(1.0, e_heft.sum())


def test_slack_without_power_is_heft() -> None:
    problem = _problem(1, 30, 3)
    plan = HEFTSlack().plan(problem)
    assert "pstate" not in plan.info
    np.testing.assert_array_equal(plan.finish, heft_schedule(problem).finish)


def test_dvfs_scenario_saves_energy_at_equal_makespan() -> None:
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/dvfs.yaml"), schedulers=["heft", "heft-slack"])
    heft, slack = (report.rows_of(label)[0] for label in ("heft", "heft-slack"))
    assert slack["makespan"] == heft["makespan"]
    assert slack["energy_j"] < 0.97 * heft["energy_j"]
    assert not report.warnings  # the planner's predicted (stretched) times are the simulated ones


class _Greedy:
    name = "g"

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, view):
        return [(int(t), int(np.argmin(view.completion_times(np.array([t]))[0]))) for t in view.ready]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 40), st.integers(1, 5), st.floats(0.0, 1.0), st.booleans())
def test_power_cap_holds_at_every_instant(seed: int, n: int, m: int, room: float, failures: bool) -> None:
    problem = _problem(seed, n, m)
    tables = random_tables(m, np.random.default_rng(seed))
    base = np.maximum.reduce([tables.idle_w[:, 0], tables.off_w, tables.failed_w])
    extra = tables.busy_w[:, 0] - tables.idle_w[:, 0]
    cap = float(base.sum() + extra.max() + room * extra.sum())
    policy = PowerCap(cap=cap)
    policy.use_power(tables)
    d = Disruptions(failure_rate=0.02, repair_time=3.0) if failures else None
    schedule, stats = run_online(problem, policy, None, np.random.default_rng(seed), d, np.random.default_rng(seed))
    acc = account(tables, Intervals.of_schedule(schedule, None, stats.log), float(schedule.finish.max()), n)
    assert acc.steps[1].max() <= cap * (1 + 1e-9) + 1e-9


def test_power_cap_refuses_a_cap_that_cannot_run() -> None:
    with pytest.raises(SimschedError):
        PowerCap(cap=-1)
    with pytest.raises(SimschedError):
        PowerCap(cap=float("nan"))
    problem = _problem(0, 5, 2)
    policy = PowerCap(cap=0.5)  # no power model: 1 W per working processor
    with pytest.raises(SimschedError, match="cannot run"):
        policy.reset(problem, np.random.default_rng(0))


class _HoldUntil:
    """Holds every ready task until ``t``, asking the engine for a decision point then."""

    name = "hold"

    def __init__(self, t: float) -> None:
        self.t, self.wake_at = t, None

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, view):
        if view.now < self.t:
            self.wake_at = self.t
            return []
        self.wake_at = None
        return [(int(t), 0) for t in view.ready]


def test_engine_timer_wakes_a_holding_policy() -> None:
    problem = _problem(3, 6, 1)
    schedule, stats = run_online(problem, _HoldUntil(50.0))
    assert schedule.start.min() == 50.0


def test_carbon_defer_without_trace_is_mct_and_with_one_saves_carbon(tmp_path: Path) -> None:
    import yaml

    from simsched.run.streams import simulate_stream
    from simsched.scenario import parse_scenario
    from simsched.schedulers.carbon import CarbonDefer
    from simsched.yamlio import load_yaml

    problem = _problem(4, 30, 3)
    a, _ = run_online(problem, CarbonDefer(), None, np.random.default_rng(0))
    from simsched.schedulers.online import MCT

    b, _ = run_online(problem, MCT(), None, np.random.default_rng(0))
    np.testing.assert_array_equal(a.start, b.start)
    data = yaml.safe_load((ROOT / "scenarios/energy/carbon_defer.yaml").read_text())
    data["workload"]["stream"]["horizon"] = 43200
    (tmp_path / "data").mkdir()
    (tmp_path / "data/grid_solar.csv").write_text((ROOT / "scenarios/energy/data/grid_solar.csv").read_text())
    f = tmp_path / "carbon.yaml"
    f.write_text(yaml.safe_dump(data))
    scenario = parse_scenario(load_yaml(f))
    spec = {s.name: s for s in scenario.schedulers}
    for day in (5, 6):
        mct = simulate_stream(scenario, spec["mct"], day)
        defer = simulate_stream(scenario, spec["carbon-defer"], day)
        assert defer.energy["carbon_g"] < mct.energy["carbon_g"]
        g = defer.problem.graph
        entry = np.diff(g.pred_ptr) == 0
        assert (defer.schedule.start[entry] >= g.arrival[entry]).all()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 40), st.integers(1, 4), st.sampled_from([0.0, 2.0, 10.0]),
       st.booleans())
def test_power_off_intervals_never_overlap_work_and_energy_matches_reference(seed: int, n: int, m: int,
                                                                             timeout: float, failures: bool) -> None:
    from simsched.schedulers.poweroff import PowerOff
    from simsched.simulator.power import without_down
    from simsched.testing.energy_check import reference

    rng = np.random.default_rng(seed)
    procs = [Processor(f"p{i}") for i in range(m)]
    g = random_dag(n, ccr=0.3, rng=rng)
    from simsched.workloads.taskgraph import TaskGraph

    arrival = np.round(rng.uniform(0, 200, n) * (g.level == 0), 1)  # entry tasks arrive over time
    g = TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=g.work, arrival=arrival)
    problem = Problem(g, Platform.uniform(procs, bandwidth=2.0))
    tables = random_tables(m, rng)
    policy = PowerOff(timeout=timeout)
    policy.use_power(tables)
    d = Disruptions(failure_rate=0.01, repair_time=5.0) if failures else None
    schedule, stats = run_online(problem, policy, None, np.random.default_rng(seed), d, np.random.default_rng(seed))
    horizon = float(schedule.finish.max())
    iv = Intervals.of_schedule(schedule, None, stats.log)
    from simsched.simulator.arrived import arrival_order

    off = without_down(policy.off_intervals(horizon, schedule, arrival_order(problem)), iv.down)
    for p, a, b in off.tolist():
        busy = (iv.proc == p) & (iv.start < b - 1e-9) & (iv.end > a + 1e-9)
        assert not busy.any(), f"processor {p} off on [{a}, {b}] while busy"
    iv = Intervals(iv.task, iv.proc, iv.start, iv.end, iv.pstate, iv.down, off)
    acc = account(tables, iv, horizon, n)
    np.testing.assert_allclose(acc.time_in_states(), horizon, rtol=1e-9, atol=1e-9)
    ref = reference(tables, iv, horizon)
    np.testing.assert_allclose(acc.energy_j, ref["energy"], rtol=1e-9, atol=1e-6)


# ------------------------------------------------------------------ issue 40: no power model, no energy scheduler
NO_POWER = {
    "graph": "platform:\n  processors: [{name: cpu, count: 2}]\nworkload: {generator: random, tasks: 6}\n",
    "stream": ("platform:\n  processors: [{name: cpu, count: 2}]\nworkload:\n  stream: {jobs: {generator: random, "
               "tasks: [2, 3]}, arrivals: {poisson: 0.01}, count: 2}\n"),
}


@pytest.mark.parametrize("name, base", [("ecs", "graph"), ("heft-slack", "graph"), ("ecs-online", "stream")])
def test_an_energy_aware_scheduler_without_a_power_model_is_refused_up_front(tmp_path: Path, name: str,
                                                                            base: str) -> None:
    """They ran as their non-energy twins with exit 0 and no word; now the scenario, `run -s` and
    `generalise -s` refuse them in one located line naming the power model they need."""
    from helpers import refused

    from simsched.schedulers.registry import spec

    assert "power" in spec(name).needs
    scenario = tmp_path / "s.yaml"
    scenario.write_text(NO_POWER[base] + f"schedulers: [mct, {name}]\n")
    line = refused(["run", str(scenario)], inputs=(scenario,), says="platform.power")
    assert f"s.yaml:{NO_POWER[base].count(chr(10)) + 1}: schedulers[1]" in line and name in line
    plain = tmp_path / "p.yaml"
    plain.write_text(NO_POWER[base] + "schedulers: [mct]\n")
    line = refused(["run", str(plain), "-s", name], inputs=(plain,), says="--scheduler")
    assert "power model" in line
    if base == "stream":
        refused(["generalise", str(plain), "-s", name, "--days", "2"], inputs=(plain,), says="platform.power")


def test_an_energy_aware_scheduler_with_a_power_model_still_runs() -> None:
    """The bundled energy scenarios name them with platform.power: they load as before."""
    for path in ("scenarios/energy/dvfs.yaml", "scenarios/energy/ecs_golden.yaml"):
        assert any(c.name in ("ecs", "heft-slack") for c in load_scenario(ROOT / path).schedulers)
