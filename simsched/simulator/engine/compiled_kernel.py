"""The compiled stream engine's event loop (numba), behind :mod:`simsched.simulator.engine.compiled`.

Imported only when numba is installed (extra ``simsched[fast]``) and a run qualifies (see
:func:`simsched.simulator.engine.compiled.compiled_applies`); ``cache=True`` keeps the machine code
next to this file, so only the first run on a machine pays the compilation (several seconds).

:func:`stream_loop` is :class:`~simsched.simulator.engine.loop.OnlineRun` without a Python policy
(failures, repairs and stragglers included: :mod:`~simsched.simulator.engine.compiled_disrupt`; P-states:
:mod:`~simsched.simulator.engine.compiled_pstate`; gang tasks: :mod:`~simsched.simulator.engine.compiled_gang`, under
failures :mod:`~simsched.simulator.engine.compiled_gangfail`; queues: :mod:`~simsched.simulator.engine.compiled_queue`),
transcribed statement for statement: the same event entries ``(time, priority, eid)`` pushed at the same
moments, popped from a binary heap (:mod:`~simsched.simulator.engine.compiled_heap`) in the same total order
(the eid is unique, so the order of equal times and priorities is the push order, as in
SimPy's ``heapq``), and the same float operations in the same order (no ``fastmath``), so schedules
are identical to the SimPy engine's, float for float.  The policy is MCT (Braun et al., JPDC 2001)
computed as :class:`~simsched.schedulers.online.MCT` does from the
:class:`~simsched.simulator.policy.DecisionView` (``max(available, data ready) + W``, first lowest
index on ties), Min-Min, the job-aware rules, ECS's relative superiority, or a replay of recorded
decisions.  O((n + e) log n + decisions x ready x m x in-degree), plus O(queue length) per failure.
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_disrupt import (
    EP_FAIL,
    EP_SLOW,
    EP_TRACE,
    REMAINING,
    REPAIR,
    SLOW_END,
    fail,
    gap,
    hand_back,
    length,
    log_attempt,
    repaired,
    world_state,
)
from simsched.simulator.engine.compiled_gang import append, enqueue, gang_cost, gang_k, start_gang, task_of
from simsched.simulator.engine.compiled_gangfail import attempt_room, drop_gangs
from simsched.simulator.engine.compiled_gatekernel import count_decision
from simsched.simulator.engine.compiled_heap import grown
from simsched.simulator.engine.compiled_heap import pop as _pop
from simsched.simulator.engine.compiled_heap import push as _push
from simsched.simulator.engine.compiled_jobaware import (  # noqa: F401 (FAIR, SRJF_LATE: compiled.py's codes)
    FAIR,
    GATE,
    HEFT,
    SRJF,
    SRJF_LATE,
    became_ready_job,
    decide,
    job_state,
)
from simsched.simulator.engine.compiled_minmin import minmin as _minmin
from simsched.simulator.engine.compiled_pstate import ECS, ecs_decide, stretched
from simsched.simulator.engine.compiled_queue import ARRIVAL, DATA, DECIDE, DECIDE_PRIORITY, FINISH, NORMAL, hold
from simsched.simulator.engine.compiled_queue import decision_point as _decision_point
from simsched.simulator.engine.compiled_queue import release as _release
from simsched.simulator.engine.compiled_queue import start_next as _start_next
from simsched.simulator.engine.compiled_view import completion_row
from simsched.simulator.engine.compiled_view import cost_at as _cost

MCT, REPLAY = 0, 1
"""Policies of :func:`stream_loop` (and the job-aware ones of
:mod:`~simsched.simulator.engine.compiled_jobaware`: ``SRJF, SRJF_LATE, FAIR, HEFT``; and :data:`MINMIN`)."""

MINMIN, MAXMIN = 6, 7
"""Min-Min and Max-Min (:class:`~simsched.schedulers.online.MinMin`, :class:`~simsched.schedulers.online.MaxMin`),
decided by :func:`~simsched.simulator.engine.compiled_minmin.minmin`."""

OK, BAD_TASK, BAD_PROCESSOR, INELIGIBLE, REPLAY_ENDED, EMPTY_DECISION, ENDLESS, STALLED = 0, 1, 2, 3, 4, 5, 6, 7
"""Status codes: an error sends the run back to the SimPy engine, which raises its own message."""

NEED_DRAWS = 8
"""Status: a processor's drawn failure or slowdown stream ran out; run again with longer streams."""

NEED_ROOM = 9
"""Status: the gang store is full (gang tasks placed again after failures); run again with a larger one."""


@numba.njit(cache=True)
def n_idle_of(running, qlen, down):  # pragma: no cover - compiled
    """Processors up with nothing running and nothing queued (the engine's ``idle``).  O(m)."""
    c = 0
    for q in range(running.size):
        if running[q] < 0 and qlen[q] == 0 and not down[q]:
            c += 1
    return c


@numba.njit(cache=True)
def _episode(slow, p, now, wd, ws, ht, hp, he, hk, hv, size, eid):  # pragma: no cover - compiled
    """``FailureHandling._schedule_episode``: while tasks remain, push processor ``p``'s next failure or
    slowdown (``slow``).  Returns ``(size, eid, ok)``; not ok when its drawn stream ran out.  O(log size)."""
    if ws[7][REMAINING] <= 0:
        return size, eid, True
    g = gap(slow, p, wd, ws)
    if g < 0:
        return size, eid, False
    size = _push(ht, hp, he, hk, hv, size, now + g, NORMAL, eid, EP_SLOW if slow else EP_FAIL, p)
    return size, eid + 1, True


@numba.njit(cache=True)
def stream_loop(policy, rep_ptr, rep_task, rep_proc, table, key, work, memory, proc_memory, structured,
                succ_ptr, succ_edges, pred_ptr, pred_edges, edge_src, edge_dst, edge_data, arrival, group_time,
                group_ptr, group_task,
                uniform, same_lat, same_inv, link_lat, link_inv, latency, inv_bw, factors, tables,
                ps, wd, gd, gs, gt, gz):  # pragma: no cover - compiled
    """Run the stream; returns ``(status, processor, start, finish, events, decisions, assignments,
    bad_decision, world)`` (``world``: :func:`~simsched.simulator.engine.compiled_disrupt.world_state`
    at the end, the failures' counters and logs).

    The graph as its own arrays (none gathered for the loop): edges ``edge_src``/``edge_dst``/``edge_data``,
    task ``v``'s outgoing edges ``succ_edges[succ_ptr[v]:succ_ptr[v + 1]]`` and its incoming edges
    ``pred_edges[pred_ptr[v]:pred_ptr[v + 1]]`` (``TaskGraph``'s CSR lists).
    ``arrival``: (n,) arrival times, never decreasing with the index (the visible numbering is the
    task index).  Tasks of ``group_task[group_ptr[g]:group_ptr[g + 1]]`` arrive at ``group_time[g] > 0``;
    tasks with arrival <= 0 are there from the start.  ``uniform``: every link is ``(link_lat,
    link_inv)`` and every processor to itself ``(same_lat, same_inv)``, else ``latency``/``inv_bw``
    are the (m, m) tables.  ``factors``: (n,) noise factors or empty.  ``policy``: :data:`MCT`, or
    :data:`REPLAY` of decision ``j`` = pairs ``rep_ptr[j]..rep_ptr[j + 1]`` of ``rep_task``/``rep_proc``,
    :data:`MINMIN`, :data:`MAXMIN`, or a job-aware rule (``SRJF``, ``SRJF_LATE``, ``FAIR``) or ``HEFT`` (online-heft)
    deciding with ``tables`` (:mod:`~simsched.simulator.engine.compiled_jobaware`; empty arrays for the
    others), or :data:`~simsched.simulator.engine.compiled_pstate.ECS` (``ecs-online``).  ``ps``: the
    P-states (:mod:`~simsched.simulator.engine.compiled_pstate`; each task's ends in ``world[17]``).  ``wd``:
    the failures, repairs and stragglers (:mod:`~simsched.simulator.engine.compiled_disrupt`; ``wd[0]``
    false: none).  ``gd``, ``gs``: the gang tasks' data and state (:mod:`~simsched.simulator.engine.compiled_gang`;
    ``gd[0]`` false: none), ``gs`` filled in with each gang task's members.  ``gt``, ``gz``: a gated srjf's
    tables and state (:data:`GATE`, :mod:`~simsched.simulator.engine.compiled_gatekernel`; empty for the others).
    ``events`` counts the heap pushes, which are SimPy's events one for one (the SimPy engine's
    ``next(env._eid)``).  A status other than :data:`OK` ends the run where the SimPy engine would
    raise (``bad_decision`` says at which decision), or (:data:`NEED_DRAWS`) where a drawn stream ran out."""
    n = arrival.size
    m = proc_memory.size
    noisy = factors.size > 0
    jobaware = SRJF <= policy <= HEFT or policy == GATE
    disrupted = wd[0]
    slots, k_most = attempt_room(gd, m)
    ws = world_state(n, m, wd, slots, k_most, ps[1])
    down, slow, repair_at, wc = ws[0], ws[1], ws[2], ws[7]
    attempt = ws[4]
    slowdown = wd[5]
    # the event heap: without failures at most one pending event per task (data or finish), per arrival group,
    # one decision; a failure leaves its tasks' events pending (stale), so a disrupted run's heap may grow
    cap = n + group_time.size + 2 + (2 * m + wd[10].size + 8 if disrupted else 0)
    room = m + 3 if disrupted and gd[0] else 2  # a gang's end or a failure starts at most one task per processor
    ht = np.empty(cap)
    hp = np.empty(cap, dtype=np.int32)  # priority, eid and kind (as the per-task int scratch below) stay below 2**31:
    he = np.empty(cap, dtype=np.int32)  # 4 bytes a slot, not 8 (#42); a value may be a task and its attempt
    hk = np.empty(cap, dtype=np.int32)
    hv = np.empty(cap, dtype=np.int64)
    size = 0
    eid = 0
    proc_of = np.full(n, -1, dtype=np.int32)  # a processor index below 2**31: 4 bytes a task (#42)
    cost = np.zeros(n)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    data_time = np.zeros(n)
    data_ok = np.zeros(n, dtype=np.bool_)
    npred = np.empty(n, dtype=np.int32)
    arrived = np.empty(n, dtype=np.bool_)
    is_ready = np.zeros(n, dtype=np.bool_)
    ready = np.empty(n, dtype=np.int32)  # the ready set, unordered; sorted at each decision
    n_ready = 0
    qnext = np.full(n + gd[10], -1, dtype=np.int32)  # FIFO queues as linked lists of entries (compiled_gang)
    gx = (np.empty(m), np.empty(m, dtype=np.int64), np.empty(m), np.empty(m))  # gang_choice's scratch
    qhead = np.full(m, -1, dtype=np.int64)
    qtail = np.full(m, -1, dtype=np.int64)
    qlen = np.zeros(m, dtype=np.int64)
    running = np.full(m, -1, dtype=np.int64)
    ee = np.zeros(m)  # expected end of each processor's queue
    avail = np.empty(m)
    dr = np.empty(m)
    w_row = np.empty(m)
    chosen = np.empty(n, dtype=np.int32)
    chosen_p = np.empty(n, dtype=np.int32)
    chosen_k = np.zeros(n, dtype=np.int32)  # the P-state of each assignment (written by ECS and a replay)
    idle = np.empty(m, dtype=np.bool_)
    n_jobs = tables[3].size - 1 if jobaware else 0
    sums = np.zeros(n_jobs)  # the job-aware rules' sums per job, summed again only when stale
    valid = np.zeros(n_jobs, dtype=np.bool_)
    placed = np.zeros(n if jobaware else 0, dtype=np.bool_)
    jst = job_state(n_jobs, is_ready, placed, n if policy == HEFT else 0)
    vw = (arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of, uniform, same_lat, same_inv, link_lat,
          link_inv, latency, inv_bw, table, key, work, memory, proc_memory, structured)
    trigger = False
    decisions = 0
    assignments = 0
    idle_decisions = 0  # the stall guard: decisions in a row that placed nothing while nothing ran or waited
    for v in range(n):
        npred[v] = pred_ptr[v + 1] - pred_ptr[v]
        arrived[v] = arrival[v] <= 0
        if arrived[v] and npred[v] == 0:
            is_ready[v] = True
            ready[n_ready] = v
            n_ready += 1
            if jobaware:
                became_ready_job(policy, v, tables, jst)
    now = 0.0
    if disrupted:  # FailureHandling._start_disruptions: each processor's first episodes, then the trace
        for p in range(m):
            if wd[1][p] > 0:
                size, eid, ok = _episode(False, p, now, wd, ws, ht, hp, he, hk, hv, size, eid)
                if not ok:
                    return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
            if wd[3] > 0 and wd[5] > 1:
                size, eid, ok = _episode(True, p, now, wd, ws, ht, hp, he, hk, hv, size, eid)
                if not ok:
                    return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
        for i in range(wd[10].size):
            size = _push(ht, hp, he, hk, hv, size, now + wd[11][i], NORMAL, eid, EP_TRACE, i)
            eid += 1
    for g in range(group_time.size):  # begin(): the arrivals, then the first decision point
        size = _push(ht, hp, he, hk, hv, size, now + group_time[g], NORMAL, eid, ARRIVAL, g)
        eid += 1
    if n_ready > 0:
        trigger = True
        size = _push(ht, hp, he, hk, hv, size, now, DECIDE_PRIORITY, eid, DECIDE, 0)
        eid += 1
    while size > 0:
        if size + room > ht.size:  # room for what one event other than a decision pushes
            ht, hp, he, hk, hv = grown(ht, hp, he, hk, hv, size, 2 * ht.size)
        size = _pop(ht, hp, he, hk, hv, size)
        now = ht[size]
        kind = hk[size]
        val = hv[size]
        start_p = -1
        if kind == FINISH:
            v = val
            if disrupted:  # FailureHandling._on_finish_checked: the end of an attempt a failure killed is ignored
                v = val % n
                if val // n != attempt[v]:
                    continue
                wc[REMAINING] -= 1
                if gang_k(v, gs) > 1:  # GangAllocation._on_gang_finish: one attempt per member (no P-state)
                    for i in range(gang_k(v, gs)):
                        log_attempt(ws, v, gs[3][gs[1][v] + i], start[v], now, True, False)
                else:
                    log_attempt(ws, v, proc_of[v], start[v], now, True, True)
            for i in range(1, gang_k(v, gs)):  # GangAllocation._on_gang_finish: the other members first
                trigger, size, eid = _release(gs[3][gs[1][v] + i], now, trigger, qhead, qnext, qtail, qlen, running,
                                              start, cost, data_time, ee, noisy, factors, disrupted, slowdown, slow,
                                              attempt, wc, ht, hp, he, hk, hv, size, eid, data_ok, down, gs, repair_at)
            finish[v] = now
            became_ready = False
            for i in range(succ_ptr[v], succ_ptr[v + 1]):
                w = edge_dst[succ_edges[i]]
                npred[w] -= 1
                if npred[w] == 0 and arrived[w]:
                    if not is_ready[w]:
                        is_ready[w] = True
                        ready[n_ready] = w
                        n_ready += 1
                        if jobaware:
                            became_ready_job(policy, w, tables, jst)
                    became_ready = True
            trigger, size, eid = _release(proc_of[v], now, trigger, qhead, qnext, qtail, qlen, running, start, cost,
                                          data_time, ee, noisy, factors, disrupted, slowdown, slow, attempt, wc,
                                          ht, hp, he, hk, hv, size, eid, data_ok, down, gs, repair_at)
            if became_ready:
                trigger, size, eid = _decision_point(trigger, now, ht, hp, he, hk, hv, size, eid)
        elif kind == DATA:
            v = val
            if disrupted:  # the task was handed back after a failure meanwhile: stale
                v = val % n
                if val // n != attempt[v]:
                    continue
            data_ok[v] = True
            p = proc_of[v]
            start_p = p if running[p] < 0 and qhead[p] == v and not down[p] else -1
        elif kind == ARRIVAL:
            for i in range(group_ptr[val], group_ptr[val + 1]):
                v = group_task[i]
                arrived[v] = True
                if npred[v] == 0 and not is_ready[v]:
                    is_ready[v] = True
                    ready[n_ready] = v
                    n_ready += 1
                    if jobaware:
                        became_ready_job(policy, v, tables, jst)
            gz[0] += 1  # the gated rule's arrival state
            trigger, size, eid = _decision_point(trigger, now, ht, hp, he, hk, hv, size, eid)
        elif kind == DECIDE:
            trigger = False
            if n_ready == 0:
                continue
            if policy == GATE:
                count_decision(gt, gz, now, ee, running, qlen, down)
            if jobaware and n_idle_of(running, qlen, down) == 0:  # the job-aware rules place nothing: O(m)
                decisions += 1
                idle_decisions = _idle_decision(idle_decisions, running, qlen)
                if idle_decisions >= wd[14]:
                    return STALLED, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
                continue
            tasks = ready[:n_ready] if jobaware else np.sort(ready[:n_ready])  # job-aware: any order
            k = tasks.size
            if policy == REPLAY:
                if decisions + 1 >= rep_ptr.size:
                    return REPLAY_ENDED, proc_of, start, finish, eid, decisions, assignments, decisions, ws
                lo, hi = rep_ptr[decisions], rep_ptr[decisions + 1]
                k = hi - lo
                for i in range(k):  # an index out of range kept as -1 in the int32 scratch, refused below as before
                    chosen[i] = rep_task[lo + i] if 0 <= rep_task[lo + i] < n else -1
                    chosen_p[i] = rep_proc[lo + i] if 0 <= rep_proc[lo + i] < m else -1
                    chosen_k[i] = (ps[4][lo + i] if 0 <= ps[4][lo + i] < 2**31 else -1) if ps[4].size else 0
            elif policy == MINMIN or policy == MAXMIN:
                for q in range(m):
                    avail[q] = ee[q] if ee[q] > now else now
                k = _minmin(tasks, now, avail, vw, dr, chosen, chosen_p, policy == MAXMIN)
                if k < 0:  # a task may run nowhere: SimPy refuses the pair Min-Min (Max-Min) returns
                    return INELIGIBLE, proc_of, start, finish, eid, decisions + 1, assignments, decisions, ws
            elif policy == ECS:
                for q in range(m):
                    avail[q] = ee[q] if ee[q] > now else now
                k = ecs_decide(tasks, now, avail, vw, dr, w_row, ps, chosen, chosen_p, chosen_k)
                if k < 0:  # a task may run nowhere: the policy raises on SimPy
                    return INELIGIBLE, proc_of, start, finish, eid, decisions + 1, assignments, decisions, ws
            elif policy == MCT:  # MCT on the DecisionView: available = max(expected end, now), rows in index order
                for q in range(m):
                    avail[q] = ee[q] if ee[q] > now else now
                for i in range(k):
                    t = tasks[i]
                    best = completion_row(t, now, avail, *vw, dr, w_row)
                    chosen[i] = t
                    chosen_p[i] = best
                    avail[best] = w_row[best]
            else:  # a job-aware rule
                for q in range(m):
                    avail[q] = ee[q] if ee[q] > now else now
                    idle[q] = running[q] < 0 and qlen[q] == 0 and not down[q]
                k = decide(policy, tasks, now, avail, idle, tables, sums, valid, jst, vw, dr, w_row, chosen, chosen_p,
                           gd, gs, gx, gt, gz)
                if k == -2:  # the gang store is full
                    return NEED_ROOM, proc_of, start, finish, eid, decisions, assignments, -1, ws
                if k < 0:  # a ready task may run nowhere: SimPy refuses the pair the policy returns
                    return INELIGIBLE, proc_of, start, finish, eid, decisions + 1, assignments, decisions, ws
            decisions += 1
            if k == 0 and jobaware:  # an empty answer: the ready tasks wait for the next decision point
                idle_decisions = _idle_decision(idle_decisions, running, qlen)
                if idle_decisions >= wd[14]:
                    return STALLED, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
                continue
            if k == 0:
                return EMPTY_DECISION, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
            idle_decisions = 0
            if size + k > ht.size:  # room for one event per assignment
                ht, hp, he, hk, hv = grown(ht, hp, he, hk, hv, size, 2 * ht.size + k)
            for i in range(k):  # _assign of each pair, in the order returned
                v = chosen[i]
                p = chosen_p[i]
                if not (0 <= v < n) or not is_ready[v]:
                    return BAD_TASK, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
                if not 0 <= p < m:
                    return BAD_PROCESSOR, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
                gang = gang_k(v, gs) > 1  # GangAllocation._assign_gang: on every member, inputs to the lead p
                if gang:
                    w = gang_cost(v, vw, gd, gs)
                else:  # a task that needs several processors at once on one (srjf late): SimPy refuses it
                    w = _cost(v, p, table, key, work, memory, proc_memory, structured) if not gd[0] or \
                        gd[1][v] <= 1 else np.nan
                    if w < np.inf:
                        w = stretched(w, p, chosen_k[i], ps)  # NaN: no such P-state
                if not w < np.inf:
                    return INELIGIBLE, proc_of, start, finish, eid, decisions, assignments, decisions - 1, ws
                if ws[17].size:  # kept only with P-states or disruptions (#42)
                    ws[17][v] = chosen_k[i]
                is_ready[v] = False
                proc_of[v] = p
                cost[v] = w
                assignments += 1
                delay = 0.0
                first = True
                for j in range(pred_ptr[v], pred_ptr[v + 1]):
                    e = pred_edges[j]
                    u = edge_src[e]
                    x = edge_data[e]
                    if uniform:
                        tt = same_lat + x * same_inv if proc_of[u] == p else link_lat + x * link_inv
                    else:
                        s = proc_of[u]
                        tt = latency[s, p] + x * inv_bw[s, p]
                    if first or tt > delay:
                        delay = tt
                        first = False
                if gang:
                    data_ok[v] = not delay > 0.0
                    data_time[v] = now + delay if delay > 0.0 else now
                    if delay > 0.0:
                        size = _push(ht, hp, he, hk, hv, size, now + delay, NORMAL, eid, DATA,
                                     v + n * attempt[v] if disrupted else v)
                        eid += 1
                    enqueue(v, qhead, qnext, qtail, qlen, ee, data_time, cost, gs)
                    if data_ok[v] and start_gang(v, now, qhead, qnext, qtail, qlen, running, start, cost, data_time,
                                                 data_ok, down, ee, gs):
                        size, eid = hold(v, now, cost, noisy, factors, disrupted, slowdown, slow, attempt, wc, ht, hp,
                                         he, hk, hv, size, eid, gs)
                    continue
                if delay > 0.0:
                    ready_at = now + delay
                    data_time[v] = ready_at
                    if not disrupted and running[p] < 0 and qlen[p] == 0:  # _start_when_data: one event, the finish
                        data_ok[v] = True
                        running[p] = v
                        start[v] = ready_at
                        d = w * factors[v] if noisy else w
                        e0 = ee[p]
                        ee[p] = (e0 if not ready_at > e0 else ready_at) + w
                        size = _push(ht, hp, he, hk, hv, size, ready_at + d, NORMAL, eid, FINISH, v)
                        eid += 1
                        continue
                    tag = v + n * attempt[v] if disrupted else v
                    size = _push(ht, hp, he, hk, hv, size, now + delay, NORMAL, eid, DATA, tag)
                    eid += 1
                else:
                    data_ok[v] = True
                    data_time[v] = now
                e0 = ee[p]
                dt = data_time[v]
                ee[p] = (e0 if not dt > e0 else dt) + w
                append(p, v, qhead, qnext, qtail, qlen)
                if running[p] < 0 and qlen[p] == 1 and data_ok[v] and not down[p]:
                    size, eid = _start_next(p, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee,
                                            noisy, factors, disrupted, slowdown, slow, attempt, wc,
                                            ht, hp, he, hk, hv, size, eid, data_ok, down, gs)
            # the ready set keeps the tasks not assigned (none for MCT)
            kept = 0
            for i in range(n_ready):
                if is_ready[ready[i]]:
                    ready[kept] = ready[i]
                    kept += 1
            n_ready = kept
        elif kind == REPAIR:  # FailureHandling._on_episode_end of a failure: the processor is up again
            p = val
            if not repaired(ws, p, now):
                continue
            if running[p] < 0:
                if qlen[p] > 0:
                    if data_ok[task_of(qhead[p], n, gs)]:
                        start_p = p
                else:
                    ee[p] = now
                    trigger, size, eid = _decision_point(trigger, now, ht, hp, he, hk, hv, size, eid)
            if start_p >= 0:  # the start comes before the next failure is drawn, as in SimPy
                size, eid = _start_next(p, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee,
                                        noisy, factors, disrupted, slowdown, slow, attempt, wc,
                                        ht, hp, he, hk, hv, size, eid, data_ok, down, gs)
                start_p = -1
            if wd[1][p] > 0:
                size, eid, ok = _episode(False, p, now, wd, ws, ht, hp, he, hk, hv, size, eid)
                if not ok:
                    return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
        elif kind == SLOW_END:
            slow[val] = False
            size, eid, ok = _episode(True, val, now, wd, ws, ht, hp, he, hk, hv, size, eid)
            if not ok:
                return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
        else:  # EP_FAIL, EP_SLOW, EP_TRACE: FailureHandling._on_episode
            if wc[REMAINING] <= 0:
                continue
            if kind == EP_SLOW:
                p = val
                if not slow[p]:
                    slow[p] = True
                    span = length(True, p, wd, ws)
                    if span < 0:
                        return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
                    size = _push(ht, hp, he, hk, hv, size, now + span, NORMAL, eid, SLOW_END, p)
                    eid += 1
                else:
                    size, eid, ok = _episode(True, p, now, wd, ws, ht, hp, he, hk, hv, size, eid)
                    if not ok:
                        return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
                continue
            if kind == EP_TRACE:
                p = wd[10][val]
                span = wd[12][val]
            else:
                p = val
                span = length(False, p, wd, ws)
                if span < 0:
                    return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
            if down[p]:  # already down: a trace interval extends the repair, a random failure is skipped
                if kind == EP_TRACE and now + span > repair_at[p]:
                    repair_at[p] = now + span
                    size = _push(ht, hp, he, hk, hv, size, now + span, NORMAL, eid, REPAIR, p)
                    eid += 1
                elif kind == EP_FAIL:
                    size, eid, ok = _episode(False, p, now, wd, ws, ht, hp, he, hk, hv, size, eid)
                    if not ok:
                        return NEED_DRAWS, proc_of, start, finish, eid, decisions, assignments, -1, ws
                continue
            v, head, began = fail(p, now, span, wd, ws, running, start, qhead, qtail, qlen)
            if v < -1:
                return ENDLESS, proc_of, start, finish, eid, decisions, assignments, -1, ws
            if gd[0]:  # a gang task lets go of its other members too
                trigger, size, eid = drop_gangs(p, v, head, began, now, trigger, qhead, qnext, qtail, qlen, running,
                                                start, cost, data_time, ee, noisy, factors, disrupted, slowdown, slow,
                                                attempt, wc, ht, hp, he, hk, hv, size, eid, data_ok, down, gs,
                                                repair_at, ws)
            n_ready, handed = hand_back(p, v, head, ws, qnext, ee, proc_of, data_ok, is_ready, ready, n_ready, policy,
                                        tables, valid, jst, gs)
            size = _push(ht, hp, he, hk, hv, size, now + span, NORMAL, eid, REPAIR, p)
            eid += 1
            if handed:
                trigger, size, eid = _decision_point(trigger, now, ht, hp, he, hk, hv, size, eid)
        if start_p >= 0:  # a task's data arrived at the head of an idle processor's queue
            p = start_p
            size, eid = _start_next(p, now, qhead, qnext, qtail, qlen, running, start, cost, data_time, ee,
                                    noisy, factors, disrupted, slowdown, slow, attempt, wc,
                                    ht, hp, he, hk, hv, size, eid, data_ok, down, gs)
    return OK, proc_of, start, finish, eid, decisions, assignments, -1, ws


@numba.njit(cache=True)
def _idle_decision(count, running, qlen):  # pragma: no cover - compiled
    """``Decisions._note_idle_decision``: the count of decisions in a row that placed nothing while nothing
    ran or waited in a queue, after one more that placed nothing.  O(m)."""
    for q in range(running.size):
        if running[q] >= 0 or qlen[q] > 0:
            return 0
    return count + 1
