"""ECS: energy-conscious list scheduling with DVFS for static DAGs (Lee & Zomaya, 2011).

Young Choon Lee and Albert Y. Zomaya, "Energy Conscious Scheduling for Distributed Computing Systems
under Different Operating Conditions", IEEE TPDS 22(8):1374-1381, 2011.  Two phases:

1. **Relative superiority (RS).**  Tasks in decreasing upward rank (HEFT's b-level with mean costs).
   For each task every (processor ``p``, P-state ``k``) pair is a candidate with its earliest start
   ``EST`` (insertion into idle gaps), its finish ``EFT = EST + W x speed_0 / speed_k`` and its energy
   ``E = busy_w[p, k] x (EFT - EST)`` (the task's own energy at that P-state: the paper's
   ``alpha C V^2 f`` dynamic energy, here the platform's busy watts).  Starting from the first pair
   (processor 0, nominal P-state), the pairs are scanned processor by processor, P-state by P-state,
   and a pair replaces the incumbent ``(p*, k*)`` when its relative superiority over it is positive::

       RS = -( (E - E*) / E  +  (EFT - EFT*) / (EFT - min(EST, EST*)) )

   i.e. when its relative energy saving outweighs its relative loss of finish time (or the reverse).
   Degenerate denominators: a pair of zero energy against one of positive energy saves "everything"
   (RS = +inf), and a zero-length window compares finish times only by sign.

2. **MCER, makespan-conservative energy reduction.**  For each task (in start order) and each
   other (processor, P-state) pair, the schedule with only that task moved — it keeps
   its place in the global start order, every other task keeps its processor, P-state and order — is
   re-timed as soon as possible; the move is kept when the makespan does not grow and the energy of
   the whole schedule falls.  The energy is simsched's own accounting
   (:func:`simsched.simulator.power.account`: busy, idle at the current P-state, switching, links),
   so MCER minimises what ``simsched run`` reports.

What MCER guarantees by its acceptance rule, and the tests check: it never lengthens phase 1's makespan and never raises
its energy; every plan is a valid schedule that the SimPy engine replays at the planned times
(durations stretched by the P-states).  ECS is *not* promised to use less energy than HEFT: phase 1
trades finish time against energy task by task.  We found no worked example of ECS with numbers to
reproduce (the paper's text was not in the reference corpora we could search), so ``docs/energy.md``
has a hand-computed golden case instead.

Complexity: phase 1 O(n m K (log g) + e m) with a sequential scan of the m K pairs per task (the RS
rule compares each pair with the incumbent, so the scan is a fold and stays sequential); MCER
replays the schedule from the moved task on (O(n + e) over plain lists, stopping at the first task
that would end after the makespan) and re-accounts the energy (O(n log n)) of each of the
n (m K - 1) moves that keep the makespan: O(n^2 m K log n) at worst.
Deterministic (``rng`` unused).  Without a power model (``simsched check``'s random problems) every
processor has one P-state drawing 1 W busy and 0 W idle, so energy is busy time.
"""

from __future__ import annotations

import math

import numpy as np

from simsched.errors import InfeasibleError
from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.timeline import Timelines, data_ready
from simsched.simulator.policy import DecisionView
from simsched.simulator.power import Intervals, PowerTables, ProcessorPower, account
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def relative_superiority(e_new: float, est_new: float, eft_new: float,
                         e_old: float, est_old: float, eft_old: float) -> float:
    """Lee & Zomaya's RS of a new (processor, P-state) pair over the incumbent: positive when the new
    pair is superior.  ``-((E - E*) / E + (EFT - EFT*) / (EFT - min(EST, EST*)))``; a zero denominator
    counts a strict gain as infinite and equality as 0.  O(1)."""
    if e_new > 0:
        de = (e_new - e_old) / e_new
    else:
        de = 0.0 if e_old <= 0 else -math.inf
    span = eft_new - min(est_new, est_old)
    if span > 0:
        dt = (eft_new - eft_old) / span
    else:
        dt = 0.0 if eft_new >= eft_old else -math.inf
    return -(de + dt)


def superior_pair(energy: np.ndarray, est: np.ndarray, eft: np.ndarray) -> int:
    """The flat index (``p x K + k``) of the (processor, P-state) pair ECS picks among (m, K) candidates:
    from the first that can run (finite EFT), scanned processor by processor, P-state by P-state, each
    pair of positive :func:`relative_superiority` over the incumbent replaces it.  The scan is a fold
    (each pair is compared with the incumbent of its turn), so it stays a loop over the m K pairs:
    O(m K), on plain floats."""
    cand = np.flatnonzero(np.isfinite(eft).ravel())
    e_l, s_l, f_l = energy.ravel().tolist(), est.ravel().tolist(), eft.ravel().tolist()
    best = int(cand[0])
    for c in cand[1:].tolist():
        if relative_superiority(e_l[c], s_l[c], f_l[c], e_l[best], s_l[best], f_l[best]) > 0:
            best = c
    return best


def _candidates(w: np.ndarray, slow: np.ndarray, busy_w: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(m, K) durations ``w x slowdown`` (``inf`` where a pair cannot run) and energies ``busy_w x
    duration`` of one task with nominal times ``w`` (m,).  O(m K)."""
    with np.errstate(invalid="ignore"):
        dur = w[:, None] * slow
        dur = np.where(np.isfinite(dur), dur, np.inf)
        energy = busy_w * dur  # inf x 0 W on a pair that cannot run: NaN, never chosen (EFT inf)
    return dur, energy


def unit_tables(m: int) -> PowerTables:
    """One P-state of speed 1 drawing 1 W busy and 0 W idle on each of ``m`` processors (energy =
    busy time): what ECS plans with when the scenario has no power model."""
    return PowerTables.build([ProcessorPower.simple(0.0, 1.0)] * m)


def _slowdowns(tables: PowerTables) -> np.ndarray:
    """(m, K) duration factor ``speed_0 / speed_k``; ``inf`` where a processor lacks P-state k."""
    slow = tables.speed[:, :1] / tables.speed
    return np.where(np.isnan(slow), np.inf, slow)


def ecs_phase_one(problem: Problem, tables: PowerTables) -> Plan:
    """Phase 1 (module docstring): a plan with planned times and ``info["pstate"]``.  O(n m K log g + e m)."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    stuck = np.flatnonzero(~problem.eligible.any(axis=1))
    if stuck.size:
        raise InfeasibleError(f"no processor may run task {g.names[int(stuck[0])]!r}")
    slow = _slowdowns(tables)
    K = slow.shape[1]
    busy_w = np.nan_to_num(tables.busy_w, nan=0.0)
    tl = Timelines(m, insertion=True)
    proc = np.full(n, -1, dtype=np.int64)
    pstate = np.zeros(n, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []
    for t in priority_order(problem, upward_rank(problem)).tolist():
        ready = data_ready(problem, t, proc, finish)
        dur, energy = _candidates(problem.cost_row(t), slow, busy_w)
        est = np.column_stack([tl.earliest_start(ready, dur[:, k]) for k in range(K)])
        eft = est + dur
        q, k = divmod(superior_pair(energy, est, eft), K)
        proc[t], pstate[t], start[t], finish[t] = q, k, float(est[q, k]), float(eft[q, k])
        tl.reserve(q, start[t], finish[t])
        placed.append(t)
    return Plan.from_times(proc, start, finish, {"pstate": pstate}, placed=placed)


class _Retimer:
    """Re-times a plan whose tasks keep one global order (``rank``, a linear extension of precedence)
    for given processors and P-states, as the SimPy engine runs a plan: each task starts when its
    inputs have arrived and the previous task of its processor has finished.  A move of task ``t``
    changes nothing before ``t`` in that order, so :meth:`retime` replays from ``t``'s position on and
    stops as soon as a task would finish after a limit.  Plain Python over lists: O(n + e) per replay."""

    def __init__(self, problem: Problem, tables: PowerTables, rank: np.ndarray) -> None:
        g = problem.graph
        self.problem, self.tables = problem, tables
        self.seq = np.argsort(rank, kind="stable").tolist()
        self.pos = np.empty(len(self.seq), dtype=np.int64)
        self.pos[self.seq] = np.arange(len(self.seq))
        src = g.edge_src[g.pred_edges].tolist()
        data = g.edge_data[g.pred_edges].tolist()
        ptr = g.pred_ptr.tolist()
        self.preds = [list(zip(src[ptr[v]:ptr[v + 1]], data[ptr[v]:ptr[v + 1]])) for v in range(g.n_tasks)]
        self.arrival = g.arrival.tolist()
        self.lat, self.ibw = problem.latency.tolist(), problem.inv_bandwidth.tolist()
        self.dur = (problem.W[:, :, None] * _slowdowns(tables)[None, :, :]).tolist()  # (n, m, K), inf: cannot
        self.tasks = np.arange(g.n_tasks)

    def retime(self, proc: list[int], pstate: list[int], start: list[float], finish: list[float],
               first: int, limit: float) -> bool:
        """Recompute ``start``/``finish`` (in place) from position ``first`` of the order on; False (and
        the lists partly rewritten) as soon as a task would finish after ``limit``."""
        m = self.problem.n_processors
        avail = [0.0] * m
        seq = self.seq
        for j in seq[:first]:
            avail[proc[j]] = finish[j]
        lat, ibw, dur, arrival, preds = self.lat, self.ibw, self.dur, self.arrival, self.preds
        for j in seq[first:]:
            q = proc[j]
            ready = max(arrival[j], avail[q])
            for s, d in preds[j]:
                p = proc[s]
                t = finish[s] + (lat[p][q] + d * ibw[p][q])
                if t > ready:
                    ready = t
            f = ready + dur[j][q][pstate[j]]
            if f > limit:
                return False
            start[j], finish[j], avail[q] = ready, f, f
        return True

    def energy(self, proc: np.ndarray, pstate: np.ndarray, start: np.ndarray, finish: np.ndarray) -> float:
        """Joules of the schedule over ``[0, makespan]`` by :func:`~simsched.simulator.power.account`
        (links included).  O(n log n + e)."""
        g = self.problem.graph
        moved = float(g.edge_data[proc[g.edge_src] != proc[g.edge_dst]].sum()) if g.n_edges else 0.0
        iv = Intervals(self.tasks, proc, start, finish, pstate)
        return account(self.tables, iv, float(finish.max()), 0, moved).total_j


def mcer_pass(problem: Problem, plan: Plan, tables: PowerTables) -> Plan:
    """Phase 2 (module docstring) on a plan with planned times and ``info["pstate"]``: moves that keep
    the makespan and lower the energy.  O(n^2 m K log n) in the worst case; a move that lengthens the
    makespan costs only the replay up to the first task that finishes too late."""
    K = tables.speed.shape[1]
    re = _Retimer(problem, tables, plan.order)
    proc = plan.processor.tolist()
    pstate = np.asarray(plan.info["pstate"], dtype=np.int64).tolist()
    start, finish = plan.start.tolist(), plan.finish.tolist()
    re.retime(proc, pstate, start, finish, 0, math.inf)  # the plan's own times, as the engine gives them
    makespan = max(finish)
    limit = makespan + 1e-9 * max(1.0, makespan)
    energy = re.energy(np.array(proc), np.array(pstate), np.array(start), np.array(finish))
    for t in re.seq:
        first = int(re.pos[t])
        options = [(q, k) for q in range(problem.n_processors) for k in range(K)
                   if math.isfinite(re.dur[t][q][k]) and (q, k) != (proc[t], pstate[t])]
        for q, k in options:
            old = proc[t], pstate[t]
            s2, f2 = start[:], finish[:]
            proc[t], pstate[t] = q, k
            if re.retime(proc, pstate, s2, f2, first, limit):
                e2 = re.energy(np.array(proc), np.array(pstate), np.array(s2), np.array(f2))
                if e2 < energy * (1 - 1e-12):
                    start, finish, energy = s2, f2, e2
                    continue
            proc[t], pstate[t] = old
    return Plan(np.array(proc, dtype=np.int64), plan.order, np.array(start), np.array(finish),
                {"pstate": np.array(pstate, dtype=np.int64)})


class ECS:
    """Energy-conscious scheduling with DVFS: relative superiority over (processor, P-state) pairs,
    then makespan-conservative energy reduction (Lee & Zomaya, IEEE TPDS 22(8), 2011).

    O(n^2 m K log n) with MCER, O(n m K log g + e m) without.  Deterministic (``rng`` unused).  The
    runner hands it the scenario's power model through :meth:`use_power`; without one every processor
    draws 1 W busy and 0 W idle at one P-state.

    Parameters:
        mcer: run the second phase (makespan-conservative energy reduction); ``False`` keeps phase 1's plan.
    """

    name = "ecs"

    def __init__(self, *, mcer: bool = True) -> None:
        self.mcer = bool(mcer)
        self.tables: PowerTables | None = None

    def use_power(self, tables: PowerTables | None) -> None:
        """The scenario's power model resolved for the platform the next plan is for (or None)."""
        self.tables = tables

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        m = problem.n_processors
        tables = self.tables if self.tables is not None and self.tables.m == m else unit_tables(m)
        plan = ecs_phase_one(problem, tables)
        if self.mcer and problem.n_tasks:
            plan = mcer_pass(problem, plan, tables)
        return plan


class OnlineECS:
    """ECS's relative superiority as an online policy for job streams: each ready task (index order,
    immediate mode as MCT) takes the (processor, P-state) pair :func:`superior_pair` picks, with
    ``EST = max(processor available, data ready)`` from the engine's view, ``EFT = EST + W x
    speed_0 / speed_k`` and ``E = busy watts x duration``; the engine runs it at that P-state
    (``(task, processor, k)``) and the accounting charges it.  Lee & Zomaya, IEEE TPDS 22(8), 2011,
    phase one, applied at each decision point (MCER needs the whole schedule, which an online policy
    does not have).

    O(k m K) per decision for k ready tasks.  Deterministic.  Without a power model every processor
    draws 1 W busy at one P-state (energy = busy time), and it returns plain pairs.  The compiled stream
    loop decides as it does (``compiled_kernel``, with :meth:`compiled_pstates`), float for float.
    """

    name = "ecs-online"
    compiled_kernel = "ecs-online"

    def __init__(self) -> None:
        self.tables: PowerTables | None = None

    def use_power(self, tables: PowerTables | None) -> None:
        """The scenario's power model resolved for the platform (or None)."""
        self.tables = tables

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self._slow, self._busy = self.compiled_pstates(problem)

    def compiled_pstates(self, problem: Problem) -> tuple[np.ndarray, np.ndarray]:
        """What it decides with on ``problem``'s processors: (m, K) duration factors ``speed_0 / speed_k``
        (``inf`` where a processor lacks P-state k) and busy watts (NaN as 0).  O(m K)."""
        m = problem.n_processors
        tables = self.tables if self.tables is not None and self.tables.m == m else unit_tables(m)
        return _slowdowns(tables), np.nan_to_num(tables.busy_w, nan=0.0)

    def decide(self, view: DecisionView) -> list[tuple[int, ...]]:
        available = np.array(view.available, dtype=np.float64)
        K = self._slow.shape[1]
        out: list[tuple[int, ...]] = []
        for t in view.ready.tolist():
            est = np.maximum(available, view.data_ready_row(t))
            dur, energy = _candidates(view.problem.cost_row(t), self._slow, self._busy)
            est2 = np.broadcast_to(est[:, None], dur.shape)
            eft = est2 + dur
            if not np.isfinite(eft).any():
                raise InfeasibleError(f"no processor may run task {view.problem.graph.names[t]!r}")
            q, k = divmod(superior_pair(energy, est2, eft), K)
            out.append((t, q, k) if k else (t, q))
            available[q] = eft[q, k]
        return out
