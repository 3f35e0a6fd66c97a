"""Replaying a static plan on the SimPy model: each processor runs its planned sequence in order."""

from __future__ import annotations

from array import array

import numpy as np
import simpy
from simpy.events import Event, Timeout

from simsched.errors import PlanError
from simsched.simulator.engine.common import durations as _durations
from simsched.simulator.engine.common import gc_paused as _gc_paused
from simsched.simulator.engine.overheads import Overheads
from simsched.simulator.engine.replay import replay_plan
from simsched.simulator.engine.storage import Storage, TaskIO
from simsched.simulator.evaluate import evaluate_plan, execution_graph, plan_durations
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, topological_rank


def execute_plan(problem: Problem, plan: Plan, factors: np.ndarray | None = None, *,
                 overheads: Overheads | None = None, storage: Storage | None = None,
                 io: TaskIO | None = None) -> Schedule:
    """Execute ``plan`` on the SimPy model and return what happened.

    Each processor runs the tasks ``plan`` gives it in planned order (equal ``order`` values in
    topological order, :func:`~simsched.simulator.schedule.topological_rank`); a task starts when it has
    arrived, the previous task of its processor's sequence has finished and the data of every
    predecessor has been transferred (transfers start when the producer finishes and take
    ``problem.edge_delays(plan.processor)``).  Durations are the cost model's times on the planned
    processors, times ``factors`` (one per task, see :class:`~simsched.simulator.noise.NoiseModel`)
    when given.

    With ``factors=None`` the result equals :func:`~simsched.simulator.evaluate.evaluate_plan`
    exactly (same floats), and so a planner's own start/finish times when it computed them with
    the same model (HEFT).

    Raises :class:`PlanError` when a task is planned on a processor that may not run it, or when
    the plan deadlocks (a processor order contradicting precedence: some tasks never run; the
    message names a cycle).  O((n + e) log(n + e)): about one event per task plus one per
    cross-processor edge (and one per task with a non-zero arrival).

    A multi-processor task (``plan.gang``, :mod:`simsched.simulator.gang`) starts when every one of
    its processors has reached it in its sequence, and holds them all until it ends.

    A plan with copies (task duplication) runs every instance; a consumer takes each input from
    whichever instance of its producer delivers it first (:func:`_execute_with_copies`).

    Under active workflow-system ``overheads`` or a ``storage`` service (with the I/O plan ``io``) the
    plan is run through the online engine, which models them, by a policy making its decisions
    (:func:`~simsched.simulator.engine.replay.replay_plan`, whose stats also give each task's done
    time); a plan with copies is then refused.  So is a plan on a problem whose hosts share memory its
    tasks need (:attr:`Problem.host_memory_binds`, :mod:`simsched.simulator.engine.hostmem`): it runs
    through the online engine, which makes a task wait for its host's memory.
    """
    if (overheads is not None and overheads.active) or storage is not None or problem.host_memory_binds:
        return replay_plan(problem, plan, factors, overheads=overheads, storage=storage, io=io)[0]
    if plan.copies is not None:
        return _execute_with_copies(problem, plan, factors)
    schedule, _ = _execute(problem, plan, factors)
    return schedule



def _execute(problem: Problem, plan: Plan, factors: np.ndarray | None) -> tuple[Schedule, int]:
    """:func:`execute_plan`, also returning the number of SimPy events processed."""
    g = problem.graph
    n = problem.n_tasks
    dur = _packed(_durations(problem, plan_durations(problem, plan), factors), "d")
    arrival = g.arrival
    late = np.flatnonzero(arrival > 0)
    if plan.gang is None:
        delays = problem.edge_delays(plan.processor)
        sp, sdst = _packed(g.succ_ptr, "q"), _packed(g.edge_dst[g.succ_edges], "q")
        sdel = _packed(delays[g.succ_edges], "d")
        prev = plan.previous_on_processor(topological_rank(problem))
        nxt_arr = np.full(n, -1, dtype=np.int64)
        has_prev = prev >= 0
        nxt_arr[prev[has_prev]] = np.flatnonzero(has_prev)
        # what each task waits for: its inputs, its arrival (if after 0), its turn on the processor
        wait_arr = np.diff(g.pred_ptr) + (arrival > 0) + has_prev
    else:  # multi-processor tasks: its turn on every member, as edges of the execution graph
        ptr, succ, delay = execution_graph(problem, plan)
        sp, sdst, sdel = _packed(ptr, "q"), _packed(succ, "q"), _packed(delay, "d")
        nxt_arr = np.full(n, -1, dtype=np.int64)
        wait_arr = np.bincount(succ, minlength=n) + (arrival > 0)
    nxt = _packed(nxt_arr, "q")
    wait = _packed(wait_arr, "q")
    start = array("d", [float("nan")]) * n
    finish = array("d", [float("nan")]) * n

    env = simpy.Environment()

    def begin(v: int, now: float) -> None:
        start[v] = now
        Timeout(env, dur[v], v).callbacks.append(on_finish)

    def on_input(ev: Event) -> None:  # a transfer or an arrival completed
        w = ev._value
        c = wait[w] - 1
        wait[w] = c
        if c == 0:
            begin(w, env._now)

    def on_finish(ev: Event) -> None:
        v = ev._value
        now = env._now
        finish[v] = now
        for k in range(sp[v], sp[v + 1]):
            w = sdst[k]
            d = sdel[k]
            if d > 0.0:
                Timeout(env, d, w).callbacks.append(on_input)
            else:
                c = wait[w] - 1
                wait[w] = c
                if c == 0:
                    begin(w, now)
        w = nxt[v]
        if w >= 0:
            c = wait[w] - 1
            wait[w] = c
            if c == 0:
                begin(w, now)

    for v in late.tolist():
        Timeout(env, float(arrival[v]), v).callbacks.append(on_input)
    for v in np.flatnonzero(wait_arr == 0).tolist():
        begin(v, 0.0)
    with _gc_paused():
        env.run()
    events = next(env._eid)

    start_arr = np.frombuffer(start, dtype=np.float64)
    if np.isnan(start_arr).any():
        evaluate_plan(problem, plan, np.asarray(dur))  # raises PlanError naming a cycle
        stuck = np.flatnonzero(np.isnan(start_arr))
        raise PlanError(f"the plan deadlocks: {stuck.size} tasks never ran, e.g. "
                        f"{problem.graph.names[int(stuck[0])]!r}")
    return Schedule(plan.processor, start_arr, np.frombuffer(finish, dtype=np.float64), gang=plan.gang), events


def _packed(values: np.ndarray, code: str) -> array:
    """``values`` as an :class:`array.array` of ``code`` (``"d"`` float64, ``"q"`` int64) for the replay's
    loop: 8 bytes an item where a list holds a pointer and a Python number (~36 bytes; ~30 MB less at 100k
    tasks and 300k edges), and indexing it gives the same numbers.  O(len(values))."""
    out = array(code)
    out.frombytes(memoryview(np.ascontiguousarray(values, dtype=np.float64 if code == "d" else np.int64)).cast("B"))
    return out




def _execute_with_copies(problem: Problem, plan: Plan, factors: np.ndarray | None) -> Schedule:
    from simsched.simulator.engine.copies import execute_with_copies

    return execute_with_copies(problem, plan, factors)
