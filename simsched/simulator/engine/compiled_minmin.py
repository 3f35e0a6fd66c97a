"""Min-Min and Max-Min in numba, for the compiled stream engine
(:mod:`simsched.simulator.engine.compiled_kernel`): :func:`minmin` decides as
:func:`~simsched.schedulers.online._batch_map` does on the SimPy engine, float for float.  Imported only with
numba installed.
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_view import completion_row
from simsched.simulator.engine.compiled_view import cost_at as _cost


@numba.njit(cache=True)
def minmin(tasks, now, avail, vw, dr, chosen, chosen_p, largest):  # pragma: no cover - compiled
    """Min-Min (Max-Min when ``largest``) over the ready ``tasks`` (ascending) as
    :func:`~simsched.schedulers.online._batch_map` decides it, float for float: the board of completion times
    ``max(avail, data ready) + W``; while tasks are left, the first left task of smallest (largest) best time
    goes to its best processor (the first lowest index), that processor's column is refreshed, and only the
    left rows whose best was that processor are minimised again.  Fills ``chosen``/``chosen_p`` in order and
    returns k, or -1 when the chosen task may run nowhere (the policy then returns a pair the SimPy engine
    refuses).
    ``avail`` (m,) ``max(expected end, now)``, updated.  O(k x in-degree x m + k^2 + r m) for r rows
    minimised again."""
    (arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of, uniform, same_lat, same_inv, link_lat,
     link_inv, latency, inv_bw, table, key, work, memory, proc_memory, structured) = vw
    k = tasks.size
    m = avail.size
    ct = np.empty((k, m))
    data = np.empty((k, m))
    best_p = np.empty(k, dtype=np.int64)
    best = np.empty(k)
    left = np.ones(k, dtype=np.bool_)
    for i in range(k):
        best_p[i] = completion_row(tasks[i], now, avail, *vw, dr, ct[i])
        data[i] = dr
        best[i] = ct[i, best_p[i]]
    for s in range(k):
        i = -1
        b = np.inf
        # np.argmin(np.where(left, best, inf)), or np.argmax with -inf: the first smallest (largest)
        for r in range(k):
            if left[r] and (i < 0 or (best[r] > b if largest else best[r] < b)):
                i, b = r, best[r]
        if not b < np.inf:
            return -1
        p = best_p[i]
        chosen[s] = tasks[i]
        chosen_p[s] = p
        left[i] = False
        a = ct[i, p]
        avail[p] = a
        for r in range(k):  # the column refreshed: max(available, data ready) + W
            d = data[r, p]
            ct[r, p] = (a if a >= d else d) + _cost(tasks[r], p, table, key, work, memory, proc_memory, structured)
        for r in range(k):
            if left[r] and best_p[r] == p:  # np.argmin over the row: the first lowest
                bq = 0
                bc = np.inf
                for q in range(m):
                    c = ct[r, q]
                    if q == 0 or c < bc:
                        bq, bc = q, c
                best_p[r] = bq
                best[r] = bc
    return k
