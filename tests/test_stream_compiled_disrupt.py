"""Failures, repairs, stragglers and P-states on the compiled stream engine give the SimPy engine's schedules
exactly (==, not approx): random streams (hypothesis) with random failures, repairs, outage traces, stragglers
and power models for every compiled rule (ecs-online choosing P-states, and a replay of its triples): the same
schedule, events, decisions, assignments, counters, failure log and P-states, and the same draw left in the
world's generator; the shipped DVFS and failure streams forced onto the compiled loop keep their pinned
``run --json`` digests; a replay naming a P-state a processor lacks, and a trace naming a processor that does not
exist, end in SimPy's error.
"""

from __future__ import annotations

from pathlib import Path
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
    ecs_with,
    plat,
    random_power,
    random_world,
    run_or_error,
    same,
    same_world,
    short_world,
    small_stream,
    stream,
)

from simsched.errors import SimschedError
from simsched.schedulers.ecs import OnlineECS
from simsched.schedulers.jobaware import OnlineHEFT
from simsched.schedulers.online import MCT, MaxMin, MinMin
from simsched.simulator.engine import Disruptions, compiled, compiled_world, run_online

pytestmark = pytest.mark.extra("fast")  # skipped, with the install command, without numba
ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- P-states
@EXAMPLES
@given(**STREAMS, power=st.booleans())
def test_ecs_online_and_pstate_replays_compiled_equal_simpy(seed, n_jobs, rate, ties, dense, zero, m, per_link,
                                                            hetero, noisy, power) -> None:
    """ecs-online (each ready task to the (processor, P-state) pair of relative superiority) with a random
    power model, and a replay of the ``(task, processor, P-state)`` triples it returned, in the compiled
    loop: SimPy's schedule, events, decisions, assignments and P-state per task exactly (without a power
    model ecs-online decides with one 1 W P-state and returns pairs)."""
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero))
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    tables = random_power(seed, m) if power else None
    slow = tables.speed[:, :1] / tables.speed if power else None
    rec = Recorded(ecs_with(tables))
    s_ref, st_ref = run_online(prob, rec, factors, pstate_slowdown=slow, engine="simpy")
    for policy in (ecs_with(tables), compiled.Replay(rec.log)):
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
    prob = small_stream()
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
    prob = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, per_link, hetero))
    d = random_world(seed, m, fail, slow, trace, zero)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    tables = random_power(seed, m) if pstates else None
    power = tables.speed[:, :1] / tables.speed if pstates else None
    runs = []
    for engine in ("simpy", "compiled"):
        world = np.random.default_rng(seed + 3)
        policy = DISRUPTED[rule]()
        if rule == "ecs-online":
            policy.use_power(tables)
        with mock.patch.object(compiled_world, "world_of", short_world if short else compiled_world.world_of):
            out = run_or_error(prob, policy, factors, disruptions=d, disruption_rng=world,
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


def test_a_bad_trace_processor_stays_simpys_error() -> None:
    d = Disruptions(down_trace=((9, 1.0, 2.0),))
    with pytest.raises(SimschedError, match="processor index 9, which does not exist"):
        run_online(small_stream(), MCT(), disruptions=d, engine="compiled")

