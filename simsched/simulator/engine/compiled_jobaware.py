"""The job-aware online rules in numba, for the compiled stream engine
(:mod:`simsched.simulator.engine.compiled_kernel`): shortest remaining job first (``srjf-eft``, with
or without late binding) and weighted fair share (``fair-eft``) with earliest expected finish, decided
as :class:`~simsched.schedulers.jobaware.ShortestJobEFT` and
:class:`~simsched.schedulers.jobaware.FairShareEFT` decide on the SimPy engine, float for float.

The per-task and per-job tables (upward rank, job, mean cost; each job's tasks, priority, weight)
are built once before the run by the policy (``compiled_tables``), over the whole stream: equal to
the tables the policy grows arrival by arrival, since the compiled engine takes only streams whose
arrival groups share no edge and no job (:class:`~simsched.simulator.engine.compiled.JobTables`).

A job's remaining (or attained) work is what the policy sums: the mean costs of the job's tasks in
task-index order, one addition after another from the first (``np.cumsum(mask * cost)[-1]``), the
mask "not assigned (nor placed in this decision) and not finished" (``served`` false) or "assigned
or placed" (true).  It is cached per job and summed again only after one of the job's tasks was
placed (the only change to its mask when nothing fails), so the same floats as summing afresh.

Tables are passed as the tuple ``(rank, job, cost, job_ptr, job_task, priority, weight)``: job
``j``'s tasks are ``job_task[job_ptr[j]:job_ptr[j + 1]]`` ascending; the decision view as
``(arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of, uniform, same_lat, same_inv,
link_lat, link_inv, latency, inv_bw, table, key, work, memory, proc_memory, structured)``
(:func:`~simsched.simulator.engine.compiled_view.completion_row`'s arguments).
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_gang import place
from simsched.simulator.engine.compiled_gatekernel import backlog, gate_processor
from simsched.simulator.engine.compiled_view import before as _before
from simsched.simulator.engine.compiled_view import completion_row
from simsched.simulator.engine.compiled_view import eq as _eq
from simsched.simulator.engine.compiled_view import key_order as _key_order
from simsched.simulator.engine.compiled_view import lt as _lt

SRJF, SRJF_LATE, FAIR, HEFT = 2, 3, 4, 5
"""Policies of :func:`~simsched.simulator.engine.compiled_kernel.stream_loop` decided here (after its
``MCT, REPLAY = 0, 1``): ``srjf-eft``, ``srjf-eft`` with ``late_binding``, ``fair-eft``, ``online-heft``
(job-blind: its ready tasks are kept in a binary heap by rank, see :func:`became_ready_job`)."""

GATE = 9
"""A gated ``srjf-eft`` (:mod:`~simsched.simulator.engine.compiled_gate`): srjf's order and keys, its placement
gated where a task's earliest-finish processor is busy
(:func:`~simsched.simulator.engine.compiled_gatekernel.gate_processor`)."""


@numba.njit(cache=True)
def _job_sum(j, served, tables, proc_of, finish, placed):  # pragma: no cover - compiled
    """Job ``j``'s remaining (``served`` false) or attained work: the policy's ``np.cumsum(mask * cost)[-1]``
    over its tasks in index order.  O(tasks of the job)."""
    cost, job_ptr, job_task = tables[2], tables[3], tables[4]
    s = 0.0
    for i in range(job_ptr[j], job_ptr[j + 1]):
        t = job_task[i]
        assigned = proc_of[t] >= 0 or placed[t]
        mask = assigned if served else not assigned and finish[t] != finish[t]
        w = (1.0 if mask else 0.0) * cost[t]
        s = w if i == job_ptr[j] else s + w
    return s


@numba.njit(cache=True)
def _job_key(j, rule, tables, sums, valid, proc_of, finish, placed):  # pragma: no cover - compiled
    """Job ``j``'s part of its tasks' sort key: ``(remaining, -priority)`` for srjf, ``(attained / weight,
    job)`` for fair (the first two of the policies' ``np.lexsort`` keys), ``(0, 0)`` for the job-blind
    online-heft; its sum summed again only when stale.  O(1), or O(tasks of the job) when stale."""
    priority, weight = tables[5], tables[6]
    if rule == HEFT:
        return 0.0, 0.0
    if not valid[j]:
        sums[j] = _job_sum(j, rule == FAIR, tables, proc_of, finish, placed)
        valid[j] = True
    if rule == FAIR:
        return sums[j] / weight[j], float(j)
    return sums[j], -priority[j]


@numba.njit(cache=True)
def job_state(n_jobs, is_ready, placed, n_heap):  # pragma: no cover - compiled
    """The per-job view of the ready set the loop keeps for :func:`decide`: ``(ready count, best ready
    task, best known, active jobs, position in active, [number active], is_ready, placed, heap,
    [heap size])``; a job is active while it has a ready task not placed; online-heft keeps its ready
    tasks in the heap instead (``n_heap`` slots: the tasks; 0 for the other rules).  O(jobs + n_heap)."""
    return (np.zeros(n_jobs, dtype=np.int64), np.zeros(n_jobs, dtype=np.int64), np.zeros(n_jobs, dtype=np.bool_),
            np.zeros(n_jobs, dtype=np.int64), np.zeros(n_jobs, dtype=np.int64), np.zeros(1, dtype=np.int64),
            is_ready, placed, np.empty(n_heap, dtype=np.int64), np.zeros(1, dtype=np.int64))


@numba.njit(cache=True)
def _better(t, u, rank):  # pragma: no cover - compiled
    """Task ``t`` before task ``u`` of the same job: higher rank (``-rank`` first), then lower index."""
    a, b = -rank[t], -rank[u]
    if not _eq(a, b):
        return _lt(a, b)
    return t < u


@numba.njit(cache=True)
def _heap_push(t, rank, heap, hsize):  # pragma: no cover - compiled
    """Push task ``t`` on the heap of ready tasks, first by :func:`_better` at the root.  O(log k)."""
    i = hsize[0]
    heap[i] = t
    hsize[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _better(heap[i], heap[parent], rank):
            break
        heap[i], heap[parent] = heap[parent], heap[i]
        i = parent


@numba.njit(cache=True)
def _heap_pop(rank, heap, hsize):  # pragma: no cover - compiled
    """Remove the heap's root (the ready task of highest rank, the lowest index on ties).  O(log k)."""
    last = hsize[0] - 1
    heap[0] = heap[last]
    hsize[0] = last
    i = 0
    while True:
        a = 2 * i + 1
        if a >= last:
            break
        c = a + 1 if a + 1 < last and _better(heap[a + 1], heap[a], rank) else a
        if not _better(heap[c], heap[i], rank):
            break
        heap[i], heap[c] = heap[c], heap[i]
        i = c


@numba.njit(cache=True)
def became_ready_job(rule, t, tables, jst):  # pragma: no cover - compiled
    """Task ``t`` joined the ready set: for online-heft (``rule`` :data:`HEFT`) push it on the heap; else
    count it in its job, activate the job, and keep the job's best ready task known when it was.  O(1),
    online-heft O(log k)."""
    rank, job = tables[0], tables[1]
    if rule == HEFT:
        _heap_push(t, rank, jst[8], jst[9])
        return
    jready, jbest, jbest_ok, active, apos, n_active = jst[0], jst[1], jst[2], jst[3], jst[4], jst[5]
    j = job[t]
    if jready[j] == 0:
        apos[j] = n_active[0]
        active[n_active[0]] = j
        n_active[0] += 1
        jbest[j], jbest_ok[j] = t, True
    elif jbest_ok[j] and _better(t, jbest[j], rank):
        jbest[j] = t
    jready[j] += 1


@numba.njit(cache=True)
def _left_job(t, tables, jst):  # pragma: no cover - compiled
    """Task ``t`` left the ready set (placed): uncount it, forget its job's best task (found again from the
    job's tasks when asked), and deactivate the job when none is left.  O(1)."""
    job = tables[1]
    jready, jbest_ok, active, apos, n_active = jst[0], jst[2], jst[3], jst[4], jst[5]
    j = job[t]
    jready[j] -= 1
    jbest_ok[j] = False
    if jready[j] == 0:
        last = active[n_active[0] - 1]
        active[apos[j]] = last
        apos[last] = apos[j]
        n_active[0] -= 1


@numba.njit(cache=True)
def _best_ready(j, tables, jst):  # pragma: no cover - compiled
    """Job ``j``'s ready task not placed that comes first (:func:`_better`).  O(tasks of the job) when not
    known, else O(1)."""
    rank, job_ptr, job_task = tables[0], tables[3], tables[4]
    jbest, jbest_ok, is_ready, placed = jst[1], jst[2], jst[6], jst[7]
    if not jbest_ok[j]:
        best = -1
        for i in range(job_ptr[j], job_ptr[j + 1]):
            t = job_task[i]
            if is_ready[t] and not placed[t] and (best < 0 or _better(t, best, rank)):
                best = t
        jbest[j], jbest_ok[j] = best, True
    return jbest[j]


@numba.njit(cache=True)
def decide(rule, tasks, now, avail, idle, tables, sums, valid, jst, vw, dr, ct, chosen, chosen_p, gd, gs,
           gx, gt, gz):  # pragma: no cover - compiled
    """One decision point: fill ``chosen``/``chosen_p`` with the ``(task, processor)`` pairs the policy
    returns, in order, and return how many (0: none); -1 when a chosen task may run nowhere (the policy
    then returns a pair the SimPy engine refuses), -2 when the gang store is full (:func:`place`).
    ``tasks``: the ready tasks, in any order (the lower task wins full ties of the key, as in the policies'
    stable sort over the ready tasks ascending); ``avail`` (m,) ``max(expected end, now)``, updated as tasks
    are placed; ``idle`` (m,) nothing running or queued (modified).  ``sums``/``valid`` per job and ``jst``
    (:func:`job_state`, kept by the loop through :func:`became_ready_job`; ``placed`` all false between
    decisions) live from one decision to the next.

    srjf, fair and online-heft (``OneByOne._decide_by_task``): while a processor is idle and ready tasks
    are left, the ready task first in key order (job key :func:`_job_key`, then ``-rank``, then the lower
    task; online-heft: ``-rank`` then the lower task, ``np.argmax`` over the ready tasks ascending, the
    root of its heap, O(log k) a pick; a -1 leaves the heap short of the tasks placed, the run ends) goes to
    its earliest expected finish, and that processor's expected end becomes that finish; the first task
    is the first of the active jobs' first ready tasks (a lexicographic minimum splits so).
    O(picks x (active jobs + in-degree x m)) plus O(tasks of a job) to find its first ready task again
    after one was placed.  The gated srjf (:data:`GATE`; ``gt``/``gz``, the gate's tables and state in arrival
    state ``gz[0]``, :mod:`~simsched.simulator.engine.compiled_gatekernel`) places as srjf, but a task whose
    earliest-finish processor is busy goes where the gate says, or waits: left out of this decision, still ready
    (its slots at the end of ``chosen`` meanwhile); plus O(arrived tasks) a decision for the backlog when its
    weight is not 0.  srjf late (``ShortestJobEFT.decide``): the ready tasks in key order, each to the idle
    processor still free where it finishes first (completion times from the view as it was), skipping a
    task no free idle processor may run, until none is free.  O(k log k + k x in-degree x m)."""
    (arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of, uniform, same_lat, same_inv, link_lat,
     link_inv, latency, inv_bw, table, key, work, memory, proc_memory, structured) = vw
    rank, job = tables[0], tables[1]
    placed = jst[7]
    k = tasks.size
    m = avail.size
    n_idle = 0
    for q in range(m):
        if idle[q]:
            n_idle += 1
    if k == 0 or n_idle == 0:
        return 0
    out = 0
    if rule == SRJF_LATE:
        k1 = np.empty(k)
        k2 = np.empty(k)
        k3 = np.empty(k)
        for i in range(k):
            k1[i], k2[i] = _job_key(job[tasks[i]], rule, tables, sums, valid, proc_of, finish, placed)
            k3[i] = -rank[tasks[i]]
        order = _key_order(k1, k2, k3, tasks)
        for i in range(k):
            t = tasks[order[i]]
            completion_row(t, now, avail, arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of,
                           uniform, same_lat, same_inv, link_lat, link_inv, latency, inv_bw, table, key, work, memory,
                           proc_memory, structured, dr, ct)
            best = -1
            best_ct = np.inf
            for q in range(m):  # np.argmin over the idle processors, those taken counting as inf
                if idle[q]:
                    c = ct[q]
                    if best < 0 or c < best_ct:
                        best, best_ct = q, c
            if not (best_ct < np.inf and best_ct > -np.inf):
                continue  # may run on no free idle processor: it waits
            chosen[out] = t
            chosen_p[out] = best
            out += 1
            valid[job[t]] = False  # assigned once returned: its job's sum changes
            _left_job(t, tables, jst)
            idle[best] = False
            n_idle -= 1
            if n_idle == 0:
                break
        return out
    if rule == HEFT:
        heap, hsize = jst[8], jst[9]
        while n_idle > 0 and hsize[0] > 0:
            t = heap[0]
            p = completion_row(t, now, avail, arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of,
                               uniform, same_lat, same_inv, link_lat, link_inv, latency, inv_bw, table, key, work,
                               memory, proc_memory, structured, dr, ct)
            if gd[0] and gd[2][t] > 1:  # may take several processors: gang-aware earliest finish
                p, taken = place(t, dr, avail, idle, vw, gd, gs, gx)
                if p < 0:
                    return p
                _heap_pop(rank, heap, hsize)
                chosen[out] = t
                chosen_p[out] = p
                out += 1
                n_idle -= taken
                continue
            if not ct[p] < np.inf:  # only when a ready task may run nowhere
                return -1
            _heap_pop(rank, heap, hsize)
            chosen[out] = t
            chosen_p[out] = p
            out += 1
            avail[p] = ct[p]
            if idle[p]:
                idle[p] = False
                n_idle -= 1
        return out
    active, n_active = jst[3], jst[5]
    gate = rule == GATE and gt[0].size > 0 and not gt[0][gz[0]]
    back = -1.0  # the decision's backlog (>= 0), computed when the gate first asks
    n_wait = 0
    while n_idle > 0 and n_active[0] > 0:
        pick = -1
        b1 = b2 = b3 = 0.0
        for a in range(n_active[0]):  # the first ready task of each job with one, then the first of those
            j = active[a]
            a1, a2 = _job_key(j, rule, tables, sums, valid, proc_of, finish, placed)
            u = _best_ready(j, tables, jst)
            a3 = -rank[u]
            if pick < 0 or _before(a1, a2, a3, u, b1, b2, b3, pick):
                pick, b1, b2, b3 = u, a1, a2, a3
        t = pick
        valid[job[t]] = False
        p = completion_row(t, now, avail, arrival, pred_ptr, pred_edges, edge_src, edge_data, finish, proc_of,
                           uniform, same_lat, same_inv, link_lat, link_inv, latency, inv_bw, table, key, work, memory,
                           proc_memory, structured, dr, ct)
        taken = -1
        if gd[0] and gd[2][t] > 1:  # may take several processors: gang-aware earliest finish
            p, taken = place(t, dr, avail, idle, vw, gd, gs, gx)
        if p < 0 or taken < 0 and not ct[p] < np.inf:  # only when a ready task may run nowhere
            for i in range(out):
                placed[chosen[i]] = False
            return -2 if p == -2 else -1
        if gate and taken < 0 and not idle[p]:  # GatedBinding._processor_for
            if back < 0.0:
                back = backlog(gt, gz[0], tables[2], proc_of, finish)
            jr = _job_sum(job[t], False, tables, proc_of, finish, placed) if gt[1][gz[0], -1] != 0.0 else 0.0
            p = gate_processor(p, now, ct, idle, n_idle, gt, gz[0], back, jr)
            if p < 0:  # it waits: out of this decision's ready tasks until the decision ends
                n_wait += 1
                chosen[chosen.size - n_wait] = t
                jst[6][t] = False
                _left_job(t, tables, jst)
                continue
        chosen[out] = t
        chosen_p[out] = p
        out += 1
        placed[t] = True
        _left_job(t, tables, jst)
        if taken >= 0:
            n_idle -= taken
            continue
        avail[p] = ct[p]
        if idle[p]:
            idle[p] = False
            n_idle -= 1
    for i in range(out):
        placed[chosen[i]] = False
    for i in range(n_wait):  # the tasks that waited are ready again
        t = chosen[chosen.size - 1 - i]
        jst[6][t] = True
        became_ready_job(SRJF, t, tables, jst)
    return out
