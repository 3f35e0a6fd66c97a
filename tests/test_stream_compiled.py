"""The compiled stream engine gives the SimPy engine's schedules exactly (==, not approx):

* every shipped stream scenario's row of a compiled rule (MCT, Min-Min, Max-Min, the job-aware rules), failures
  and stragglers included, equals the schedule digest computed on the SimPy engine
  (``tests/data/stream_schedule_digests.json``) and the SimPy run's events, counters and failure log;
* random streams (hypothesis): jobs with arrival ties, noise, dense and structured costs, per-link and
  uniform networks, zero work and zero data, one processor — the same schedule, events, decisions and
  assignments as SimPy, for MCT, Min-Min, Max-Min and a replay of recorded decisions (and the job-aware
  rules, and ecs-online with random P-state tables, its P-states and a replay of its triples); and with
  random failures, repairs, outage traces, stragglers and P-states, their counters and log too;
* the shipped DVFS stream scenarios forced onto the compiled loop keep their pinned ``run --json`` digests;
* the choice: ``auto`` only for what qualifies, ``compiled`` refuses the rest with a reason, a replay
  that breaks the rules goes back to SimPy's error.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from helpers import DIGESTS, schedule_digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.schedulers.ecs import OnlineECS
from simsched.schedulers.jobaware import FairShareEFT, OnlineHEFT, ShortestJobEFT
from simsched.schedulers.online import MCT, MaxMin, MinMin
from simsched.simulator.engine import Disruptions, compiled, compiled_world, run_online
from simsched.simulator.platform import Link, Platform, Processor
from simsched.simulator.power import PowerTables, ProcessorPower
from simsched.simulator.power.model import PState
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals
from simsched.workloads.taskgraph import TaskGraph

pytestmark = pytest.mark.extra("fast")  # skipped, with the install command, without numba
ROOT = Path(__file__).resolve().parents[1]
MCT_SCENARIOS = sorted(k.split("::")[0] for k in DIGESTS["scenarios"] if k.endswith("::mct"))
RULES = ("::srjf-eft", "::fair-eft", "::online-heft", "::minmin", "::maxmin")  # the compiled rules beside MCT
JOB_ROWS = sorted(tuple(k.split("::")) for k in DIGESTS["scenarios"] if k.endswith(RULES))
FAST = ("scenarios/streams/trace.yaml", "scenarios/streams/capacity_stream.yaml", "scenarios/energy/power_off.yaml")


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


def _scenario(path: str, monkeypatch, minimum: int, name: str = "mct"):
    from simsched.run.streams import simulate_stream
    from simsched.scenario.load import load_scenario

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", minimum)
    sc = load_scenario(ROOT / path, construct=True)
    spec = next(s for s in sc.schedulers if getattr(s, "name", str(s)) == name)
    return simulate_stream(sc, spec, sc.seed)


def _check_scenario(path: str, monkeypatch, name: str = "mct") -> None:
    run = _scenario(path, monkeypatch, 0, name)  # auto: compiled whenever the run qualifies
    assert schedule_digest(run.schedule) == DIGESTS["scenarios"][f"{path}::{name}"]
    ref = _scenario(path, monkeypatch, 10**12, name)  # auto never compiles: SimPy
    assert ref.stats.engine == "simpy"
    same(run.schedule, ref.schedule)
    assert (run.stats.events, run.stats.decisions, run.stats.assignments) == \
        (ref.stats.events, ref.stats.decisions, ref.stats.assignments)
    assert run.stats.engine == "compiled"  # failures and stragglers included
    same_world(run.stats, ref.stats)
    if run.stats.pstate is not None or ref.stats.pstate is not None:  # a power model: P-state 0 throughout
        assert run.stats.pstate.tolist() == ref.stats.pstate.tolist()


@pytest.mark.parametrize("path", [p for p in MCT_SCENARIOS if p in FAST])
def test_shipped_stream_scenarios_compiled_equal_simpy(path: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in MCT_SCENARIOS if p not in FAST])
def test_every_shipped_stream_scenario_compiled_equals_simpy(path: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch)


def test_the_trace_scenario_does_run_compiled(monkeypatch) -> None:
    assert _scenario("scenarios/streams/trace.yaml", monkeypatch, 0).stats.engine == "compiled"


@pytest.mark.parametrize("path,name", [r for r in JOB_ROWS if r[0] in FAST])
def test_shipped_stream_scenarios_job_aware_compiled_equal_simpy(path: str, name: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch, name)
    assert _scenario(path, monkeypatch, 0, name).stats.engine == "compiled"


@pytest.mark.slow
@pytest.mark.parametrize("path,name", [r for r in JOB_ROWS if r[0] not in FAST])
def test_every_shipped_stream_scenario_job_aware_compiled_equals_simpy(path: str, name: str, monkeypatch) -> None:
    _check_scenario(path, monkeypatch, name)


@pytest.mark.parametrize("key", sorted(k for k in DIGESTS["bench"] if k.endswith(RULES)))
def test_bench_streams_job_aware_compiled_keep_their_pinned_schedules(key: str) -> None:
    """The pinned bench streams (recorded on SimPy before the compiled loop existed; 60x8 has more than
    ``AUTO_MIN_TASKS`` tasks, so ``auto`` now compiles it): the same digest, events and decisions."""
    from simsched.bench.streams import _stream_problem
    from simsched.schedulers import registry

    size, name = key.removeprefix("bench:").split("::")
    problem, _ = _stream_problem(*map(int, size.split("x")), seed=3)
    schedule, stats = run_online(problem, registry.create(name), engine="compiled")
    assert stats.engine == "compiled"
    assert [schedule_digest(schedule), stats.events, stats.decisions] == DIGESTS["bench"][key]


# ----------------------------------------------------------------------------- random streams
STREAMS = {"seed": st.integers(0, 10_000), "n_jobs": st.integers(1, 8), "rate": st.floats(0.02, 3.0),
           "ties": st.booleans(), "dense": st.booleans(), "zero": st.booleans(), "m": st.sampled_from([1, 2, 4, 7]),
           "per_link": st.booleans(), "hetero": st.booleans(), "noisy": st.booleans()}
"""The random streams' draws (:func:`_stream`, :func:`_platform`, noise factors)."""
EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _platform(m: int, per_link: bool, hetero: bool) -> Platform:
    procs = [Processor(f"p{i}", type="gpu" if hetero and i == m - 1 else "cpu",
                       speed=2.5 if hetero and i % 2 else 1.0, host=f"h{i // 2}") for i in range(m)]
    links = [Link("p0", f"p{m - 1}", bandwidth=0.5, latency=1.0)] if per_link and m > 1 else []
    return Platform.uniform(procs, bandwidth=4.0, latency=0.1, host_bandwidth=20.0 if per_link else float("inf"),
                            links=links)


def _stream(seed: int, n_jobs: int, rate: float, ties: bool, dense: bool, zero: bool, platform: Platform,
            priorities: bool = False, unnamed: bool = False, gangs: str | None = None) -> Problem:
    """A random stream; ``priorities``: a random priority per task (-1 to 2; a job's is its tasks'
    maximum); ``unnamed``: task names without the ``j<k>.`` prefixes (jobs are then the components);
    ``gangs``: multi-processor tasks (:func:`_gang_fields`)."""
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
        extra.update(_gang_fields(np.random.default_rng(seed + 41), g.n_tasks, platform, gangs))
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


def _gang_fields(rng: np.random.Generator, n: int, platform: Platform, gangs: str) -> dict:
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


@EXAMPLES
@given(**STREAMS)
def test_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link, hetero,
                                                 noisy) -> None:
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero))
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    rec = Recorded()
    s_ref, st_ref = run_online(prob, rec, factors, engine="simpy")
    s_mct, st_mct = run_online(prob, MCT(), factors, engine="compiled")
    assert st_mct.engine == "compiled" and st_ref.engine == "simpy"
    same(s_mct, s_ref)
    assert (st_mct.events, st_mct.decisions, st_mct.assignments) == (st_ref.events, st_ref.decisions,
                                                                     st_ref.assignments)
    s_rep, st_rep = run_online(prob, compiled.Replay(rec.log), factors, engine="compiled")
    same(s_rep, s_ref)
    assert st_rep.events == st_ref.events and st_rep.decisions == len(rec.log)
    s_py, _ = run_online(prob, MCT(), factors, engine="simpy")  # MCT itself on SimPy: the same
    same(s_py, s_ref)
    for batch in (MinMin, MaxMin):  # Min-Min and Max-Min: the batch board, compiled
        s_mm, st_mm = run_online(prob, batch(), factors, engine="simpy")
        s_mmc, st_mmc = run_online(prob, batch(), factors, engine="compiled")
        assert st_mmc.engine == "compiled"
        same(s_mmc, s_mm)
        assert (st_mmc.events, st_mmc.decisions, st_mmc.assignments) == (st_mm.events, st_mm.decisions,
                                                                         st_mm.assignments)


JOB_AWARE = {"srjf": lambda: ShortestJobEFT(), "srjf-late": lambda: ShortestJobEFT(late_binding=True),
             "fair": lambda: FairShareEFT(), "fair-alpha": lambda: FairShareEFT(alpha=0.7),
             "fair-small": lambda: FairShareEFT(alpha=-0.5)}


@EXAMPLES
@given(**STREAMS, priorities=st.booleans(), unnamed=st.booleans(),
       rule=st.sampled_from(sorted(JOB_AWARE)))
def test_job_aware_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                           hetero, noisy, priorities, unnamed, rule) -> None:
    """srjf-eft (queueing and late binding) and fair-eft (alpha 0 and not) in the compiled loop: SimPy's
    schedule, events, decisions and assignments exactly; and the tables built once for the whole stream
    are those the policy grew arrival by arrival on SimPy, bit for bit."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero), priorities, unnamed)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    ref_policy = JOB_AWARE[rule]()
    s_ref, st_ref = run_online(prob, ref_policy, factors, engine="simpy")
    s_c, st_c = run_online(prob, JOB_AWARE[rule](), factors, engine="compiled")
    assert st_c.engine == "compiled" and st_ref.engine == "simpy"
    same(s_c, s_ref)
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)
    tables = JOB_AWARE[rule]().compiled_tables(prob)
    assert tables.refusal(prob) is None
    grown = ref_policy  # after the SimPy run: its tables over every task (a decision followed the last arrival)
    for mine, theirs in ((tables.rank, grown.rank), (tables.job, grown.jobs), (tables.cost, grown.cost),
                         (tables.priority, grown.job_priority),
                         (tables.job_task, np.concatenate(grown.job_tasks))):
        assert np.array_equal(mine, theirs) and mine.dtype == np.asarray(theirs).dtype
    if rule.startswith("fair"):
        assert np.array_equal(tables.weight, grown.weight)
    assert np.array_equal(np.diff(tables.job_ptr), [t.size for t in grown.job_tasks])


@EXAMPLES
@given(**STREAMS, priorities=st.booleans())
def test_online_heft_compiled_equals_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                             hetero, noisy, priorities) -> None:
    """online-heft in the compiled loop (the ready task of highest rank, from a heap): SimPy's schedule,
    events, decisions and assignments exactly; its ranks, built once for the whole stream, are those the
    policy grew arrival by arrival on SimPy, bit for bit."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero), priorities)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    ref_policy = OnlineHEFT()
    s_ref, st_ref = run_online(prob, ref_policy, factors, engine="simpy")
    s_c, st_c = run_online(prob, OnlineHEFT(), factors, engine="compiled")
    tables = OnlineHEFT().compiled_tables(prob)
    assert st_c.engine == "compiled" and st_ref.engine == "simpy"
    same(s_c, s_ref)
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)
    assert tables.refusal(prob) is None and np.array_equal(tables.rank, ref_policy.rank)


GANG_BLIND = {"mct": MCT, "minmin": MinMin, "maxmin": MaxMin, "ecs-online": OnlineECS}


@EXAMPLES
@given(**STREAMS, rule=st.sampled_from(sorted(GANG_BLIND)), disrupted=st.booleans())
def test_moldable_tasks_at_one_processor_compiled_equal_simpy(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                              hetero, noisy, rule, disrupted) -> None:
    """Moldable tasks that may take one processor (``procs: [1, k]``, Amdahl and Downey) under the rules that
    place every task on one processor, with failures and stragglers or without, and a replay of their
    decisions: run at k = 1 as ordinary tasks on both engines, SimPy's schedule (naming no gang), events,
    decisions, assignments and failure log exactly."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero), gangs="moldable1")
    assert prob.graph.gang
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    d = _world(seed, m, True, True, 2, zero) if disrupted else None
    rec = Recorded(GANG_BLIND[rule]())
    runs = []
    for engine, policy in (("simpy", rec), ("compiled", GANG_BLIND[rule]()), ("compiled", compiled.Replay(rec.log))):
        out = _run_or_error(prob, policy, factors, disruptions=d, disruption_rng=np.random.default_rng(seed + 3),
                            engine=engine)
        runs.append(out)
    ref = runs[0]
    for got in runs[1:]:
        if isinstance(ref[0], type):  # refused before the run, alike
            assert got == ref
            continue
        assert got[1].engine == "compiled" and got[0].gang is None and ref[0].gang is None
        same(got[0], ref[0])
        assert (got[1].events, got[1].decisions, got[1].assignments) == (ref[1].events, ref[1].decisions,
                                                                         ref[1].assignments)
        same_world(got[1], ref[1])


GANG_RULES = {"online-heft": OnlineHEFT, **JOB_AWARE}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STREAMS, priorities=st.booleans(), gangs=st.sampled_from(["rigid", "mixed", "moldable1"]),
       rule=st.sampled_from(sorted(GANG_RULES)), power=st.booleans(), disrupted=st.booleans(), slow=st.booleans(),
       trace=st.integers(0, 3), short=st.booleans())
def test_gangs_compiled_equal_simpy_on_random_streams(seed, n_jobs, rate, ties, dense, zero, m, per_link, hetero,
                                                      noisy, priorities, gangs, rule, power, disrupted, slow, trace,
                                                      short) -> None:
    """Gang tasks (rigid, moldable from 1 or 2 processors up with Amdahl's and Downey's speedups, some on one
    host) placed by online-heft, srjf-eft and fair-eft in the compiled loop (srjf-eft's late binding places
    each on one processor, as on SimPy, which refuses one that needs several at once), with a random power
    model or without (every task at P-state 0), with random failures, repairs, traced outages and stragglers
    or without (a failed member drops its gang: the lost attempt logged on every member, the other members
    released or the gang taken out of their queues): SimPy's schedule with its ``Schedule.gang`` (every task's
    members, lead first), events, decisions, assignments, P-states, failure counters and log exactly, or
    SimPy's error, and the same one draw from ``disruption_rng``.  ``short``: the drawn streams and the gang
    store start short, so runs stop where one runs out and go again."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero), priorities, gangs=gangs)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    pslow = None
    if power:
        tables = _power(seed, m)
        pslow = tables.speed[:, :1] / tables.speed
    d = _world(seed, m, True, slow, trace, zero) if disrupted else None
    _same_gang_runs(prob, GANG_RULES[rule], factors, pslow, d, seed, short)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(6, 12), m=st.sampled_from([4, 7]),
       gangs=st.sampled_from(["rigid", "mixed"]), hetero=st.booleans(), slow=st.booleans(), trace=st.integers(0, 3))
def test_gangs_in_queues_under_failures_compiled_equal_simpy(seed, n_jobs, m, gangs, hetero, slow, trace) -> None:
    """Busy streams of gang tasks (jobs arriving close together, so gangs wait in queues behind each other and
    a failure drops gangs that run and gangs that wait, whose other members go on with their queues) under
    failures, stragglers and traced outages, for every job-aware rule: SimPy's run exactly, as in
    :func:`test_gangs_compiled_equal_simpy_on_random_streams`."""
    prob = _stream(seed, n_jobs, 0.3, False, False, False, _platform(m, False, hetero), True, gangs=gangs)
    d = _world(seed, m, True, slow, trace, False)
    for rule in sorted(GANG_RULES):
        _same_gang_runs(prob, GANG_RULES[rule], None, None, d, seed, False)


def _same_gang_runs(prob, make, factors, pslow, d, seed: int, short: bool) -> None:
    """The policy ``make()`` on SimPy and compiled (``short``: drawn streams and gang store first short) give
    the same schedule, gangs, events, decisions, assignments, P-states, failure log and next draw of the
    world's generator, or the same error."""
    runs = []
    for engine in ("simpy", "compiled"):
        world = np.random.default_rng(seed + 3)
        with mock.patch.object(compiled_world, "world_of", _short_world if short else compiled_world.world_of), \
                mock.patch.object(compiled, "_gang_args", _tight_store if short else compiled._gang_args):
            out = _run_or_error(prob, make(), factors, pstate_slowdown=pslow, disruptions=d, disruption_rng=world,
                                engine=engine)
        runs.append((out, world.random()))
    (ref, ref_next), (got, got_next) = runs
    assert got_next == ref_next
    if isinstance(ref[0], type):  # SimPy's error (late binding of a task needing several processors, ...)
        assert got == ref
        return
    (s_ref, st_ref), (s_c, st_c) = ref, got
    same_world(st_c, st_ref)
    assert (st_c.pstate is None) == (st_ref.pstate is None) == (pslow is None)
    if pslow is not None:
        assert st_c.pstate.tolist() == st_ref.pstate.tolist()
    assert st_c.engine == "compiled" and st_ref.engine == "simpy"
    same(s_c, s_ref)
    assert (s_c.gang is None) == (s_ref.gang is None)
    if s_ref.gang is not None:
        assert s_c.gang.ptr.tolist() == s_ref.gang.ptr.tolist()
        assert s_c.gang.members.tolist() == s_ref.gang.members.tolist()
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)


def _tight_store(problem, tables, room=1, gang_args=compiled._gang_args):
    """:func:`~simsched.simulator.engine.compiled._gang_args` with a disrupted run's gang store first as small
    as an undisrupted run's (room for each task's members once)."""
    return gang_args(problem, tables, 1 if room == 2 else room)


def test_gangs_the_compiled_loop_does_not_take_go_to_simpy(monkeypatch) -> None:
    """A task needing several processors at once under a rule that places one (SimPy refuses it, naming the
    task): the compiled loop declines, saying why, and ``auto`` runs it on SimPy; gangs with failures and
    srjf-eft's late binding (which places none, so SimPy refuses such a task) run compiled, the latter's
    refusal coming from SimPy."""
    prob = _stream(6, 3, 1.0, False, False, False, _platform(4, False, False), gangs="rigid")
    assert prob.graph.procs_min.max() > 1
    assert "multi-processor" in compiled.compiled_applies(prob, MCT())
    with pytest.raises(SimschedError, match="needs .* at once"):
        run_online(prob, MCT(), engine="auto")
    mold = _stream(5, 3, 1.0, False, False, False, _platform(4, False, False), gangs="moldable1")
    assert compiled.compiled_applies(mold, MCT()) is None
    assert compiled.compiled_applies(prob, ShortestJobEFT()) is None
    d = _world(6, 4, True, False, 0, False)
    assert compiled.compiled_applies(prob, OnlineHEFT(), disruptions=d) is None
    assert compiled.compiled_applies(prob, OnlineHEFT(), pstate_slowdown=np.ones((4, 2))) is None
    assert isinstance(compiled.job_tables(prob, ShortestJobEFT(late_binding=True)), compiled.JobTables)
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    with pytest.raises(SimschedError, match="at once"):  # late binding places no gang: SimPy says so
        run_online(prob, ShortestJobEFT(late_binding=True))
    with pytest.raises(SimschedError, match="at once"):
        run_online(prob, ShortestJobEFT(late_binding=True), engine="compiled")
    assert run_online(prob, OnlineHEFT(), disruptions=d, disruption_rng=np.random.default_rng(1))[1].engine == \
        "compiled"
    assert run_online(prob, OnlineHEFT())[1].engine == "compiled"


# ----------------------------------------------------------------------------- P-states
def _power(seed: int, m: int) -> PowerTables:
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


def _ecs(tables: PowerTables | None) -> OnlineECS:
    policy = OnlineECS()
    policy.use_power(tables)
    return policy


@EXAMPLES
@given(**STREAMS, power=st.booleans())
def test_ecs_online_and_pstate_replays_compiled_equal_simpy(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                            hetero, noisy, power) -> None:
    """ecs-online (each ready task to the (processor, P-state) pair of relative superiority) with a random
    power model, and a replay of the ``(task, processor, P-state)`` triples it returned, in the compiled
    loop: SimPy's schedule, events, decisions, assignments and P-state per task exactly (without a power
    model ecs-online decides with one 1 W P-state and returns pairs)."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero))
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    tables = _power(seed, m) if power else None
    slow = tables.speed[:, :1] / tables.speed if power else None
    rec = Recorded(_ecs(tables))
    s_ref, st_ref = run_online(prob, rec, factors, pstate_slowdown=slow, engine="simpy")
    for policy in (_ecs(tables), compiled.Replay(rec.log)):
        s, stats = run_online(prob, policy, factors, pstate_slowdown=slow, engine="compiled")
        assert stats.engine == "compiled"
        same(s, s_ref)
        assert (stats.events, stats.decisions, stats.assignments) == (st_ref.events, st_ref.decisions,
                                                                      st_ref.assignments)
        assert (stats.pstate is None) == (st_ref.pstate is None) == (not power)
        if power:
            assert stats.pstate.tolist() == st_ref.pstate.tolist()


def test_a_replay_naming_a_pstate_a_processor_lacks_goes_back_to_simpy() -> None:
    """A P-state beyond the processor's table (or NaN in it, or one no int32 holds: the loop's scratch is
    int32, and 2**32 must not wrap to P-state 0) stops the compiled loop; SimPy says why."""
    prob = _small()
    rec = Recorded()
    run_online(prob, rec, engine="simpy")
    slow = np.array([[1.0, 2.0], [1.0, np.nan], [1.0, 2.0]])
    for k, proc in ((2, 0), (1, 1), (2**32, 0), (-1, 0)):
        log = [list(d) for d in rec.log]
        log[0] = [(log[0][0][0], proc, k)] + log[0][1:]
        assert compiled.run_compiled(prob, compiled.Replay(log), pstate_slowdown=slow) is None
        with pytest.raises(SimschedError, match="no such P-state"):
            run_online(prob, compiled.Replay(log), pstate_slowdown=slow, engine="compiled")


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["scenarios/energy/dvfs_stream.yaml", "scenarios/energy/stream_failures.yaml",
                                      "scenarios/cluster/dag_gang_jobs.yaml"])
def test_streams_forced_compiled_keep_their_pinned_documents(scenario, tmp_path, monkeypatch) -> None:
    """The shipped streams with P-states (ecs-online choosing them, failures, stragglers, energy, carbon and
    cost) and with gang tasks (rigid and moldable, placed by srjf-eft, online-heft and fair-eft) with every
    online row on the compiled loop: the pinned ``run --json`` digest (``tests/data/scenario_digests.json``,
    recorded on SimPy), once each row's ``engine`` reads ``simpy``."""
    import hashlib
    import json
    import sys

    from simsched.cli.main import main

    sys.path.insert(0, str(ROOT / "tools"))
    from scenario_digests import scrub

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 0)
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as end:
        main(["run", scenario, "--json", str(out)])
    assert end.value.code == 0
    doc = json.loads(out.read_text())
    rows = [r for r in doc["results"] if r.get("engine") == "compiled"]
    assert {r["scheduler"] for r in rows} == {r["scheduler"] for r in doc["results"]} - {"heft"}  # a plan: SimPy
    for r in rows:
        r["engine"] = "simpy"
    text = json.dumps(scrub(doc), sort_keys=True, allow_nan=True)
    pinned = json.loads((ROOT / "tests" / "data" / "scenario_digests.json").read_text())[scenario]
    assert hashlib.sha256(text.encode()).hexdigest()[:32] == pinned


# ----------------------------------------------------------------------------- failures and stragglers
DISRUPTED = {"mct": MCT, "minmin": MinMin, "maxmin": MaxMin, "online-heft": OnlineHEFT, "ecs-online": OnlineECS,
             **JOB_AWARE}


def _world(seed: int, m: int, fail: bool, slow: bool, trace: int, zero: bool) -> Disruptions:
    """Random failures (per-processor MTBF, some processors never failing; ``zero``: repairs of length 0 and
    slowdowns of length 0), stragglers and ``trace`` traced down intervals that may overlap each other and
    the random ones (at least one kind of disruption)."""
    rng = np.random.default_rng(seed + 17)
    rate = np.where(rng.random(m) < 0.3, 0.0, rng.uniform(0.002, 0.04, m)) if fail else 0.0
    mttr = 0.0 if zero else rng.uniform(0.5, 15.0, m)
    down = tuple((int(rng.integers(0, m)), float(a), float(a + rng.uniform(0.1, 20.0)))
                 for a in np.sort(rng.uniform(0.0, 60.0, trace)))
    if not (fail or slow or down):
        slow = True
    return Disruptions(failure_rate=rate, repair_time=mttr, down_trace=down,
                       slowdown_rate=float(rng.uniform(0.005, 0.05)) if slow else 0.0,
                       slowdown_duration=0.0 if zero else float(rng.uniform(1.0, 30.0)), slowdown=2.5)


def _run_or_error(*args, **kwargs):
    """``run_online``'s result, or the error it raised (both engines refuse alike)."""
    from simsched.limits import LimitError

    try:
        return run_online(*args, **kwargs)
    except (SimschedError, LimitError) as exc:
        return type(exc), str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STREAMS, fail=st.booleans(), slow=st.booleans(), trace=st.integers(0, 4),
       short=st.booleans(), pstates=st.booleans(), rule=st.sampled_from(sorted(DISRUPTED)))
def test_compiled_equals_simpy_with_failures_and_stragglers(seed, n_jobs, rate, ties, dense, zero, m, per_link, hetero,
                                                            noisy, fail, slow, trace, short, pstates, rule) -> None:
    """Failures (random, repaired after random or zero time, and traced, overlapping), stragglers, arrival
    ties, noise, explicit costs, per-link networks and a random power model (ecs-online choosing P-states
    by it), for every compiled rule: the
    compiled loop gives SimPy's schedule, events, decisions, assignments, failures, restarts, slowed tasks,
    lost work and log exactly, and takes the same one draw from ``disruption_rng``.  ``short``: the streams
    drawn ahead start with a handful of draws each, so runs stop where one runs out and go again."""
    prob = _stream(seed, n_jobs, rate, ties, dense, zero, _platform(m, per_link, hetero))
    d = _world(seed, m, fail, slow, trace, zero)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    tables = _power(seed, m) if pstates else None
    power = tables.speed[:, :1] / tables.speed if pstates else None
    runs = []
    for engine in ("simpy", "compiled"):
        world = np.random.default_rng(seed + 3)
        policy = DISRUPTED[rule]()
        if rule == "ecs-online":
            policy.use_power(tables)
        with mock.patch.object(compiled_world, "world_of", _short_world if short else compiled_world.world_of):
            out = _run_or_error(prob, policy, factors, disruptions=d, disruption_rng=world,
                                pstate_slowdown=power, engine=engine)
        runs.append((out, world.random()))
    (ref, ref_next), (got, got_next) = runs
    assert got_next == ref_next  # the generator was left where SimPy leaves it
    if isinstance(ref[0], type):  # refused before the run (e.g. MTBF far below a task's length)
        assert got == ref
        return
    assert got[1].engine == "compiled" and ref[1].engine == "simpy"
    same(got[0], ref[0])
    assert (got[1].events, got[1].decisions, got[1].assignments) == (ref[1].events, ref[1].decisions,
                                                                     ref[1].assignments)
    same_world(got[1], ref[1])
    if pstates:
        assert got[1].pstate.tolist() == ref[1].pstate.tolist()


def _short_world(*args, world_of=compiled_world.world_of):
    """:func:`~simsched.simulator.engine.compiled_world.world_of` with streams first drawn a few draws long."""
    world = world_of(*args)
    if world is not None:
        world.span = 0.0
    return world


def test_a_bad_trace_processor_stays_simpys_error() -> None:
    d = Disruptions(down_trace=((9, 1.0, 2.0),))
    with pytest.raises(SimschedError, match="processor index 9, which does not exist"):
        run_online(_small(), MCT(), disruptions=d, engine="compiled")


@pytest.mark.parametrize("policy", [OnlineHEFT, MinMin, MaxMin])
def test_compiled_rules_break_ties_as_numpy(policy) -> None:
    """Identical jobs arriving together (every rank and many completion times tied across jobs) and zero
    work: online-heft's heap and Min-Min's and Max-Min's board break ties as ``np.argmax``/``np.argmin`` do, the lowest
    task first, so the compiled schedule is SimPy's."""
    rng = np.random.default_rng(5)
    dag = random_dag(7, processors=3, rng=rng)
    g = merge_jobs([dag] * 4, [0.0, 0.0, 2.0, 2.0]).graph
    for work in (g.work, np.zeros(g.n_tasks)):
        prob = Problem(TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=work,
                                 arrival=g.arrival), _platform(3, False, False))
        s, stats = run_online(prob, policy(), engine="compiled")
        ref, rstats = run_online(prob, policy(), engine="simpy")
        same(s, ref)
        assert (stats.engine, stats.events, stats.decisions) == ("compiled", rstats.events, rstats.decisions)


def test_one_processor_one_task_zero_work() -> None:
    g = TaskGraph(["a"], work=[0.0])
    prob = Problem(g, Platform.uniform([Processor("p")]))
    s, stats = run_online(prob, MCT(), engine="compiled")
    ref, rstats = run_online(prob, MCT(), engine="simpy")
    same(s, ref)
    assert s.finish.tolist() == [0.0] and stats.events == rstats.events == 3  # a decision, a finish, the idle point


# ----------------------------------------------------------------------------- the choice
def _small() -> Problem:
    rng = np.random.default_rng(1)
    js = merge_jobs([random_dag(6, rng=rng) for _ in range(3)], [0.0, 1.0, 1.0])
    return Problem(js.graph, _platform(3, False, False))


def test_auto_compiles_only_large_qualifying_runs(monkeypatch) -> None:
    prob = _small()
    assert run_online(prob, MCT())[1].engine == "simpy"  # below AUTO_MIN_TASKS
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    assert run_online(prob, MCT())[1].engine == "compiled"
    assert run_online(prob, Recorded())[1].engine == "simpy"  # a Python policy

    class Tuned(MCT):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(prob, Tuned())[1].engine == "simpy"
    d = Disruptions(failure_rate=1e-4, repair_time=1.0, slowdown_rate=0.01)
    assert run_online(prob, MCT(), disruptions=d)[1].engine == "compiled"  # failures and stragglers too


def test_auto_compiles_the_job_aware_rules_but_not_their_subclasses(monkeypatch) -> None:
    prob = _small()
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    for policy in (ShortestJobEFT(), ShortestJobEFT(late_binding=True), FairShareEFT(), FairShareEFT(alpha=-0.5),
                   OnlineHEFT()):
        assert run_online(prob, policy)[1].engine == "compiled"

    class Tuned(OnlineHEFT):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(prob, Tuned())[1].engine == "simpy"


@pytest.mark.parametrize("edges,names,why", [
    ([(0, 2)], ["j0.a", "j0.b", "j1.a"], "edges between tasks that arrive at different times"),
    ([], ["j0.a", "j1.a", "j0.b"], "a job whose tasks arrive at different times"),
])
def test_job_aware_tables_that_would_change_after_arrival_stay_on_simpy(edges, names, why, monkeypatch) -> None:
    """The tables are built once for the whole stream: a stream where they would change as tasks arrive
    (an edge into a later arrival group, a job spread over two; for the job-blind online-heft only the
    edge) is refused by ``compiled``, and ``auto`` runs it on SimPy."""
    g = TaskGraph(names, edges, [1.0] * len(edges), work=[2.0, 3.0, 1.0], arrival=[0.0, 0.0, 5.0])
    prob = Problem(g, _platform(2, False, False))
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    blind = (OnlineHEFT(),) if edges else ()  # online-heft is job-blind: only the edge matters to it
    for policy in (ShortestJobEFT(), FairShareEFT(alpha=0.5), *blind):
        with pytest.raises(SimschedError, match=why):
            run_online(prob, policy, engine="compiled")
        s, stats = run_online(prob, policy)
        assert stats.engine == "simpy"
        same(s, run_online(prob, policy, engine="simpy")[0])
    if not edges:
        s, stats = run_online(prob, OnlineHEFT())
        assert stats.engine == "compiled"
        same(s, run_online(prob, OnlineHEFT(), engine="simpy")[0])


def test_compiled_refuses_what_it_cannot_run() -> None:
    with pytest.raises(SimschedError, match="P-state table"):
        run_online(_small(), MCT(), engine="compiled", pstate_slowdown=np.ones((2, 1)))


def test_compiled_refuses_other_policies_and_unknown_engines() -> None:
    with pytest.raises(SimschedError, match="no compiled form"):
        run_online(_small(), Recorded(), engine="compiled")
    with pytest.raises(SimschedError, match="engine must be one of"):
        run_online(_small(), MCT(), engine="fast")


def test_a_replay_that_breaks_the_rules_stops_and_simpy_says_why() -> None:
    prob = _small()
    rec = Recorded()
    run_online(prob, rec, engine="simpy")
    bad = [list(d) for d in rec.log]
    bad[1] = bad[1] + [bad[0][0]]  # a task assigned twice
    short = rec.log[:-1]  # decisions run out before the tasks
    wrong = [list(d) for d in rec.log]
    wrong[0] = [(wrong[0][0][0], 99)] + wrong[0][1:]  # a processor that does not exist
    triple = [[(t, p, 1) for t, p in d] for d in rec.log]  # a P-state the platform has no table for
    for log, why in ((bad, "already assigned"), (short, "ran out"), (wrong, "does not exist"), (triple, "P-state")):
        assert compiled.run_compiled(prob, compiled.Replay(log)) is None
        with pytest.raises(SimschedError, match=why):  # run_online falls back to SimPy, which says why
            run_online(prob, compiled.Replay(log), engine="compiled")


def test_bench_measures_the_compiled_engine_on_the_same_schedule() -> None:
    from simsched.bench.streams import _compiled_rows, measure_stream

    r = measure_stream(6, 3)
    c = r["compiled"]
    assert r["replay_same"] and c["same"] and c["events_per_s"] > 0 and c["load_cpu_s"] >= 0
    rows = _compiled_rows(r, "6 jobs")
    assert rows[0]["measured"] == c["events_per_s"] and rows[0]["baseline"] == r["floor_events_per_s"]
    assert all("NO" not in row["what"] for row in rows)


def test_bench_compares_each_compiled_policy_with_simpy(monkeypatch) -> None:
    from simsched.bench.streams import _policy_rows, measure_policy

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    r = measure_policy(6, 3, "fair-eft")
    assert r["engine"] == "compiled" and r["same"] and r["simpy_cpu_s"] > 0
    rows = _policy_rows([r], "6 jobs")
    versus = [row for row in rows if "compiled vs SimPy" in row["what"]]
    assert len(versus) == 1 and versus[0]["baseline"] == r["simpy_cpu_s"] and "NO" not in versus[0]["what"]
