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
grows through are the arrival states in order, whatever the schedule.

**Failures** (and stragglers: any run with disruptions): the policy counts the processors it sees go down at its
decisions, and its world (failure rate), guard and predictor move with them during the run, so no row can be
computed before it.  The tables are then :attr:`GateTables.lazy`: the loop counts the failures as the policy does
(:func:`~simsched.simulator.engine.compiled_gatekernel.count_decision`) and asks the policy for each state's row at
the state's first decision, and again at a later decision while failures seen may change it, through
:func:`gate_row` (``policy.compiled_gate_row(state, failures, first, now)``, run by the policy's own code: the same
floats).  The run's key (:func:`lazy_rows`) names the policy to the loop.  The same holds with gang tasks: once
one has arrived the rule places alone, and the policy stops counting failures, as on SimPy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count

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
    arrived tasks.  Rows of states no decision meets (state 0 when nothing arrives at 0) are not read.  ``lazy``:
    the rows are filled during the run (see the module docstring), else before it."""

    fallen: np.ndarray
    weights: np.ndarray
    world: np.ndarray
    backlog_scale: np.ndarray
    job_scale: np.ndarray
    late: np.ndarray
    n_arrived: np.ndarray
    lazy: bool = False

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
    """The loop's gate tables (``gt`` of :mod:`~simsched.simulator.engine.compiled_gatekernel`): writable copies of
    the kernel's types (the loop fills lazy tables' rows; one compiled form whatever the caller passes);
    :func:`no_gate` for None.  O(A x F)."""
    if tables is None:
        return no_gate()
    t = tables
    return (np.array(t.fallen, dtype=np.bool_), np.array(t.weights, dtype=np.float64),
            np.array(t.world, dtype=np.float64), np.array(t.backlog_scale, dtype=np.float64),
            np.array(t.job_scale, dtype=np.float64), np.array(t.late, dtype=np.bool_),
            np.array(t.n_arrived, dtype=np.int64))


STATE, LATE, LAST, FILLED, KEY, FAILURES, DONE, PENDING, DOWN = range(9)
"""The loop's gate state (:func:`gate_state`): the arrival state, the late decisions, the last state the gate decided
in (-1: none), the last state whose row the loop filled (-1: none yet), the run's :func:`lazy_rows` key (0: rows filled
before the run), the failures the policy has seen, whether the policy fell back (no later row is read), whether
failures seen may change the current row; from ``DOWN`` on, per processor, whether the policy saw it down at its
last decision."""


def gate_state(m: int = 0, key: int = 0) -> np.ndarray:
    """The loop's gate state (int64; see :data:`STATE`) for ``m`` processors, rows filled before the run (``key``
    0) or by the run's policy (:func:`lazy_rows`).  O(m)."""
    gz = np.zeros(DOWN + m, dtype=np.int64)
    gz[LAST] = gz[FILLED] = -1
    gz[KEY] = key
    return gz


_LAZY: dict[int, tuple] = {}
"""The policies and tables of the runs now filling their rows (:func:`lazy_rows`), by key."""

_keys = count(1)


@contextmanager
def lazy_rows(policy, tables: GateTables | None) -> Iterator[int]:
    """The key (a context) under which the loop's :func:`gate_row` finds ``policy`` and its ``tables`` while a run
    fills their rows (:attr:`GateTables.lazy`), dropped after; 0 for tables filled before the run, or none.
    O(1)."""
    if tables is None or not tables.lazy:
        yield 0
        return
    key = next(_keys)
    _LAZY[key] = (policy, tables)
    try:
        yield key
    finally:
        del _LAZY[key]


def gate_row(key: int, a: int, failures: int, now: float, first: bool) -> np.ndarray:
    """What the loop asks (in object mode) at a decision in arrival state ``a`` of a run with lazy tables: the
    policy fills row ``a`` (``policy.compiled_gate_row``: ``now`` NaN the state's first decision, ``first`` the
    run's), and the row comes back as one float array ``[rule alone, late, fell back, may change, backlog scale,
    job scale, world (F), weights (F + 4)]``.  The policy's cost: its world description's a first decision, else
    O(F^2)."""
    policy, t = _LAZY[int(key)]
    a = int(a)
    done, pending = policy.compiled_gate_row(a, int(failures), bool(first), None if now != now else float(now))
    head = [float(t.fallen[a]), float(t.late[a]), float(done), float(pending), float(t.backlog_scale[a]),
            float(t.job_scale[a])]
    return np.concatenate([head, t.world[a], t.weights[a]]).astype(np.float64)


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


def gate_ran(policy, gz: np.ndarray) -> None:
    """Hand a gated policy what its run left in the gate state ``gz``: its late decisions, the last state the gate
    decided in and the failures it saw (``policy.compiled_gate_ran``).  O(1)."""
    policy.compiled_gate_ran(int(gz[LATE]), int(gz[LAST]), int(gz[FAILURES]))
