"""Online policies see only what has arrived, and the engine is what enforces it.

* a policy that tries every door of its view (problem, graph, costs, names, kinds, caches, arrays)
  finds nothing of a task that has not arrived;
* every registered online scheduler makes the same decisions before ``t`` when everything arriving
  from ``t`` on is replaced (the ``no-future`` contract property, here on job streams);
* arrival times out of index order: the visible numbering is arrival order, and the schedule is the
  one of the same problem with its tasks sorted by arrival;
* :mod:`simsched.simulator.arrived` classifies every slot of Problem and TaskGraph, so a field added
  later cannot slip through unrestricted.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from simsched.schedulers import registry
from simsched.simulator import arrived
from simsched.simulator.engine import run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.testing.contract import check_scheduler
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs
from simsched.workloads.taskgraph import TaskGraph

PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)


def _jobs(seed: int, sizes: list[int], kind: str | None = None) -> list[TaskGraph]:
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        g = random_dag(n, rng=rng)
        if kind is not None:
            g = TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=g.work, kind=kind)
        out.append(g)
    return out


class Snoop:
    """Tries every door of the view; records what it finds about tasks that have not arrived."""

    name = "snoop"

    def __init__(self, full: Problem) -> None:
        self.full = full  # the test's copy, to know what the future is; never read by decide
        self.findings: list[str] = []
        self.decisions = 0

    def _look(self, problem: Problem, now: float, view=None) -> None:
        g, full = problem.graph, self.full.graph
        arrived_names = {full.names[i] for i in np.flatnonzero(full.arrival <= now)}
        future_names = set(full.names) - arrived_names
        k = problem.n_tasks
        found = self.findings
        if k != len(arrived_names):
            found.append(f"n_tasks {k} at {now}, {len(arrived_names)} arrived")
        if set(g.names) != arrived_names or len(g) != k:
            found.append("names of tasks not arrived")
        for name in future_names:
            if name in g._index:
                found.append(f"name index knows {name}")
            try:
                g.index(name)
                found.append(f"index({name}) answered")
            except KeyError:
                pass
        if g.arrival.size and float(g.arrival.max()) > now:
            found.append("an arrival time in the future")
        future_kinds = set(full.kind_names[int(c)] for c in full.kind[full.arrival > now]) - \
            set(full.kind_names[int(c)] for c in full.kind[full.arrival <= now])
        if future_kinds & set(g.kind_names):
            found.append(f"kind names of future tasks {future_kinds & set(g.kind_names)}")
        for name in g.__slots__:
            v = getattr(g, name)
            if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > max(k + 1, g.n_edges):
                found.append(f"graph.{name} has {v.shape[0]} rows")
        if g.n_edges and int(max(g.edge_src.max(), g.edge_dst.max())) >= k:
            found.append("an edge to a task not arrived")
        for attr in ("W", "eligible", "mean_cost", "min_cost"):
            if getattr(problem, attr).shape[0] != k:
                found.append(f"problem.{attr} has {getattr(problem, attr).shape[0]} rows")
        if problem.mean_transfer.shape[0] != g.n_edges:
            found.append("problem.mean_transfer covers edges not visible")
        for name in Problem.__slots__:
            v = getattr(problem, name)
            if isinstance(v, np.ndarray) and v.ndim and v.shape[0] > max(k, g.n_edges) \
                    and name not in arrived.PROBLEM_SHARED:
                found.append(f"problem.{name} has {v.shape[0]} rows")
        with pytest.raises(IndexError):
            problem.cost_row(k)
        if view is not None:
            if view.processor.shape != (k,) or view.finish.shape != (k,):
                found.append("view arrays cover tasks not arrived")
            if view.ready.size and int(view.ready.max()) >= k:
                found.append("a ready task not arrived")

    def reset(self, problem: Problem, rng) -> None:
        self._look(problem, float(self.full.graph.arrival.min()))  # reset comes with the first arrival
        self.mct = registry.create("mct")
        self.mct.reset(problem, rng)

    def decide(self, view):
        self.decisions += 1
        self._look(view.problem, view.now, view)
        return self.mct.decide(view)


def test_a_policy_trying_every_door_finds_nothing_of_the_future() -> None:
    graphs = _jobs(1, [6, 4]) + _jobs(2, [5], kind="secret") + _jobs(3, [7])
    js = merge_jobs(graphs, [0.0, 3.0, 9.0, 20.0])
    prob = Problem(js.graph, PLATFORM)
    snoop = Snoop(prob)
    s, _ = run_online(prob, snoop)
    assert snoop.decisions > 3
    assert sorted(set(snoop.findings)) == []
    assert np.isfinite(s.finish).all()


def test_reset_waits_for_the_first_arrival() -> None:
    js = merge_jobs(_jobs(4, [3, 3]), [5.0, 8.0])  # nothing arrives at 0
    seen = []

    class First:
        name = "first"

        def reset(self, problem, rng):
            seen.append(problem.n_tasks)
            self.inner = registry.create("srjf-eft")
            self.inner.reset(problem, rng)

        def decide(self, view):
            return self.inner.decide(view)

    run_online(Problem(js.graph, PLATFORM), First())
    assert seen == [3]


def _decisions(problem: Problem, name: str, until: float) -> list[tuple[float, str, int]]:
    log: list[tuple[float, str, int]] = []

    class Rec:
        def __init__(self, inner):
            self.inner, self.name = inner, inner.name

        def reset(self, problem, rng):
            self.inner.reset(problem, rng)

        def decide(self, view):
            out = list(self.inner.decide(view))
            log.extend((view.now, view.problem.graph.names[t], int(p)) for t, p in out)
            return out

    run_online(problem, Rec(registry.create(name)), None, np.random.default_rng(7))
    return [d for d in log if d[0] < until]


@pytest.mark.parametrize("name", registry.names(("online",)))
def test_every_online_scheduler_ignores_jobs_that_have_not_arrived(name: str) -> None:
    """The stream's first three jobs are the same; every job from t = 12 on is different (other
    sizes, kinds, costs, more of them).  Decisions before 12 must not change."""
    head = _jobs(11, [6, 5, 4])
    a = merge_jobs(head + _jobs(12, [8, 3]), [0.0, 2.0, 6.0, 12.0, 15.0])
    b = merge_jobs(head + _jobs(13, [2, 9, 12], kind="other"), [0.0, 2.0, 6.0, 12.0, 13.0, 30.0])
    da = _decisions(Problem(a.graph, PLATFORM), name, 12.0)
    db = _decisions(Problem(b.graph, PLATFORM), name, 12.0)
    assert da, "no decision before the later jobs arrive: the test would prove nothing"
    assert da == db


def test_arrivals_out_of_index_order_are_numbered_by_arrival() -> None:
    """Tasks whose arrival decreases with their index: the policy sees them in arrival order, and
    the schedule equals that of the same problem with its tasks sorted by arrival."""
    rng = np.random.default_rng(5)
    n = 12
    arrival = np.round(rng.uniform(0, 20, n), 1)
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if arrival[i] <= arrival[j] and rng.random() < 0.2]
    work = rng.uniform(1, 10, n)
    g = TaskGraph([f"t{i}" for i in range(n)], edges, rng.uniform(0, 3, len(edges)), work=work, arrival=arrival)
    order = np.argsort(arrival, kind="stable")
    assert (order != np.arange(n)).any()
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    sorted_g = TaskGraph([g.names[i] for i in order], [(pos[a], pos[b]) for a, b in edges], g.edge_data,
                         work=work[order], arrival=arrival[order])
    for name in ("mct", "srjf-eft", "minmin"):
        s1, _ = run_online(Problem(g, PLATFORM), registry.create(name))
        s2, _ = run_online(Problem(sorted_g, PLATFORM), registry.create(name))
        np.testing.assert_array_equal(s1.start[order], s2.start)
        np.testing.assert_array_equal(s1.processor[order], s2.processor)
    snoop = Snoop(Problem(g, PLATFORM))
    run_online(Problem(g, PLATFORM), snoop)
    assert snoop.findings == []


def test_every_slot_is_classified() -> None:
    """A slot added to Problem or TaskGraph must be classified in simsched.simulator.arrived first."""
    known = set(arrived.PROBLEM_PER_TASK + arrived.PROBLEM_PER_EDGE + arrived.PROBLEM_DROPPED + arrived.PROBLEM_SHARED)
    assert set(Problem.__slots__) == known
    per_task = {"work", "kind", "arrival", "priority", "memory", "cores", "cost", "procs_min", "procs_max", "serial",
                "downey", "same_host"}
    shared = {"gang"}  # "some task may need several processors": kept from the whole graph (O(1) per view)
    assert set(TaskGraph.__slots__) == arrived.GRAPH_SLOTS_HANDLED | per_task | shared


def test_restrict_gives_the_same_costs_and_ranks() -> None:
    from simsched.schedulers.heft import upward_rank

    js = merge_jobs(_jobs(8, [5, 7, 3]), [0.0, 1.0, 2.0])
    for prob in (Problem(js.graph, PLATFORM), Problem(random_dag(15, processors=4, rng=np.random.default_rng(2)),
                                                             PLATFORM)):
        k = prob.n_tasks - 3
        sub = arrived.restrict(prob, k)
        np.testing.assert_array_equal(sub.W, prob.W[:k])
        np.testing.assert_array_equal(sub.mean_cost, prob.mean_cost[:k])
        if arrived.new_block(prob, k) is not None:  # closed: ranks of a prefix are the prefix of ranks
            np.testing.assert_array_equal(upward_rank(sub), upward_rank(prob)[:k])
        assert arrived.restrict(prob, prob.n_tasks) is prob


class FramePeeker:
    """Breaks the boundary by reflection (reads the engine's full problem from the caller's frame):
    the contract's no-future check must catch it."""

    name = "frame-peeker"

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, view):
        frame = sys._getframe(1)
        while not hasattr(frame.f_locals.get("self"), "arrivals"):  # up to the engine's run
            frame = frame.f_back
        full = frame.f_locals["self"].problem
        p = full.n_tasks % view.problem.n_processors  # depends on how many tasks will ever arrive
        return [(int(t), p) for t in view.ready if view.problem.eligible[int(t), p]] or \
            [(int(view.ready[0]), int(np.flatnonzero(view.problem.eligible[int(view.ready[0])])[0]))]


def test_the_contract_catches_a_policy_that_reads_the_future() -> None:
    from simsched.testing.strategies import ProblemSpace

    space = ProblemSpace(max_tasks=8, min_processors=3, max_processors=4, arrivals=10.0)
    report = check_scheduler(FramePeeker(), examples=30, properties=["no-future"], space=space)
    assert not report.passed
    assert any(d.category == "sees-the-future" for d in report.defects)
    assert check_scheduler("srjf-eft", examples=10, properties=["no-future"]).passed


def test_the_engines_indexed_cut_equals_the_plain_one() -> None:
    """PrefixIndex (the engine's O(1) shortcut per arrival) gives the very arrays the plain cut gives,
    for closed prefixes of a stream and for prefixes an edge crosses."""
    js = merge_jobs(_jobs(21, [5, 1, 7, 3]), [0.0, 1.0, 2.0, 3.0])
    rng = np.random.default_rng(0)
    crossing = random_dag(12, rng=rng)  # edges join early and late tasks: no prefix is closed
    for prob in (Problem(js.graph, PLATFORM), Problem(crossing, PLATFORM)):
        index = arrived.PrefixIndex(prob.graph)
        for k in range(1, prob.n_tasks):
            a, b = arrived.restrict(prob, k, index), arrived.restrict(prob, k)
            for slot in TaskGraph.__slots__:
                va, vb = getattr(a.graph, slot), getattr(b.graph, slot)
                if isinstance(va, np.ndarray):
                    np.testing.assert_array_equal(va, vb, err_msg=slot)
                elif slot != "_index":
                    assert va == vb, slot
            np.testing.assert_array_equal(a.W, b.W)
