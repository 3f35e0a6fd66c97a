"""The stream engine's speed work (issue #31) leaves every schedule float-identical to before:

* the shipped stream scenarios and ``bench streams`` problems give the schedules whose digests were
  computed on main before the change (``tests/data/stream_schedule_digests.json``);
* on random streams (hypothesis: jobs crossing, arrivals out of index order, noise) the engine with
  its O(1) prefix cut equals the reference path — the plain copying cut
  (:func:`simsched.simulator.arrived.restrict` without an index), with the engine's plain two-event
  start — decision for decision, and every visible problem a policy sees is the same, array for array;
* the doubling buffers hold only arrived rows and are read-only to a policy;
* ``bench streams`` times the engine on a replay whose schedule is the recorded run's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import DIGESTS, schedule_digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.schedulers import registry
from simsched.simulator import arrived
from simsched.simulator.engine import Disruptions, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals
from simsched.workloads.taskgraph import TaskGraph

PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)
FAR = Disruptions(down_trace=((0, 1e12, 1e12 + 1.0),))  # never happens; forces the plain two-event path
POLICIES = ["mct", "srjf-eft", "minmin", "fair-eft", "online-heft", "olb"]


FAST_SCENARIOS = ("scenarios/streams/trace.yaml", "scenarios/streams/capacity_stream.yaml",
                  "scenarios/energy/power_off.yaml")


def _scenario_cases(fast: bool) -> list[tuple[str, str]]:
    cases = [tuple(k.split("::")) for k in sorted(DIGESTS["scenarios"])]
    return [c for c in cases if (c[0] in FAST_SCENARIOS) == fast]


def _check_scenario(path: str, name: str) -> None:
    from simsched.run.streams import simulate_stream
    from simsched.scenario.load import load_scenario

    root = Path(__file__).resolve().parents[1]
    sc = load_scenario(root / path, construct=True)
    spec = next(s for s in sc.schedulers if getattr(s, "name", str(s)) == name)
    assert schedule_digest(simulate_stream(sc, spec, sc.seed).schedule) == DIGESTS["scenarios"][f"{path}::{name}"]


@pytest.mark.parametrize("path,name", _scenario_cases(fast=True))
def test_shipped_stream_scenarios_keep_their_schedules(path: str, name: str) -> None:
    _check_scenario(path, name)


@pytest.mark.slow
@pytest.mark.parametrize("path,name", _scenario_cases(fast=False))
def test_every_shipped_stream_scenario_keeps_its_schedules(path: str, name: str) -> None:
    _check_scenario(path, name)


@pytest.mark.parametrize("key", sorted(k for k in DIGESTS["bench"] if k.startswith("bench:30x20")))
def test_bench_stream_problems_keep_their_schedules_events_and_decisions(key: str) -> None:
    from simsched.bench.streams import _stream_problem

    size, name = key.removeprefix("bench:").split("::")
    jobs, procs = map(int, size.split("x"))
    problem, _ = _stream_problem(jobs, procs, seed=3)
    schedule, stats = run_online(problem, registry.create(name))
    assert [schedule_digest(schedule), stats.events, stats.decisions] == DIGESTS["bench"][key]


# ----------------------------------------------------------------------------- reference path
class Witness:
    """Wraps a registered policy; records, at every decision, its assignments and a fingerprint of
    everything the visible problem shows (every TaskGraph slot, the problem's per-task arrays)."""

    def __init__(self, name: str) -> None:
        self.inner, self.name, self.seen = registry.create(name), name, []

    def reset(self, problem, rng) -> None:
        self.inner.reset(problem, rng)

    def decide(self, view):
        p, g = view.problem, view.problem.graph
        parts = [g.n_tasks, len(g), tuple(g.names), g.kind_names]
        for slot in TaskGraph.__slots__:
            v = getattr(g, slot)
            if isinstance(v, np.ndarray):
                parts.append((slot, v.dtype.str, v.shape, v.tobytes()))
        parts += [p.W.tobytes(), p.eligible.tobytes(), p.mean_cost.tobytes(), view.ready.tobytes(),
                  view.processor.tobytes(), view.finish.tobytes(), view.available.tobytes(), view.idle.tobytes()]
        out = list(self.inner.decide(view))
        self.seen.append((view.now, hash(tuple(parts)), [(int(t), int(q)) for t, q in out]))
        return out


def _plain_visible(self, k: int):
    """ArrivedProblems.visible as the reference: the plain copying cut, no PrefixIndex."""
    if k != self._k:
        self._visible = arrived.restrict(self.problem, k if self.order is None else self.order[:k])
        self._k = k
    return self._visible


def _stream_problem(seed: int, n_jobs: int, rate: float, shuffle: bool, cross: bool) -> Problem:
    rng = np.random.default_rng(seed)
    graphs = [random_dag(int(rng.integers(1, 12)), processors=4, ccr=1.0, rng=rng) for _ in range(n_jobs)]
    g = merge_jobs(graphs, poisson_arrivals(rate, rng, count=n_jobs)).graph
    if cross or shuffle:
        n = g.n_tasks
        edges = np.stack([g.edge_src, g.edge_dst], axis=1)
        data = g.edge_data
        arrival = g.arrival.copy()
        if cross and n > 2 and not ((g.edge_src == 0) & (g.edge_dst == n - 1)).any():
            # an edge from the first task to the last one: no prefix is closed after it
            edges = np.concatenate([edges, [[0, n - 1]]])
            data = np.concatenate([data, [1.5]])
        if shuffle:  # the same stream with its tasks numbered backwards: visible index = arrival order
            perm = np.arange(n)[::-1]
            pos = np.empty(n, dtype=np.int64)
            pos[perm] = np.arange(n)
            edges, arrival = pos[edges], arrival[perm]
            g = TaskGraph([g.names[i] for i in perm], edges, data, work=g.work[perm], arrival=arrival)
        else:
            g = TaskGraph(g.names, edges, data, work=g.work, arrival=arrival)
    return Problem(g, PLATFORM)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(1, 7), rate=st.floats(0.02, 3.0),
       shuffle=st.booleans(), cross=st.booleans(), noisy=st.booleans(), policy=st.sampled_from(POLICIES))
def test_fast_engine_equals_the_reference_path(seed, n_jobs, rate, shuffle, cross, noisy, policy) -> None:
    prob = _stream_problem(seed, n_jobs, rate, shuffle, cross)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    fast = Witness(policy)
    s1, st1 = run_online(prob, fast, factors, np.random.default_rng(seed))
    fast_visible = arrived.ArrivedProblems.visible
    arrived.ArrivedProblems.visible = _plain_visible
    try:
        ref = Witness(policy)
        s2, st2 = run_online(prob, ref, factors, np.random.default_rng(seed), FAR)
    finally:
        arrived.ArrivedProblems.visible = fast_visible
    assert fast.seen == ref.seen
    assert s1.processor.tolist() == s2.processor.tolist()
    assert s1.start.tolist() == s2.start.tolist() and s1.finish.tolist() == s2.finish.tolist()
    assert st1.decisions == st2.decisions


# ----------------------------------------------------------------------------- the O(1) cut
def test_prefix_cut_is_lazy_and_equals_the_plain_cut() -> None:
    js = merge_jobs([random_dag(n, rng=np.random.default_rng(n)) for n in (4, 6, 3)], [0.0, 1.0, 2.0])
    prob = Problem(js.graph, PLATFORM)
    index = arrived.PrefixIndex(prob.graph)
    for k in (4, 10, 12):
        fast, plain = arrived.restrict(prob, k, index), arrived.restrict(prob, k)
        g = fast.graph
        assert isinstance(g, TaskGraph) and g.n_tasks == len(g) == k
        assert g.names == plain.graph.names and len(g.names) == k
        np.testing.assert_array_equal(g.topo_order, plain.graph.topo_order)
        assert not g.topo_order.flags.writeable
        assert g.index(plain.graph.names[-1]) == k - 1
        if k < prob.n_tasks:
            with pytest.raises(KeyError):
                g.index(prob.graph.names[k])  # a task that has not arrived has no name yet


def test_doubling_buffers_hold_only_what_arrived() -> None:
    index = arrived.PrefixIndex(random_dag(5, rng=np.random.default_rng(0)))
    full = np.arange(5000, dtype=np.float64) + 1.0  # writeable: would be copied
    caps = []
    for k in (1, 3, 900, 1025, 3000, 5000):
        out = index.prefix_copy("x", full, k)
        np.testing.assert_array_equal(out, full[:k])
        assert not out.flags.writeable and not np.shares_memory(out, full)
        with pytest.raises(ValueError):
            out[0] = -1.0
        buf = out.base
        caps.append(buf.shape[0])
        assert (buf[k:] == 0).all()  # nothing past the arrived rows
    assert caps == [1024, 1024, 1024, 2048, 4096, 8192]  # powers of two of k, never sized from n
    other = -full  # another problem's array on the same graph: its own rows, not the buffer's
    np.testing.assert_array_equal(index.prefix_copy("x", other, 3000), other[:3000])
    np.testing.assert_array_equal(index.prefix_copy("x", full, 10), full[:10])


def test_bench_replay_is_the_recorded_run() -> None:
    from simsched.bench.streams import measure_stream

    r = measure_stream(4, 3)
    assert r["replay_same"] and r["valid"]
    assert r["events"] > r["tasks"] > 0 and r["engine_cpu_s"] > 0
