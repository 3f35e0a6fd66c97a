"""The compiled stream engine's event heap (numba), behind :mod:`simsched.simulator.engine.compiled_kernel`.

Five parallel arrays hold the entries ``(time, priority, eid, kind, value)`` (float64, int32 for
priority, eid and kind, int64 for the value: a task and its attempt); they are compared as
SimPy compares its ``(time, priority, eid, event)`` tuples (the eid is unique, so entries of equal time
and priority leave in push order, as from SimPy's ``heapq``).  Imported only with numba installed.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _less(ht, hp, he, i, j):  # pragma: no cover - compiled
    """Entry i before entry j: ``(time, priority, eid)`` compared as SimPy's tuples are."""
    if ht[i] != ht[j]:
        return ht[i] < ht[j]
    if hp[i] != hp[j]:
        return hp[i] < hp[j]
    return he[i] < he[j]


@numba.njit(cache=True)
def _swap(ht, hp, he, hk, hv, i, j):  # pragma: no cover - compiled
    ht[i], ht[j] = ht[j], ht[i]
    hp[i], hp[j] = hp[j], hp[i]
    he[i], he[j] = he[j], he[i]
    hk[i], hk[j] = hk[j], hk[i]
    hv[i], hv[j] = hv[j], hv[i]


@numba.njit(cache=True)
def push(ht, hp, he, hk, hv, size, t, prio, eid, kind, val):  # pragma: no cover - compiled
    """Push an entry on the heap of ``size`` entries; returns the new size.  O(log size)."""
    i = size
    ht[i], hp[i], he[i], hk[i], hv[i] = t, prio, eid, kind, val
    while i > 0:
        parent = (i - 1) >> 1
        if _less(ht, hp, he, i, parent):
            _swap(ht, hp, he, hk, hv, i, parent)
            i = parent
        else:
            break
    return size + 1


@numba.njit(cache=True)
def pop(ht, hp, he, hk, hv, size):  # pragma: no cover - compiled
    """Move the smallest entry to slot ``size - 1`` (read it there); returns the new size.  O(log size)."""
    last = size - 1
    _swap(ht, hp, he, hk, hv, 0, last)
    i = 0
    while True:
        a = 2 * i + 1
        if a >= last:
            break
        b = a + 1
        c = b if b < last and _less(ht, hp, he, b, a) else a
        if _less(ht, hp, he, c, i):
            _swap(ht, hp, he, hk, hv, i, c)
            i = c
        else:
            break
    return last


@numba.njit(cache=True)
def grown(ht, hp, he, hk, hv, size, cap):  # pragma: no cover - compiled
    """The heap's arrays copied into arrays of ``cap`` slots (its ``size`` entries kept).  O(cap)."""
    t = np.empty(cap)
    p = np.empty(cap, dtype=np.int32)
    e = np.empty(cap, dtype=np.int32)
    k = np.empty(cap, dtype=np.int32)
    v = np.empty(cap, dtype=np.int64)
    t[:size], p[:size], e[:size], k[:size], v[:size] = ht[:size], hp[:size], he[:size], hk[:size], hv[:size]
    return t, p, e, k, v
