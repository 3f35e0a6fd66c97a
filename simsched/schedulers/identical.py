"""P|prec|Cmax: identical processors, precedence, no communication — recognition, lower bounds, decoder.

This is the setting of Kasahara's Standard Task Graph set (Tobita & Kasahara, J. Scheduling 5(5),
2002), in which its optima were proven.  Three pieces, shared by :mod:`~simsched.schedulers.search`
and :mod:`~simsched.schedulers.bnb`:

* :func:`identical_case` recognises a :class:`Problem` of this kind (every processor runs every
  task at the same cost, transfers are free, every task arrives together) and returns its
  :class:`Identical` form: integer-free durations, predecessor lists, processor count;
* :func:`heads_tails` and :func:`energetic_bound`: lower bounds stronger than the trivial
  ``max(critical path, work / m)``.  Heads (tails) are the earliest start (least time after the
  end) of each task, the longest path strengthened by the work of its ancestors (descendants):
  every ancestor of ``i`` whose head is at least ``h`` runs after ``h`` and before ``i``, so
  ``head_i >= h + ceil(W / m)`` (Fernandez & Bussell, IEEE TC 22(8), 1973; Hu, Oper. Res. 9(6),
  1961 for the counting argument).  A candidate makespan ``C`` gives each task a window
  ``[head_i, C - tail_i]``; energetic reasoning (Lopez, Erschler & Esquirol 1992; Baptiste, Le Pape
  & Nuijten, *Constraint-Based Scheduling*, 2001, ch. 3) rejects ``C`` when some interval
  ``[t1, t2]`` must contain more than ``m (t2 - t1)`` units of mandatory work.  The bound is the
  least ``C`` not rejected;
* :func:`decode`: the list decoder — each task in list order starts at ``max(ready, earliest free
  processor)``.  Decoding an optimal schedule's tasks in order of start time yields starts no
  later than the optimal ones (every processor-free time is dominated), so optimising over lists
  loses nothing.

All bounds are valid for every schedule of the problem (not only list schedules); a test checks
that they never exceed the published optima of the shipped STG set.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem

_CLOSURE_CAP = 3000
"""Largest task count for which ancestor sets (an n x n boolean matrix) are built."""

LINEAR_STEPS = 32
"""Unit steps of :func:`energetic_bound` before it bisects."""

ENERGETIC_CAP = 200
"""Largest task count for the energetic test (O(n^3) per candidate makespan); larger problems get
the head/tail and trivial bounds only."""


@dataclass(frozen=True)
class Identical:
    """A P|prec|Cmax instance: ``p`` durations, ``m`` processors, ``preds``/``succs`` adjacency
    lists, ``topo`` a topological order, ``integral`` whether every duration is an integer."""

    p: np.ndarray
    m: int
    preds: list[list[int]]
    succs: list[list[int]]
    topo: np.ndarray
    integral: bool

    @property
    def n(self) -> int:
        return int(self.p.size)


def identical_case(problem: Problem) -> Identical | None:
    """The problem as P|prec|Cmax, or None when it is not one: processors differ in some task's
    cost, a task is not eligible everywhere, a transfer between two processors costs time, or tasks
    arrive at different times.  O(n m + e)."""
    g = problem.graph
    W = problem.W
    if g.n_tasks == 0 or not problem.eligible.all() or np.ptp(g.arrival) > 0:
        return None
    if W.shape[1] > 1 and not np.all(W == W[:, :1]):
        return None
    if problem.n_processors > 1 and g.n_edges:
        off = ~np.eye(problem.n_processors, dtype=bool)
        free = np.all(problem.latency[off] == 0) and (np.all(g.edge_data == 0)
                                                       or np.all(problem.inv_bandwidth[off] == 0))
        if not free:
            return None
    p = np.ascontiguousarray(W[:, 0], dtype=np.float64)
    if not np.all(np.isfinite(p)):
        return None
    n = g.n_tasks
    preds = [[int(v) for v in g.edge_src[g.pred_edges[g.pred_ptr[t]:g.pred_ptr[t + 1]]]] for t in range(n)]
    succs = [[int(v) for v in g.edge_dst[g.succ_edges[g.succ_ptr[t]:g.succ_ptr[t + 1]]]] for t in range(n)]
    topo = np.lexsort((np.arange(n), g.level))
    return Identical(p, int(problem.n_processors), preds, succs, topo, bool(np.all(p == np.round(p))))


def _ceil(x: np.ndarray | float, integral: bool) -> np.ndarray | float:
    return np.ceil(np.asarray(x) - 1e-9) if integral else x


def _closure(inst: Identical) -> np.ndarray:
    """(n, n) boolean: ``anc[i, j]`` when j is a proper ancestor of i.  O(n e / 64) via numpy rows."""
    anc = np.zeros((inst.n, inst.n), dtype=bool)
    for t in inst.topo:
        for j in inst.preds[t]:
            anc[t] |= anc[j]
            anc[t, j] = True
    return anc


def _heads(inst: Identical, preds: list[list[int]], order: np.ndarray, anc: np.ndarray | None) -> np.ndarray:
    """Earliest starts: longest path, strengthened by ``h + ceil(W(ancestors with head >= h) / m)``
    over the ancestors' heads ``h``.  O(n^2 log n) with ancestor sets, O(n + e) without."""
    p, m = inst.p, inst.m
    head = np.zeros(inst.n)
    for t in order:
        t = int(t)
        h = max((head[j] + p[j] for j in preds[t]), default=0.0)
        if anc is not None and m > 1 and preds[t]:
            a = np.flatnonzero(anc[t])
            hs = head[a]
            k = np.argsort(-hs, kind="stable")
            suffix_work = np.cumsum(p[a][k])  # work of the ancestors with head >= hs[k[i]]
            h = max(h, float(np.max(hs[k] + _ceil(suffix_work / m, inst.integral))))
        head[t] = h
    return head


def heads_tails(inst: Identical) -> tuple[np.ndarray, np.ndarray]:
    """``(head, tail)``: a lower bound on each task's start, and on the time between its end and the
    makespan, valid in every schedule (see the module docstring).  O(n^2 log n) for n up to 3,000
    (then plain longest paths, O(n + e))."""
    anc = _closure(inst) if inst.n <= _CLOSURE_CAP else None
    head = _heads(inst, inst.preds, inst.topo, anc)
    tail = _heads(inst, inst.succs, inst.topo[::-1], anc.T.copy() if anc is not None else None)
    return head, tail


def trivial_bound(inst: Identical) -> float:
    """``max(critical path, work / m)``, rounded up for integer durations.  O(n + e)."""
    head = np.zeros(inst.n)
    for t in inst.topo:
        head[t] = max((head[j] + inst.p[j] for j in inst.preds[int(t)]), default=0.0)
    cp = float(np.max(head + inst.p))
    return float(_ceil(max(cp, float(inst.p.sum()) / inst.m), inst.integral))


def energetic_infeasible(inst: Identical, head: np.ndarray, tail: np.ndarray, C: float) -> bool:
    """True when makespan ``C`` is impossible: a task's window ``[head, C - tail]`` is shorter than
    its duration, or an interval ``[t1, t2]`` holds more mandatory work than ``m (t2 - t1)``.
    Windows from the heads, latest starts, deadlines and earliest ends: O(k^2 n) with k <= 2n,
    vectorised in blocks of 4M entries; the interval test is skipped above :data:`ENERGETIC_CAP`
    tasks."""
    p, m = inst.p, inst.m
    deadline = C - tail
    if np.any(head + p > deadline + 1e-9):
        return True
    if m >= inst.n or inst.n > ENERGETIC_CAP:
        return False
    busy = p > 0
    if not busy.any():
        return False
    r, d, q = head[busy], deadline[busy], p[busy]
    t1s = np.unique(np.concatenate([r, d - q]))
    t2s = np.unique(np.concatenate([d, r + q]))
    right = np.clip(t2s[:, None] - (d - q)[None], 0.0, q[None])  # (B, n): work forced before t2
    block = max(1, 4_000_000 // (t2s.size * q.size))
    for lo in range(0, t1s.size, block):
        t1 = t1s[lo:lo + block]
        left = np.clip((r + q)[None] - t1[:, None], 0.0, q[None])  # (A, n): work forced after t1
        span = t2s[None, :] - t1[:, None]  # (A, B)
        need = np.minimum(np.minimum(left[:, None, :], right[None, :, :]), np.maximum(span, 0.0)[..., None])
        excess = need.sum(axis=2) - m * span
        if np.any((span > 0) & (excess > 1e-9)):
            return True
    return False


def energetic_bound(inst: Identical, upper: float | None = None,
                    heads: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """The least makespan that neither the heads and tails nor energetic reasoning rule out (for
    integer durations: an integer), a lower bound on every schedule's makespan, at least the trivial
    bound; stops at ``upper`` (a known makespan) if given.

    A schedule of makespan C* passes the test at every C >= C*, so each rejected C proves C* > C.
    Integer durations: steps of 1 from the largest simple bound for up to :data:`LINEAR_STEPS` steps
    (the gap is a few units on the STG set), then bisection up to ``upper`` or a list schedule's
    makespan; fractional durations: 40 bisection steps.  Cost: O(steps x k^2 n) with k <= 2n
    candidate interval ends, steps <= LINEAR_STEPS + log2(range)."""
    head, tail = heads if heads is not None else heads_tails(inst)
    lo = float(_ceil(max(trivial_bound(inst), float(np.max(head + inst.p + tail))), inst.integral))
    if upper is not None and lo >= upper:
        return float(upper)
    if not energetic_infeasible(inst, head, tail, lo):
        return lo
    hi = float(upper) if upper is not None else decode(inst, order_by_keys(inst, -(tail + inst.p)))[2]
    if inst.integral:  # invariant: lo rejected (so C* > lo), hi a makespan or the caller's cap
        for _ in range(LINEAR_STEPS):
            if hi - lo <= 1 or not energetic_infeasible(inst, head, tail, lo + 1):
                return min(lo + 1, hi)
            lo += 1
        while hi - lo > 1:
            mid = float(math.floor(0.5 * (lo + hi)))
            if energetic_infeasible(inst, head, tail, mid):
                lo = mid
            else:
                hi = mid
        return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if energetic_infeasible(inst, head, tail, mid):
            lo = mid
        else:
            hi = mid
    return lo


def bound_of(problem: Problem, upper: float | None = None) -> float | None:
    """:func:`energetic_bound` of the problem measured from its first arrival, or None when it is not
    P|prec|Cmax (see :func:`identical_case`)."""
    inst = identical_case(problem)
    return None if inst is None else energetic_bound(inst, upper)


def decode(inst: Identical, sequence: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """List schedule of a topological ``sequence``: each task starts at ``max(ready, earliest free
    processor)`` on that processor.  Returns ``(start, processor, makespan)``.  O(n log m + e)."""
    p, preds = inst.p, inst.preds
    n, m = inst.n, inst.m
    start = np.zeros(n)
    finish = np.zeros(n)
    proc = np.zeros(n, dtype=np.int64)
    free = [(0.0, k) for k in range(min(m, n))]
    fin = finish.tolist()
    pl = p.tolist()
    st = [0.0] * n
    pr = [0] * n
    for t in sequence.tolist():
        ready = max((fin[j] for j in preds[t]), default=0.0)
        f, k = heapq.heappop(free)
        s = f if f > ready else ready
        st[t] = s
        fin[t] = s + pl[t]
        pr[t] = k
        heapq.heappush(free, (fin[t], k))
    start[:] = st
    finish[:] = fin
    proc[:] = pr
    return start, proc, float(finish.max()) if n else 0.0


def reversed_case(inst: Identical) -> Identical:
    """The instance with every edge reversed (for backward passes).  O(n + e)."""
    return Identical(inst.p, inst.m, inst.succs, inst.preds, inst.topo[::-1].copy(), inst.integral)


def order_by_keys(inst: Identical, keys: np.ndarray) -> np.ndarray:
    """The topological order that always takes the ready task of least key (ties: lower index).
    O(n log n + e)."""
    n = inst.n
    indeg = [len(ps) for ps in inst.preds]
    k = keys.tolist()
    heap = [(k[t], t) for t in range(n) if indeg[t] == 0]
    heapq.heapify(heap)
    out = []
    succs = inst.succs
    while heap:
        _, t = heapq.heappop(heap)
        out.append(t)
        for s in succs[t]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (k[s], s))
    return np.array(out, dtype=np.int64)


def _justify(inst: Identical, back: Identical, start: np.ndarray, deadline: float = math.inf
             ) -> tuple[np.ndarray, float]:
    """Forward-backward improvement until it stops improving (Li & Willis, EJOR 56(3), 1992; Valls,
    Ballestín & Quintanilla, EJOR 165(2), 2005): decode the reversed graph in order of decreasing
    finish, then the graph in order of the mirrored starts.  Each pass keeps the makespan or
    shortens it (list decoding in order of a schedule's starts never starts a task later).
    Returns ``(start, makespan)``; no new pass starts after ``deadline`` (a perf_counter time).
    O(passes x (n log n + e))."""
    p = inst.p
    best_mk = float(np.max(start + p))
    while time.perf_counter() < deadline:
        b_start, _, b_mk = decode(back, order_by_keys(back, best_mk - (start + p)))
        mirrored = b_mk - (b_start + p)
        f_start, _, f_mk = decode(inst, order_by_keys(inst, mirrored))
        if f_mk >= best_mk - 1e-9:
            break
        start, best_mk = f_start, f_mk
    return start, best_mk


def identical_search(inst: Identical, bound: float, *, time_limit_s: float = 1.0, iterations: int | None = None,
                     seed: int = 0, clock: float | None = None) -> tuple[np.ndarray, np.ndarray, float, dict]:
    """Iterated greedy on priority lists for P|prec|Cmax: list decoding (:func:`decode`) of
    critical-path priority rules, forward-backward improvement of each, then rounds of perturbing
    the best start times (noise on a random fraction of tasks, or a random critical-path rule),
    decoding and improving; stops at ``bound`` (then optimal), ``time_limit_s`` from ``clock`` or
    ``iterations`` rounds.  Returns ``(start, processor, makespan, stats)``.  One round:
    O(n log n + e) per pass, a few passes."""
    clock = time.perf_counter() if clock is None else clock
    rng = np.random.default_rng(seed)
    back = reversed_case(inst)
    head, tail = heads_tails(inst) if inst.n <= 3000 else (np.zeros(inst.n), np.zeros(inst.n))
    p = inst.p
    scale = float(p.mean()) or 1.0
    tol = 1e-9 * max(1.0, bound)
    best_start, best_mk = None, math.inf
    rounds = decodes = 0
    rules = [-(tail + p), -(tail + p) + 1e-3 * head, head, -(tail + p) - 1e-3 * p, -p]
    deadline = clock + time_limit_s
    for keys in rules:
        start, _, mk = decode(inst, order_by_keys(inst, keys))
        start, mk = _justify(inst, back, start, deadline)
        decodes += 1
        if mk < best_mk:
            best_start, best_mk = start, mk
        if best_mk <= bound + tol or time.perf_counter() >= deadline:
            break
    cur_start, cur_mk = best_start, best_mk
    while best_mk > bound + tol and (iterations is None or rounds < iterations):
        if time.perf_counter() - clock >= time_limit_s:
            break
        rounds += 1
        if rng.random() < 0.1:
            keys = -(tail + p) * rng.uniform(0.8, 1.2, inst.n)
        else:
            keys = cur_start + (cur_start + p) * 1e-6
            chosen = rng.random(inst.n) < rng.uniform(0.02, 0.25)
            keys = keys + chosen * rng.normal(0.0, scale * rng.uniform(0.5, 3.0), inst.n)
        start, _, mk = decode(inst, order_by_keys(inst, keys))
        start, mk = _justify(inst, back, start, deadline)
        decodes += 1
        if mk <= cur_mk + tol or rng.random() < 0.02:
            cur_start, cur_mk = start, mk
        if mk < best_mk - tol:
            best_start, best_mk = start, mk
        if rounds % 200 == 0:
            cur_start, cur_mk = best_start, best_mk
    start, proc, mk = decode(inst, order_by_keys(inst, best_start + (best_start + p) * 1e-6))
    return start, proc, mk, {"rounds": rounds, "decodes": decodes}
