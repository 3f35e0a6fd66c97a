"""Random job streams, disruptions and power models for the compiled stream engine's tests, and the checks
that hold its runs equal to the SimPy engine's (``tests/test_stream_compiled*.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.schedulers.ecs import OnlineECS
from simsched.schedulers.jobaware import FairShareEFT, ShortestJobEFT
from simsched.schedulers.online import MCT
from simsched.simulator.engine import Disruptions, compiled_world, run_online
from simsched.simulator.platform import Link, Platform, Processor
from simsched.simulator.power import PowerTables, ProcessorPower
from simsched.simulator.power.model import PState
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals
from simsched.workloads.taskgraph import TaskGraph


class Recorded:
    """MCT (or ``inner``) with its decisions kept (a Python class: it runs on SimPy)."""

    name = "recorded-mct"

    def __init__(self, inner=None) -> None:
        self.inner, self.log = MCT() if inner is None else inner, []

    def reset(self, problem, rng) -> None:
        self.inner.reset(problem, rng)

    def decide(self, view):
        out = [tuple(map(int, item)) for item in self.inner.decide(view)]
        self.log.append(out)
        return out


def same(a, b) -> None:
    assert a.processor.tolist() == b.processor.tolist()
    assert a.start.tolist() == b.start.tolist()
    assert a.finish.tolist() == b.finish.tolist()


def same_world(a, b) -> None:
    """The same failures, restarts, slowed tasks, lost work and log (every attempt and down interval)."""
    assert (a.failures, a.restarts, a.slowed_tasks, a.lost_work) == (b.failures, b.restarts, b.slowed_tasks,
                                                                     b.lost_work)
    assert (a.log is None) == (b.log is None)
    if a.log is not None:
        assert (a.log.attempts, a.log.down, a.log.pstates) == (b.log.attempts, b.log.down, b.log.pstates)


STREAMS = {"seed": st.integers(0, 10_000), "n_jobs": st.integers(1, 8), "rate": st.floats(0.02, 3.0),
           "ties": st.booleans(), "dense": st.booleans(), "zero": st.booleans(), "m": st.sampled_from([1, 2, 4, 7]),
           "per_link": st.booleans(), "hetero": st.booleans(), "noisy": st.booleans()}
"""The random streams' draws (:func:`stream`, :func:`plat`, noise factors)."""
EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def plat(m: int, per_link: bool, hetero: bool) -> Platform:
    procs = [Processor(f"p{i}", type="gpu" if hetero and i == m - 1 else "cpu",
                       speed=2.5 if hetero and i % 2 else 1.0, host=f"h{i // 2}") for i in range(m)]
    links = [Link("p0", f"p{m - 1}", bandwidth=0.5, latency=1.0)] if per_link and m > 1 else []
    return Platform.uniform(procs, bandwidth=4.0, latency=0.1, host_bandwidth=20.0 if per_link else float("inf"),
                            links=links)


def stream(seed: int, n_jobs: int, rate: float, ties: bool, dense: bool, zero: bool, platform: Platform,
            priorities: bool = False, unnamed: bool = False, gangs: str | None = None) -> Problem:
    """A random stream; ``priorities``: a random priority per task (-1 to 2; a job's is its tasks'
    maximum); ``unnamed``: task names without the ``j<k>.`` prefixes (jobs are then the components);
    ``gangs``: multi-processor tasks (:func:`gang_fields`)."""
    rng = np.random.default_rng(seed)
    graphs = [random_dag(int(rng.integers(1, 12)), processors=platform.n_processors, ccr=1.0, rng=rng)
              for _ in range(n_jobs)]
    arrivals = poisson_arrivals(rate, rng, count=n_jobs)
    if ties:  # several jobs at one instant
        arrivals = np.floor(np.asarray(arrivals) / 3.0) * 3.0
    g = merge_jobs(graphs, arrivals).graph
    work = g.work.copy()
    data = g.edge_data.copy()
    if zero:
        work[::3] = 0.0
        data[::2] = 0.0
    edges = np.stack([g.edge_src, g.edge_dst], axis=1)
    extra = {"priority": rng.integers(-1, 3, g.n_tasks).astype(float)} if priorities else {}
    if gangs is not None:
        extra.update(gang_fields(np.random.default_rng(seed + 41), g.n_tasks, platform, gangs))
    names = [f"t{i}" for i in range(g.n_tasks)] if unnamed else g.names
    if dense:  # an explicit cost matrix, some pairs ineligible
        cost = rng.uniform(0.0 if zero else 1.0, 30.0, (g.n_tasks, platform.n_processors))
        if platform.n_processors > 1:
            cost[rng.random(cost.shape) < 0.2] = np.inf
            cost[np.arange(g.n_tasks), rng.integers(0, platform.n_processors, g.n_tasks)] = 5.0
        if gangs is not None:  # a task needing several processors may run on every one
            cost[extra["procs"][:, 0] > 1] = 5.0
        g = TaskGraph(names, edges, data, cost=cost, arrival=g.arrival, **extra)
    else:
        g = TaskGraph(names, edges, data, work=work, arrival=g.arrival, **extra)
    return Problem(g, platform)


def gang_fields(rng: np.random.Generator, n: int, platform: Platform, gangs: str) -> dict:
    """TaskGraph fields of random multi-processor tasks on ``platform``: ``"moldable1"``: about half the tasks
    moldable from 1 to 2..m+1 processors (Amdahl serial fractions, some Downey models); ``"rigid"``: about a
    third need 2..(the most processors of one type) at once; ``"mixed"``: both, moldable ones from 1 or 2
    up; ``same_host`` on some of those that one host's processors of one type can hold."""
    m = platform.n_processors
    top = int(np.bincount(platform.type_index).max())
    pair = platform.type_index * (int(platform.host_index.max()) + 1) + platform.host_index
    on_host = int(np.bincount(pair).max())
    lo, hi = np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    pick = rng.random(n)
    pick[0] = 1.0 if gangs == "rigid" else 0.0  # at least one of the kind asked for (where the platform allows)
    if gangs in ("moldable1", "mixed"):
        mold = pick < 0.5
        lo[mold] = 1 if gangs == "moldable1" else np.minimum(rng.integers(1, 3, n), top)[mold]
        hi[mold] = np.maximum(lo[mold], rng.integers(2, m + 2, n)[mold])
    if gangs in ("rigid", "mixed") and top > 1:
        rigid = pick > 0.66
        lo[rigid] = hi[rigid] = rng.integers(2, top + 1, n)[rigid]
    downey = np.zeros((n, 2))
    by_downey = rng.random(n) < 0.3
    downey[by_downey, 0] = rng.uniform(1.0, 6.0, n)[by_downey]
    downey[by_downey, 1] = rng.choice([0.0, 0.5, 1.0, 3.0], n)[by_downey]
    serial = np.where(by_downey, 0.0, rng.choice([0.0, 0.1, 0.37], n))
    return {"procs": np.stack([lo, hi], axis=1), "serial": serial, "downey": downey,
            "same_host": (rng.random(n) < 0.3) & (lo <= on_host)}


JOB_AWARE = {"srjf": lambda: ShortestJobEFT(), "srjf-late": lambda: ShortestJobEFT(late_binding=True),
             "fair": lambda: FairShareEFT(), "fair-alpha": lambda: FairShareEFT(alpha=0.7),
             "fair-small": lambda: FairShareEFT(alpha=-0.5)}


def random_power(seed: int, m: int) -> PowerTables:
    """A random power model: each processor 1 to 3 P-states (the rest padded with NaN), speeds from 1.0
    down, busy watts falling with the speed (some P-states drawing 0 W busy, so energies tie at 0)."""
    rng = np.random.default_rng(seed + 29)
    entries = []
    for _ in range(m):
        k = int(rng.integers(1, 4))
        speed = np.concatenate([[1.0], np.sort(rng.uniform(0.3, 1.0, k - 1))[::-1]])
        busy = np.sort(rng.uniform(0.0, 300.0, k))[::-1] * (rng.random(k) > 0.1)
        entries.append(ProcessorPower(tuple(PState(float(s), float(b), float(b) / 4) for s, b in zip(speed, busy))))
    return PowerTables.build(entries)


def ecs_with(tables: PowerTables | None) -> OnlineECS:
    policy = OnlineECS()
    policy.use_power(tables)
    return policy


def random_world(seed: int, m: int, fail: bool, slow: bool, trace: int, zero: bool, scale: float = 1.0) -> Disruptions:
    """Random failures (per-processor MTBF, some processors never failing; ``zero``: repairs of length 0 and
    slowdowns of length 0), stragglers and ``trace`` traced down intervals that may overlap each other and
    the random ones (at least one kind of disruption); every time ``scale`` times longer (for tasks that
    long: x 1.0 is exact)."""
    rng = np.random.default_rng(seed + 17)
    rate = np.where(rng.random(m) < 0.3, 0.0, rng.uniform(0.002, 0.04, m) / scale) if fail else 0.0
    mttr = 0.0 if zero else rng.uniform(0.5, 15.0, m) * scale
    down = tuple((int(rng.integers(0, m)), float(a * scale), float((a + rng.uniform(0.1, 20.0)) * scale))
                 for a in np.sort(rng.uniform(0.0, 60.0, trace)))
    if not (fail or slow or down):
        slow = True
    return Disruptions(failure_rate=rate, repair_time=mttr, down_trace=down,
                       slowdown_rate=float(rng.uniform(0.005, 0.05)) / scale if slow else 0.0,
                       slowdown_duration=0.0 if zero else float(rng.uniform(1.0, 30.0)) * scale, slowdown=2.5)


def run_or_error(*args, **kwargs):
    """``run_online``'s result, or the error it raised (both engines refuse alike)."""
    from simsched.limits import LimitError

    try:
        return run_online(*args, **kwargs)
    except (SimschedError, LimitError) as exc:
        return type(exc), str(exc)


def short_world(*args, world_of=compiled_world.world_of):
    """:func:`~simsched.simulator.engine.compiled_world.world_of` with streams first drawn a few draws long."""
    world = world_of(*args)
    if world is not None:
        world.span = 0.0
    return world


def small_stream() -> Problem:
    rng = np.random.default_rng(1)
    js = merge_jobs([random_dag(6, rng=rng) for _ in range(3)], [0.0, 1.0, 1.0])
    return Problem(js.graph, plat(3, False, False))
