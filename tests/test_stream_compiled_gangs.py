"""Gang tasks on the compiled stream engine give the SimPy engine's schedules exactly (==, not approx): moldable
tasks at one processor under the rules that place every task on one, and rigid, moldable and mixed gangs placed
by the job-aware rules, with P-states, failures, repairs, traced outages and stragglers or without, on random
streams (hypothesis): SimPy's schedule with its gangs, events, decisions, assignments, P-states and failure log;
and what the compiled loop does not take goes to SimPy, with a reason.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_cases import (
    EXAMPLES,
    JOB_AWARE,
    STREAMS,
    Recorded,
    plat,
    random_power,
    random_world,
    run_or_error,
    same,
    same_world,
    short_world,
    stream,
)

from simsched.errors import SimschedError
from simsched.schedulers.ecs import OnlineECS
from simsched.schedulers.jobaware import OnlineHEFT, ShortestJobEFT
from simsched.schedulers.online import MCT, MaxMin, MinMin
from simsched.simulator.engine import compiled, compiled_world, run_online

pytestmark = pytest.mark.extra("fast")  # skipped, with the install command, without numba


GANG_BLIND = {"mct": MCT, "minmin": MinMin, "maxmin": MaxMin, "ecs-online": OnlineECS}


@EXAMPLES
@given(**STREAMS, rule=st.sampled_from(sorted(GANG_BLIND)), disrupted=st.booleans())
def test_moldable_tasks_at_one_processor_compiled_equal_simpy(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                              hetero, noisy, rule, disrupted) -> None:
    """Moldable tasks that may take one processor (``procs: [1, k]``, Amdahl and Downey) under the rules that
    place every task on one processor, with failures and stragglers or without, and a replay of their
    decisions: run at k = 1 as ordinary tasks on both engines, SimPy's schedule (naming no gang), events,
    decisions, assignments and failure log exactly."""
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero), gangs="moldable1")
    assert prob.graph.gang
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    d = random_world(seed, m, True, True, 2, zero) if disrupted else None
    rec = Recorded(GANG_BLIND[rule]())
    runs = []
    for engine, policy in (("simpy", rec), ("compiled", GANG_BLIND[rule]()), ("compiled", compiled.Replay(rec.log))):
        out = run_or_error(prob, policy, factors, disruptions=d, disruption_rng=np.random.default_rng(seed + 3),
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
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero), priorities, gangs=gangs)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    pslow = None
    if power:
        tables = random_power(seed, m)
        pslow = tables.speed[:, :1] / tables.speed
    d = random_world(seed, m, True, slow, trace, zero) if disrupted else None
    _same_gang_runs(prob, GANG_RULES[rule], factors, pslow, d, seed, short)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(6, 12), m=st.sampled_from([4, 7]),
       gangs=st.sampled_from(["rigid", "mixed"]), hetero=st.booleans(), slow=st.booleans(), trace=st.integers(0, 3))
def test_gangs_in_queues_under_failures_compiled_equal_simpy(seed, n_jobs, m, gangs, hetero, slow, trace) -> None:
    """Busy streams of gang tasks (jobs arriving close together, so gangs wait in queues behind each other and
    a failure drops gangs that run and gangs that wait, whose other members go on with their queues) under
    failures, stragglers and traced outages, for every job-aware rule: SimPy's run exactly, as in
    :func:`test_gangs_compiled_equal_simpy_on_random_streams`."""
    prob = stream(seed, n_jobs, 0.3, False, False, False, plat(m, False, hetero), True, gangs=gangs)
    d = random_world(seed, m, True, slow, trace, False)
    for rule in sorted(GANG_RULES):
        _same_gang_runs(prob, GANG_RULES[rule], None, None, d, seed, False)


def _same_gang_runs(prob, make, factors, pslow, d, seed: int, short: bool) -> None:
    """The policy ``make()`` on SimPy and compiled (``short``: drawn streams and gang store first short) give
    the same schedule, gangs, events, decisions, assignments, P-states, failure log and next draw of the
    world's generator, or the same error."""
    runs = []
    for engine in ("simpy", "compiled"):
        world = np.random.default_rng(seed + 3)
        with mock.patch.object(compiled_world, "world_of", short_world if short else compiled_world.world_of), \
                mock.patch.object(compiled, "_gang_args", _tight_store if short else compiled._gang_args):
            out = run_or_error(prob, make(), factors, pstate_slowdown=pslow, disruptions=d, disruption_rng=world,
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
    prob = stream(6, 3, 1.0, False, False, False, plat(4, False, False), gangs="rigid")
    assert prob.graph.procs_min.max() > 1
    assert "multi-processor" in compiled.compiled_applies(prob, MCT())
    with pytest.raises(SimschedError, match="needs .* at once"):
        run_online(prob, MCT(), engine="auto")
    mold = stream(5, 3, 1.0, False, False, False, plat(4, False, False), gangs="moldable1")
    assert compiled.compiled_applies(mold, MCT()) is None
    assert compiled.compiled_applies(prob, ShortestJobEFT()) is None
    d = random_world(6, 4, True, False, 0, False)
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

