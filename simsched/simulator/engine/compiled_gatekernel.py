"""A gated ``srjf-eft`` in numba, for the compiled stream engine: the choice between queueing a task on its
busy earliest-finish processor and taking the best idle one instead, decided by a logistic gate on
``[1, world, idle share, backlog, job remaining]`` (:mod:`simsched.simulator.engine.compiled_gate` says what
the policy hands over; ``rl-gate``, :class:`~simsched.learned.rl.gate.GatedBinding`, is the policy).

Every float is made as the policy makes it on the SimPy engine: the backlog's sum is numpy's pairwise
summation (``ndarray.sum`` of the masked costs, :func:`pairwise_masked`), the logarithms are the C
library's ``log1p`` (``math.log1p`` in the policy), the dot product a sum from the left (the policy's
``_dot``), the sigmoid the policy's two-sided one with ``math.exp``.  Imported only with numba installed.

The gate tables ``gt`` are ``(fallen, weights, world, backlog_scale, job_scale, late, n_arrived)`` per
arrival state (:class:`~simsched.simulator.engine.compiled_gate.GateTables`); the gate state ``gz`` (int64) is
:func:`~simsched.simulator.engine.compiled_gate.gate_state`'s.  With failures the tables are filled during the run
(:func:`count_decision`): at a decision the loop counts the processors the policy sees down and asks the policy
for the state's row in object mode (:func:`~simsched.simulator.engine.compiled_gate.gate_row`), O(m) a decision
plus the policy's own cost once per arrival state (and at decisions while failures seen may change its row).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from simsched.simulator.engine.compiled_gate import (
    DONE,
    DOWN,
    FAILURES,
    FILLED,
    KEY,
    LAST,
    LATE,
    PENDING,
    STATE,
    gate_row,
)

PW_BLOCK = 128
"""numpy's pairwise summation block (``PW_BLOCKSIZE``)."""


@numba.njit(cache=True)
def _term(i, cost, proc_of, finish):  # pragma: no cover - compiled
    """The policy's ``unassigned * cost`` at task ``i``: its mean cost when it is neither assigned nor
    finished, else 0."""
    return (1.0 if proc_of[i] < 0 and finish[i] != finish[i] else 0.0) * cost[i]


@numba.njit(cache=True)
def _block(lo, n, cost, proc_of, finish):  # pragma: no cover - compiled
    """numpy's pairwise sum of at most :data:`PW_BLOCK` terms :func:`_term` from task ``lo``: below 8 one
    after another, else eight running sums folded as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``
    and the rest added on.  O(n)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += _term(i, cost, proc_of, finish)
        return res
    r = np.empty(8)
    for j in range(8):
        r[j] = _term(lo + j, cost, proc_of, finish)
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += _term(lo + i + j, cost, proc_of, finish)
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += _term(lo + i, cost, proc_of, finish)
        i += 1
    return res


@numba.njit(cache=True)
def pairwise_masked(lo, n, cost, proc_of, finish):  # pragma: no cover - compiled
    """numpy's pairwise sum (``DOUBLE_pairwise_sum``) of the ``n`` terms :func:`_term` from task ``lo``:
    ``(unassigned * cost)[lo:lo + n].sum()``, float for float.  Up to :data:`PW_BLOCK` terms a block
    (:func:`_block`), else the sum of the two halves split at ``n // 2`` rounded down to a multiple of 8,
    left first; walked with an explicit stack (numba's cache does not keep recursive functions safely).
    O(n)."""
    if n <= PW_BLOCK:
        return _block(lo, n, cost, proc_of, finish)
    depth = 2 * 64
    f_lo = np.empty(depth, dtype=np.int64)
    f_n = np.empty(depth, dtype=np.int64)
    f_stage = np.empty(depth, dtype=np.int64)
    vals = np.empty(depth)
    top, nv = 1, 0
    f_lo[0], f_n[0], f_stage[0] = lo, n, 0
    while top > 0:
        i = top - 1
        a, k = f_lo[i], f_n[i]
        if k <= PW_BLOCK:
            vals[nv] = _block(a, k, cost, proc_of, finish)
            nv += 1
            top -= 1
            continue
        n2 = k // 2
        n2 -= n2 % 8
        if f_stage[i] == 0:  # the left half first
            f_stage[i] = 1
            f_lo[top], f_n[top], f_stage[top] = a, n2, 0
            top += 1
        elif f_stage[i] == 1:  # then the right half
            f_stage[i] = 2
            f_lo[top], f_n[top], f_stage[top] = a + n2, k - n2, 0
            top += 1
        else:  # left + right
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
            top -= 1
    return vals[0]


@numba.njit(cache=True)
def backlog(gt, a, cost, proc_of, finish):  # pragma: no cover - compiled
    """The decision's backlog feature in arrival state ``a``: ``log1p`` of the arrived tasks' unassigned mean
    work over ``m x max(mean task, 1e-12)``; 0 when its weight is 0 (a finite feature times a zero weight
    adds nothing to the gate's sum).  O(arrived tasks), else O(1)."""
    if gt[1][a, -2] == 0.0:
        return 0.0
    return math.log1p(pairwise_masked(0, gt[6][a], cost, proc_of, finish) / gt[3][a])


@numba.njit(cache=True)
def sigmoid(x):  # pragma: no cover - compiled
    """The policy's ``_sigmoid``: ``1 / (1 + e^-x)`` for ``x >= 0``, else ``e^x / (1 + e^x)``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@numba.njit(cache=True)
def threshold(gt, a, idle_share, back, remaining):  # pragma: no cover - compiled
    """``sigmoid(w . [1, world, idle share, backlog, job remaining])`` in arrival state ``a``, the dot product
    summed from the left.  O(features)."""
    w, world = gt[1][a], gt[2][a]
    s = 0.0
    s += 1.0 * w[0]
    for i in range(world.size):
        s += world[i] * w[1 + i]
    f = world.size + 1
    s += idle_share * w[f]
    s += back * w[f + 1]
    s += remaining * w[f + 2]
    return sigmoid(s)


@numba.njit(cache=True)
def gate_processor(p, now, ct, idle, n_idle, gt, a, back, job_remaining):  # pragma: no cover - compiled
    """The policy's ``_processor_for`` where task's earliest-finish processor ``p`` is busy: ``p`` when the gate
    opens (the idle processor's gain ``(ct[q] - ct[p]) / max(ct[q] - now, 1e-12)`` at least the threshold),
    else the best idle processor ``q`` (``np.argmin`` over ``ct`` with the busy ones at inf); with no idle
    processor that may run it, -1 (the task waits) when the gate never opens, else ``p``.  ``back``: the
    decision's backlog (:func:`backlog`); ``job_remaining``: the task's job's remaining mean work (the
    policy's sum; read only when its weight is not 0).  O(m + features)."""
    m = idle.size
    q = -1
    best = np.inf
    for r in range(m):
        v = ct[r] if idle[r] else np.inf
        if v != v:  # np.argmin: the first NaN
            q, best = r, v
            break
        if q < 0 or v < best:
            q, best = r, v
    remaining = 0.0
    if gt[1][a, -1] != 0.0:
        remaining = math.log1p(job_remaining / gt[4][a])
    thr = threshold(gt, a, n_idle / m, back, remaining)
    if best < np.inf and best > -np.inf:
        d = best - now
        if 1e-12 > d:
            d = 1e-12
        gain = (best - ct[p]) / d
        return p if gain >= thr else q
    return -1 if thr >= 1.0 else p


@numba.njit(cache=True)
def _fill(gt, gz, a, now, first):  # pragma: no cover - compiled
    """Row ``a`` of lazy tables from the policy (:func:`~simsched.simulator.engine.compiled_gate.gate_row`, in
    object mode: ``now`` NaN at the state's first decision, ``first`` the run's), written into ``gt``; whether it
    fell back and whether its row may change with failures seen go to ``gz``.  The policy's cost plus O(F)."""
    key, f = gz[KEY], gz[FAILURES]
    with numba.objmode(row="float64[:]"):
        row = gate_row(key, a, f, now, first)
    n_world = gt[2].shape[1]
    gt[0][a] = row[0] != 0.0
    gt[5][a] = row[1] != 0.0
    gz[DONE] = 1 if row[2] != 0.0 else 0
    gz[PENDING] = 1 if row[3] != 0.0 else 0
    gt[3][a] = row[4]
    gt[4][a] = row[5]
    for i in range(n_world):
        gt[2][a, i] = row[6 + i]
    for i in range(n_world + 4):
        gt[1][a, i] = row[6 + n_world + i]


@numba.njit(cache=True)
def _lazy_row(gt, gz, now, ee, running, qlen, down):  # pragma: no cover - compiled
    """A decision with lazy tables, as the policy's ``decide`` goes: at the state's first decision its row from the
    policy grown (a fallen back policy's later rows: the rule alone, nothing asked); unless the rule decides alone,
    the processors it sees down (``available > now``, nothing assigned, not idle: ``processors_down``), those that
    went down since its last decision counted, and its row asked again while failures seen may change it.
    O(m), plus :func:`_fill`."""
    a = gz[STATE]
    if gz[FILLED] != a:
        if gz[DONE]:
            gt[0][a] = True
        else:
            _fill(gt, gz, a, np.nan, gz[FILLED] < 0)
        gz[FILLED] = a
    if gt[0][a]:
        return
    for q in range(ee.size):
        available = ee[q] if ee[q] > now else now
        work = running[q] >= 0 or qlen[q] > 0
        idle = running[q] < 0 and qlen[q] == 0 and not down[q]
        seen = available > now and not work and not idle
        if seen and gz[DOWN + q] == 0:
            gz[FAILURES] += 1
        gz[DOWN + q] = 1 if seen else 0
    if gz[FAILURES] > 0 and gz[PENDING]:
        _fill(gt, gz, a, now, False)


@numba.njit(cache=True)
def count_decision(gt, gz, now, ee, running, qlen, down):  # pragma: no cover - compiled
    """A decision point of the gated rule (the policy's ``decide`` runs there): with lazy tables the state's row
    (:func:`_lazy_row`); then count it as late where the state's gate never queues (the predictor chose to wait)
    and remember the state, unless the rule decides alone in it.  O(1), lazy O(m) plus the policy's rows."""
    if gz[KEY] != 0:
        _lazy_row(gt, gz, now, ee, running, qlen, down)
    a = gz[STATE]
    if gt[0].size and not gt[0][a]:
        if gt[5][a]:
            gz[LATE] += 1
        gz[LAST] = a
