"""Teaching helpers: HEFT step by step, and a search for instances where greedy list scheduling fails.

* :func:`trace_heft` replays HEFT (:mod:`simsched.schedulers.heft`) and records, for every step, the
  task placed, its data-ready time, earliest start and earliest finish time on every processor, and
  the processor chosen — the tables of Topcuoglu, Hariri & Wu (2002) worked by hand.  The plan it
  ends with equals :func:`~simsched.schedulers.heft.heft_schedule`'s (a test holds them equal).
* :func:`search_greedy_gap` draws small random DAGs (the ``random`` generator, costs and data
  rounded to integers so that the CP-SAT optimum is exact), solves each with HEFT and with the
  ``optimal`` scheduler, and keeps the one where HEFT is furthest above the optimum;
  :func:`instance_yaml` writes it as a scenario.

``simsched explain`` (:mod:`simsched.cli.explain_cmd`) prints both; see ``docs/tutorials/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.timeline import Timelines, data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


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
    return HeftTrace(rank, order, steps, Plan.from_times(proc, start, finish))


# --------------------------------------------------------------------------- greedy vs optimal
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
