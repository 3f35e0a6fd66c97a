"""What a gated ``srjf-eft`` hands the compiled stream engine (:mod:`simsched.simulator.engine.compiled`), as
plain arrays: the engine never imports the policy (``rl-gate``, :class:`~simsched.learned.rl.gate.GatedBinding`,
lives on a higher floor).

A policy whose class declares ``compiled_kernel = "gated-srjf"`` (:data:`GATE_KERNEL`) orders and places ready
tasks as ``srjf-eft`` does (its ``compiled_tables(problem)``: a :class:`~simsched.simulator.engine.compiled.JobTables`
of rule ``"srjf"``), except where a task's earliest-finish processor is busy: there a logistic gate on
``[1, world, idle share, backlog, job remaining]`` chooses between queueing it there and taking the best idle
processor (or waiting, when none may run it and the gate never opens;
:func:`~simsched.simulator.engine.compiled_gatekernel.gate_processor`).  Everything of the gate that depends
on what has arrived only — the world features, the weights (a predictor may pick them per arrival), the
divisors of the local features, whether the policy has handed its decisions to ``srjf-eft`` (a guard) and
whether a decision counts as a late one — changes only at an arrival, so the policy computes it once per
**arrival state** before the run (``compiled_gate(problem)``, a :class:`GateTables`, or a reason to run on
SimPy), exactly as it would on the SimPy engine, arrival after arrival; the decision's own features (idle
share, backlog, the task's job's remaining work) are computed in the loop, float for float.  After the run
the engine hands back the count of late decisions and the last state the gate decided in
(``compiled_gate_ran(late, last_state)``), so the policy's count and weights end as a SimPy run leaves them.

Arrival state ``a``: the tasks there from the start (arrival <= 0) for ``a = 0``, then after the ``a``-th
arrival group (the tasks arriving at one instant; arrivals never decrease with the index, so the arrived
tasks are a prefix).  Every state a policy sees is met by a decision point (each group brings a ready
task, and ``decide`` is called at every decision point with a ready task), so the states the policy
grows through are the arrival states in order, whatever the schedule.  Runs with failures or stragglers go
to SimPy (the policy counts the failures it sees, which change its world during the run).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem

GATE_KERNEL = "gated-srjf"
"""The ``compiled_kernel`` of a gated ``srjf-eft`` (see the module docstring)."""


@dataclass(frozen=True)
class GateTables:
    """A gated ``srjf-eft``'s tables per arrival state ``a`` (``A + 1`` rows for ``A`` arrival groups; see the
    module docstring): ``fallen`` (bool) the rule decides alone; ``weights`` (A + 1, F + 4) the gate's weights
    on ``[1, world (F), idle share, backlog, job remaining]``; ``world`` (A + 1, F) the world features;
    ``backlog_scale`` the backlog's divisor (``m x max(mean task, 1e-12)``); ``job_scale`` the job remaining's
    (``max(mean job work, 1e-12)``); ``late`` (bool) a decision counts as a late one; ``n_arrived`` (int64) the
    arrived tasks.  Rows of states no decision meets (state 0 when nothing arrives at 0) are not read."""

    fallen: np.ndarray
    weights: np.ndarray
    world: np.ndarray
    backlog_scale: np.ndarray
    job_scale: np.ndarray
    late: np.ndarray
    n_arrived: np.ndarray

    def refusal(self, problem: Problem) -> str | None:
        """None when the tables cover every arrival state of ``problem`` with the shapes above, else why
        not.  O(A)."""
        states = arrival_states(problem).size
        f = self.world.shape[1] if self.world.ndim == 2 else -1
        ok = (all(a.shape == (states,) for a in (self.fallen, self.backlog_scale, self.job_scale, self.late,
                                                  self.n_arrived))
              and self.world.shape == (states, f) and self.weights.shape == (states, f + 4)
              and np.isfinite(self.weights).all() and np.isfinite(self.world).all())
        return None if ok else "the policy's gate tables do not cover the stream's arrivals"


def no_gate() -> tuple:
    """The loop's gate tables for every other policy: empty, of the same types."""
    b, f, i = np.zeros(0, dtype=np.bool_), np.zeros(0), np.zeros(0, dtype=np.int64)
    return b, np.zeros((0, 5)), np.zeros((0, 1)), f, f, b.copy(), i


def gate_args(tables: GateTables | None) -> tuple:
    """The loop's gate tables (``gt`` of :mod:`~simsched.simulator.engine.compiled_gatekernel`), contiguous and
    of the kernel's types; :func:`no_gate` for None.  O(A x F)."""
    if tables is None:
        return no_gate()
    t = tables
    return (np.ascontiguousarray(t.fallen, dtype=np.bool_), np.ascontiguousarray(t.weights, dtype=np.float64),
            np.ascontiguousarray(t.world, dtype=np.float64), np.ascontiguousarray(t.backlog_scale, dtype=np.float64),
            np.ascontiguousarray(t.job_scale, dtype=np.float64), np.ascontiguousarray(t.late, dtype=np.bool_),
            np.ascontiguousarray(t.n_arrived, dtype=np.int64))


def gate_state() -> np.ndarray:
    """The loop's gate state ``[arrival state, late decisions, last state the gate decided in]``."""
    return np.array([0, 0, -1], dtype=np.int64)


def gate_refusal(disruptions) -> str | None:
    """Why a gated rule's run goes to SimPy whatever its tables (failures or stragglers), or None.  O(1)."""
    if disruptions is not None and disruptions.active:
        return "a gated rule counts the failures it sees, with failures or stragglers it runs on the SimPy engine"
    return None


def arrival_states(problem: Problem) -> np.ndarray:
    """(A + 1,) the arrived tasks of each arrival state (see the module docstring) of ``problem``, whose
    arrivals never decrease with the index.  O(n)."""
    a = problem.graph.arrival
    late = a > 0
    _, counts = np.unique(a[late], return_counts=True)
    out = np.zeros(counts.size + 1, dtype=np.int64)
    out[0] = int(np.count_nonzero(~late))
    np.cumsum(counts, out=out[1:])
    out[1:] += out[0]
    return out
