"""The compiled earliest-finish placement loop behind :func:`simsched.schedulers.timeline.place_eft`.

Imported only when numba is installed (extra ``simsched[fast]``) and a problem is large (loading numba
costs ~0.2-0.5 s of CPU and ~100 MB, once per process); numba caches
the machine code next to this file, so only the first run on a machine pays the compilation (a few
seconds).  It mirrors :class:`~simsched.schedulers.timeline.Timelines` and
:func:`~simsched.schedulers.timeline.data_ready` operation for operation, so plans are bit-identical
to the numpy loop's (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002: insertion-based earliest finish).

Idle gaps of all processors live in one arena (two float arrays): processor q owns the slots
``off[q] .. off[q] + cap[q]``, ``cnt[q]`` of them used, sorted by time; a full segment moves to the
arena's end with twice the room.  Memory: O(n + m) amortised.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _bisect_left(a, lo, hi, x):  # pragma: no cover - compiled
    """First index in ``a[lo:hi]`` (sorted) whose value is >= x, as :func:`bisect.bisect_left`."""
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True)
def _grow(ga, gb, off, cap, cnt, top, q, need):  # pragma: no cover - compiled
    """Give processor q room for ``need`` gaps; returns the (maybe reallocated) arena and its top."""
    if cnt[q] + need <= cap[q]:
        return ga, gb, top
    new_cap = max(2 * cap[q], cnt[q] + need)
    if top + new_cap > ga.size:
        size = max(2 * ga.size, top + new_cap)
        na, nb = np.empty(size), np.empty(size)
        na[:top] = ga[:top]
        nb[:top] = gb[:top]
        ga, gb = na, nb
    c, o = cnt[q], off[q]
    ga[top:top + c] = ga[o:o + c]
    gb[top:top + c] = gb[o:o + c]
    off[q], cap[q] = top, new_cap
    return ga, gb, top + new_cap


@numba.njit(cache=True)
def eft_place(order, table, key, work, memory, proc_memory, structured, pred_ptr, pred_edges, edge_src, edge_data,
              arrival, latency, inv_bw, insertion, initial_cap):  # pragma: no cover - compiled
    """``(processor, start, finish)`` of every task placed in ``order`` on its earliest-finish
    processor (first lowest index on ties).  O(n m + e m) plus the gap searches.

    Costs (see :meth:`~simsched.simulator.problem.Problem.cost_arrays`): task t's row is
    ``table[key[t]]`` (dense), or when ``structured`` ``work[t] / table[key[t], q]``, ``inf`` where the
    rate is 0 or ``memory[t] > proc_memory[q]`` — computed per task, no (n, m) matrix."""
    n = key.size
    m = table.shape[1]
    W = np.empty(m)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    end = np.zeros(m)
    max_gap = np.zeros(m)
    cnt = np.zeros(m, dtype=np.int64)
    cap = np.full(m, initial_cap, dtype=np.int64)
    off = np.arange(m) * initial_cap
    top = m * initial_cap
    ga, gb = np.empty(2 * top), np.empty(2 * top)
    ready = np.empty(m)
    est = np.empty(m)
    for ti in range(order.size):
        t = order[ti]
        r = key[t]
        if structured:
            wt, mt = work[t], memory[t]
            for q in range(m):
                rate = table[r, q]
                W[q] = wt / rate if rate > 0 and not mt > proc_memory[q] else np.inf
        else:
            for q in range(m):
                W[q] = table[r, q]
        # data ready time on every processor: max over inputs of finish + transfer, then arrival
        lo, hi = pred_ptr[t], pred_ptr[t + 1]
        if hi == lo:
            for q in range(m):
                ready[q] = arrival[t]
        else:
            for q in range(m):
                ready[q] = -np.inf
            for k in range(lo, hi):
                e = pred_edges[k]
                s = edge_src[e]
                p = proc[s]
                f = finish[s]
                d = edge_data[e]
                for q in range(m):
                    v = f + (latency[p, q] + d * inv_bw[p, q])
                    if v > ready[q]:
                        ready[q] = v
            for q in range(m):
                if not ready[q] >= arrival[t]:
                    ready[q] = arrival[t]
        # append position everywhere; gap search where inserting could give the earliest finish
        best_append = np.inf
        for q in range(m):
            est[q] = ready[q] if ready[q] > end[q] else end[q]
            v = est[q] + W[q]
            if v < best_append:
                best_append = v
        if insertion:
            for q in range(m):
                w = W[q]
                lb = ready[q] + w
                if max_gap[q] >= w and lb <= end[q] and lb <= best_append:
                    o = off[q]
                    j = _bisect_left(gb, o, o + cnt[q], lb)
                    while j < o + cnt[q]:
                        s0 = ga[j] if ga[j] > ready[q] else ready[q]
                        if s0 + w <= gb[j]:
                            est[q] = s0
                            break
                        j += 1
        qb = 0
        bv = est[0] + W[0]
        for q in range(1, m):
            v = est[q] + W[q]
            if v < bv:
                bv = v
                qb = q
        q = qb
        st = est[q]
        fi = est[q] + W[q]
        start[t], finish[t], proc[t] = st, fi, q
        # reserve [st, fi) on q: append (maybe leaving a gap) or split the gap it fills
        if st >= end[q]:
            if st > end[q]:
                ga, gb, top = _grow(ga, gb, off, cap, cnt, top, q, 1)
                i = off[q] + cnt[q]
                ga[i], gb[i] = end[q], st
                cnt[q] += 1
                if st - end[q] > max_gap[q]:
                    max_gap[q] = st - end[q]
            end[q] = fi
            continue
        ga, gb, top = _grow(ga, gb, off, cap, cnt, top, q, 1)
        o, c = off[q], cnt[q]
        j = _bisect_left(gb, o, o + c, fi)
        g0, g1 = ga[j], gb[j]
        pieces = (1 if st > g0 else 0) + (1 if g1 > fi else 0)
        if pieces == 0:  # the task fills the gap exactly: remove it
            for i in range(j, o + c - 1):
                ga[i], gb[i] = ga[i + 1], gb[i + 1]
        elif pieces == 2:  # the gap splits in two: make room
            for i in range(o + c - 1, j, -1):
                ga[i + 1], gb[i + 1] = ga[i], gb[i]
        k = j
        if st > g0:
            ga[k], gb[k] = g0, st
            k += 1
        if g1 > fi:
            ga[k], gb[k] = fi, g1
        cnt[q] = c + pieces - 1
        if g1 - g0 >= max_gap[q]:
            mg = 0.0
            for i in range(o, o + cnt[q]):
                if gb[i] - ga[i] > mg:
                    mg = gb[i] - ga[i]
            max_gap[q] = mg
    return proc, start, finish
