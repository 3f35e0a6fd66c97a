"""Gang (multi-processor) tasks under failures in the compiled stream engine (numba), behind
:mod:`simsched.simulator.engine.compiled_kernel`: ``GangAllocation._drop_gangs`` transcribed statement for
statement, so a disrupted run with gangs is the SimPy engine's float for float.

When a processor fails, every gang task among those it hands back (the one it ran, then its queue) lets go of
its other members: where the gang ran, each other member logs the lost attempt (from the gang's start, not
completed), counts its time as lost work and is released (it starts its queue's head or becomes idle); where
the gang waited, its entry leaves each other member's queue, and a member that is up and runs nothing then
starts its new head (when that head's data is there) or, left with an empty queue, is released.  The task
then no longer holds members (its store slots are dead: a later placement claims new ones, and the loop runs
again with a larger store when they run out, :data:`~simsched.simulator.engine.compiled_kernel.NEED_ROOM`).
Imported only with numba.
"""

from __future__ import annotations

import numba

from simsched.simulator.engine.compiled_disrupt import log_attempt
from simsched.simulator.engine.compiled_gang import gang_k, task_of
from simsched.simulator.engine.compiled_queue import release, start_next


@numba.njit(cache=True)
def attempt_room(gd, m):  # pragma: no cover - compiled
    """``(slots, most)`` for the attempts' log of a disrupted run (``compiled_disrupt.world_state``): the members
    beyond one that the tasks' gangs may hold at their end, summed (``min(k_max, m) - 1`` each), and the most
    processors one task may hold (1 without gang data ``gd``).  O(n)."""
    if not gd[0]:
        return 0, 1
    slots, most = 0, 1
    for t in range(gd[2].size):
        k = min(gd[2][t], m)
        if k > 1:
            slots += k - 1
            most = max(most, k)
    return slots, most


@numba.njit(cache=True)
def _remove(q, x, qhead, qnext, qtail, qlen):  # pragma: no cover - compiled
    """``deque.remove``: entry ``x`` leaves processor ``q``'s queue; False when it is not there.  O(queue)."""
    prev = -1
    y = qhead[q]
    while y >= 0 and y != x:
        prev = y
        y = qnext[y]
    if y < 0:
        return False
    if prev < 0:
        qhead[q] = qnext[x]
    else:
        qnext[prev] = qnext[x]
    if qtail[q] == x:
        qtail[q] = prev
    qlen[q] -= 1
    return True


@numba.njit(cache=True)
def drop_gangs(p, v, head, started, now, trigger, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee,
               noisy, factors, disrupted, slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size, eid, data_ok, down,
               gs, repair_at, ws):  # pragma: no cover - compiled
    """``GangAllocation._drop_gangs`` for the failure of processor ``p`` (after
    :func:`~simsched.simulator.engine.compiled_disrupt.fail`): the tasks it hands back are its lost task ``v``
    (-1: none; its attempt began at ``started``) and those of its old queue from entry ``head`` on, in that
    order; each gang task among them lets go of its members other than ``p``, lead first (see the module
    docstring).  Returns ``(trigger, size, eid)``.  O(handed-back members x queue length)."""
    n = start.size
    x = v if v >= 0 else head
    first = v >= 0
    while x >= 0:
        u = task_of(x, n, gs)
        x = head if first else qnext[x]
        first = False
        k = gang_k(u, gs)
        if k <= 1:
            continue
        at = gs[1][u]
        gs[2][u] = 0  # no longer a gang: self.gangs.pop(v), self.members_of.pop(v)
        for i in range(k):
            q = gs[3][at + i]
            if q == p:
                continue
            if running[q] == u:  # its time here is lost too
                log_attempt(ws, u, q, started, now, False, False)
                ws[8][0] += now - started
                trigger, size, eid = release(q, now, trigger, qhead, qnext, qtail, qlen, running, start, cost,
                                             data_time, ee, noisy, factors, disrupted, slowdown, slow, attempt, wc,
                                             ht, hp, he, hk, hv, size, eid, data_ok, down, gs, repair_at)
            elif _remove(q, u if i == 0 else n + at + i, qhead, qnext, qtail, qlen):
                if running[q] < 0 and not down[q]:
                    if qlen[q] > 0:
                        if data_ok[task_of(qhead[q], n, gs)]:
                            size, eid = start_next(q, now, qhead, qnext, qtail, qlen, running, start, cost, data_time,
                                                   ee, noisy, factors, disrupted, slowdown, slow, attempt, wc, ht, hp,
                                                   he, hk, hv, size, eid, data_ok, down, gs)
                    else:
                        trigger, size, eid = release(q, now, trigger, qhead, qnext, qtail, qlen, running, start, cost,
                                                     data_time, ee, noisy, factors, disrupted, slowdown, slow, attempt,
                                                     wc, ht, hp, he, hk, hv, size, eid, data_ok, down, gs, repair_at)
    return trigger, size, eid
