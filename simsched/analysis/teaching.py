"""Teaching helpers: HEFT step by step, and a search for instances where greedy list scheduling fails.

* :func:`trace_heft` replays HEFT (:mod:`simsched.schedulers.heft`) and records, for every step, the
  task placed, its data-ready time, earliest start and earliest finish time on every processor, and
  the processor chosen — the tables of Topcuoglu, Hariri & Wu (2002) worked by hand.  The plan it
  ends with equals :func:`~simsched.schedulers.heft.heft_schedule`'s (a test holds them equal).
* :func:`trace_cpop` and :func:`trace_peft` do the same for CPOP (Topcuoglu et al. 2002: priority = upward +
  downward rank, critical-path tasks on the critical-path processor) and PEFT (Arabnejad & Barbosa, IEEE TPDS
  25(3), 2014: optimistic cost table, rank_oct, processor by minimum EFT + OCT); their plans equal
  :func:`~simsched.schedulers.cpop.cpop_schedule`'s and :func:`~simsched.schedulers.peft.peft_schedule`'s.
* :func:`trace_minmin` runs Min-Min (Braun et al., JPDC 2001) in the simulator and records every decision
  point: the ready tasks, each one's minimum completion time and processor, and the order Min-Min maps
  them in; its schedule equals a plain run's.
* :func:`search_greedy_gap` draws small random DAGs (the ``random`` generator, costs and data
  rounded to integers so that the CP-SAT optimum is exact), solves each with HEFT and with the
  ``optimal`` scheduler, and keeps the one where HEFT is furthest above the optimum;
  :func:`instance_yaml` writes it as a scenario.

``simsched explain`` (:mod:`simsched.cli.explain_cmd`) prints them (:mod:`simsched.report.teaching`) on the
problem :func:`teaching_problem` builds from a scenario; see ``docs/tutorials/``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simsched.schedulers.cpop import critical_path
from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.online import MinMin
from simsched.schedulers.peft import optimistic_cost_table
from simsched.schedulers.timeline import Timelines, data_ready
from simsched.simulator.engine import run_online
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule
from simsched.workloads.paths import longest_path_to

if TYPE_CHECKING:
    from simsched.scenario import Scenario


@dataclass(frozen=True)
class HeftStep:
    """One HEFT step: ``task`` (index) placed on ``chosen``; per processor the data-ready time
    ``ready``, the earliest start ``est`` (insertion-based) and finish ``eft`` (``inf`` where the
    task may not run)."""

    task: int
    rank: float
    ready: np.ndarray
    est: np.ndarray
    eft: np.ndarray
    chosen: int


@dataclass(frozen=True)
class HeftTrace:
    """HEFT's upward ranks, its task order, every step and the resulting plan."""

    rank: np.ndarray
    order: np.ndarray
    steps: list[HeftStep] = field(default_factory=list)
    plan: Plan | None = None


def trace_heft(problem: Problem, insertion: bool = True) -> HeftTrace:
    """HEFT on ``problem``, recording every step (see the module docstring).  Same cost as HEFT
    without pruning, O(n log n + (e + n) m) plus gap searches, and O(n m) memory for the trace."""
    n = problem.n_tasks
    rank = upward_rank(problem)
    order = priority_order(problem, rank)
    tl = Timelines(problem.n_processors, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    steps = []
    for t in order.tolist():
        w = problem.W[t]
        ready = data_ready(problem, t, proc, finish)
        est = tl.earliest_start(ready, w)
        eft = est + w
        q = int(np.argmin(eft))
        start[t], finish[t], proc[t] = est[q], eft[q], q
        tl.reserve(q, float(est[q]), float(eft[q]))
        steps.append(HeftStep(t, float(rank[t]), ready, est, eft, q))
    return HeftTrace(rank, order, steps, Plan.from_times(proc, start, finish, placed=order))


# --------------------------------------------------------------------------- CPOP and PEFT
@dataclass(frozen=True)
class ListStep:
    """One step of a list scheduler: ``task`` placed on ``chosen``; per processor the data-ready time
    ``ready``, earliest start ``est`` and finish ``eft`` (exact gap search on every processor), and the value
    the processor is chosen by, ``score`` (EFT for CPOP, EFT + OCT for PEFT); ``why`` says how it was chosen."""

    task: int
    priority: float
    ready: np.ndarray
    est: np.ndarray
    eft: np.ndarray
    score: np.ndarray
    chosen: int
    why: str


@dataclass(frozen=True)
class ListTrace:
    """A list scheduler's priorities, the tables behind them, every step and the resulting plan.

    ``columns`` names the per-task numbers of ``table`` (e.g. rank_u, rank_d, priority); ``critical_path`` and
    ``cp_processor`` are CPOP's (empty / -1 for PEFT); ``oct`` is PEFT's optimistic cost table (None for CPOP).
    """

    columns: tuple[str, ...]
    table: np.ndarray
    priority: np.ndarray
    steps: list[ListStep]
    plan: Plan
    critical_path: tuple[int, ...] = ()
    cp_processor: int = -1
    oct: np.ndarray | None = None


def _ready_list(problem: Problem, key: np.ndarray, tie: np.ndarray, place) -> list[ListStep]:  # noqa: ANN001
    """Take ready tasks by highest ``key`` (ties: ``tie``, then index), place each with ``place(t, ready, est,
    eft) -> (q, score, why)``; returns the steps.  The same queue discipline as CPOP's and PEFT's heaps."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    tl = Timelines(m, insertion=True)
    proc = np.full(n, -1, dtype=np.int64)
    finish = np.full(n, np.nan)
    waiting = g.in_degree.copy()
    heap = [(-key[t], int(tie[t]), int(t)) for t in g.entry_tasks]
    heapq.heapify(heap)
    steps = []
    while heap:
        t = heapq.heappop(heap)[2]
        w = problem.W[t]
        ready = data_ready(problem, t, proc, finish)
        est = tl.earliest_start(ready, w, prune=False)
        eft = est + w
        q, score, why = place(t, ready, est, eft)
        proc[t], finish[t] = q, eft[q]
        tl.reserve(q, float(est[q]), float(eft[q]))
        steps.append(ListStep(t, float(key[t]), ready, est, eft, score, q, why))
        for j in g.successors(t):
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(heap, (-key[j], int(tie[j]), int(j)))
    return steps


def _plan_of(problem: Problem, steps: list[ListStep]) -> Plan:
    n = problem.n_tasks
    proc, start, finish = np.full(n, -1, dtype=np.int64), np.full(n, np.nan), np.full(n, np.nan)
    for s in steps:
        proc[s.task], start[s.task], finish[s.task] = s.chosen, s.est[s.chosen], s.eft[s.chosen]
    return Plan.from_times(proc, start, finish)


def _key(priority: np.ndarray) -> np.ndarray:
    scale = float(np.abs(priority).max()) or 1.0
    return np.round(priority / scale, 12)


def trace_cpop(problem: Problem) -> ListTrace:
    """CPOP on ``problem`` step by step (Topcuoglu, Hariri & Wu 2002, Fig. 5): priority = rank_u + rank_d,
    the critical path, its processor (the one minimising the path's summed cost), then ready tasks by
    priority, a critical-path task on the critical-path processor, any other on its earliest-finish
    processor.  O(n log n + (e + n) m) plus gap searches on every processor.

    >>> from simsched.workloads.taskgraph import TaskGraph
    >>> from simsched.simulator.platform import Platform, Processor
    >>> g = TaskGraph(["a", "b"], [(0, 1)], [1.0], cost=[[1.0, 2.0], [3.0, 1.0]])
    >>> trace = trace_cpop(Problem(g, Platform.uniform([Processor("p"), Processor("q")])))
    >>> trace.critical_path, trace.cp_processor, [s.why for s in trace.steps]
    ((0, 1), 1, ['CP task -> CP processor', 'CP task -> CP processor'])
    """
    g = problem.graph
    rank_u = upward_rank(problem)
    rank_d = longest_path_to(g, problem.mean_cost, problem.mean_transfer)
    priority = rank_u + rank_d
    cp = critical_path(problem, priority)
    on_cp = np.zeros(g.n_tasks, dtype=bool)
    on_cp[cp] = True
    cp_proc = int(np.argmin(problem.W[cp].sum(axis=0)))

    def place(t: int, ready: np.ndarray, est: np.ndarray, eft: np.ndarray) -> tuple[int, np.ndarray, str]:
        if on_cp[t] and np.isfinite(problem.W[t, cp_proc]):
            return cp_proc, eft, "CP task -> CP processor"
        return int(np.argmin(eft)), eft, "earliest finish"

    steps = _ready_list(problem, _key(priority), np.arange(g.n_tasks), place)
    table = np.stack([problem.mean_cost, rank_u, rank_d, priority], axis=1)
    return ListTrace(("mean cost", "rank_u", "rank_d", "priority"), table, priority, steps,
                     _plan_of(problem, steps), tuple(int(t) for t in cp), cp_proc)


def trace_peft(problem: Problem) -> ListTrace:
    """PEFT on ``problem`` step by step (Arabnejad & Barbosa 2014, Algorithm 1): the optimistic cost table
    ``OCT[t, p]`` (the longest optimistic path from t's successors to an exit when t runs on p), rank_oct =
    the mean of t's OCT row over eligible processors, then ready tasks by rank_oct, each on the processor
    minimising ``O_EFT = EFT + OCT``.  O((n + e) m + n log n) plus gap searches.

    >>> from simsched.workloads.taskgraph import TaskGraph
    >>> from simsched.simulator.platform import Platform, Processor
    >>> g = TaskGraph(["a", "b"], [(0, 1)], [1.0], cost=[[1.0, 2.0], [3.0, 1.0]])
    >>> trace = trace_peft(Problem(g, Platform.uniform([Processor("p"), Processor("q")])))
    >>> trace.oct.tolist(), [int(s.chosen) for s in trace.steps]
    ([[2.0, 1.0], [0.0, 0.0]], [0, 1])
    """
    g = problem.graph
    oct_ = optimistic_cost_table(problem)
    elig = problem.eligible
    rank = np.where(elig, oct_, 0.0).sum(axis=1) / elig.sum(axis=1)

    def place(t: int, ready: np.ndarray, est: np.ndarray, eft: np.ndarray) -> tuple[int, np.ndarray, str]:
        score = eft + oct_[t]
        return int(np.argmin(score)), score, "minimum EFT + OCT"

    steps = _ready_list(problem, _key(rank), g.level, place)
    table = np.column_stack([problem.mean_cost, rank])
    return ListTrace(("mean cost", "rank_oct"), table, rank, steps, _plan_of(problem, steps), oct=oct_)


# --------------------------------------------------------------------------- Min-Min
@dataclass(frozen=True)
class MinMinDecision:
    """One Min-Min decision point: at ``time``, the ready ``tasks``; ``completion`` (k, m) their expected
    completion time on every processor when the decision starts; ``mapped`` the (task, processor) pairs in
    the order Min-Min chose them (each pick updates the chosen processor's availability for the rest)."""

    time: float
    tasks: np.ndarray
    completion: np.ndarray
    mapped: list[tuple[int, int]]


@dataclass(frozen=True)
class MinMinTrace:
    """Every decision of a Min-Min run and the schedule the simulator measured."""

    decisions: list[MinMinDecision]
    schedule: Schedule


class _RecordingMinMin(MinMin):
    """Min-Min that keeps what it saw and chose at every decision point."""

    def __init__(self) -> None:
        self.decisions: list[MinMinDecision] = []

    def decide(self, view: DecisionView) -> list[tuple[int, int]]:
        mapped = super().decide(view)
        self.decisions.append(MinMinDecision(float(view.now), np.array(view.ready, dtype=np.int64),
                                             view.completion_times(view.ready), list(mapped)))
        return mapped


def trace_minmin(problem: Problem) -> MinMinTrace:
    """Min-Min on ``problem`` in the SimPy engine (no noise), recording every decision point (see
    :class:`MinMinDecision`).  The schedule equals ``run_online(problem, MinMin())``'s.  Same cost as the run
    plus O(k m) per decision for the recorded table.

    >>> from simsched.workloads.taskgraph import TaskGraph
    >>> from simsched.simulator.platform import Platform, Processor
    >>> g = TaskGraph(["a", "b"], [], work=[2.0, 1.0])
    >>> trace = trace_minmin(Problem(g, Platform.uniform([Processor("p")])))
    >>> trace.decisions[0].mapped, float(trace.schedule.makespan)
    ([(1, 0), (0, 0)], 3.0)
    """
    policy = _RecordingMinMin()
    schedule, _ = run_online(problem, policy, rng=np.random.default_rng(0))
    return MinMinTrace(policy.decisions, schedule)


# --------------------------------------------------------------------------- the problem a view explains
def teaching_problem(scenario: str | Path, seed: int | None, what: str, limit: int) -> tuple[Scenario, Problem]:
    """The loaded scenario and its problem (the workload drawn with ``seed``, default the scenario's) for
    the view ``explain WHAT``, which shows every task: :class:`~simsched.errors.SimschedError` for a
    negative seed, a scenario without a task graph (an autotuning one) or more than ``limit`` tasks.
    O(loading and building the problem)."""
    from simsched.errors import SimschedError
    from simsched.limits import check_seed
    from simsched.scenario import build_problem, load_scenario

    check_seed(seed)
    loaded = load_scenario(scenario)
    if not loaded.has_task_graph:
        raise SimschedError(f"{scenario}: explain {what} needs a platform and a workload "
                            f"(this is an autotuning scenario)")
    problem = build_problem(loaded, seed)
    if problem.n_tasks > limit:
        raise SimschedError(f"{scenario}: {problem.n_tasks} tasks; explain {what} shows every task, "
                            f"so it is limited to {limit}")
    return loaded, problem


# --------------------------------------------------------------------------- decisions in order
def decision_order(problem: Problem, scheduler: str) -> tuple[Schedule, np.ndarray]:
    """The schedule of ``scheduler`` on ``problem`` (executed by the SimPy engine, no noise) and the order
    its decisions placed the tasks in: the placement order for HEFT, CPOP and PEFT (their traces), the mapping
    order over the decision points for Min-Min, and for any other registered scheduler the order of start
    times (ties by processor, then index).  O(the scheduler's run + n log n).

    >>> from simsched.workloads.taskgraph import TaskGraph
    >>> from simsched.simulator.platform import Platform, Processor
    >>> g = TaskGraph(["a", "b", "c"], [(0, 1), (0, 2)], [0.0, 0.0], work=[1.0, 3.0, 2.0])
    >>> schedule, order = decision_order(Problem(g, Platform.uniform([Processor("p")])), "heft")
    >>> order.tolist(), schedule.finish.tolist()
    ([0, 1, 2], [1.0, 4.0, 6.0])
    """
    from simsched.schedulers import registry
    from simsched.simulator.engine import execute_plan

    name = scheduler.lower()
    if name == "heft":
        trace = trace_heft(problem)
        assert trace.plan is not None
        return execute_plan(problem, trace.plan), np.asarray(trace.order, dtype=np.int64)
    if name in ("cpop", "peft"):
        listed = trace_cpop(problem) if name == "cpop" else trace_peft(problem)
        return execute_plan(problem, listed.plan), np.array([st.task for st in listed.steps], dtype=np.int64)
    if name == "minmin":
        mm = trace_minmin(problem)
        return mm.schedule, np.array([t for d in mm.decisions for t, _ in d.mapped], dtype=np.int64)
    policy = registry.create(scheduler)
    rng = np.random.default_rng(0)
    if hasattr(policy, "plan"):
        schedule = execute_plan(problem, policy.plan(problem, rng))
    else:
        schedule, _ = run_online(problem, policy, rng=rng)
    order = np.lexsort((np.arange(problem.n_tasks), schedule.processor, schedule.start))
    return schedule, order.astype(np.int64)


# --------------------------------------------------------------------------- greedy vs optimal
GREEDY_GAP_MAX_TASKS = 20
"""Largest DAG :func:`search_greedy_gap` is asked for from the command line: each try solves the instance
exactly with CP-SAT."""

GREEDY_GAP_MAX_PROCESSORS = 16
"""Most processors asked for from the command line (the exact model grows with tasks x processors)."""


@dataclass(frozen=True)
class GapInstance:
    """A problem with HEFT's and the optimal makespan; ``gap`` = HEFT / optimum - 1."""

    problem: Problem
    records: dict
    heft: float
    optimum: float
    proven: bool
    seed: int

    @property
    def gap(self) -> float:
        return self.heft / self.optimum - 1.0


def _rounded_instance(tasks: int, processors: int, ccr: float, heterogeneity: float,
                      rng: np.random.Generator) -> tuple[Problem, dict]:
    """A random DAG (Topcuoglu's generator) with integer costs (>= 1) and integer data."""
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.generators import GENERATORS
    from simsched.workloads.importers.inline import to_inline
    from simsched.workloads.taskgraph import TaskGraph

    graph = GENERATORS["random"](tasks=tasks, processors=processors, ccr=ccr, heterogeneity=heterogeneity,
                                 mean_cost=10.0, rng=rng)
    doc = to_inline(graph)
    recs = {"tasks": [{"name": t["name"], "cost": [max(1, round(c)) for c in t["cost"]]} for t in doc["tasks"]],
            "edges": [{"from": e["from"], "to": e["to"], "data": round(e["data"])} for e in doc["edges"]]}
    g = TaskGraph.from_named(recs["tasks"], [(e["from"], e["to"], e["data"]) for e in recs["edges"]])
    platform = Platform.uniform([Processor(name=f"P{i + 1}") for i in range(processors)], 1.0, 0.0)
    return Problem(g, platform), recs


def search_greedy_gap(*, tasks: int = 8, processors: int = 3, tries: int = 50, seed: int = 0, ccr: float = 1.0,
                      heterogeneity: float = 1.0, time_limit_s: float = 5.0) -> GapInstance:
    """The instance, among ``tries`` random ones drawn from ``seed``, where HEFT's makespan is furthest
    above the CP-SAT optimum (ties: the first found).  Needs OR-Tools (extra ``exact``).
    O(tries x solver time); with 8 tasks on 3 processors each solve takes a few ms to a second."""
    from simsched.schedulers.exact import optimal_schedule
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.evaluate import evaluate_plan

    best: GapInstance | None = None
    for k in range(tries):
        problem, recs = _rounded_instance(tasks, processors, ccr, heterogeneity, np.random.default_rng([seed, k]))
        heft = float(evaluate_plan(problem, heft_schedule(problem)).makespan)
        plan = optimal_schedule(problem, time_limit_s=time_limit_s, workers=1)
        opt = float(evaluate_plan(problem, plan).makespan)
        found = GapInstance(problem, recs, heft, opt, bool(plan.info.get("optimal")), k)
        if best is None or found.gap > best.gap + 1e-12:
            best = found
    assert best is not None, "tries must be >= 1"
    return best


def instance_yaml(found: GapInstance, *, name: str, description: str,
                  schedulers: tuple[str, ...] = ("heft", "cpop", "peft", "heft-lookahead",
                                                 "{name: ga, objective: makespan}", "optimal")) -> str:
    """A scenario (YAML text) holding ``found``'s graph and platform, comparing ``schedulers``."""
    import yaml

    def flow(rec: dict) -> str:
        return yaml.safe_dump(rec, default_flow_style=True, width=10**9, sort_keys=False).strip()

    m = found.problem.n_processors
    lines = [f"name: {name}", "description: >-"]
    lines += [f"  {line}" for line in description.strip().splitlines()]
    lines += ["seed: 0", "repetitions: 1", "platform:",
              "  processors: [" + ", ".join(f"{{name: P{i + 1}}}" for i in range(m)) + "]",
              "  network: {bandwidth: 1.0, latency: 0.0}", "workload:", "  tasks:"]
    lines += [f"    - {flow(t)}" for t in found.records["tasks"]]
    lines += ["  edges:" if found.records["edges"] else "  edges: []"]
    lines += [f"    - {flow(e)}" for e in found.records["edges"]]
    lines += ["noise: {model: none}", "schedulers: [" + ", ".join(schedulers) + "]"]
    return "\n".join(lines) + "\n"
