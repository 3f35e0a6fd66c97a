"""Replaying a plan with task copies (duplication schedulers): the first copy to deliver a
predecessor's data wins."""

from __future__ import annotations

import numpy as np
import simpy
from simpy.events import Event, Timeout

from simsched.simulator.engine.common import gc_paused as _gc_paused
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.noise import check_factors
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule


def execute_with_copies(problem: Problem, plan: Plan, factors: np.ndarray | None) -> Schedule:
    """:func:`execute_plan` for a plan with copies, on the SimPy model.

    Every instance is a countdown of its input slots (one per predecessor) plus its turn on the
    processor; a finished instance sends a transfer (a SimPy timeout) to every instance of every
    successor, and the first one to reach a slot fills it — later ones are ignored.  Equal to
    :func:`~simsched.simulator.evaluate.evaluate_with_copies` (same floats) without ``factors``.
    O((N + T) log(N + T)) for N instances and T producer-consumer instance pairs.
    """
    from simsched.simulator.evaluate import InstanceNetwork, instance_durations

    fac = None if factors is None else check_factors(factors, problem.n_tasks)
    dur = instance_durations(problem, plan, fac).tolist()
    net = InstanceNetwork(problem, plan)
    N, n = net.task.size, problem.n_tasks
    wait = net.wait.tolist()
    got = [False] * net.n_slots
    out_ptr, out_dst = net.out_ptr.tolist(), net.out_dst.tolist()
    out_delay, out_slot, nxt = net.out_delay.tolist(), net.out_slot.tolist(), net.nxt.tolist()
    arrival = problem.graph.arrival[net.task]
    nan = float("nan")
    start, finish = [nan] * N, [nan] * N
    env = simpy.Environment()

    def count_down(j: int, now: float) -> None:
        wait[j] -= 1
        if wait[j] == 0:
            start[j] = now
            Timeout(env, dur[j], j).callbacks.append(on_finish)

    def on_input(ev: Event) -> None:
        j, slot = ev._value
        if slot < 0 or not got[slot]:
            if slot >= 0:
                got[slot] = True
            count_down(j, env._now)

    def on_finish(ev: Event) -> None:
        i = ev._value
        now = env._now
        finish[i] = now
        for k in range(out_ptr[i], out_ptr[i + 1]):
            d, slot, j = out_delay[k], out_slot[k], out_dst[k]
            if d > 0.0:
                Timeout(env, d, (j, slot)).callbacks.append(on_input)
            elif not got[slot]:
                got[slot] = True
                count_down(j, now)
        if nxt[i] >= 0:
            count_down(nxt[i], now)

    late = np.flatnonzero(arrival > 0)
    for j in late.tolist():
        wait[j] += 1
        Timeout(env, float(arrival[j]), (j, -1)).callbacks.append(on_input)
    for j in range(N):
        if wait[j] == 0:
            wait[j] = 1
            count_down(j, 0.0)
    with _gc_paused():
        env.run()
    finish_arr = np.array(finish)
    if np.isnan(finish_arr).any():
        evaluate_plan(problem, plan)  # raises PlanError naming the stuck execution
    from simsched.simulator.copies import Copies

    start_arr = np.array(start)
    copies = Copies(net.task[n:], net.proc[n:], plan.copies.order, start_arr[n:], finish_arr[n:])
    return Schedule(plan.processor, start_arr[:n], finish_arr[:n], copies)

