"""The processors' queues in the compiled stream engine (numba), behind
:mod:`simsched.simulator.engine.compiled_kernel`: a queue's head starts (``Assignment._start_next``, a gang
task on all its members: ``GangAllocation._start_gang`` and ``_hold_gang``), a processor ends what it ran
(``Assignment._release``), and a decision point is asked for (``Decisions._decision_point``), transcribed
statement for statement so that the same events are pushed at the same moments.  Imported only with numba.
"""

from __future__ import annotations

import numba

from simsched.simulator.engine.compiled_disrupt import SLOWED
from simsched.simulator.engine.compiled_gang import gang_k, queue_end, start_gang, task_of
from simsched.simulator.engine.compiled_heap import push as _push

NORMAL = 1
"""SimPy's priority of ordinary events (``simpy.events.NORMAL``)."""
DECIDE_PRIORITY = 2
"""The engine's decision-point priority (:data:`~simsched.simulator.engine.common.DECISION_PRIORITY`)."""

ARRIVAL, DECIDE, DATA, FINISH = 0, 1, 2, 3
"""Event kinds: a group of tasks arrives, a decision point, a task's inputs are on its processor, a task ends."""


@numba.njit(cache=True)
def hold(u, now, cost, noisy, factors, disrupted, slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size, eid,
         gs):  # pragma: no cover - compiled
    """``GangAllocation._hold_gang``: gang task ``u`` took its members now; its finish is pushed, its cost
    times its noise factor (in a disrupted run times the slowdown while a member is slowed down, counted
    once, and tagged with its attempt: value ``u + n x attempt``).  Returns ``(size, eid)``.  O(k)."""
    d = cost[u] * factors[u] if noisy else cost[u]
    tag = u
    if disrupted:
        at, k, members = gs[1][u], gs[2][u], gs[3]
        for i in range(k):
            if slow[members[at + i]]:
                d = d * slowdown
                wc[SLOWED] += 1
                break
        tag = u + cost.size * attempt[u]
    return _push(ht, hp, he, hk, hv, size, now + d, NORMAL, eid, FINISH, tag), eid + 1


@numba.njit(cache=True)
def start_next(p, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee, noisy, factors, disrupted,
               slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size, eid, data_ok, down,
               gs):  # pragma: no cover - compiled
    """``Assignment._start_next``: the head of ``p``'s queue starts now, its finish is pushed (in a
    disrupted run ``slowdown`` times longer while ``p`` is slowed down, tagged with its attempt: value
    ``task + n x attempt``), ``p``'s expected end is refreshed over the rest of the queue; a gang task
    (:mod:`~simsched.simulator.engine.compiled_gang`) starts on all its members when it may (:func:`hold`).
    Returns ``(size, eid)``.  O(queue length)."""
    u = task_of(qhead[p], start.size, gs)
    if gang_k(u, gs) > 1:
        if not start_gang(u, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, data_ok, down, ee, gs):
            return size, eid
        return hold(u, now, cost, noisy, factors, disrupted, slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size,
                    eid, gs)
    qhead[p] = qnext[qhead[p]]
    qlen[p] -= 1
    if qlen[p] == 0:
        qtail[p] = -1
    running[p] = u
    start[u] = now
    d = cost[u]
    tq = now + d
    if noisy:
        d = d * factors[u]
    tag = u
    if disrupted:
        if slow[p]:
            d = d * slowdown
            wc[SLOWED] += 1
        tag = u + start.size * attempt[u]
    size = _push(ht, hp, he, hk, hv, size, now + d, NORMAL, eid, FINISH, tag)
    ee[p] = queue_end(p, tq, qhead, qnext, data_time, cost, gs)
    return size, eid + 1


@numba.njit(cache=True)
def release(p, now, trigger, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee, noisy, factors, disrupted,
            slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size, eid, data_ok, down, gs,
            repair_at):  # pragma: no cover - compiled
    """``Assignment._release``: processor ``p`` ended what it ran: it starts the head of its queue, or while
    down is available at its repair, or else idle (a decision point).  Returns ``(trigger, size, eid)``.
    O(queue length)."""
    running[p] = -1
    if qlen[p] > 0:
        if data_ok[task_of(qhead[p], start.size, gs)] and not down[p]:
            size, eid = start_next(p, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee, noisy,
                                   factors, disrupted, slowdown, slow, attempt, wc, ht, hp, he, hk, hv, size, eid,
                                   data_ok, down, gs)
    elif down[p]:
        ee[p] = now if not repair_at[p] > now else repair_at[p]
    else:
        ee[p] = now
        trigger, size, eid = decision_point(trigger, now, ht, hp, he, hk, hv, size, eid)
    return trigger, size, eid


@numba.njit(cache=True)
def decision_point(trigger, now, ht, hp, he, hk, hv, size, eid):  # pragma: no cover - compiled
    """``Decisions._decision_point``: a decision now, after the instant's other events, unless one is pending
    (``trigger``).  Returns ``(True, size, eid)``.  O(log size)."""
    if trigger:
        return True, size, eid
    return True, _push(ht, hp, he, hk, hv, size, now, DECIDE_PRIORITY, eid, DECIDE, 0), eid + 1
