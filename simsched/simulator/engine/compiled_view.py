"""What the compiled stream engine's policies see of a decision point, in numba: a task's cost on a
processor and its expected completion times (the :class:`~simsched.simulator.policy.DecisionView`'s
``completion_times`` row), the same floats as the view computes them; and numpy's order of floats
(:func:`lt`, :func:`before`, :func:`key_order`: ``np.lexsort``'s), which the policies sort by.

Shared by the event loop (:mod:`simsched.simulator.engine.compiled_kernel`, MCT) and the job-aware
rules (:mod:`simsched.simulator.engine.compiled_jobaware`).  Imported only with numba installed.

numba's cache (``cache=True``) is keyed on the source file of each compiled function only: a kernel
compiled with these functions inlined would not be recompiled when this file changes, so
:func:`~simsched.simulator.engine.compiled.kernel_module` drops the cached machine code of
``compiled_kernel`` and ``compiled_jobaware`` when this file is newer.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def cost_at(t, q, table, key, work, memory, proc_memory, structured):  # pragma: no cover - compiled
    """``Problem.cost_at(t, q)``: ``work / rate`` (inf for rate 0 or too little memory), or ``W[t, q]``."""
    if structured:
        rate = table[key[t], q]
        return work[t] / rate if rate > 0 and not memory[t] > proc_memory[q] else np.inf
    return table[key[t], q]


@numba.njit(cache=True)
def completion_row(t, now, avail, arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of, uniform,
                   same_lat, same_inv, link_lat, link_inv, latency, inv_bw, table, key, work, memory, proc_memory,
                   structured, dr, ct):  # pragma: no cover - compiled
    """Fill ``ct`` (m,) with task ``t``'s expected finish on each processor if appended to its queue now,
    ``max(avail, data ready) + W`` (``DecisionView.completion_times``; ``dr`` (m,) is scratch), and return
    its first lowest index (``np.argmin``).  The data-ready time is the view's: at least ``max(now,
    arrival)``, each input sent at ``max(finish, now)`` and there ``latency + data x 1 / bandwidth``
    later (one ``(latency, 1 / bandwidth)`` pair per link when ``uniform``); ``t``'s inputs are the edges
    ``pred_edges[pred_ptr[t]:pred_ptr[t + 1]]`` of the graph's own arrays.  O(in-degree x m)."""
    m = avail.size
    floor = arrival[t] if arrival[t] > now else now
    lo, hi = pred_ptr[t], pred_ptr[t + 1]
    if hi == lo:
        for q in range(m):
            dr[q] = floor
    else:
        for q in range(m):
            dr[q] = -np.inf
        for j in range(lo, hi):
            e = pred_edges[j]
            s = edge_src[e]
            f = finish[s]
            sent = f if f > now else now
            sp = proc_of[s]
            x = edge_data[e]
            if uniform:
                for q in range(m):
                    a = sent + ((same_lat + x * same_inv) if q == sp else (link_lat + x * link_inv))
                    if a > dr[q]:
                        dr[q] = a
            else:
                for q in range(m):
                    a = sent + (latency[sp, q] + x * inv_bw[sp, q])
                    if a > dr[q]:
                        dr[q] = a
        for q in range(m):
            if not dr[q] >= floor:
                dr[q] = floor
    best = 0
    best_ct = np.inf
    for q in range(m):
        w = cost_at(t, q, table, key, work, memory, proc_memory, structured)
        c = (avail[q] if avail[q] >= dr[q] else dr[q]) + w
        ct[q] = c
        if q == 0 or c < best_ct:
            best_ct, best = c, q
    return best


@numba.njit(cache=True)
def lt(a, b):  # pragma: no cover - compiled
    """``a`` sorts before ``b`` as numpy sorts floats (NaN after every number)."""
    return a < b or (b != b and a == a)


@numba.njit(cache=True)
def eq(a, b):  # pragma: no cover - compiled
    return a == b or (a != a and b != b)


@numba.njit(cache=True)
def before(a1, a2, a3, ta, b1, b2, b3, tb):  # pragma: no cover - compiled
    """Task ``ta`` of key ``(a1, a2, a3)`` before task ``tb`` of key ``(b1, b2, b3)``: ``np.lexsort``'s
    order (first key first) over the ready tasks ascending, a stable sort, so the lower task on full ties."""
    if not eq(a1, b1):
        return lt(a1, b1)
    if not eq(a2, b2):
        return lt(a2, b2)
    if not eq(a3, b3):
        return lt(a3, b3)
    return ta < tb


@numba.njit(cache=True)
def key_order(k1, k2, k3, tasks):  # pragma: no cover - compiled
    """The order of ``tasks`` (distinct) by ``k1``, then ``k2``, then ``k3``, then the task: ``np.lexsort((k3,
    k2, k1))`` over them ascending (a bottom-up merge sort).  O(k log k)."""
    k = k1.size
    a = np.arange(k)
    b = np.empty(k, dtype=np.int64)
    width = 1
    while width < k:
        for lo in range(0, k, 2 * width):
            mid = min(lo + width, k)
            hi = min(lo + 2 * width, k)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                x, y = a[i], a[j]
                if before(k1[y], k2[y], k3[y], tasks[y], k1[x], k2[x], k3[x], tasks[x]):
                    b[o] = y
                    j += 1
                else:
                    b[o] = x
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
        a, b = b, a
        width *= 2
    return a
