"""Multi-processor (gang) tasks in the compiled stream engine (numba): the gang-aware earliest finish the
job-aware rules place them by, and their queues, start and end, as the SimPy engine runs them
(:func:`~simsched.schedulers.gang_eft.gang_choice`, :class:`~simsched.simulator.engine.gangs.GangAllocation`),
float for float.  Imported only with numba installed.

A gang task sits in the queue of each of its ``k`` members at once, and the queues are linked lists through one
``qnext`` slot per entry, so each (task, member) pair has its own entry id: the task's index for its lead (as for
every single-processor task), ``n + slot`` for the other members, where ``slot`` indexes the members' store.
The gang data ``gd`` is ``(on, procs_min, procs_max, serial, downey, same_host, group_type, group_pair,
unique_type, unique_pair, capacity)``: per task its ``[k_min, k_max]``, Amdahl serial fraction, Downey row
``[A, sigma]`` and ``same_host``; per processor its pool (type, or (type, host) pair) and the pools' sorted
values; ``capacity`` the store's size (the most members the run can hold).  The gang state ``gs`` is
``(entry task, offset, k, members, [used])`` (built by :func:`~simsched.simulator.engine.compiled._gang_args`,
filled in by the loop): task ``t`` assigned to ``k[t] > 1`` processors holds ``members[offset[t]:offset[t] +
k[t]]``, lead first; ``entry task[slot]`` the task of entry ``n + slot``.  The store only grows: without
failures a task is assigned once; a gang a failure dropped (:mod:`~simsched.simulator.engine.compiled_gangfail`)
leaves its slots dead and claims new ones when placed again.
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_view import cost_at, key_order


@numba.njit(cache=True)
def gang_k(t, gs):  # pragma: no cover - compiled
    """The processors task ``t`` was assigned to when more than one, else 0 or 1.  O(1)."""
    return gs[2][t] if gs[2].size else 0


@numba.njit(cache=True)
def task_of(x, n, gs):  # pragma: no cover - compiled
    """The task of queue entry ``x``.  O(1)."""
    return x if x < n else gs[0][x - n]


@numba.njit(cache=True)
def _speedup(k, a, sigma):  # pragma: no cover - compiled
    """:func:`~simsched.simulator.gang.downey` of one ``k``, the same float operations in the same order."""
    if sigma <= 1.0:
        if k <= a:
            return a * k / (a + sigma * (k - 1.0) / 2.0)
        if k <= 2.0 * a - 1.0:
            return a * k / (sigma * (a - 0.5) + k * (1.0 - sigma / 2.0))
        return a
    inv = 1.0 / sigma
    if k <= a + a * sigma - sigma:
        return k * a * (1.0 + inv) / (k + a - 1.0 + a * inv)
    return a


@numba.njit(cache=True)
def factor(t, k, gd):  # pragma: no cover - compiled
    """:func:`~simsched.simulator.gang.moldable_factor` of task ``t`` on ``k`` processors: exactly 1.0 at its
    ``k_min``, else Downey's ``S(k_min) / S(k)`` where its row has ``A > 0``, Amdahl's ``a(k) / a(k_min)``
    otherwise.  O(1)."""
    k_min = gd[1][t]
    if k == k_min:
        return 1.0
    a, sigma = gd[4][t, 0], gd[4][t, 1]
    if a > 0:
        return _speedup(float(k_min), a, sigma) / _speedup(float(k), a, sigma)
    f = gd[3][t]
    return (f + (1.0 - f) / float(k)) / (f + (1.0 - f) / float(k_min))


@numba.njit(cache=True)
def gang_choice(t, ready, free, vw, gd, gs, w, procs, key, zero):  # pragma: no cover - compiled
    """:func:`~simsched.schedulers.gang_eft.gang_choice` of task ``t`` given when its data could be on each
    processor (``ready``) and when each is free (``free``): for each pool in ascending order, its processors that
    may run ``t`` sorted by ``(max(free, ready), ready, index)``, the first ``k`` of them for each allowed ``k``
    (running max of free times and costs, running min of ready times), the first earliest finish; the best over
    pools by (finish, k, lead).  Writes the members (lead: the first of the chosen earliest ready) at the
    store's free end, ``gs[3][gs[4][0]:]``, and returns ``(k, finish)``; k 0 when no pool has ``k_min``
    processors that may run ``t``.  ``w``, ``procs``, ``key``, ``zero`` (m,): scratch.  O(m log m)."""
    table, key_t, work, memory, proc_memory, structured = vw[14], vw[15], vw[16], vw[17], vw[18], vw[19]
    m = free.size
    for q in range(m):
        w[q] = cost_at(t, q, table, key_t, work, memory, proc_memory, structured)
        zero[q] = 0.0
    group, values = (gd[7], gd[9]) if gd[5][t] else (gd[6], gd[8])
    k_lo, k_hi = gd[1][t], gd[2][t]
    out = gs[3]
    at = gs[4][0]
    best_k, best_lead, best_f = 0, -1, np.inf
    for gv in values:
        c = 0
        for q in range(m):
            if group[q] == gv and w[q] < np.inf:
                procs[c] = q
                c += 1
        if c < k_lo:
            continue
        for i in range(c):
            q = procs[i]
            key[i] = free[q] if free[q] >= ready[q] else ready[q]  # np.maximum (no NaN here)
        sub_ready = np.empty(c)
        sub_p = procs[:c].copy()
        for i in range(c):
            sub_ready[i] = ready[sub_p[i]]
        order = key_order(key[:c].copy(), sub_ready, zero[:c], sub_p)
        top = min(k_hi, c)
        last_free = first_ready = slowest = 0.0
        j_k, j_f = -1, np.inf
        for i in range(top):
            q = sub_p[order[i]]
            if i == 0 or free[q] > last_free:
                last_free = free[q]
            if i == 0 or ready[q] < first_ready:
                first_ready = ready[q]
            if i == 0 or w[q] > slowest:
                slowest = w[q]
            k = i + 1
            if k < k_lo:
                continue
            start = first_ready if first_ready >= last_free else last_free
            f = start + slowest * factor(t, k, gd)
            if j_k < 0 or f < j_f:  # np.argmin: the first minimum, the smallest k
                j_k, j_f = k, f
        lead = -1
        for i in range(j_k):  # the first of the k with the earliest data
            q = sub_p[order[i]]
            if lead < 0 or ready[q] < ready[lead]:
                lead = q
        if best_k == 0 or j_f < best_f or (j_f == best_f and (j_k < best_k or (j_k == best_k and lead < best_lead))):
            best_k, best_lead, best_f = j_k, lead, j_f
            out[at] = lead
            s = at + 1
            for i in range(j_k):
                q = sub_p[order[i]]
                if q != lead:
                    out[s] = q
                    s += 1
    return best_k, best_f


@numba.njit(cache=True)
def claim(t, k, gs):  # pragma: no cover - compiled
    """Task ``t`` takes the ``k > 1`` members :func:`gang_choice` wrote at the store's free end.  O(k)."""
    at = gs[4][0]
    gs[1][t] = at
    gs[2][t] = k
    for i in range(k):
        gs[0][at + i] = t
    gs[4][0] = at + k


@numba.njit(cache=True)
def gang_cost(v, vw, gd, gs):  # pragma: no cover - compiled
    """:func:`~simsched.simulator.gang.gang_durations` of task ``v`` on its members: the slowest member's cost
    times the moldable factor (``inf`` where a member may not run it).  O(k)."""
    table, key_t, work, memory, proc_memory, structured = vw[14], vw[15], vw[16], vw[17], vw[18], vw[19]
    at, k = gs[1][v], gs[2][v]
    base = 0.0
    for i in range(k):
        c = cost_at(v, gs[3][at + i], table, key_t, work, memory, proc_memory, structured)
        if i == 0 or c > base:
            base = c
    return base * factor(v, k, gd)


@numba.njit(cache=True)
def queue_end(q, t, qhead, qnext, data_time, cost, gs):  # pragma: no cover - compiled
    """``Assignment._queue_end``: when processor ``q`` ends its queue if it starts on it at ``t``.  O(queue)."""
    n = cost.size
    x = qhead[q]
    while x >= 0:
        u = task_of(x, n, gs)
        dx = data_time[u]
        t = (t if not dx > t else dx) + cost[u]
        x = qnext[x]
    return t


@numba.njit(cache=True)
def append(q, x, qhead, qnext, qtail, qlen):  # pragma: no cover - compiled
    """Queue entry ``x`` joins the end of processor ``q``'s queue.  O(1)."""
    if qlen[q] == 0:
        qhead[q] = x
    else:
        qnext[qtail[q]] = x
    qtail[q] = x
    qnext[x] = -1
    qlen[q] += 1


@numba.njit(cache=True)
def enqueue(v, qhead, qnext, qtail, qlen, ee, data_time, cost, gs):  # pragma: no cover - compiled
    """The queue part of ``GangAllocation._assign_gang``: every member's expected end becomes ``max(their
    latest, data there) + W`` and ``v`` joins the end of each member's queue (entry ``v`` on its lead, ``n +
    slot`` on the others).  O(k)."""
    n = cost.size
    at, k = gs[1][v], gs[2][v]
    members = gs[3]
    begin = ee[members[at]]
    for i in range(1, k):
        e = ee[members[at + i]]
        if e > begin:
            begin = e
    dt = data_time[v]
    if dt > begin:
        begin = dt
    w = cost[v]
    for i in range(k):
        q = members[at + i]
        ee[q] = begin + w
        append(q, v if i == 0 else n + at + i, qhead, qnext, qtail, qlen)


@numba.njit(cache=True)
def start_gang(v, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, data_ok, down, ee,
               gs):  # pragma: no cover - compiled
    """``GangAllocation._start_gang``: when ``v``'s data is there and it heads the queue of every member, none
    running anything or down, it starts on all now (each member's expected end refreshed over the rest of its
    queue) and True; else nothing changes and False.  O(k + queue lengths)."""
    n = cost.size
    at, k = gs[1][v], gs[2][v]
    members = gs[3]
    if not data_ok[v]:
        return False
    for i in range(k):
        q = members[at + i]
        if running[q] >= 0 or qlen[q] == 0 or task_of(qhead[q], n, gs) != v or down[q]:
            return False
    start[v] = now
    w = cost[v]
    for i in range(k):
        q = members[at + i]
        x = qhead[q]
        qhead[q] = qnext[x]
        qlen[q] -= 1
        if qlen[q] == 0:
            qtail[q] = -1
        running[q] = v
        ee[q] = queue_end(q, now + w, qhead, qnext, data_time, cost, gs)
    return True


@numba.njit(cache=True)
def place(t, ready, avail, idle, vw, gd, gs, gx):  # pragma: no cover - compiled
    """``OneByOne._decide_by_task``'s placement of a task that may take several processors (``procs_max > 1``):
    its :func:`gang_choice` over ``avail``; each member's ``avail`` becomes the finish and it is no longer
    ``idle``; the task takes its members when more than one (:func:`claim`; one: an ordinary pair).  Returns
    ``(lead, members that were idle)``, lead -1 when no pool may run it (the policy then returns a pair the
    SimPy engine refuses), -2 when the store has no room for its members (placed again after a failure: the
    loop runs again with a larger store).  ``gx``: four (m,) scratch arrays.  O(m log m)."""
    if gs[4][0] + min(gd[2][t], avail.size) > gs[3].size:
        return -2, 0
    k, f = gang_choice(t, ready, avail, vw, gd, gs, gx[0], gx[1], gx[2], gx[3])
    if k == 0:
        return -1, 0
    members = gs[3]
    at = gs[4][0]
    lead = members[at]
    taken = 0
    for i in range(k):
        q = members[at + i]
        avail[q] = f
        if idle[q]:
            idle[q] = False
            taken += 1
    if k > 1:
        claim(t, k, gs)
    return lead, taken
