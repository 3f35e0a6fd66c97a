"""``rl-gate``'s world description kept arrival by arrival (:class:`~simsched.learned.rl.description.RunningWorld`)
is the description from scratch (:func:`~simsched.learned.rl.features.world_description`), bit for bit, at every
arrival of random streams: on one processor and several, dense and structured costs with ineligible pairs, zero
work, arrival ties, jobs known by name (extended) or as components (built anew), failures seen; so are the parts
the gate reads beside it (job arrivals and work, mean task and job work) and its envelope's prior and job shapes.
Jobs arriving out of order (the offered load sorted again) and a rebuild in the middle agree too."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_cases import plat, stream

from simsched.learned.rl.description import RunningWorld
from simsched.learned.rl.envelope import job_shape_rows, prior_of, prior_world, shape_rows
from simsched.learned.rl.features import world_description
from simsched.learned.rl.gate import N_WEIGHTS, GatedBinding
from simsched.learned.training_range import offered_load
from simsched.schedulers.jobaware import _rank
from simsched.simulator.arrived import ArrivedProblems, restrict
from simsched.simulator.engine.compiled_gate import arrival_states
from simsched.workloads.jobs import job_ids

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DRAWS = {"seed": st.integers(0, 10_000), "n_jobs": st.integers(1, 12), "rate": st.floats(0.02, 3.0),
         "ties": st.booleans(), "dense": st.booleans(), "zero": st.booleans(), "m": st.sampled_from([1, 2, 4, 7]),
         "hetero": st.booleans(), "failures": st.integers(0, 6), "rate_declared": st.floats(0.0, 0.05)}


def _bits(a) -> bytes:
    return np.asarray(a, dtype=np.float64).tobytes()


def _scratch(problem, jobs, rank, n_jobs, failures):
    """What the gate computed at each arrival before it kept its description: the job arrivals, the description,
    the job work, and the envelope's prior parts."""
    g = problem.graph
    job_arrival = np.full(n_jobs, np.inf)
    np.minimum.at(job_arrival, jobs, g.arrival)
    t0 = float(job_arrival.min()) if job_arrival.size else 0.0
    now = float(g.arrival.max()) if g.n_tasks else 0.0
    world = world_description(problem, jobs, job_arrival, rank, failures, now - t0)
    return job_arrival, world


@PROPERTY
@given(**DRAWS, unnamed=st.booleans())
def test_the_gates_running_world_is_the_description_from_scratch_at_every_arrival(
        seed, n_jobs, rate, ties, dense, zero, m, hetero, failures, rate_declared, unnamed) -> None:
    problem = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, False, hetero), unnamed=unnamed)
    gate = GatedBinding(weights=[0.0] * N_WEIGHTS)
    arrived = ArrivedProblems(problem)
    rebuilds = []
    rebuild = RunningWorld._rebuild
    first = True
    with mock.patch.object(RunningWorld, "_rebuild", lambda self, *a: (rebuilds.append(1), rebuild(self, *a))):
        for state, k in enumerate(arrival_states(problem).tolist()):
            if k == 0:
                continue
            visible = arrived.visible(k)
            gate.failures = failures * state  # failures seen before the arrival weigh in the description
            if first:
                gate.reset(visible, np.random.default_rng(0))
                first = False
            else:
                gate.grow(visible)
                gate.n_seen = visible.n_tasks
            job_arrival, world = _scratch(visible, gate.jobs, gate.rank, gate.n_jobs, gate.failures)
            assert _bits(gate.world) == _bits(world)
            assert _bits(gate.job_arrival) == _bits(job_arrival)
            work = np.bincount(gate.jobs, weights=gate.cost, minlength=gate.n_jobs)
            assert _bits(gate.job_work) == _bits(work)
            assert gate.mean_job_work == float(work.mean()) and gate.mean_task == float(gate.cost.mean())
            w = gate._running
            rows = shape_rows(w.size, w.work, w.path)
            assert _bits(rows) == _bits(job_shape_rows(visible, gate.jobs, gate.rank))
            declared = (rate_declared, rate_declared / 2)
            assert _bits(prior_of(visible.platform, w.mean_task, rows, *declared)) == _bits(
                prior_world(visible, gate.jobs, gate.rank, *declared))
    states = int(np.count_nonzero(arrival_states(problem)))
    if not unnamed:  # whole new jobs known by name: built once, extended at every later arrival
        assert len(rebuilds) == 1
    assert len(rebuilds) <= states


@PROPERTY
@given(**dict(DRAWS, n_jobs=st.integers(1, 40)), order=st.sampled_from(["shuffled", "reversed", "sorted"]),
       restart=st.integers(0, 12))
def test_a_running_world_out_of_arrival_order_and_rebuilt_midway_is_the_description(
        seed, n_jobs, rate, ties, dense, zero, m, hetero, failures, rate_declared, order, restart) -> None:
    """Jobs added in index order whatever their arrivals (the offered load's running total gives way to sorting
    every job), and a rebuild at the ``restart``-th job: the description from scratch, bit for bit."""
    base = stream(seed, n_jobs, rate, ties, dense, zero, plat(m, False, hetero))
    jobs = job_ids(base.graph)
    rng = np.random.default_rng(seed)
    when = rng.uniform(0.0, 50.0, int(jobs.max()) + 1)
    if ties:
        when = np.floor(when / 10.0) * 10.0
    when = {"shuffled": when, "reversed": np.sort(when)[::-1], "sorted": np.sort(when)}[order]
    problem = type(base)(base.graph.with_(arrival=when[jobs]), base.platform, base.affinity)
    cuts = np.flatnonzero(np.diff(jobs)) + 1
    cuts = cuts[rng.random(cuts.size) < 0.5]  # several jobs at some updates
    running, seen = RunningWorld(), None
    for i, k in enumerate(cuts.tolist() + [problem.n_tasks]):
        visible = restrict(problem, k)
        cost = np.nan_to_num(visible.mean_cost, posinf=0.0)
        rank = _rank(visible)
        running.update(visible, jobs[:k], cost, rank, None if i == restart else seen)
        seen = k
        job_arrival, world = _scratch(visible, jobs[:k], rank, int(jobs[:k].max()) + 1, failures)
        elapsed = running.last - running.first
        assert (running.first, running.last) == (float(job_arrival.min()), float(visible.graph.arrival.max()))
        assert _bits(running.describe(failures, elapsed)) == _bits(world)
        assert _bits(running.job_arrival) == _bits(job_arrival)
        assert running.load() == offered_load(visible, jobs[:k], job_arrival)
