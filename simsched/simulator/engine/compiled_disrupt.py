"""Failures, repairs and stragglers in the compiled stream engine (numba), behind
:mod:`simsched.simulator.engine.compiled_kernel`: :class:`~simsched.simulator.engine.disruptions.FailureHandling`
transcribed statement for statement, so a disrupted run is the SimPy engine's float for float.

The episode timelines are the SimPy engine's: each processor's failure gaps and repair lengths come from
its own child generator, its slowdown gaps and lengths from another, drawn lazily in the order the run
asks for them.  Those draws do not depend on the schedule, so :mod:`~simsched.simulator.engine.compiled_world`
draws each stream ahead as standard exponentials (``Generator.exponential(scale)`` is ``scale`` times the
next one, the same double) and the loop reads them in order, scaling each as the SimPy engine's draw
does; a stream read to its end stops the run (:data:`NEED_DRAWS`) to be run again with longer streams.

The world's description, ``wd``: ``(active, fail_rate (m,), mttr (m,), slowdown_rate, slowdown_duration,
slowdown, fail draws, fail pointers (m + 1,), slow draws, slow pointers (m + 1,), trace processors,
trace starts, trace lengths, max restarts, max idle decisions)`` (processor ``p``'s draws are
``draws[ptr[p]:ptr[p + 1]]``).  The run's state, ``ws`` (:func:`world_state`).  Imported only with numba.
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_gang import task_of
from simsched.simulator.engine.compiled_jobaware import GATE, HEFT, SRJF, became_ready_job

EP_FAIL, EP_SLOW, EP_TRACE, REPAIR, SLOW_END = 4, 5, 6, 7, 8
"""Event kinds after the loop's ``ARRIVAL, DECIDE, DATA, FINISH``: a random failure, the start of a
slowdown, a traced down interval, a repair (the end of a down interval), the end of a slowdown."""

FAILURES, RESTARTS, SLOWED, N_ATTEMPTS, N_DOWN, REMAINING, N_PSTATES = 0, 1, 2, 3, 4, 5, 6
"""Slots of the run's counters ``ws[7]``: failures, restarts, slowed tasks, logged attempts, logged down
intervals, tasks not finished, logged P-states (one per attempt but those of a gang task's members that the
SimPy engine logs without one: each member at the gang's end, the other members at a failure)."""


@numba.njit(cache=True)
def world_state(n, m, wd, slots, k_most, pstates):  # pragma: no cover - compiled
    """The disruption state of a fresh run: ``(down, slow, repair_at, down_since, attempt, fail cursor, slow
    cursor, counters, lost work (1,), attempts' task, processor, start, end, completed, down intervals'
    processor, start, end, each task's P-state (n,: with P-states (``pstates``) or disruptions, else empty),
    attempts' P-state)``.  ``attempt`` is per task only in
    a disrupted run (``wd[0]``); the logs hold at most one down interval per failure (a draw or a traced
    interval each) and one attempt per task and per held processor at its end (``slots``: the members of
    gang tasks beyond one each, at most) and per failure (``k_most``: the most processors a task holds).
    O(n + m + draws)."""
    active = wd[0]
    fails = wd[6].size + wd[10].size if active else 0
    tries = n + slots + fails * k_most if active else 0
    counters = np.zeros(7, dtype=np.int64)
    counters[REMAINING] = n
    return (np.zeros(m, dtype=np.bool_), np.zeros(m, dtype=np.bool_), np.zeros(m), np.zeros(m),
            np.zeros(n if active else 0, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
            counters, np.zeros(1), np.empty(tries, dtype=np.int64), np.empty(tries, dtype=np.int64),
            np.empty(tries), np.empty(tries), np.empty(tries, dtype=np.bool_), np.empty(fails, dtype=np.int64),
            np.empty(fails), np.empty(fails), np.zeros(n if active or pstates else 0, dtype=np.int64),
            np.empty(tries, dtype=np.int64))


@numba.njit(cache=True)
def _draw(draws, ptr, cur, p):  # pragma: no cover - compiled
    """Processor ``p``'s next standard exponential, or -1.0 when its drawn stream ran out.  O(1)."""
    i = ptr[p] + cur[p]
    if i >= ptr[p + 1]:
        return -1.0
    cur[p] += 1
    return draws[i]


@numba.njit(cache=True)
def gap(slow, p, wd, ws):  # pragma: no cover - compiled
    """``FailureHandling._schedule_episode``'s draw: the time to processor ``p``'s next slowdown (``slow``)
    or failure, ``Generator.exponential(1 / rate)``; -1.0 when the drawn stream ran out.  O(1)."""
    if slow:
        e = _draw(wd[8], wd[9], ws[6], p)
        return -1.0 if e < 0 else (1.0 / wd[3]) * e
    e = _draw(wd[6], wd[7], ws[5], p)
    return -1.0 if e < 0 else (1.0 / wd[1][p]) * e


@numba.njit(cache=True)
def length(slow, p, wd, ws):  # pragma: no cover - compiled
    """The length of processor ``p``'s slowdown (``slow``) or repair starting now: ``exponential(mean)``,
    0 without a draw when the mean is 0; -1.0 when the drawn stream ran out.  O(1)."""
    mean = wd[4] if slow else wd[2][p]
    if not mean > 0:
        return 0.0
    e = _draw(wd[8], wd[9], ws[6], p) if slow else _draw(wd[6], wd[7], ws[5], p)
    return -1.0 if e < 0 else mean * e


@numba.njit(cache=True)
def log_attempt(ws, v, p, start, end, ok, pstate):  # pragma: no cover - compiled
    """Append ``(v, p, start, end, ok)`` to the attempts' log (``DisruptionLog.attempts``) and, when
    ``pstate``, ``v``'s P-state to ``DisruptionLog.pstates``.  O(1)."""
    c = ws[7]
    i = c[N_ATTEMPTS]
    ws[9][i], ws[10][i], ws[11][i], ws[12][i], ws[13][i] = v, p, start, end, ok
    c[N_ATTEMPTS] = i + 1
    if pstate:
        ws[18][c[N_PSTATES]] = ws[17][v]
        c[N_PSTATES] += 1


@numba.njit(cache=True)
def repaired(ws, p, now):  # pragma: no cover - compiled
    """Processor ``p``'s repair is due now: False when it is not down or a later interval extended the
    repair; else it is up again and its down interval logged (``DisruptionLog.down``).  O(1)."""
    down, repair_at, down_since, c = ws[0], ws[2], ws[3], ws[7]
    if not down[p] or now < repair_at[p]:
        return False
    down[p] = False
    i = c[N_DOWN]
    ws[14][i], ws[15][i], ws[16][i] = p, down_since[p], now
    c[N_DOWN] = i + 1
    return True


@numba.njit(cache=True)
def _hand_back(u, ws, proc_of, data_ok, is_ready, ready, n_ready, policy, tables, valid,
               jst):  # pragma: no cover - compiled
    """Task ``u`` goes back to the ready set after a failure, to be placed anew (its job's sum is stale).
    Returns the ready count.  O(1), online-heft O(log k)."""
    ws[4][u] += 1
    proc_of[u] = -1
    data_ok[u] = False
    is_ready[u] = True
    ready[n_ready] = u
    if SRJF <= policy <= HEFT or policy == GATE:
        became_ready_job(policy, u, tables, jst)
        if policy != HEFT:
            valid[tables[1][u]] = False
    return n_ready + 1


@numba.njit(cache=True)
def fail(p, now, span, wd, ws, running, start, qhead, qtail, qlen):  # pragma: no cover - compiled
    """Processor ``p`` fails now for ``span`` (``FailureHandling._on_episode``, from ``self.down[p] = True``):
    the running attempt is lost (logged, its time counted as lost work) and the queue is emptied.  Returns
    ``(running task, first entry of the old queue, the lost attempt's start)`` (-1: none), running task -2
    when it reached the restart limit (the SimPy engine raises).  :func:`hand_back` then hands them back,
    after :func:`~simsched.simulator.engine.compiled_gangfail.drop_gangs` where gangs run.  O(1)."""
    down, repair_at, down_since, attempt, c = ws[0], ws[2], ws[3], ws[4], ws[7]
    down[p] = True
    down_since[p] = now
    c[FAILURES] += 1
    repair_at[p] = now + span
    v = running[p]
    started = 0.0
    if v >= 0:
        c[RESTARTS] += 1
        if attempt[v] >= wd[13]:
            return -2, -1, started
        started = start[v]
        ws[8][0] += now - started
        log_attempt(ws, v, p, started, now, False, True)
        running[p] = -1
        start[v] = np.nan
    head = qhead[p]
    qhead[p] = -1
    qtail[p] = -1
    qlen[p] = 0
    return v, head, started


@numba.njit(cache=True)
def hand_back(p, v, head, ws, qnext, ee, proc_of, data_ok, is_ready, ready, n_ready, policy, tables, valid, jst,
              gs):  # pragma: no cover - compiled
    """The rest of processor ``p``'s failure: its lost task ``v`` (-1: none) and the tasks of its old queue
    from entry ``head`` on, in that order, go back to the ready set; ``p`` is available at its repair.
    Returns ``(ready count, tasks handed back)``.  O(queue length)."""
    n = proc_of.size
    handed = 0
    if v >= 0:
        n_ready = _hand_back(v, ws, proc_of, data_ok, is_ready, ready, n_ready, policy, tables, valid, jst)
        handed += 1
    x = head
    while x >= 0:
        nx = qnext[x]
        n_ready = _hand_back(task_of(x, n, gs), ws, proc_of, data_ok, is_ready, ready, n_ready, policy, tables,
                             valid, jst)
        handed += 1
        x = nx
    ee[p] = ws[2][p]
    return n_ready, handed
