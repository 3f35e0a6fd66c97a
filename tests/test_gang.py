"""Multi-processor (gang) tasks: rigid k and moldable [k_min, k_max] with Amdahl's law, in every time
model (plan replay, fast evaluator, online engine) and in the gang-aware schedulers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import InfeasibleError, PlanError, SimschedError
from simsched.schedulers.heft import heft_schedule
from simsched.schedulers.jobaware import OnlineHEFT
from simsched.simulator.engine import Disruptions, execute_plan, run_online
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.gang import Gang
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, topological_rank
from simsched.workloads.taskgraph import TaskGraph


def amdahl_duration(problem: Problem, task: int, members: np.ndarray) -> float:
    """The stated model, written out here independently: the slowest member's time at k_min,
    scaled by (f + (1 - f) / k) / (f + (1 - f) / k_min)."""
    g = problem.graph
    base = max(problem.cost_at(task, int(q)) for q in members)
    k, k_min, f = len(members), int(g.procs_min[task]), float(g.serial[task])
    return base if k == k_min else base * ((f + (1 - f) / k) / (f + (1 - f) / k_min))


@st.composite
def gang_problems(draw, zero_delay: bool = False):
    """A random DAG of rigid, moldable and single tasks on a platform of two processor types (cpu,
    gpu) of 1-4 processors each, heterogeneous speeds, a kind the gpu may not run, zero works."""
    counts = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    procs = [Processor(f"{t}{i}", type=t, speed=draw(st.sampled_from([0.5, 1.0, 2.0])))
             for t, c in zip(("cpu", "gpu"), counts) for i in range(c)]
    if zero_delay:
        platform = Platform.uniform(procs, bandwidth=float("inf"), latency=0.0)
    else:
        platform = Platform.uniform(procs, bandwidth=draw(st.sampled_from([1.0, 4.0])),
                                    latency=draw(st.sampled_from([0.0, 0.5])))
    n = draw(st.integers(1, 9))
    edges = [(i, j) for j in range(n) for i in range(j) if draw(st.booleans()) and draw(st.booleans())]
    work = [draw(st.sampled_from([0.0, 1.0, 3.0, 7.5])) for _ in range(n)]
    kind = [draw(st.sampled_from(["any", "any", "cpu-only"])) for _ in range(n)]
    rows = []
    for i in range(n):
        top = counts[0] if kind[i] == "cpu-only" else max(counts)
        lo = draw(st.integers(1, top))
        hi = draw(st.integers(lo, top))
        rows.append([lo, hi] if draw(st.booleans()) else [1, 1])
    serial = [draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])) for _ in range(n)]
    data = [draw(st.sampled_from([0.0, 2.0])) for _ in edges]
    graph = TaskGraph([f"t{i}" for i in range(n)], edges, data, work=work, kind=kind, procs=rows, serial=serial)
    return Problem(graph, platform, {"cpu-only": {"gpu": 0.0}})


def random_gang_plan(problem: Problem, rng: np.random.Generator) -> Plan:
    """Random legal decisions: each task on a random eligible type, a random k in its range, random
    members; sequences a random linear extension of precedence (so no deadlock)."""
    g, tp = problem.graph, problem.platform.type_index
    members = []
    for t in range(g.n_tasks):
        ok = np.isfinite(problem.cost_row(t))
        types = [x for x in np.unique(tp) if (ok & (tp == x)).sum() >= g.procs_min[t]]
        x = types[rng.integers(len(types))]
        pool = np.flatnonzero(ok & (tp == x))
        k = int(rng.integers(g.procs_min[t], min(g.procs_max[t], pool.size) + 1))
        members.append(rng.permutation(pool)[:k].tolist())
    order = np.empty(g.n_tasks)
    order[np.lexsort((rng.random(g.n_tasks), g.level))] = np.arange(g.n_tasks)
    return Plan([m[0] for m in members], order, gang=Gang.from_lists(members))


class FollowPlan:
    """An online policy making a plan's decisions: each task to its planned gang once it is ready and
    the tasks planned before it on each of its processors are assigned (so every queue runs in the
    planned order)."""

    name = "follow-plan"
    multiprocessor_tasks = True

    def __init__(self, problem: Problem, plan: Plan) -> None:
        self.members = [tuple(plan.gang.of(t).tolist()) if plan.gang is not None else (int(plan.processor[t]),)
                        for t in range(problem.n_tasks)]
        self.seq = plan.sequences(problem.n_processors, topological_rank(problem)) if plan.gang is None else None
        m = problem.n_processors
        owner = np.repeat(np.arange(problem.n_tasks), [len(x) for x in self.members])
        flat = np.array([q for x in self.members for q in x])
        rank = topological_rank(problem)
        key = np.lexsort((owner, rank[owner], plan.order[owner], flat))
        self.before: dict[int, set[int]] = {t: set() for t in range(problem.n_tasks)}
        for a, b in zip(key[:-1], key[1:]):
            if flat[a] == flat[b]:
                self.before[int(owner[b])].add(int(owner[a]))
        del m

    def reset(self, problem, rng):
        self.assigned: set[int] = set()

    def decide(self, view):
        out, waiting, progress = [], [int(t) for t in view.ready], True
        while progress:
            progress = False
            for t in list(waiting):
                if self.before[t] <= self.assigned:
                    m = self.members[t]
                    out.append((t, m if len(m) > 1 else m[0]))
                    self.assigned.add(t)
                    waiting.remove(t)
                    progress = True
        return out


def assert_same_times(a: Schedule, b: Schedule) -> None:
    """The same decisions and the same floats: processors (every member), starts, finishes."""
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.finish, b.finish)
    for x, y in zip(a.busy_intervals()[:2], b.busy_intervals()[:2]):
        np.testing.assert_array_equal(x, y)


def check_gang_schedule(problem: Problem, s: Schedule) -> None:
    assert s.validate(problem) == []
    task, proc, start, finish = s.busy_intervals()
    for t in range(problem.n_tasks):  # all members start and end together, for the model's time
        rows = task == t
        assert (start[rows] == s.start[t]).all() and (finish[rows] == s.finish[t]).all()
        members = proc[rows]
        assert len(set(problem.platform.type_index[members].tolist())) == 1
        assert problem.graph.procs_min[t] <= members.size <= problem.graph.procs_max[t]
        assert s.finish[t] - s.start[t] == pytest.approx(amdahl_duration(problem, t, members), rel=1e-12, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(gang_problems(), st.integers(0, 2**32 - 1))
def test_replay_equals_evaluator_on_random_gang_plans(problem, seed):
    plan = random_gang_plan(problem, np.random.default_rng(seed))
    sim, fast = execute_plan(problem, plan), evaluate_plan(problem, plan)
    assert_same_times(sim, fast)
    check_gang_schedule(problem, sim)


@settings(max_examples=80, deadline=None)
@given(gang_problems())
def test_heft_gang_plan_is_reproduced_by_both_time_models(problem):
    plan = heft_schedule(problem)
    sim, fast = execute_plan(problem, plan), evaluate_plan(problem, plan)
    assert_same_times(sim, plan.planned_schedule())
    assert_same_times(fast, plan.planned_schedule())
    check_gang_schedule(problem, sim)


@settings(max_examples=60, deadline=None)
@given(gang_problems(zero_delay=True), st.integers(0, 2**32 - 1))
def test_online_engine_equals_replay_on_the_same_decisions(problem, seed):
    # with free transfers the online engine's data rule (inputs sent at assignment) and the plan's
    # (sent at the producer's finish) coincide, so the same decisions give the same floats
    plan = random_gang_plan(problem, np.random.default_rng(seed))
    online, _ = run_online(problem, FollowPlan(problem, plan))
    assert_same_times(online, evaluate_plan(problem, plan))
    check_gang_schedule(problem, online)


@settings(max_examples=40, deadline=None)
@given(gang_problems())
def test_online_heft_places_gangs_validly(problem):
    s, _ = run_online(problem, OnlineHEFT())
    check_gang_schedule(problem, s)


# --------------------------------------------------------------------------- hand-checked cases
def gpus(k: int, speed: float = 1.0) -> Platform:
    return Platform.uniform([Processor(f"g{i}", type="gpu", speed=speed) for i in range(k)])


def test_rigid_task_holds_all_its_processors():
    # a (4 on 1 gpu) then b needs both gpus: b waits for a; c (1 gpu) fills the other gpu meanwhile
    g = TaskGraph(["a", "b", "c"], work=[4.0, 2.0, 3.0], procs=[1, 2, 1])
    problem = Problem(g, gpus(2))
    plan = Plan([0, 0, 1], [0, 1, 0], gang=Gang.from_lists([[0], [0, 1], [1]]))
    s = execute_plan(problem, plan)
    np.testing.assert_array_equal(s.start, [0.0, 4.0, 0.0])
    np.testing.assert_array_equal(s.finish, [4.0, 6.0, 3.0])
    assert s.to_records(problem)[1]["processors"] == ["g0", "g1"]
    assert s.metrics(problem).utilization_per_processor == (1.0, (3.0 + 2.0) / 6.0)


def test_moldable_duration_follows_amdahl():
    # t(1) = 10, f = 0.2: on 4 processors 10 * (0.2 + 0.8 / 4) = 4
    g = TaskGraph(["m"], work=[10.0], procs=[[1, 4]], serial=[0.2])
    problem = Problem(g, gpus(4))
    s = evaluate_plan(problem, Plan([2], [0], gang=Gang.from_lists([[2, 0, 1, 3]])))
    assert s.finish[0] == pytest.approx(4.0, rel=1e-15)
    plan = heft_schedule(problem)  # earliest finish: all four
    assert plan.gang is not None and plan.gang.k.tolist() == [4] and plan.finish[0] == pytest.approx(4.0)
    serial = Problem(TaskGraph(["m"], work=[10.0], procs=[[1, 4]], serial=[1.0]), gpus(4))
    assert heft_schedule(serial).gang is None  # no speedup: the fewest processors for the same finish


def test_single_processor_plans_are_untouched_by_the_gang_paths():
    g = TaskGraph(["a", "b"], [(0, 1)], [3.0], work=[1.0, 2.0])
    problem = Problem(g, Platform.uniform([Processor("p0"), Processor("p1")], bandwidth=2.0))
    plan = Plan([0, 1], [0, 0], gang=Gang.from_lists([[0], [1]]))
    assert plan.gang is None  # a one-processor gang is no gang
    s = execute_plan(problem, plan)
    assert s.gang is None and "processors" not in s.to_records(problem)[0]


def test_plans_breaking_a_gang_demand_are_refused():
    g = TaskGraph(["a", "b"], work=[1.0, 1.0], procs=[2, 1])
    mixed = Platform.uniform([Processor("g0", type="gpu"), Processor("g1", type="gpu"), Processor("c0", type="cpu")])
    problem = Problem(g, mixed)
    with pytest.raises(PlanError, match="needs 2 processors at once"):
        evaluate_plan(problem, Plan([0, 1], [0, 1]))
    with pytest.raises(PlanError, match="runs on 3 processors but needs 2"):
        evaluate_plan(problem, Plan([0, 1], [0, 1], gang=Gang.from_lists([[0, 1, 2], [1]])))
    with pytest.raises(PlanError, match="different types"):
        execute_plan(problem, Plan([0, 1], [0, 1], gang=Gang.from_lists([[0, 2], [1]])))
    with pytest.raises(PlanError, match="twice"):
        execute_plan(problem, Plan([0, 1], [0, 1], gang=Gang.from_lists([[0, 0], [1]])))
    with pytest.raises(InfeasibleError, match="needs 3 processors of one type"):
        Problem(TaskGraph(["w"], work=[1.0], procs=[3]), mixed)


def test_validate_finds_overlap_on_a_non_lead_member():
    g = TaskGraph(["a", "b"], work=[2.0, 2.0], procs=[2, 1])
    problem = Problem(g, gpus(2))
    bad = Schedule([0, 1], [0.0, 1.0], [2.0, 3.0], gang=Gang.from_lists([[0, 1], [1]]))
    assert any("overlap on 'g1'" in e for e in bad.validate(problem))


class Fixed:
    """Assigns each ready task to a fixed gang (tests of the engine's refusals and failures)."""

    name = "fixed"

    def __init__(self, members):
        self.members = members

    def reset(self, problem, rng):
        pass

    def decide(self, view):
        return [(int(t), self.members[int(t)]) for t in view.ready]


@pytest.mark.parametrize("members, message", [((0, 0), "twice"), ((0,), "needs 2"), ((0, 5), "do not exist"),
                                              ((0, 1, 2), "needs 2")])
def test_online_engine_refuses_bad_gangs(members, message):
    problem = Problem(TaskGraph(["a"], work=[1.0], procs=[2]), gpus(3))
    with pytest.raises(SimschedError, match=message):
        run_online(problem, Fixed({0: members}))


def test_failure_of_one_member_hands_the_gang_task_back():
    # a needs both gpus for 5; g1 fails during [1, 2): a is lost at 1 and restarts on both at 2
    problem = Problem(TaskGraph(["a", "b"], work=[5.0, 1.0], procs=[2, 1]), gpus(2))
    d = Disruptions(down_trace=((1, 1.0, 2.0),))
    s, stats = run_online(problem, Fixed({0: (0, 1), 1: 0}), disruptions=d)
    assert stats.failures == 1 and stats.restarts == 1
    assert s.start[0] == 2.0 and s.finish[0] == 7.0
    assert s.gang is not None and sorted(s.gang.of(0).tolist()) == [0, 1]
    assert s.validate(problem) == []
    assert stats.lost_work == 2.0  # [0, 1) on both gpus
    done = sorted((p, a, b) for v, p, a, b, ok in stats.log.attempts if v == 0 and ok)
    assert done == [(0, 2.0, 7.0), (1, 2.0, 7.0)]  # energy counts every processor held


def test_energy_and_utilisation_count_every_member():
    from simsched.simulator.power import Intervals

    problem = Problem(TaskGraph(["a"], work=[3.0], procs=[3]), gpus(4))
    s = evaluate_plan(problem, heft_schedule(problem))
    iv = Intervals.of_schedule(s)
    assert sorted(iv.proc.tolist()) == [0, 1, 2] and (iv.end - iv.start == 3.0).all()
    assert s.metrics(problem).utilization == 0.75


# --------------------------------------------------------------------------- contract and scenarios
def test_contract_holds_gang_schedulers_to_gang_problems():
    from simsched.testing.contract import check_scheduler
    from simsched.testing.strategies import ProblemSpace

    space = ProblemSpace(max_tasks=6, max_processors=4, gang=True, zero_costs=True)
    check_scheduler("heft", examples=8, space=space, properties=["valid", "replay", "bound"]).raise_if_failed()
    check_scheduler("srjf-eft", examples=6, space=space, properties=["valid", "bound"]).raise_if_failed()

    class OneEach:  # claims gang support but gives every task a single processor
        name = "one-each"
        multiprocessor_tasks = True

        def plan(self, problem, rng):
            return Plan(np.zeros(problem.n_tasks, dtype=np.int64), problem.graph.level.astype(float))

    assert not check_scheduler(OneEach, examples=10, space=space, properties=["valid"]).passed


def test_cli_refuses_a_single_processor_scheduler_on_gang_tasks(tmp_path):
    from typer.testing import CliRunner

    from simsched.cli.main import app

    scenario = "scenarios/cluster/gang_pipeline.yaml"
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", scenario, "-s", "cpop", "--json", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert "'cpop' places every task on one processor, but task 'train' needs 8" in result.output
    result = CliRunner().invoke(app, ["run", scenario, "-s", "heft", "--json", str(out)])
    assert result.exit_code == 0
    import json

    train = json.loads(out.read_text())["results"][0]["schedule"][1]
    assert train["task"] == "train" and train["processors"] == [f"gpu{i}" for i in range(8)]


def test_stream_metrics_count_every_member():
    from simsched.simulator.jobmetrics import stream_metrics

    problem = Problem(TaskGraph(["a"], work=[3.0], procs=[2]), gpus(2))
    s = evaluate_plan(problem, heft_schedule(problem))
    summary = stream_metrics(s, problem, np.zeros(1, dtype=np.int64), np.zeros(1)).summary
    assert summary["utilization_gpu"] == 1.0
