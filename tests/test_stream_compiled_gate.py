"""``rl-gate`` on the compiled stream loop gives the SimPy engine's schedules exactly (==, not approx):

* random streams (hypothesis): worlds drawn as the gate's training worlds (inside its envelope, the predictor
  choosing to wait in some) and small random streams on random platforms (outside it from the first job, or
  from a later one), with arrival ties and noise; the shipped checkpoint with its guard on and off, a
  checkpoint whose predictor is bolder, one without a predictor (general weights, guarded), and gates of
  bare weights: the same schedule, events, decisions and assignments as SimPy, and the policy left as a
  SimPy run leaves it (its late decisions, fallback reason and weights);
* the backlog's sum is numpy's pairwise sum, float for float;
* what the compiled loop does not take (failures, gang tasks, a subclass) goes to SimPy, with a reason.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.learned.rl.gate import ALWAYS_QUEUE, N_WEIGHTS, NEVER_QUEUE, GatedBinding, shipped_path
from simsched.simulator.engine import Disruptions, compiled, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals

pytestmark = pytest.mark.extra("fast")  # skipped, with the install command, without numba

GATES = ("shipped", "unguarded", "bold", "weights-guarded", "never", "weights")
"""The gates drawn (:func:`_gate`)."""


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """Two checkpoints beside the shipped one: ``bold``, its predictor waiting wherever its mean says so (k 0,
    margin 0); ``weights-guarded``, no predictor (the gate's weights decide), guard and envelope kept."""
    doc = json.loads(shipped_path().read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("gates")
    bold = dict(doc, model=dict(doc["model"], k=0.0, margin=0.0))
    plain = {key: v for key, v in doc.items() if key != "model"}
    plain["weights"] = [float(v) for v in np.random.default_rng(5).normal(0.0, 1.5, N_WEIGHTS)]
    out = {}
    for name, d in (("bold", bold), ("weights-guarded", plain)):
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(d), encoding="utf-8")
    return out


def _gate(name: str, seed: int, checkpoints: dict[str, Path]) -> GatedBinding:
    if name == "shipped":
        return GatedBinding()
    if name == "unguarded":
        return GatedBinding(guard=False)
    if name in checkpoints:
        return GatedBinding(checkpoint=str(checkpoints[name]))
    if name == "never":
        return GatedBinding(weights=NEVER_QUEUE.tolist())
    rng = np.random.default_rng(seed)  # a threshold mid-way (the decision's own features weigh), a weight 0 or two
    w = np.concatenate([rng.normal(0.0, 1.0, 1), rng.normal(0.0, 0.1, N_WEIGHTS - 4), rng.normal(0.0, 2.0, 3)])
    return GatedBinding(weights=(w * (rng.random(N_WEIGHTS) < 0.8)).tolist())


def _random_stream(seed: int, m: int, n_jobs: int, rate: float, big_last: bool) -> Problem:
    """Random DAG jobs on ``m`` processors of two classes (cpus, and faster gpus); ``big_last``: the last job
    far larger than the others (the envelope's job shape check trips at its arrival)."""
    rng = np.random.default_rng(seed)
    sizes = [int(rng.integers(2, 20)) for _ in range(n_jobs)]
    if big_last:
        sizes[-1] = 400
    graphs = [random_dag(k, ccr=0.5, rng=rng) for k in sizes]
    procs = [Processor(f"p{i}", type="gpu" if i % 3 == 2 else "cpu", speed=3.0 if i % 3 == 2 else 1.0)
             for i in range(m)]
    platform = Platform.uniform(procs, bandwidth=5.0, latency=0.1)
    return Problem(merge_jobs(graphs, poisson_arrivals(rate, rng, count=n_jobs)).graph, platform)


def _world_stream(seed: int) -> Problem:
    """A world-day drawn as the gate's training worlds (:func:`~simsched.learned.rl.worlds.sampler.world_scenario`)."""
    from simsched.learned.rl.worlds.sampler import world_scenario

    sc, stream = world_scenario(seed)
    return Problem(stream.graph, sc.platform, sc.affinity)


def _ties(problem: Problem) -> Problem:
    """The stream with its arrivals floored to multiples of twice the mean gap between them: several jobs
    arriving at one instant."""
    g = problem.graph
    times = np.unique(g.arrival)
    gap = 2.0 * float(times[-1] - times[0]) / max(times.size - 1, 1) or 1.0
    return Problem(g.with_(arrival=np.floor(g.arrival / gap) * gap), problem.platform, problem.affinity)


def _runs(problem: Problem, make, factors):
    """The same gate on both engines: ``(SimPy's schedule, stats, policy), (the compiled loop's ...)``."""
    out = []
    for engine in ("simpy", "compiled"):
        policy = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            schedule, stats = run_online(problem, policy, factors, engine=engine)
        assert stats.engine == engine
        out.append((schedule, stats, policy))
    return out


def _check(problem: Problem, make, factors) -> None:
    """The gate in the compiled loop: SimPy's schedule, events, decisions and assignments exactly, and the
    policy left as SimPy leaves it (late decisions, the guard's reason, the predictor's last weights)."""
    (s_ref, st_ref, ref), (s_c, st_c, mine) = _runs(problem, make, factors)
    assert s_c.processor.tolist() == s_ref.processor.tolist()
    assert s_c.start.tolist() == s_ref.start.tolist() and s_c.finish.tolist() == s_ref.finish.tolist()
    assert (st_c.events, st_c.decisions, st_c.assignments) == (st_ref.events, st_ref.decisions, st_ref.assignments)
    assert (mine.late_decisions, mine.fallback_reason) == (ref.late_decisions, ref.fallback_reason)
    assert mine.weights.tolist() == ref.weights.tolist()


PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])
RANDOM = {"seed": st.integers(0, 10_000), "ties": st.booleans(), "noisy": st.booleans(),
          "m": st.sampled_from([3, 4, 7, 12]), "n_jobs": st.integers(2, 10), "rate": st.floats(0.01, 1.0)}


@PROPERTY
@given(**RANDOM, big_last=st.booleans())
def test_a_gate_of_weights_compiled_equals_simpy_on_random_streams(seed, ties, noisy, m, n_jobs, rate,
                                                                   big_last) -> None:
    """General weights, the decision's own features weighing (idle share, backlog, the job's remaining work),
    on small random streams: where the gate is sensitive to every float of its features."""
    problem = _random_stream(seed, m, n_jobs, rate, big_last)
    problem = _ties(problem) if ties else problem
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, problem.n_tasks) if noisy else None
    _check(problem, lambda: _gate("weights", seed, {}), factors)


@PROPERTY
@given(**RANDOM, source=st.sampled_from(["world", "random", "random-big-last"]),
       gate=st.sampled_from(GATES[:-1]))
def test_rl_gate_checkpoints_compiled_equal_simpy_on_random_streams(seed, ties, noisy, m, n_jobs, rate, source,
                                                                    gate, checkpoints) -> None:
    """The shipped checkpoint (guard on and off), a bolder predictor, a guarded checkpoint of weights and the
    never-queueing gate, on training-like worlds (inside the envelope) and random streams (outside it from the
    first job or a later one)."""
    if source == "world":
        problem = _world_stream(seed % 60)
    else:
        problem = _random_stream(seed, m, n_jobs, rate, source == "random-big-last")
    problem = _ties(problem) if ties else problem
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, problem.n_tasks) if noisy else None
    _check(problem, lambda: _gate(gate, seed, checkpoints), factors)


def test_the_random_streams_meet_every_case(checkpoints) -> None:
    """The property's draws reach what it must cover: a gate inside its envelope that waits, one outside from
    the first job, one that falls back at a later job, and general weights that wait and queue."""
    inside = GatedBinding()
    run_online(_world_stream(1), inside, engine="compiled")
    assert inside.fallback_reason is None and inside.late_decisions > 0
    first, later = GatedBinding(), GatedBinding()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_online(_random_stream(3, 40, 5, 0.05, False), first, engine="compiled")
        run_online(_random_stream(3, 4, 6, 0.05, True), later, engine="compiled")
    assert first.fallback_reason is not None and first.fallback_reason.startswith("srjf-eft from job 1:")
    assert later.fallback_reason is not None and not later.fallback_reason.startswith("srjf-eft from job 1:")
    problem = _world_stream(10)
    (s_ref, _, _), (s_c, _, _) = _runs(problem, lambda: _gate("weights", 4, checkpoints), None)
    srjf, _ = run_online(problem, GatedBinding(weights=ALWAYS_QUEUE.tolist()), engine="simpy")
    assert s_c.processor.tolist() == s_ref.processor.tolist() != srjf.processor.tolist()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 4099])
def test_the_backlog_sum_is_numpys_pairwise_sum(n) -> None:
    from simsched.simulator.engine.compiled_gatekernel import pairwise_masked

    rng = np.random.default_rng(n)
    cost = rng.exponential(10.0, n)
    proc = np.where(rng.random(n) < 0.5, -1, 0)
    finish = np.where(rng.random(n) < 0.3, 1.0, np.nan)
    unassigned = (proc < 0) & np.isnan(finish)
    assert pairwise_masked(0, n, cost, proc, finish) == float((unassigned * cost).sum())


def test_what_the_compiled_loop_does_not_take_goes_to_simpy(monkeypatch) -> None:
    """Failures (the gate counts those it sees), gang tasks and a subclass of the gate run on SimPy: ``compiled``
    refuses with the reason, ``auto`` runs them there."""
    problem = _random_stream(1, 4, 3, 0.1, False)
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    assert run_online(problem, GatedBinding(guard=False))[1].engine == "compiled"
    d = Disruptions(failure_rate=1e-3, repair_time=1.0)
    with pytest.raises(SimschedError, match="failures it sees"):
        run_online(problem, GatedBinding(guard=False), disruptions=d, engine="compiled")
    assert run_online(problem, GatedBinding(guard=False), disruptions=d)[1].engine == "simpy"
    g = problem.graph
    gangs = Problem(g.with_(procs=np.stack([np.ones(g.n_tasks, dtype=np.int64), np.full(g.n_tasks, 2)], axis=1)),
                    problem.platform)
    with pytest.raises(SimschedError, match="multi-processor"):
        run_online(gangs, GatedBinding(guard=False), engine="compiled")

    class Tuned(GatedBinding):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(problem, Tuned(guard=False))[1].engine == "simpy"
