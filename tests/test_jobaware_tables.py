"""The job-aware policies (``srjf-eft``, ``fair-eft``) extend their per-job tables at each arrival
(O(new job)) instead of rebuilding them over every arrived task: after every arrival the extended
tables equal, array for array and float for float, the ones a rebuild over the visible problem makes,
and the schedules are those of a policy that rebuilds at every arrival."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.schedulers.jobaware import FairShareEFT, ShortestJobEFT, _JobAware
from simsched.simulator.engine import run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals
from simsched.workloads.taskgraph import TaskGraph

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)
TABLES = ("jobs", "cost", "job_priority", "rank")


def _tables(policy: _JobAware) -> dict[str, bytes]:
    out = {name: np.asarray(getattr(policy, name)).tobytes() for name in TABLES}
    out["n_jobs"] = str(policy.n_jobs).encode()
    out["job_tasks"] = b"|".join(t.tobytes() for t in policy.job_tasks)
    if isinstance(policy, FairShareEFT):
        out["weight"] = policy.weight.tobytes()
    return out


def _checking(cls: type[_JobAware]) -> type[_JobAware]:
    """``cls`` checking after every arrival that its extended tables are a rebuild's."""

    class Checked(cls):  # type: ignore[valid-type, misc]
        extended = 0

        def grow(self, problem: Problem) -> None:
            n_jobs = self.n_jobs
            super().grow(problem)
            self.extended += self._key_ids is not None and self.n_jobs > n_jobs
            after = _tables(self)
            self._job_tables(problem)  # the rebuild over every arrived task
            assert _tables(self) == after

    return Checked


def _rebuilding(cls: type[_JobAware]) -> type[_JobAware]:
    """``cls`` as it was: its tables rebuilt over every arrived task at each arrival."""

    class Rebuilt(cls):  # type: ignore[valid-type, misc]
        def _new_jobs(self, problem, seen, block) -> bool:
            return False

    return Rebuilt


def _stream(seed: int, n_jobs: int, rate: float, priorities: bool) -> Problem:
    rng = np.random.default_rng(seed)
    graphs = [random_dag(int(rng.integers(1, 9)), processors=4, ccr=1.0, rng=rng) for _ in range(n_jobs)]
    g = merge_jobs(graphs, poisson_arrivals(rate, rng, count=n_jobs)).graph
    if priorities:
        g = TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=g.work,
                      arrival=g.arrival, priority=rng.integers(-2, 3, g.n_tasks).astype(float))
    return Problem(g, PLATFORM)


POLICIES = {"srjf-eft": lambda c: c(), "srjf-eft late": lambda c: c(late_binding=True),
            "fair-eft": lambda c: c(), "fair-eft alpha": lambda c: c(alpha=-0.7)}


def _make(key: str, wrap) -> _JobAware:
    cls = ShortestJobEFT if key.startswith("srjf") else FairShareEFT
    return POLICIES[key](wrap(cls))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(1, 8), rate=st.floats(0.05, 3.0),
       priorities=st.booleans(), key=st.sampled_from(sorted(POLICIES)))
def test_extended_tables_are_a_rebuild_and_schedules_unchanged(seed, n_jobs, rate, priorities, key) -> None:
    prob = _stream(seed, n_jobs, rate, priorities)
    checked = _make(key, _checking)
    s1, st1 = run_online(prob, checked, None, np.random.default_rng(seed))
    assert checked.extended >= (np.unique(prob.graph.arrival).size > 1)  # the extension path ran
    s2, st2 = run_online(prob, _make(key, _rebuilding), None, np.random.default_rng(seed))
    assert s1.processor.tolist() == s2.processor.tolist()
    assert s1.start.tolist() == s2.start.tolist() and s1.finish.tolist() == s2.finish.tolist()
    assert st1.decisions == st2.decisions


def test_a_cluster_log_extends_at_every_arrival_and_keeps_its_schedule() -> None:
    """The first 150 jobs of the bundled Lublin log on the batch path (one rigid task per job on 256
    processors, gangs included): every arrival after the first extends the tables (none rebuilds),
    each extension equals a rebuild, and the run equals the rebuilding policy's."""
    from simsched.run.streams import simulate_stream
    from simsched.scenario.load import load_scenario
    from simsched.workloads.importers.swf import make_trace
    from simsched.workloads.jobs import trace_stream

    sc = load_scenario(ROOT / "scenarios/cluster/lublin_256.yaml", construct=True)
    tr = sc.workload.options["batch"].trace
    head = make_trace(tr.submit[:150], tr.run[:150], tr.procs[:150], tr.requested[:150], ids=tr.ids[:150])
    stream = trace_stream(head, sc.platform.n_processors)
    checked = _make("srjf-eft", _checking)
    a = simulate_stream(sc, "srjf-eft", 0, stream=stream, scheduler=checked).schedule
    b = simulate_stream(sc, "srjf-eft", 0, stream=stream, scheduler=_make("srjf-eft", _rebuilding)).schedule
    assert checked.extended == stream.n_jobs - 1
    assert a.start.tolist() == b.start.tolist() and a.finish.tolist() == b.finish.tolist()
    assert a.processor.tolist() == b.processor.tolist() and (a.gang.k > 1).any()


def test_a_task_joining_a_job_already_here_rebuilds() -> None:
    """A job whose tasks arrive at two times (``j0.`` names at 0 and at 5): the second arrival adds a
    task to a job already here, so the tables are rebuilt, not extended, and still equal a rebuild."""
    g = TaskGraph(["j0.a", "j1.a", "j0.b"], [], [], work=[2.0, 1.0, 3.0], arrival=[0.0, 0.0, 5.0])
    checked = _make("srjf-eft", _checking)
    sched, _ = run_online(Problem(g, PLATFORM), checked)
    assert checked.extended == 0 and checked.n_jobs == 2
    assert [t.tolist() for t in checked.job_tasks] == [[0, 2], [1]]
    assert np.isfinite(sched.finish).all()
