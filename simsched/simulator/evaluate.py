"""The fast evaluator: exact times of a static plan with given durations, in one topological pass.

Executing a plan means: each processor runs its tasks in planned order; a task starts when it has
arrived, its processor has finished the previous task of its sequence, and the data of every
predecessor has been transferred to it.  With deterministic durations and no contention this is a
longest-path computation on the task graph plus one "chain" edge per consecutive pair on a
processor — exactly what the SimPy engine does event by event, at a fraction of the cost.  GA
fitness, RL rewards and DeepSched labels use it; a property test holds it equal to the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simsched.errors import PlanError, SchedulerDeclined, SimschedError
from simsched.simulator.gang import check_gang, gang_durations, member_sequences
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, topological_rank
from simsched.workloads.csr import find_cycle, gather_ranges, kahn_levels


def plan_durations(problem: Problem, plan: Plan) -> np.ndarray:
    """(n,) execution time of each task on its planned processor (a multi-processor task: on its
    gang, :func:`~simsched.simulator.gang.gang_durations`); raises :class:`PlanError` if a task is
    planned on a processor that may not run it, or a gang breaks its task's demand."""
    n = problem.n_tasks
    proc = plan.processor
    if proc.shape != (n,) or (proc < 0).any() or (proc >= problem.n_processors).any():
        raise PlanError(f"the plan must give each of the {n} tasks a processor in 0..{problem.n_processors - 1}")
    if plan.gang is None and not problem.graph.gang:
        dur = problem.cost_pairs(np.arange(n), proc)
    else:
        check_gang(problem, proc, plan.gang)
        dur = gang_durations(problem, proc, plan.gang)
    bad = np.flatnonzero(~np.isfinite(dur))
    if bad.size:
        i = int(bad[0])
        where = (repr(problem.platform.names[proc[i]]) if plan.gang is None else
                 ", ".join(repr(problem.platform.names[q]) for q in plan.gang.of(i)))
        raise PlanError(f"the plan puts task {problem.graph.names[i]!r} on {where}, which may not run it")
    return dur


def execution_graph(problem: Problem, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan's execution graph in CSR form ``(ptr, succ, delay)``: the successors of task ``v``
    are ``succ[ptr[v]:ptr[v+1]]`` with the delays on those edges — every task-graph edge with its
    transfer time on the planned processors, then a zero-delay edge to the next task on the same
    processor.  Built from the graph's own CSR without sorting edges: O(n log n + e).  With a gang
    (multi-processor tasks), a task follows the task before it on each of its members
    (:func:`_gang_execution_graph`)."""
    if plan.gang is not None:
        return _gang_execution_graph(problem, plan)
    g = problem.graph
    n = g.n_tasks
    nxt = np.full(n, -1, dtype=np.int64)
    prev = plan.previous_on_processor(topological_rank(problem))
    has_prev = np.flatnonzero(prev >= 0)
    nxt[prev[has_prev]] = has_prev
    out_deg = np.diff(g.succ_ptr)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg + (nxt >= 0), out=ptr[1:])
    succ = np.empty(ptr[-1], dtype=np.int64)
    delay = np.zeros(ptr[-1])
    edges = g.succ_edges  # grouped by source, in source order: edge k of source v goes to ptr[v] + (k - succ_ptr[v])
    slot = np.repeat(ptr[:-1] - g.succ_ptr[:-1], out_deg)
    slot += np.arange(edges.size)
    succ[slot] = g.edge_dst[edges]
    delay[slot] = problem.edge_delays(plan.processor)[edges]
    chained = np.flatnonzero(nxt >= 0)
    succ[ptr[chained] + out_deg[chained]] = nxt[chained]
    return ptr, succ, delay


def _gang_execution_graph(problem: Problem, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`execution_graph` of a plan with a gang: every task-graph edge with its transfer time
    between the leads, then a zero-delay edge from each task to the next on every processor it
    occupies.  O(N log N + e), N = processors summed over tasks."""
    g = problem.graph
    n = g.n_tasks
    before, after = member_sequences(plan.processor, plan.order, plan.gang, topological_rank(problem))
    src = np.concatenate([g.edge_src, before])
    dst = np.concatenate([g.edge_dst, after])
    delay = np.concatenate([problem.edge_delays(plan.processor), np.zeros(before.size)])
    by_src = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[by_src], delay[by_src]


def refuse_host_memory(problem: Problem) -> None:
    """:class:`~simsched.errors.SchedulerDeclined` (a :class:`SimschedError`) when ``problem``'s hosts
    share memory that its tasks need (:attr:`Problem.host_memory_binds`): the fast evaluator does not
    model it and refuses rather than ignore it, so a planner that searches with it (ga, the search
    planners, bnb, exact) declines the problem (a run reports it declined and keeps the others); the
    SimPy engine honours it.  O(n + hosts)."""
    if problem.host_memory_binds:
        raise SchedulerDeclined("the fast evaluator does not model memory shared by a host's tasks (host_memory); "
                            "simulate the plan with the SimPy engine (execute_plan, `simsched run`), or plan "
                            "with a scheduler that does not search with the fast evaluator (heft, an online policy)")


def evaluate_plan(problem: Problem, plan: Plan, durations: np.ndarray | None = None, *,
                  disruptions: Any = None, overheads: Any = None, storage: Any = None) -> Schedule:
    """Start and finish of every task when ``plan`` is executed with ``durations`` (default: the
    cost model's times on the planned processors).

    It models neither processor failures nor stragglers, nor workflow-system overheads or storage, nor
    memory shared by a host's tasks: given active ``disruptions`` (a
    :class:`~simsched.simulator.engine.Disruptions`), active ``overheads``
    (:class:`~simsched.simulator.engine.Overheads`), a ``storage``, or a problem whose host memory
    binds (:func:`refuse_host_memory`) it raises :class:`SimschedError` rather than guess; the SimPy engine
    (:func:`~simsched.simulator.engine.run_online`, :func:`~simsched.simulator.engine.execute_plan`)
    simulates them.

    Raises :class:`PlanError` when the plan cannot run: a task on an ineligible processor, or a
    processor order that puts a task before one of its own ancestors (which would deadlock).
    O(n log n + e) work in O(depth of the execution graph) numpy passes.  A plan with copies
    (duplication) goes to :func:`evaluate_with_copies`; ``durations`` are then per instance.
    """
    if disruptions is not None and disruptions.active:
        raise SimschedError("the fast evaluator models neither processor failures nor stragglers; "
                            "simulate them with the SimPy engine (`simsched run`)")
    if (overheads is not None and overheads.active) or storage is not None:
        raise SimschedError("the fast evaluator models neither workflow-system overheads nor storage; "
                            "simulate them with the SimPy engine (execute_plan, `simsched run`)")
    refuse_host_memory(problem)
    if plan.copies is not None:
        return evaluate_with_copies(problem, plan, durations)
    dur = plan_durations(problem, plan) if durations is None else np.asarray(durations, dtype=np.float64)
    ptr, succ, delay = execution_graph(problem, plan)
    start, finish = earliest_times(problem.graph.arrival, dur, ptr, succ, delay)
    if np.isnan(finish).any():
        n = problem.n_tasks
        src = np.repeat(np.arange(n), np.diff(ptr))
        dst = succ
        level, _ = kahn_levels(n, src, dst)
        cycle = find_cycle(n, src, dst, level)
        names = problem.graph.names
        shown = " -> ".join(repr(names[i]) for i in cycle + cycle[:1])
        raise PlanError(f"the plan's processor order contradicts precedence (deadlock): {shown}")
    return Schedule(plan.processor, start, finish, gang=plan.gang)


def earliest_times(release: np.ndarray, duration: np.ndarray, ptr: np.ndarray, succ: np.ndarray,
                   delay: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As-soon-as-possible times in a DAG given in CSR form (``succ[ptr[v]:ptr[v+1]]`` follow
    ``v`` after ``delay`` each): ``start >= release``, ``start[w] >= finish[v] + delay`` for every
    edge, ``finish = start + duration``.

    Kahn's algorithm a frontier at a time: when a frontier's tasks are all released, their finish
    times are final and are pushed along their out-edges in one vectorised step.  Tasks on a cycle
    keep ``nan`` times.  Every time is ``earlier time + delay`` computed once, so the floats equal
    the SimPy engine's.  O(n + e) work in O(depth) numpy passes.
    """
    n = release.size
    indeg = np.bincount(succ, minlength=n).astype(np.int64)
    start = np.array(release, dtype=np.float64)
    finish = np.full(n, np.nan)
    frontier = np.flatnonzero(indeg == 0)
    while frontier.size:
        finish[frontier] = start[frontier] + duration[frontier]
        positions, owner = gather_ranges(ptr, frontier)
        if positions.size == 0:
            break
        targets = succ[positions]
        np.maximum.at(start, targets, finish[frontier[owner]] + delay[positions])
        np.subtract.at(indeg, targets, 1)
        frontier = np.unique(targets[indeg[targets] == 0])
    return start, finish


def instance_durations(problem: Problem, plan: Plan, factors: np.ndarray | None = None) -> np.ndarray:
    """(n + k,) execution time of every instance (primaries, then copies) on its processor, times
    the task's noise factor when ``factors`` is given.  Raises :class:`PlanError` for a copy on a
    processor that may not run its task or a task index that does not exist."""
    dur = plan_durations(problem, plan)
    c = plan.copies
    if c is None:
        return dur if factors is None else dur * factors
    n, m = problem.n_tasks, problem.n_processors
    if ((c.task < 0) | (c.task >= n) | (c.processor < 0) | (c.processor >= m)).any():
        raise PlanError(f"every copy needs a task in 0..{n - 1} and a processor in 0..{m - 1}")
    extra = problem.cost_pairs(c.task, c.processor)
    bad = np.flatnonzero(~np.isfinite(extra))
    if bad.size:
        k = int(bad[0])
        raise PlanError(f"the plan puts a copy of task {problem.graph.names[c.task[k]]!r} on "
                        f"{problem.platform.names[c.processor[k]]!r}, which may not run it")
    dur = np.concatenate([dur, extra])
    return dur if factors is None else dur * np.concatenate([factors, factors[c.task]])


class InstanceNetwork:
    """What executing a plan with copies waits for, per instance (primaries, then copies).

    ``prev``/``nxt``: neighbours in the processor's sequence; ``out_ptr``/``out_dst``/``out_delay``/
    ``out_slot``: the transfers each instance sends when it finishes (CSR by producer instance),
    each to a consumer instance's input slot; ``wait``: per instance, its number of input slots
    plus one if it has a predecessor in its processor's sequence.  The fast evaluator and the SimPy
    engine both run on it.  O(N log N + triples).
    """

    def __init__(self, problem: Problem, plan: Plan) -> None:
        from simsched.simulator.copies import input_pairs, instance_tasks, previous_instance

        c = plan.copies
        n = problem.n_tasks
        self.task = instance_tasks(n, c)
        self.proc = plan.processor if c is None else np.concatenate([plan.processor, c.processor])
        order = plan.order if c is None else np.concatenate([plan.order, c.order])
        N = self.task.size
        self.prev = previous_instance(self.proc, order, topological_rank(problem)[self.task])
        self.nxt = np.full(N, -1, dtype=np.int64)
        has_prev = np.flatnonzero(self.prev >= 0)
        self.nxt[self.prev[has_prev]] = has_prev
        _, src, dst, delay, slot = input_pairs(problem, self.task, self.proc)
        by_src = np.argsort(src, kind="stable")
        self.out_ptr = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=N), out=self.out_ptr[1:])
        self.out_dst, self.out_delay, self.out_slot = dst[by_src], delay[by_src], slot[by_src]
        n_slots = int(slot.max()) + 1 if slot.size else 0
        slot_owner = np.zeros(n_slots, dtype=np.int64)
        slot_owner[slot] = dst
        self.n_slots = n_slots
        self.wait = np.bincount(slot_owner, minlength=N) + (self.prev >= 0)


def evaluate_with_copies(problem: Problem, plan: Plan, durations: np.ndarray | None = None) -> Schedule:
    """Exact times of a plan with copies: each instance starts once its processor has finished the
    previous instance of its sequence and, for every predecessor, the data of the earliest of that
    predecessor's instances has arrived.

    A minimum over producers ("any copy will do") is not a longest path, so this is an event-ordered
    pass (Dijkstra-like, a binary heap keyed by time) over the instances — the SimPy engine's
    dynamics without its machinery, with the same float arithmetic (each time is ``earlier time +
    delay``, computed once).  ``durations``: per instance (default: the cost model's).  Raises
    :class:`PlanError` when some instance can never start (deadlock).  O((N + T) log(N + T)) for
    N instances and T producer-consumer instance pairs.
    """
    import heapq

    dur = instance_durations(problem, plan) if durations is None else np.asarray(durations, dtype=np.float64)
    net = InstanceNetwork(problem, plan)
    N, n = net.task.size, problem.n_tasks
    wait = net.wait.tolist()
    got = [False] * net.n_slots
    release = problem.graph.arrival[net.task].tolist()
    ready_at = list(release)
    start, finish = [np.nan] * N, [np.nan] * N
    out_ptr, out_dst = net.out_ptr.tolist(), net.out_dst.tolist()
    out_delay, out_slot, nxt, durs = net.out_delay.tolist(), net.out_slot.tolist(), net.nxt.tolist(), dur.tolist()
    heap: list[tuple[float, int, int, int]] = []  # (time, kind 0 = finish / 1 = input, instance, slot)

    def begin(j: int) -> None:
        s = ready_at[j]
        start[j] = s
        heapq.heappush(heap, (s + durs[j], 0, j, -1))

    for j in range(N):
        if wait[j] == 0:
            begin(j)
    while heap:
        t, kind, j, slot = heapq.heappop(heap)
        if kind == 1:
            if got[slot]:
                continue
            got[slot] = True
        else:
            finish[j] = t
            for k in range(out_ptr[j], out_ptr[j + 1]):
                heapq.heappush(heap, (t + out_delay[k], 1, out_dst[k], out_slot[k]))
            j = nxt[j]
            if j < 0:
                continue
        if t > ready_at[j]:
            ready_at[j] = t
        wait[j] -= 1
        if wait[j] == 0:
            begin(j)
    finish_arr = np.array(finish)
    if np.isnan(finish_arr).any():
        stuck = int(np.flatnonzero(np.isnan(finish_arr))[0])
        raise PlanError(f"the plan deadlocks: an execution of task {problem.graph.names[net.task[stuck]]!r} "
                        f"on {problem.platform.names[net.proc[stuck]]!r} can never start")
    from simsched.simulator.copies import Copies

    start_arr = np.array(start)
    copies = Copies(net.task[n:], net.proc[n:], plan.copies.order, start_arr[n:], finish_arr[n:])
    return Schedule(plan.processor, start_arr[:n], finish_arr[:n], copies)
