"""Any-time local search for the makespan: iterated greedy over priority lists and processor choices.

The search keeps a plan as a processor per task and a topological *sequence* (each processor runs
its tasks in sequence order, each as early as possible); such a plan is evaluated exactly by the
batched fast evaluator (:func:`~simsched.simulator.evaluate_batch.evaluate_sequences`), a whole
neighbourhood in one vectorised pass.  The loop (iterated greedy, Ruiz & Stützle, EJOR 177(3), 2007,
with a batched first-level neighbourhood in the style of Kolisch & Hartmann's survey of RCPSP
heuristics, EJOR 174(1), 2006):

1. **Construct**: the better of HEFT (upward-rank order, insertion-based earliest finish; Topcuoglu
   et al. 2002) and ETF (earliest start first; Hwang et al., SIAM J. Comput. 18(2), 1989).
2. **Improve**: sample ``neighbours`` moves of the current plan, biased to *critical* tasks (those
   with no slack in the current schedule): move a task to another eligible processor, shift it to
   another place between its last predecessor and its first successor in the sequence, or both.
   Evaluate all of them in one batch; take the best if it does not worsen (makespan, then the sum
   of finish times, so that plateau moves that compact the schedule are taken).
3. **Perturb** when ``patience`` rounds brought nothing: add noise to the start times of a random
   subset of the best plan's tasks, re-decode the resulting priority list with HEFT's insertion
   rule (:func:`~simsched.schedulers.heft.heft_schedule` with a given order), and improve from there.

**Identical processors without communication** (P|prec|Cmax, :mod:`simsched.schedulers.identical`):
the search runs on priority lists instead, with the list decoder and forward-backward improvement
(:func:`~simsched.schedulers.identical.identical_search`), and stops at the energetic lower bound —
on Kasahara's STG set this reaches the best known makespans within a fraction of a second.

It stops at the time limit, after ``iterations`` rounds (reproducible runs), or as soon as the
makespan reaches the lower bound of :mod:`simsched.simulator.bounds` (rounded up for integer data,
:func:`integral_bound`; then it is proven optimal).
The plan's ``info`` says ``makespan``, ``lower_bound``, ``gap_to_lower_bound``, ``rounds``,
``evaluations`` and ``proven_by_bound``.  Cost per round: O(neighbours x (n D)) in n numpy steps
(D the largest in-degree) plus O(neighbours x n) to build the moves.
"""

from __future__ import annotations

import math
import time

import numpy as np

from simsched.errors import InfeasibleError
from simsched.schedulers.etf import etf_schedule
from simsched.schedulers.heft import heft_schedule
from simsched.schedulers.identical import (
    Identical,
    energetic_bound,
    heads_tails,
    identical_case,
    identical_search,
    order_by_keys,
)
from simsched.simulator.bounds import lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.evaluate_batch import evaluate_sequences, sequence_from_keys
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def _critical(problem: Problem, proc: np.ndarray, seq: np.ndarray, start: np.ndarray,
              finish: np.ndarray) -> np.ndarray:
    """Tasks with zero slack: latest start (backward pass over graph and processor chains, from the
    makespan) equals the start.  O(n + e) with a Python pass over the sequence."""
    g = problem.graph
    n = g.n_tasks
    makespan = float(finish.max())
    latest_finish = np.full(n, makespan)
    delays = problem.edge_delays(proc)
    nxt = np.full(n, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for t in seq[::-1]:
        t = int(t)
        q = int(proc[t])
        nxt[t] = last.get(q, -1)
        last[q] = t
    dur = finish - start
    latest_start = np.empty(n)
    succ_ptr, succ_edges, edge_dst = g.succ_ptr, g.succ_edges, g.edge_dst
    for t in seq[::-1]:
        t = int(t)
        lf = latest_finish[t]
        for k in succ_edges[succ_ptr[t]:succ_ptr[t + 1]]:
            lf = min(lf, latest_start[edge_dst[k]] - delays[k])
        if nxt[t] >= 0:
            lf = min(lf, latest_start[nxt[t]])
        latest_finish[t] = lf
        latest_start[t] = lf - dur[t]
    tol = 1e-9 * max(1.0, makespan)
    return np.flatnonzero(latest_start - start <= tol)


def integral_bound(problem: Problem) -> float:
    """:func:`~simsched.simulator.bounds.lower_bound`, rounded up when every execution time, transfer
    time and arrival is an integer (then every left-justified schedule's makespan is an integer).
    O(n m + e m^2) for the check, skipped (bound not rounded) past 10^7 transfer entries."""
    bound = lower_bound(problem)
    g = problem.graph
    m = problem.n_processors
    if g.n_edges * m * m > 10_000_000:
        return bound
    parts = [problem.W[problem.eligible], g.arrival]
    if g.n_edges and m > 1:
        parts.append((problem.latency[None] + g.edge_data[:, None, None] * problem.inv_bandwidth[None]).ravel())
    values = np.concatenate(parts)
    if np.all(values == np.round(values)):
        return float(math.ceil(bound - 1e-9 * max(1.0, bound)))
    return bound


def reversed_problem(problem: Problem) -> Problem | None:
    """The problem with every edge reversed (same execution times, processors and network), for
    backward passes; None when a backward pass would not mirror the forward one: tasks arrive at
    different times, or a transfer from p to q costs differently from q to p.  O(n m + e)."""
    from simsched.workloads.taskgraph import TaskGraph

    g = problem.graph
    if np.ptp(g.arrival) > 0 or not (np.array_equal(problem.latency, problem.latency.T)
                                     and np.array_equal(problem.inv_bandwidth, problem.inv_bandwidth.T)):
        return None
    rev = TaskGraph(g.names, np.stack([g.edge_dst, g.edge_src], axis=1), g.edge_data, cost=problem.W)
    return Problem(rev, problem.platform)


def justify(problem: Problem, backward: Problem, proc: np.ndarray, finish: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Double justification (Valls, Ballestín & Quintanilla, EJOR 165(2), 2005) with the processors
    fixed: schedule the reversed problem in order of decreasing finish time, then the problem in
    order of decreasing backward finish time; returns ``(sequence, finish)`` of the forward pass,
    whose makespan is never larger in practice (the caller keeps the better).  Two evaluations."""
    back = evaluate_sequences(backward, proc, sequence_from_keys(backward, -finish)[0])
    seq = sequence_from_keys(problem, -back.finish[0])[0]
    return seq, evaluate_sequences(problem, proc, seq).finish[0]


class _Moves:
    """Neighbourhood sampler for one problem: sequence windows from predecessor/successor lists."""

    def __init__(self, problem: Problem, rng: np.random.Generator) -> None:
        g = problem.graph
        self.g, self.rng = g, rng
        self.preds = [g.edge_src[g.pred_edges[g.pred_ptr[t]:g.pred_ptr[t + 1]]] for t in range(g.n_tasks)]
        self.succs = [g.edge_dst[g.succ_edges[g.succ_ptr[t]:g.succ_ptr[t + 1]]] for t in range(g.n_tasks)]
        self.choices = [np.flatnonzero(row) for row in problem.eligible]

    def sample(self, proc: np.ndarray, seq: np.ndarray, critical: np.ndarray, k: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """(k, n) processors and sequences, each one move away from ``(proc, seq)``.  O(k n)."""
        rng, n = self.rng, proc.size
        pos = np.empty(n, dtype=np.int64)
        pos[seq] = np.arange(n)
        pick_critical = rng.random(k) < 0.7
        tasks = np.where(pick_critical, critical[rng.integers(0, critical.size, k)], rng.integers(0, n, k))
        kinds = rng.integers(0, 3, k)  # 0: processor, 1: position, 2: both
        procs = np.repeat(proc[None], k, axis=0)
        seqs = np.repeat(seq[None], k, axis=0)
        for r in range(k):
            t = int(tasks[r])
            if kinds[r] != 1:
                elig = self.choices[t]
                if elig.size > 1:
                    q = int(elig[rng.integers(0, elig.size)])
                    if q == proc[t]:
                        q = int(elig[(np.searchsorted(elig, q) + 1) % elig.size])
                    procs[r, t] = q
            if kinds[r] != 0:
                lo = int(pos[self.preds[t]].max()) + 1 if self.preds[t].size else 0
                hi = int(pos[self.succs[t]].min()) - 1 if self.succs[t].size else n - 1
                if hi > lo:
                    new = int(rng.integers(lo, hi + 1))
                    p = int(pos[t])
                    row = seqs[r]
                    if new < p:
                        row[new + 1:p + 1] = seq[new:p]
                    elif new > p:
                        row[p:new] = seq[p + 1:new + 1]
                    row[new] = t
        return procs, seqs


def search_schedule(problem: Problem, *, time_limit_s: float = 1.0, iterations: int | None = None,
                    neighbours: int = 48, patience: int = 20, seed: int = 0) -> Plan:
    """The best plan the search finds (see the module docstring) within ``time_limit_s`` seconds of
    wall time (the whole call) or ``iterations`` rounds, whichever ends first.  Never worse than
    HEFT's plan, nor ETF's up to :data:`ETF_CAP` tasks (ETF is O(n^2): past that it alone would overrun
    the time limit).  Deterministic for a given ``seed`` when ``iterations`` ends the search."""
    clock = time.perf_counter()
    g = problem.graph
    n = g.n_tasks
    stuck = np.flatnonzero(~problem.eligible.any(axis=1))
    if stuck.size:
        raise InfeasibleError(f"no processor may run task {g.names[int(stuck[0])]!r}")
    inst = identical_case(problem) if n > 1 else None
    if inst is not None:
        return _identical_plan(problem, inst, time_limit_s, iterations, seed, clock)
    rng = np.random.default_rng(seed)
    bound = integral_bound(problem)
    origin = float(g.arrival.min())
    tol = 1e-9 * max(1.0, bound)
    moves = _Moves(problem, rng)
    backward = reversed_problem(problem) if n > 1 else None
    scale = float(problem.mean_cost.mean()) or 1.0

    def as_sequence(proc: np.ndarray, start: np.ndarray, finish: np.ndarray) -> np.ndarray:
        # by start (then finish, so zero-length tasks stay before their successors), topological
        return sequence_from_keys(problem, start + 1e-12 * scale * (finish > start))[0]

    def score(proc: np.ndarray, seq: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
        times = evaluate_sequences(problem, proc, seq)
        return (float(times.finish[0].max()) - origin, float(times.finish[0].sum()),
                times.start[0], times.finish[0])

    cur_mk = cur_sum = math.inf
    # start from the better of two list schedules (ETF only where its O(n^2) fits the time limit)
    for build in (heft_schedule, etf_schedule) if n <= ETF_CAP else (heft_schedule,):
        seed_plan = build(problem)
        s_proc = seed_plan.processor.copy()
        s_seq = as_sequence(s_proc, seed_plan.start, seed_plan.finish)
        s_mk, s_sum, s_start, s_finish = score(s_proc, s_seq)
        if (s_mk, s_sum) < (cur_mk, cur_sum):
            cur_proc, cur_seq, cur_mk, cur_sum, cur_start, cur_finish = s_proc, s_seq, s_mk, s_sum, s_start, s_finish
    best = (cur_mk, cur_sum, cur_proc.copy(), cur_seq.copy())
    rounds = evaluations = stale = 0
    while best[0] > bound + tol and (iterations is None or rounds < iterations):
        if time.perf_counter() - clock >= time_limit_s or n < 2:
            break
        rounds += 1
        critical = _critical(problem, cur_proc, cur_seq, cur_start, cur_finish)
        procs, seqs = moves.sample(cur_proc, cur_seq, critical, neighbours)
        times = evaluate_sequences(problem, procs, seqs)
        evaluations += neighbours
        mk = times.finish.max(axis=1) - origin
        total = times.finish.sum(axis=1)
        r = int(np.lexsort((total, mk))[0])
        if (mk[r], total[r]) <= (cur_mk, cur_sum):
            improved = mk[r] < cur_mk - tol or total[r] < cur_sum - tol
            cur_proc, cur_seq = procs[r], seqs[r]
            cur_mk, cur_sum = float(mk[r]), float(total[r])
            cur_start, cur_finish = times.start[r], times.finish[r]
            stale = 0 if improved else stale + 1
        else:
            stale += 1
        if (cur_mk, cur_sum) < best[:2]:
            best = (cur_mk, cur_sum, cur_proc.copy(), cur_seq.copy())
        if stale >= patience and backward is not None:  # a local optimum: try justifying it first
            j_seq, j_fin = justify(problem, backward, cur_proc, cur_finish)
            evaluations += 2
            j_mk = float(j_fin.max()) - origin
            if j_mk < cur_mk - tol:
                cur_seq = j_seq
                cur_mk, cur_sum, cur_start, cur_finish = score(cur_proc, cur_seq)
                stale = 0
                if (cur_mk, cur_sum) < best[:2]:
                    best = (cur_mk, cur_sum, cur_proc.copy(), cur_seq.copy())
        if stale >= patience:  # perturb the best plan's priority list and re-decode it greedily
            stale = 0
            _, _, b_proc, b_seq = best
            b_times = evaluate_sequences(problem, b_proc, b_seq)
            keys = b_times.start[0].copy()
            chosen = rng.random(n) < rng.uniform(0.05, 0.3)
            keys[chosen] += rng.normal(0.0, scale, int(chosen.sum()))
            plan = heft_schedule(problem, order=sequence_from_keys(problem, keys)[0])
            cur_proc = plan.processor.copy()
            cur_seq = as_sequence(cur_proc, plan.start, plan.finish)
            cur_mk, cur_sum, cur_start, cur_finish = score(cur_proc, cur_seq)
            evaluations += 1
            if backward is not None:
                j_seq, j_fin = justify(problem, backward, cur_proc, cur_finish)
                evaluations += 2
                if float(j_fin.max()) - origin < cur_mk - tol:
                    cur_seq = j_seq
                    cur_mk, cur_sum, cur_start, cur_finish = score(cur_proc, cur_seq)
            if (cur_mk, cur_sum) < best[:2]:
                best = (cur_mk, cur_sum, cur_proc.copy(), cur_seq.copy())
    mk, _, proc, seq = best
    order = np.empty(n)
    order[seq] = np.arange(n)
    sched = evaluate_plan(problem, Plan(proc, order))
    makespan = float(sched.finish.max()) - origin
    info = {"makespan": makespan, "lower_bound": bound,
            "gap_to_lower_bound": makespan / bound - 1.0 if bound > 0 else float("nan"),
            "proven_by_bound": makespan <= bound + tol, "rounds": rounds, "evaluations": evaluations,
            "time_s": time.perf_counter() - clock}
    return Plan(proc, order, sched.start, sched.finish, info)


ETF_CAP = 2000
"""The plan is compared with ETF's (O(n^2)) only up to this many tasks, so the time limit holds."""


def _identical_plan(problem: Problem, inst: Identical, time_limit_s: float, iterations: int | None, seed: int,
                    clock: float) -> Plan:
    """P|prec|Cmax: :func:`~simsched.schedulers.identical.identical_search` stopped at the energetic
    bound, or HEFT's / ETF's plan when one of them is shorter (insertion can beat list decoding);
    ETF (O(n^2)) only up to :data:`ETF_CAP` tasks, so that the time limit holds on large graphs.
    Same ``info`` as :func:`search_schedule`."""
    g = problem.graph
    n = g.n_tasks
    origin = float(g.arrival.min())
    head, tail = heads_tails(inst)
    bound = max(integral_bound(problem), energetic_bound(inst, heads=(head, tail)))
    start, proc, _, stats = identical_search(inst, bound, time_limit_s=time_limit_s, iterations=iterations,
                                             seed=seed, clock=clock)
    order = np.empty(n)
    order[order_by_keys(inst, start + 1e-6 * (start + inst.p))] = np.arange(n)
    plan = Plan(proc, order)
    sched = evaluate_plan(problem, plan)
    makespan = float(sched.finish.max()) - origin
    for build in (heft_schedule, etf_schedule) if n <= ETF_CAP else (heft_schedule,):
        other = build(problem)
        if float(other.finish.max()) - origin < makespan - 1e-9 * max(1.0, makespan):
            plan = Plan(other.processor, other.order)
            sched = evaluate_plan(problem, plan)
            makespan = float(sched.finish.max()) - origin
    tol = 1e-9 * max(1.0, bound)
    info = {"makespan": makespan, "lower_bound": bound,
            "gap_to_lower_bound": makespan / bound - 1.0 if bound > 0 else float("nan"),
            "proven_by_bound": makespan <= bound + tol, "rounds": stats["rounds"], "evaluations": stats["decodes"],
            "time_s": time.perf_counter() - clock}
    return Plan(plan.processor, plan.order, sched.start, sched.finish, info)


class LocalSearch:
    """Any-time iterated greedy local search for the makespan, seeded with HEFT or ETF (never worse than its seed).

    Batched neighbourhoods (processor changes and sequence shifts of critical tasks) evaluated by
    the fast evaluator, with HEFT-decoded perturbations of the priority list when it stalls; stops
    at the lower bound (proven optimal), the time limit or ``iterations`` rounds.  Ruiz & Stützle,
    EJOR 177(3), 2007 (iterated greedy); Topcuoglu et al., IEEE TPDS 13(3), 2002 (the decoder).

    Parameters:
        time_limit_s: wall-time budget of one plan (the whole call); iterations: at most this many
        rounds (set it for reproducible plans); neighbours: moves evaluated per round; patience:
        rounds without improvement before a perturbation (neither applies on identical processors
        without communication, where a list search runs instead).  The seed is drawn from ``rng``.
    """

    name = "search"

    def __init__(self, *, time_limit_s: float = 1.0, iterations: int | None = None, neighbours: int = 48,
                 patience: int = 20) -> None:
        if not time_limit_s > 0 or neighbours < 1 or patience < 1 or (iterations is not None and iterations < 0):
            raise ValueError("time_limit_s must be > 0, neighbours and patience >= 1, iterations >= 0")
        self.time_limit_s, self.iterations = time_limit_s, iterations
        self.neighbours, self.patience = neighbours, patience

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        seed = int(rng.integers(0, 2**31 - 1)) if rng is not None else 0
        return search_schedule(problem, time_limit_s=self.time_limit_s, iterations=self.iterations,
                               neighbours=self.neighbours, patience=self.patience, seed=seed)
