"""Multi-processor (gang) tasks: rigid k and moldable [k_min, k_max] with Amdahl's law or Downey's
model, gangs on one host, in every time model (plan replay, fast evaluator, online engine) and in the
gang-aware schedulers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import GraphError, InfeasibleError, PlanError, SimschedError
from simsched.schedulers.gang_eft import gang_choice, gang_insertion_choice
from simsched.schedulers.heft import heft_schedule
from simsched.schedulers.jobaware import OnlineHEFT
from simsched.schedulers.timeline import Timelines
from simsched.simulator.engine import Disruptions, execute_plan, run_online
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.gang import Gang, check_gang, downey
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, topological_rank
from simsched.testing.campaign import downey_reference, independent_violations
from simsched.workloads.taskgraph import TaskGraph


def model_duration(problem: Problem, task: int, members: np.ndarray) -> float:
    """The stated model, written out here independently: the slowest member's time at k_min, scaled
    by (f + (1 - f) / k) / (f + (1 - f) / k_min) (Amdahl) or S(k_min) / S(k) (Downey)."""
    g = problem.graph
    base = max(problem.cost_at(task, int(q)) for q in members)
    k, k_min, f = len(members), int(g.procs_min[task]), float(g.serial[task])
    if k == k_min:
        return base
    a, sigma = (float(x) for x in g.downey[task])
    if a > 0:
        return base * downey_reference(k_min, a, sigma) / downey_reference(k, a, sigma)
    return base * ((f + (1 - f) / k) / (f + (1 - f) / k_min))


def groups(problem: Problem, task: int) -> list[np.ndarray]:
    """The processor pools a gang of ``task`` may draw from: each type's eligible processors, split
    by host for a same_host task."""
    ok = np.isfinite(problem.cost_row(task))
    tp, host = problem.platform.type_index, problem.platform.host_index
    key = tp * 100 + host if problem.graph.same_host[task] else tp
    return [np.flatnonzero(ok & (key == x)) for x in np.unique(key)]


@st.composite
def gang_problems(draw, zero_delay: bool = False):
    """A random DAG of rigid, moldable and single tasks on a platform of two processor types (cpu,
    gpu) of 1-4 processors each spread over two hosts, heterogeneous speeds, a kind the gpu may not
    run, zero works; moldable tasks follow Amdahl's law or Downey's model, some gangs must sit on one
    host."""
    counts = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    procs = [Processor(f"{t}{i}", type=t, speed=draw(st.sampled_from([0.5, 1.0, 2.0])),
                       host=draw(st.sampled_from(["h0", "h1"])))
             for t, c in zip(("cpu", "gpu"), counts) for i in range(c)]
    if zero_delay:
        platform = Platform.uniform(procs, bandwidth=float("inf"), latency=0.0)
    else:
        platform = Platform.uniform(procs, bandwidth=draw(st.sampled_from([1.0, 4.0])),
                                    latency=draw(st.sampled_from([0.0, 0.5])))
    per_group: dict[tuple[str, str], int] = {}
    for p in procs:
        per_group[(p.type, p.host)] = per_group.get((p.type, p.host), 0) + 1
    n = draw(st.integers(1, 9))
    edges = [(i, j) for j in range(n) for i in range(j) if draw(st.booleans()) and draw(st.booleans())]
    work = [draw(st.sampled_from([0.0, 1.0, 3.0, 7.5])) for _ in range(n)]
    kind = [draw(st.sampled_from(["any", "any", "cpu-only"])) for _ in range(n)]
    rows, same_host, serial, downey = [], [], [], []
    for i in range(n):
        one_host = draw(st.booleans())
        types = ("cpu",) if kind[i] == "cpu-only" else ("cpu", "gpu")
        top = max((c for (t, _), c in per_group.items() if t in types) if one_host
                  else (c for t, c in zip(("cpu", "gpu"), counts) if t in types))
        lo = draw(st.integers(1, top))
        hi = draw(st.integers(lo, top))
        rows.append([lo, hi] if draw(st.booleans()) else [1, 1])
        same_host.append(one_host)
        if draw(st.booleans()):
            downey.append([draw(st.sampled_from([1.0, 1.5, 3.0, 8.0])),
                           draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 10.0]))])
            serial.append(0.0)
        else:
            downey.append([0.0, 0.0])
            serial.append(draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])))
    data = [draw(st.sampled_from([0.0, 2.0])) for _ in edges]
    graph = TaskGraph([f"t{i}" for i in range(n)], edges, data, work=work, kind=kind, procs=rows, serial=serial,
                      downey=downey, same_host=same_host)
    return Problem(graph, platform, {"cpu-only": {"gpu": 0.0}})


def random_gang_plan(problem: Problem, rng: np.random.Generator) -> Plan:
    """Random legal decisions: each task on a random eligible pool (type, and host for a same_host
    task), a random k in its range, random members; sequences a random linear extension of
    precedence (so no deadlock)."""
    g = problem.graph
    members = []
    for t in range(g.n_tasks):
        pools = [x for x in groups(problem, t) if x.size >= g.procs_min[t]]
        pool = pools[rng.integers(len(pools))]
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
    assert independent_violations(problem, s) == []  # the campaign's validator, written apart
    task, proc, start, finish = s.busy_intervals()
    for t in range(problem.n_tasks):  # all members start and end together, for the model's time
        rows = task == t
        assert (start[rows] == s.start[t]).all() and (finish[rows] == s.finish[t]).all()
        members = proc[rows]
        assert len(set(problem.platform.type_index[members].tolist())) == 1
        if problem.graph.same_host[t]:
            assert len(set(problem.platform.host_index[members].tolist())) == 1
        assert problem.graph.procs_min[t] <= members.size <= problem.graph.procs_max[t]
        assert s.finish[t] - s.start[t] == pytest.approx(model_duration(problem, t, members), rel=1e-12, abs=1e-12)


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


@settings(max_examples=60, deadline=None)
@given(gang_problems(), st.integers(0, 2**32 - 1))
def test_gap_search_never_finishes_later_than_appending(problem, seed):
    # random busy intervals on every processor, random data-ready times: the insertion choice is a
    # legal gang, idle on every member over its run, with its data on the lead, at the model's
    # duration, and never finishes later than the append-only choice
    rng = np.random.default_rng(seed)
    m = problem.n_processors
    tl = Timelines(m)
    for q in range(m):
        t = 0.0
        for _ in range(int(rng.integers(0, 4))):
            t += float(rng.choice([0.0, 1.0, 2.5]))
            d = float(rng.choice([0.0, 1.0, 4.0]))
            tl.reserve(q, t, t + d)
            t += d
    for task in range(problem.n_tasks):
        ready = rng.choice([0.0, 1.0, 3.0, 6.0], size=m)
        append = gang_choice(problem, task, ready, tl.end)
        got = gang_insertion_choice(problem, task, ready, tl)
        assert (got is None) == (append is None)
        if got is None:
            continue
        s, f, members = got
        assert f <= append[1]
        check_gang(problem, np.array([members[0]]), Gang(np.array([0, members.size]), members), np.array([task]))
        assert ready[members[0]] <= s
        assert f - s == model_duration(problem, task, members) or f - s == pytest.approx(
            model_duration(problem, task, members), rel=1e-12)
        for q in members.tolist():  # idle over [s, f): reserving it raises nothing
            state = tl.snapshot(q)
            tl.reserve(q, s, f)
            tl.restore(q, state)


def test_gap_search_fills_a_window_two_processors_share():
    # g0 busy [0, 2) and [5, 9); g1 busy [0, 1) and [6, 9): a 2-gpu task of 3 fits in [2, 5) on both
    problem = Problem(TaskGraph(["w"], work=[3.0], procs=[2]), gpus(3))
    tl = Timelines(3)
    for q, spans in ((0, [(0, 2), (5, 9)]), (1, [(0, 1), (6, 9)]), (2, [(0, 8)])):
        for a, b in spans:
            tl.reserve(q, a, b)
    ready = np.zeros(3)
    assert gang_choice(problem, 0, ready, tl.end)[:2] == (9.0, 12.0)
    s, f, members = gang_insertion_choice(problem, 0, ready, tl)
    assert (s, f, sorted(members.tolist())) == (2.0, 5.0, [0, 1])
    ready[:] = 2.5  # the data comes later: the window is too short now; appending wins
    assert gang_insertion_choice(problem, 0, ready, tl)[:2] == (9.0, 12.0)
    heft = heft_schedule(problem)
    assert heft.finish[0] == 3.0


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


# Downey 1997 by hand: A = 8.  sigma = 0.5 (low variance): S(2) = 8*2 / (8 + 0.5*1/2) = 64/33;
# S(10) (8 < 10 <= 2A - 1 = 15) = 80 / (0.5*7.5 + 10*0.75) = 80/11.25 = 64/9; S(15) = S(40) = 8.
# sigma = 2 (high): S(2) = 2*8*3 / (2*(2 + 7) + 8) = 48/26 = 24/13; S(k) = 8 from A + A sigma - sigma = 22.
# sigma = 0: S(k) = min(k, A).  A = 1: no speedup at all.
@pytest.mark.parametrize("k, a, sigma, expected", [
    (1, 8.0, 0.5, 1.0), (2, 8.0, 0.5, 64 / 33), (10, 8.0, 0.5, 64 / 9), (15, 8.0, 0.5, 8.0), (40, 8.0, 0.5, 8.0),
    (1, 8.0, 2.0, 1.0), (2, 8.0, 2.0, 24 / 13), (22, 8.0, 2.0, 8.0), (100, 8.0, 2.0, 8.0),
    (5, 8.0, 0.0, 5.0), (12, 8.0, 0.0, 8.0), (7, 1.0, 3.0, 1.0), (4, 3.0, 1.0, 2 * 3 * 4 / (2 * 3 + 4 - 1)),
])
def test_downey_speedup_golden_values(k, a, sigma, expected):
    assert float(downey(k, a, sigma)) == pytest.approx(expected, rel=1e-14)
    assert downey_reference(k, a, sigma) == pytest.approx(expected, rel=1e-14)


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 64.0), st.floats(0.0, 50.0))
def test_downey_speedup_is_monotone_and_bounded(a, sigma):
    k = np.arange(1, 200)
    s = downey(k, a, sigma)
    assert s[0] == pytest.approx(1.0, rel=1e-12)
    assert (np.diff(s) >= -1e-12 * a).all()  # non-decreasing in k
    assert (s <= np.minimum(k, a) * (1 + 1e-12)).all()
    if sigma == 0:
        np.testing.assert_allclose(s, np.minimum(k, a), rtol=1e-12)
    # the two variance branches meet at sigma = 1
    near = downey(k, a, np.nextafter(1.0, 2.0))
    np.testing.assert_allclose(downey(k, a, 1.0), near, rtol=1e-12)


def test_moldable_duration_follows_downey():
    # t(1) = 10, A = 3, sigma = 0.5: on 4 processors (3 < 4 <= 5) S = 12 / (0.5*2.5 + 4*0.75) = 12/4.25,
    # so 10 * 4.25 / 12; from k_min = 2 (S(2) = 6 / 3.25) the factor is S(2)/S(4)
    g = TaskGraph(["m", "r"], work=[10.0, 10.0], procs=[[1, 4], [2, 4]], downey=[[3.0, 0.5], [3.0, 0.5]])
    problem = Problem(g, gpus(4))
    s = evaluate_plan(problem, Plan([0, 0], [0, 1], gang=Gang.from_lists([[0, 1, 2, 3], [0, 1, 2, 3]])))
    assert s.finish[0] == pytest.approx(10 * 4.25 / 12, rel=1e-15)
    assert s.finish[1] - s.start[1] == pytest.approx(10 * (6 / 3.25) / (12 / 4.25), rel=1e-15)
    assert_same_times(s, execute_plan(problem, Plan([0, 0], [0, 1], gang=Gang.from_lists([[0, 1, 2, 3]] * 2))))
    flat = Problem(TaskGraph(["m"], work=[10.0], procs=[[1, 4]], downey=[[2.0, 0.0]]), gpus(4))
    plan = heft_schedule(flat)  # S = min(k, 2): two processors finish as early as four, and hold fewer
    assert plan.gang is not None and plan.gang.k.tolist() == [2] and plan.finish[0] == 5.0


def two_hosts() -> Platform:
    """node0: gpus a0..a2; node1: b0, b1; node2: c0, c1 (one type)."""
    return Platform.uniform([Processor(f"{h}{i}", type="gpu", host=f"node{j}")
                             for j, (h, c) in enumerate((("a", 3), ("b", 2), ("c", 2))) for i in range(c)])


def test_same_host_gangs_stay_on_one_host():
    # x needs 3 on one host: only node0; y needs 4 anywhere: b0, b1, c0, c1 at once; z needs 2 on one
    # host after y: node1 or node2, never b0 + c0
    g = TaskGraph(["x", "y", "z"], [(1, 2)], work=[6.0, 4.0, 2.0], procs=[3, 4, 2], same_host=[True, False, True])
    problem = Problem(g, two_hosts())
    for s in (execute_plan(problem, heft_schedule(problem)), run_online(problem, OnlineHEFT())[0]):
        check_gang_schedule(problem, s)
        assert sorted(s.gang.of(0).tolist()) == [0, 1, 2] and s.start[0] == 0.0
        assert sorted(s.gang.of(1).tolist()) == [3, 4, 5, 6] and s.start[1] == 0.0
        assert len(set(problem.platform.host_index[s.gang.of(2)].tolist())) == 1
    spread = Plan([0, 3, 3], [0, 0, 1], gang=Gang.from_lists([[0, 1, 2], [3, 4, 5, 6], [3, 5]]))
    with pytest.raises(PlanError, match="task 'z' must run on one host"):
        evaluate_plan(problem, spread)
    with pytest.raises(SimschedError, match="must run on one host"):
        run_online(problem, Fixed({0: (0, 1, 2), 1: (3, 4, 5, 6), 2: (3, 5)}))
    with pytest.raises(InfeasibleError, match="needs 4 processors of one type on one host"):
        Problem(TaskGraph(["w"], work=[1.0], procs=[[4, 6]], same_host=[True]), two_hosts())


def test_task_graph_carries_the_speedup_model_and_host_rule():
    g = TaskGraph(["a", "b"], [(0, 1)], work=[1.0, 2.0], procs=[[1, 4], [2, 2]], downey=[[3.0, 0.5], [0.0, 0.0]],
                  same_host=[False, True])
    for h in (g.with_(), TaskGraph.from_networkx(g.to_networkx())):
        np.testing.assert_array_equal(h.downey, g.downey)
        np.testing.assert_array_equal(h.same_host, g.same_host)
    from simsched.workloads.jobs import merge_jobs

    both = merge_jobs([g, g], [0.0, 1.0]).graph
    assert both.downey[:, 0].tolist() == [3.0, 0.0, 3.0, 0.0]
    assert both.same_host.tolist() == [False, True, False, True]
    for bad, message in [([[0.5, 0.0]], "A = 0.5"), ([[2.0, -1.0]], "sigma = -1.0"), ([[np.inf, 0.0]], "A = inf"),
                         ([[2.0, np.nan]], "sigma = nan"), ([[1e31, 0.0]], "A <= 1e")]:
        with pytest.raises(GraphError, match=message):
            TaskGraph(["a"], procs=[[1, 2]], downey=bad)
    with pytest.raises(GraphError, match="one speedup model"):
        TaskGraph(["a"], procs=[[1, 2]], serial=[0.1], downey=[[2.0, 0.0]])
    rec = TaskGraph.from_named([{"name": "a", "procs": [1, 4], "speedup": {"model": "downey", "A": 2, "sigma": 1}},
                                {"name": "b", "procs": [1, 4], "speedup": {"model": "amdahl", "serial": 0.25}}])
    assert rec.downey.tolist() == [[2.0, 1.0], [0.0, 0.0]] and rec.serial.tolist() == [0.0, 0.25]


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
    assert "'cpop' places every task on one processor, but task 'train' (workload.tasks) needs 8" in result.output
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


def test_one_host_scenario_runs_and_an_unholdable_gang_is_refused_at_load(tmp_path):
    import json

    from typer.testing import CliRunner

    from simsched.cli.main import app

    scenario = "scenarios/cluster/gang_hosts.yaml"
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", scenario, "--json", str(out)])
    assert result.exit_code == 0, result.output
    for row in json.loads(out.read_text())["results"]:
        by = {r["task"]: r for r in row["schedule"]}
        assert by["train"]["processors"] == ["a0", "a1", "a2", "a3"]  # node0, the one host with 4 gpus
        assert sorted(by["sweep"]["processors"]) == ["b0", "b1", "c0", "c1"]  # spread over node1, node2
        tune = by["tune"]  # Downey A = 3, sigma = 0.5 on 4: 30 / (12 / 4.25)
        assert tune["finish"] - tune["start"] == pytest.approx(30 * 4.25 / 12, rel=1e-12)
    bad = tmp_path / "bad.yaml"
    bad.write_text(open(scenario).read().replace("procs: 4, same_host: true", "procs: 5, same_host: true"))
    out.unlink()
    result = CliRunner().invoke(app, ["run", str(bad), "--json", str(out)])
    assert result.exit_code == 2 and not out.exists()
    line = result.output.strip()
    assert "\n" not in line and f"{bad}:17: workload.tasks[1]:" in line and "on one host (same_host)" in line


def test_task_records_carry_downey_and_same_host_and_locate_bad_ones(tmp_path):
    from simsched.workloads.importers.records import graph_to_records, records_to_graph

    tasks = [{"name": "a", "work": 4},
             {"name": "b", "work": 30, "procs": [1, 4], "speedup": {"model": "downey", "A": 3, "sigma": 0.5}},
             {"name": "c", "work": 8, "procs": 2, "same_host": "true"}]
    g = records_to_graph(tasks, [{"from": "a", "to": "b"}])
    assert g.downey.tolist() == [[0.0, 0.0], [3.0, 0.5], [0.0, 0.0]] and g.same_host.tolist() == [False, False, True]
    back = records_to_graph(*graph_to_records(g))
    np.testing.assert_array_equal(back.downey, g.downey)
    np.testing.assert_array_equal(back.same_host, g.same_host)
    for bad, field in [({"model": "downey", "A": 0.5, "sigma": 0}, "tasks[0]"), ("downey", "tasks[0].speedup"),
                       ({"model": "downey", "A": 1e300, "sigma": 0}, "tasks[0]")]:
        with pytest.raises(SimschedError) as info:
            records_to_graph([{"name": "a", "procs": [1, 2], "speedup": bad}])
        assert info.value.field == field
    with pytest.raises(SimschedError, match="same_host is true or false"):
        records_to_graph([{"name": "a", "procs": 2, "same_host": "maybe"}])


def test_stream_job_sources_set_the_speedup_model_and_host_rule(tmp_path):
    from simsched.scenario import load_scenario
    from simsched.scenario.stream import build_stream

    text = """name: s
seed: 3
platform:
  processors:
    - {name: a, type: gpu, count: 4, host: n0}
    - {name: b, type: gpu, count: 4, host: n1}
workload:
  stream:
    jobs:
      - {generator: random, tasks: 5, procs: [1, 4], speedup: {model: downey, A: 2, sigma: 1.5}, same_host: true}
    arrivals: {poisson: 0.05}
    count: 3
schedulers: [online-heft]
"""
    path = tmp_path / "s.yaml"
    path.write_text(text)
    g = build_stream(load_scenario(path), 3).graph
    assert (g.downey == [2.0, 1.5]).all() and g.same_host.all() and (g.serial == 0).all()
    for bad, where in [("A: 2, sigma: 1.5}", "A: 0, sigma: 1.5}"), ("procs: [1, 4]", "procs: 4")]:
        path.write_text(text.replace(bad, where))
        with pytest.raises(SimschedError) as info:
            load_scenario(path)
        assert info.value.line == 10 and "jobs[0].speedup" in str(info.value.field)
