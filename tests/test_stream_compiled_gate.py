"""``rl-gate`` on the compiled stream loop gives the SimPy engine's schedules exactly (==, not approx):

* random streams (hypothesis): worlds drawn as the gate's training worlds (inside its envelope, the predictor
  choosing to wait in some) and small random streams on random platforms (outside it from the first job, or
  from a later one), with arrival ties and noise; the shipped checkpoint with its guard on and off, a
  checkpoint whose predictor is bolder, one without a predictor (general weights, guarded), and gates of
  bare weights: the same schedule, events, decisions and assignments as SimPy, and the policy left as a
  SimPy run leaves it (its late decisions, fallback reason and weights);
* with random failures, repairs, outage traces and stragglers (the gate counts the processors it sees go down, and
  its world, guard and predictor move with them: rows filled as the loop reaches each state), and with gang tasks
  (which the rule places alone once one has arrived), with and without failures: the same, and the failure
  counters and log, the policy's failures seen, and the draw left in the world's generator;
* the backlog's sum is numpy's pairwise sum, float for float;
* what the compiled loop does not take (a subclass) goes to SimPy.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_cases import gang_fields, random_world, run_or_error, same_world, short_world

from simsched.learned.rl.gate import ALWAYS_QUEUE, N_WEIGHTS, NEVER_QUEUE, GatedBinding, shipped_path
from simsched.simulator.engine import Disruptions, compiled, compiled_world, run_online
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


def _runs(problem: Problem, make, factors, d: Disruptions | None = None, seed: int = 0, short: bool = False):
    """The same gate on both engines, with disruptions ``d`` or none (``short``: the compiled loop's drawn streams
    first short, so runs stop where one runs out and go again): ``(SimPy's (schedule, stats) or error, policy, next
    draw of the world's generator), (the compiled loop's ...)``."""
    out = []
    for engine in ("simpy", "compiled"):
        policy, world = make(), np.random.default_rng(seed + 3)
        with warnings.catch_warnings(), \
                mock.patch.object(compiled_world, "world_of", short_world if short else compiled_world.world_of):
            warnings.simplefilter("ignore")
            got = run_or_error(problem, policy, factors, disruptions=d, disruption_rng=world, engine=engine)
        assert isinstance(got[0], type) or got[1].engine == engine
        out.append((got, policy, world.random()))
    return out


def _check(problem: Problem, make, factors, d: Disruptions | None = None, seed: int = 0, short: bool = False) -> None:
    """The gate in the compiled loop: SimPy's schedule (its gangs too), events, decisions, assignments, failure
    counters and log exactly, or SimPy's error; the policy left as SimPy leaves it (late decisions, the guard's
    reason, the predictor's last weights, the failures it saw) and the world's generator too."""
    ((ref, r_stats), ref_policy, ref_next), ((got, g_stats), mine, got_next) = _runs(problem, make, factors, d, seed,
                                                                                      short)
    assert got_next == ref_next
    if isinstance(ref, type):  # refused alike (an MTBF far below a task's length, ...)
        assert (got, g_stats) == (ref, r_stats)
        return
    assert got.processor.tolist() == ref.processor.tolist()
    assert got.start.tolist() == ref.start.tolist() and got.finish.tolist() == ref.finish.tolist()
    assert (got.gang is None) == (ref.gang is None)
    if ref.gang is not None:
        assert (got.gang.ptr.tolist(), got.gang.members.tolist()) == (ref.gang.ptr.tolist(), ref.gang.members.tolist())
    assert (g_stats.events, g_stats.decisions, g_stats.assignments) == (r_stats.events, r_stats.decisions,
                                                                        r_stats.assignments)
    same_world(g_stats, r_stats)
    assert (mine.late_decisions, mine.fallback_reason) == (ref_policy.late_decisions, ref_policy.fallback_reason)
    assert mine.weights.tolist() == ref_policy.weights.tolist() and mine.failures == ref_policy.failures


def _disruptions(problem: Problem, seed: int, fail: bool, slow: bool, trace: int, zero: bool) -> Disruptions:
    """:func:`~stream_cases.random_world` with its times scaled to the stream's mean task, so that processors
    fail (and are repaired) several times a task on some streams and seldom on others."""
    w = problem.W[np.isfinite(problem.W)]
    scale = float(np.exp(np.random.default_rng(seed).uniform(-2.0, 1.0)) * max(float(w.mean()), 1e-3) / 10.0)
    return random_world(seed, problem.n_processors, fail, slow, trace, zero, scale)


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


FAILURES = {"fail": st.booleans(), "slow": st.booleans(), "trace": st.integers(0, 4), "zero": st.booleans(),
            "short": st.booleans()}


@PROPERTY
@given(**RANDOM, **FAILURES, source=st.sampled_from(["world", "random", "random-big-last"]),
       gate=st.sampled_from(GATES))
def test_rl_gate_compiled_equals_simpy_with_failures_and_stragglers(seed, ties, noisy, m, n_jobs, rate, fail, slow,
                                                                    trace, zero, short, source, gate,
                                                                    checkpoints) -> None:
    """Every gate on training-like worlds and random streams with random failures (repaired after random or zero
    time), traced outages that overlap, and stragglers: the gate counts the processors it sees down, and its
    failure rate, guard, predictor and (for gates of weights) threshold move with them."""
    problem = _world_stream(seed % 60) if source == "world" else _random_stream(seed, m, n_jobs, rate,
                                                                                source == "random-big-last")
    problem = _ties(problem) if ties else problem
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, problem.n_tasks) if noisy else None
    d = _disruptions(problem, seed, fail, slow, trace, zero)
    _check(problem, lambda: _gate(gate, seed, checkpoints), factors, d, seed, short)


def _gangs(problem: Problem, seed: int, kind: str) -> Problem:
    """The stream with random gang tasks (:func:`~stream_cases.gang_fields`; every cost finite, so any gang may
    run anywhere)."""
    g = problem.graph
    fields = gang_fields(np.random.default_rng(seed + 41), g.n_tasks, problem.platform, kind)
    return Problem(g.with_(**fields), problem.platform, problem.affinity)


@PROPERTY
@given(**RANDOM, **FAILURES, kind=st.sampled_from(["rigid", "mixed", "moldable1"]), disrupted=st.booleans(),
       gate=st.sampled_from(GATES), late=st.booleans())
def test_rl_gate_compiled_equals_simpy_with_gang_tasks(seed, ties, noisy, m, n_jobs, rate, fail, slow, trace, zero,
                                                       short, kind, disrupted, gate, late, checkpoints) -> None:
    """Gang tasks (rigid, moldable, mixed; ``late``: from the last job only, so the gate decides, and counts
    failures, until they arrive) with failures and stragglers or without: the gate decides as without gangs until
    the first gang task arrives, then the rule places alone (gang-aware earliest finish), as on SimPy."""
    problem = _random_stream(seed, m, n_jobs, rate, False)
    problem = _ties(problem) if ties else problem
    gangs = _gangs(problem, seed, kind)
    if late:  # only the last arrival group's tasks may take several processors
        g, last = gangs.graph, problem.graph.arrival >= problem.graph.arrival.max()
        procs = np.where(last[:, None], np.stack([g.procs_min, g.procs_max], axis=1), 1)
        gangs = Problem(g.with_(procs=procs), problem.platform, problem.affinity)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, problem.n_tasks) if noisy else None
    d = _disruptions(problem, seed, fail, slow, trace, zero) if disrupted else None
    _check(gangs, lambda: _gate(gate, seed, checkpoints), factors, d, seed, short)


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
    ((s_ref, _), _, _), ((s_c, _), _, _) = _runs(problem, lambda: _gate("weights", 4, checkpoints), None)
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


def test_failures_and_gangs_run_compiled_and_a_subclass_on_simpy(monkeypatch) -> None:
    """With failures and stragglers, and with gang tasks, the gate runs on the compiled loop (``auto`` takes it,
    ``compiled`` does not refuse it); a subclass of the gate runs on SimPy."""
    problem = _random_stream(1, 4, 3, 0.1, False)
    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    assert run_online(problem, GatedBinding(guard=False))[1].engine == "compiled"
    d = Disruptions(failure_rate=1e-3, repair_time=1.0, slowdown_rate=1e-3)
    assert compiled.compiled_applies(problem, GatedBinding(guard=False), disruptions=d) is None
    assert run_online(problem, GatedBinding(guard=False), disruptions=d)[1].engine == "compiled"
    g = problem.graph
    gangs = Problem(g.with_(procs=np.stack([np.ones(g.n_tasks, dtype=np.int64), np.full(g.n_tasks, 2)], axis=1)),
                    problem.platform)
    assert compiled.compiled_applies(gangs, GatedBinding(guard=False)) is None
    assert run_online(gangs, GatedBinding(guard=False), disruptions=d)[1].engine == "compiled"

    class Tuned(GatedBinding):  # inherits the attribute but may decide otherwise: SimPy
        pass

    assert run_online(problem, Tuned(guard=False))[1].engine == "simpy"


def test_a_failure_rate_outside_the_training_worlds_falls_back_alike() -> None:
    """Every processor goes down just after the first job arrives and the second job follows soon after: the
    failure rate the gate sees (counted at its decisions, set mid-state, then described again at the arrival)
    lies far outside its training worlds, so it falls back at job 2 on both engines, naming the failure rate."""
    problem = _world_stream(0)
    g = problem.graph
    times = np.unique(g.arrival)
    mean = float(problem.W[np.isfinite(problem.W)].mean())
    problem = Problem(g.with_(arrival=np.where(g.arrival == times[1], times[0] + mean / 50, g.arrival)),
                      problem.platform, problem.affinity)
    d = Disruptions(down_trace=tuple((q, times[0] + mean / 500, times[0] + mean / 200)
                                     for q in range(problem.n_processors)))
    _check(problem, GatedBinding, None, d)
    (_, policy, _), _ = _runs(problem, GatedBinding, None, d)
    assert policy.failures == problem.n_processors
    assert policy.fallback_reason.startswith("srjf-eft from job 2: the world's failure rate")


def test_the_failures_the_gate_sees_weigh_in_its_decisions(checkpoints) -> None:
    """A gate of weights whose failure-rate weight is large decides otherwise than the same gate without it on a
    stream with failures (the world's failure rate moves its threshold), on both engines alike."""
    problem = _world_stream(2)
    d = _disruptions(problem, 2, True, False, 2, False)
    w = np.zeros(N_WEIGHTS)
    w[[0, 9, -3]] = [-1.0, 3.0, 2.0]  # bias, failure rate, idle share
    blind = w.copy()
    blind[9] = 0.0
    for weights in (w, blind):
        _check(problem, lambda weights=weights: GatedBinding(weights=weights.tolist()), None, d, 2)
    (((with_rate, _), policy, _), _), ((((without, _), _, _), _)) = (
        _runs(problem, lambda: GatedBinding(weights=w.tolist()), None, d, 2),
        _runs(problem, lambda: GatedBinding(weights=blind.tolist()), None, d, 2))
    assert policy.failures > 0 and with_rate.processor.tolist() != without.processor.tolist()


def test_a_scenario_row_with_failures_says_compiled(monkeypatch) -> None:
    """``rl-gate`` on the shipped stream with failures, traced outages and stragglers: its results row says
    ``compiled`` where ``auto`` takes the compiled loop (the size threshold lowered) and ``simpy`` otherwise, with
    the same metrics (every field but the engine and the scheduler's time)."""
    from simsched.run.results import results_document
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    path = Path(__file__).resolve().parents[1] / "scenarios/streams/failures.yaml"
    rows = {}
    for minimum in (0, 10**12):
        monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", minimum)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = run_scenario(load_scenario(path), schedulers=["rl-gate"], repetitions=1)
        rows[minimum] = results_document(report)["results"][0]
    assert (rows[0]["engine"], rows[10**12]["engine"]) == ("compiled", "simpy")
    timing = ("engine", "scheduler_time_s")  # which engine ran, and the CPU it took
    assert {k: v for k, v in rows[0].items() if k not in timing} == {k: v for k, v in rows[10**12].items()
                                                                    if k not in timing}


def test_the_bench_times_the_gate_with_failures_on_both_engines(monkeypatch) -> None:
    """``simsched bench streams``'s row of rl-gate with failures: the compiled loop and SimPy on the same stream,
    failures and stragglers, the same schedule and events, the failures counted in the row's label."""
    from simsched.bench.streams import _policy_rows, measure_policy

    monkeypatch.setattr(compiled, "AUTO_MIN_TASKS", 1)
    r = measure_policy(3, 12, "rl-gate", failures=True)
    assert r["engine"] == "compiled" and r["same"] and r["simpy_cpu_s"] > 0 and r["failures"] > 0
    versus = [row for row in _policy_rows([r], "3 jobs") if "compiled vs SimPy" in row["what"]]
    assert len(versus) == 1 and "with failures" in versus[0]["what"] and "NO" not in versus[0]["what"]
