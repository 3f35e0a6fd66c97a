"""Earliest-finish decoding of many instances at once, vectorised over instances and processors.

Given, per instance, a topological task ``sequence`` and a (task, processor) ``allowed`` mask (the
network's candidate processors), every task is placed, in sequence order, on the allowed processor
where it finishes first — the task is ready when its last input arrives (predecessor finish plus
``latency + data / bandwidth`` unless on the same processor) and starts in the earliest idle gap of
the processor that fits it (HEFT's insertion policy; busy intervals are kept sorted in padded
arrays).  The loop runs over sequence *positions*; each step handles position ``i`` of every
instance of the batch and every candidate processor and gap in a few dozen numpy operations, so
there is no Python loop over tasks x processors and a batch of B instances costs about as many
numpy calls as one.

The same pass returns the *expert label* of every task: the processor that finishes it first among
**all** eligible ones in the state the decoder reached (HEFT's earliest-finish rule applied where
the learner actually is) — the labels DAgger-style training aggregates.

Gaps are searched only where one could beat appending (HEFT's pruning).  Cost: O(max n) steps of
O(B (m + c) + E_i m + G c) numpy work (E_i: incoming edges of the tasks at position i; c: most tasks
on one processor so far; G: (task, processor) pairs whose gaps are searched).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem


@dataclass(frozen=True)
class Decoded:
    """Per instance: processor, start, finish and sequence position of every task (indexed by task),
    and the expert's processor (earliest finish over all eligible processors in the reached state)."""

    processor: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    position: np.ndarray
    expert: np.ndarray


def eft_decode(problems: list[Problem], sequences: list[np.ndarray],
               allowed: list[np.ndarray] | None = None, expert: bool = False) -> list[Decoded]:
    """Decode every problem: tasks in ``sequences[b]`` order (topological), each on the allowed
    processor (``allowed[b]``: (n, m) bool, intersected with eligibility; ``None``: all eligible)
    that finishes it first, in the earliest idle gap that fits it (HEFT's insertion policy).
    ``expert``: also find the best processor over *all* eligible ones (costs O(m) instead of
    O(k) per task); otherwise ``Decoded.expert`` repeats the choice.  Deterministic (ties: lowest
    candidate rank, then processor index)."""
    B = len(problems)
    if B == 0:
        return []
    ns = np.array([p.n_tasks for p in problems])
    ms = np.array([p.n_processors for p in problems])
    M = int(ms.max())
    off = np.concatenate([[0], np.cumsum(ns)])
    N = int(off[-1])
    inf = np.inf
    # global (task, processor) arrays; padded processors are never eligible
    W = np.full((N, M), inf)
    elig = np.zeros((N, M), bool)
    allow = np.zeros((N, M), bool)
    arrival = np.empty(N)
    lat = np.zeros((B, M, M))
    inv = np.zeros((B, M, M))
    for b, p in enumerate(problems):
        s = slice(off[b], off[b + 1])
        W[s, :ms[b]] = p.W
        elig[s, :ms[b]] = p.eligible
        allow[s, :ms[b]] = p.eligible if allowed is None else (allowed[b] & p.eligible)
        arrival[s] = p.graph.arrival
        lat[b, :ms[b], :ms[b]] = p.latency
        inv[b, :ms[b], :ms[b]] = p.inv_bandwidth
    empty = ~allow.any(axis=1)
    allow[empty] = elig[empty]  # a task with no allowed candidate falls back to all eligible processors
    # step i handles the task at position i of every instance that has one
    L = int(ns.max())
    task_at = np.full((L, B), -1, dtype=np.int64)
    for b, seq in enumerate(sequences):
        task_at[:ns[b], b] = off[b] + np.asarray(seq, dtype=np.int64)
    # incoming edges grouped by the step of their destination
    src_l, dst_l, data_l, inst_l, step_l = [], [], [], [], []
    for b, p in enumerate(problems):
        g = p.graph
        if g.n_edges:
            pos = np.empty(ns[b], dtype=np.int64)
            pos[np.asarray(sequences[b])] = np.arange(ns[b])
            src_l.append(off[b] + g.edge_src)
            dst_l.append(off[b] + g.edge_dst)
            data_l.append(g.edge_data)
            inst_l.append(np.full(g.n_edges, b))
            step_l.append(pos[g.edge_dst])
    if src_l:
        step, dst_all = np.concatenate(step_l), np.concatenate(dst_l)
        by = np.lexsort((dst_all, step))  # by step, then destination: each task's inputs are contiguous
        e_src, e_dst = np.concatenate(src_l)[by], dst_all[by]
        e_data, e_inst = np.concatenate(data_l)[by], np.concatenate(inst_l)[by]
        e_ptr = np.searchsorted(step[by], np.arange(L + 1))
        first = np.flatnonzero(np.r_[True, e_dst[1:] != e_dst[:-1]])  # first input edge of each task
        f_ptr = np.searchsorted(first, e_ptr)
    else:
        e_src = e_dst = e_inst = first = np.zeros(0, np.int64)
        e_data = np.zeros(0)
        e_ptr = f_ptr = np.zeros(L + 1, np.int64)
    inst_of = np.repeat(np.arange(B), ns)
    # candidate processors per task: the allowed ones, padded (K = most allowed in any row)
    K = M if expert else int(allow.sum(axis=1).max())
    if expert:
        cand = np.broadcast_to(np.arange(M), (N, M))
        cand_ok = elig
    else:
        cand = np.argsort(~allow, axis=1, kind="stable")[:, :K]
        cand_ok = np.take_along_axis(allow, cand, axis=1)
    slot = np.full(N, -1, dtype=np.int64)  # row of a task within its step's batch
    proc = np.zeros(N, dtype=np.int64)
    best = np.zeros(N, dtype=np.int64)
    start = np.zeros(N)
    finish = np.zeros(N)
    # busy intervals of every processor, sorted by start, padded with inf (capacity C grows)
    C = 8
    S = np.full((B, M, C), inf)
    F = np.full((B, M, C), inf)
    count = np.zeros((B, M), dtype=np.int64)
    end = np.zeros((B, M))  # finish of the last task on each processor
    for i in range(L):
        t = task_at[i]
        t = t[t >= 0]
        b = inst_of[t]
        T = t.size
        rows = np.arange(T)
        ready = np.repeat(arrival[t][:, None], M, axis=1)
        lo, hi = e_ptr[i], e_ptr[i + 1]
        if hi > lo:
            slot[t] = rows
            src, eb = e_src[lo:hi], e_inst[lo:hi]
            ps = proc[src]
            arrive = finish[src][:, None] + lat[eb, ps] + e_data[lo:hi, None] * inv[eb, ps]
            heads = first[f_ptr[i]:f_ptr[i + 1]]                       # segment max per receiving task
            to = slot[e_dst[heads]]
            ready[to] = np.maximum(ready[to], np.maximum.reduceat(arrive, heads - lo, axis=0))
        if int(count.max()) >= C:
            S = np.concatenate([S, np.full((B, M, C), inf)], axis=2)
            F = np.concatenate([F, np.full((B, M, C), inf)], axis=2)
            C *= 2
        q_all = cand[t]                                                    # (T, K)
        r = np.take_along_axis(ready, q_all, axis=1)
        w = np.take_along_axis(W[t], q_all, axis=1)
        bb = b[:, None]
        end_q = end[bb, q_all]
        est = np.maximum(r, end_q)                                         # append after the last task
        cok = cand_ok[t]
        ok = allow[t] if expert else cok                                   # expert: candidates are all m
        eft = np.where(cok, est + w, inf)
        # an idle gap can only help where the task would finish before the processor's last task ends
        # and before the best append finish (HEFT's pruning); search those pairs' gaps only
        tr, kr = np.nonzero((r + w <= end_q) & (r + w < np.where(ok, eft, inf).min(axis=1, keepdims=True))
                            & cok)
        if tr.size:
            bq, qq = b[tr], q_all[tr, kr]
            prev_f = np.concatenate([np.zeros((tr.size, 1)), F[bq, qq]], axis=1)  # gap j opens at F[j-1]
            next_s = np.concatenate([S[bq, qq], np.full((tr.size, 1), inf)], axis=1)  # ... closes at S[j]
            st = np.maximum(r[tr, kr][:, None], prev_f)
            st = np.where(st + w[tr, kr][:, None] <= next_s, st, inf).min(axis=1)
            est[tr, kr] = np.minimum(est[tr, kr], st)
            eft[tr, kr] = est[tr, kr] + w[tr, kr]
        kk = np.where(ok, eft, inf).argmin(axis=1)
        if expert:
            best[t] = eft.argmin(axis=1)
        q = q_all[rows, kk]
        proc[t] = q
        start[t] = est[rows, kk]
        finish[t] = eft[rows, kk]
        row_s, row_f = S[b, q], F[b, q]                                    # (T, C): insert at slot j,
        st_t, fin_t = start[t][:, None], finish[t][:, None]                # keeping (start, finish) order
        j = ((row_s < st_t) | ((row_s == st_t) & (row_f <= fin_t))).sum(axis=1)[:, None]
        ar = np.arange(C)[None, :]
        for arr, row, value in ((S, row_s, start[t]), (F, row_f, finish[t])):
            shifted = np.concatenate([np.full((T, 1), inf), row[:, :-1]], axis=1)
            arr[b, q] = np.where(ar < j, row, np.where(ar == j, value[:, None], shifted))
        end[b, q] = np.maximum(end[b, q], finish[t])
        count[b, q] += 1
    out = []
    for b in range(B):
        s = slice(off[b], off[b + 1])
        pos = np.empty(ns[b], dtype=np.int64)
        pos[np.asarray(sequences[b])] = np.arange(ns[b])
        out.append(Decoded(proc[s], start[s], finish[s], pos, best[s] if expert else proc[s]))
    return out
