"""HEFT followed by slack reclamation: the same schedule, with tasks off the critical path slowed to a
lower P-state (DVFS) where their slack allows, so the makespan does not grow.

After HEFT (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002) every task keeps its processor and its
planned start.  A task may finish as late as its *latest finish*: the earliest of each successor's
planned start minus the transfer to it (zero on the same processor), the planned start of the next
task on its processor, and the makespan.  Among its processor's P-states no faster than the nominal
one whose stretched duration ``W x speed_0 / speed_k`` fits before that, it takes the one with the
least energy over the stretch it decides — ``busy_w x duration + idle_w x (next start on its
processor - finish)``, both of that P-state, since the processor idles at the P-state of the last
task it ran — the static slack-reclamation step of
Zhu, Melhem & Childers, "Scheduling with Dynamic Voltage/Speed Adjustment Using Slack Reclamation in
Multiprocessor Real-Time Systems", IEEE TPDS 14(7), 2003, and of the MCER phase of Lee & Zomaya's ECS
(IEEE TPDS 22(8), 2011), here on a finished HEFT schedule.

Because starts never move and every finish stays within its latest finish, the SimPy engine replays
the plan with the same starts and the same makespan as HEFT's (``tests/test_energy_schedulers.py``).
Without a power model (``simsched check``'s random problems) it is HEFT, every task at P-state 0.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import heft_schedule
from simsched.simulator.power import PowerTables
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def latest_finish(problem: Problem, plan: Plan) -> np.ndarray:
    """(n,) the latest time each task of a timed ``plan`` may finish without delaying any planned start
    or the makespan: min over successors of ``start - transfer``, the next start on its processor, the
    makespan.  Vectorised over edges and processors: O(n log n + e)."""
    g = problem.graph
    lft = idle_until(plan)  # the next start on its processor, or the makespan
    if g.n_edges:
        delay = problem.edge_delays(plan.processor)
        np.minimum.at(lft, g.edge_src, plan.start[g.edge_dst] - delay)
    return np.maximum(lft, plan.finish)


def idle_until(plan: Plan) -> np.ndarray:
    """(n,) when the processor of each task of a timed ``plan`` next starts a task (the makespan after
    its last one): the end of the idle stretch that follows the task, drawn at the idle watts of the
    task's P-state.  O(n log n)."""
    start, finish, proc = plan.start, plan.finish, plan.processor
    out = np.full(start.size, float(finish.max()) if start.size else 0.0)
    seq = np.lexsort((finish, start, proc))
    same = proc[seq][1:] == proc[seq][:-1]
    out[seq[:-1][same]] = start[seq][1:][same]
    return out


def reclaim_slack(problem: Problem, plan: Plan, tables: PowerTables) -> Plan:
    """``plan`` (with planned times) with a P-state per task (``info["pstate"]``) and finishes stretched
    to ``start + W x speed_0 / speed_k``, each the P-state that fits before :func:`latest_finish` with
    the least energy over the stretch the task decides — its run and the idle time after it until its
    processor's next task (:func:`idle_until`), which draws that P-state's idle watts.  Those stretches
    tile each processor's time after its first task, so the choices add up to the least energy of
    the plan (P-state switch costs aside).  O(n log n + n K + e) with K P-states, all numpy."""
    proc = plan.processor
    lft = latest_finish(problem, plan)
    until = idle_until(plan)
    w = plan.finish - plan.start
    dur = w[:, None] * (tables.speed[proc, :1] / tables.speed[proc])  # (n, K); NaN: no such P-state
    # slower P-states only (a faster one would let successors start earlier than planned), within the slack
    fits = (dur <= (lft - plan.start)[:, None] * (1 + 1e-12) + 1e-12) & (dur >= w[:, None])
    fits[:, 0] = True  # the nominal P-state always fits (its duration is the planned one)
    energy = tables.busy_w[proc] * dur + tables.idle_w[proc] * ((until - plan.start)[:, None] - dur)
    energy = np.where(fits & ~np.isnan(dur), energy, np.inf)
    pstate = np.argmin(energy, axis=1)
    finish = plan.start + np.take_along_axis(dur, pstate[:, None], axis=1)[:, 0]
    finish = np.where(pstate == 0, plan.finish, finish)
    return Plan(proc, plan.order, plan.start, finish, {**plan.info, "pstate": pstate}, plan.copies)


class HEFTSlack:
    """HEFT, then slower P-states for tasks with slack (DVFS): HEFT's starts and makespan, less energy.

    O(HEFT) + O(n K + e).  Deterministic (``rng`` unused).  The runner hands it the scenario's power
    model through :meth:`use_power`; without one it plans exactly as HEFT.
    """

    name = "heft-slack"

    def __init__(self) -> None:
        self.tables: PowerTables | None = None

    def use_power(self, tables: PowerTables | None) -> None:
        """The scenario's power model resolved for the platform the next plan is for (or None)."""
        self.tables = tables

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        plan = heft_schedule(problem)
        if self.tables is None or self.tables.m != problem.n_processors or problem.n_tasks == 0:
            return plan
        return reclaim_slack(problem, plan, self.tables)
