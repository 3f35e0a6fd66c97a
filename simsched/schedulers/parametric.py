"""A parametric list scheduler: HEFT, CPOP, PEFT, MCP and HLFET are points of one grid.

Every classic list scheduler for DAGs on heterogeneous processors has the same skeleton
(Kwok & Ahmad, "Static scheduling algorithms for allocating directed task graphs to
multiprocessors", ACM Computing Surveys 31(4), 1999): keep a ready list ordered by a static
*priority*, repeatedly take its first task and place it on a processor chosen by a *rule*, with or
without filling idle gaps (*insertion*), optionally pinning the critical path to one processor.
This module exposes the four axes:

* ``priority`` — ``upward`` (HEFT's upward rank, larger first), ``downward`` (downward rank,
  smaller first), ``cpop`` (upward + downward rank, larger first), ``oct`` (PEFT's mean optimistic
  cost, larger first), ``static`` (static level: longest path of mean costs to an exit without
  communication, larger first) or ``random`` (a random topological order drawn from ``rng``);
* ``insertion`` — fill idle gaps (Topcuoglu et al. 2002) or always append;
* ``processor`` — ``eft`` (earliest finish), ``est`` (earliest start, ties by finish) or ``oct``
  (earliest finish plus the optimistic cost table, PEFT's optimistic EFT);
* ``critical_path`` — CPOP's reservation: tasks of the critical path go to the one processor that
  runs the whole path fastest.

Named points (:data:`NAMED_POINTS`) reproduce the dedicated implementations exactly, ties
included: ``heft`` (upward, insertion, eft), ``cpop`` (cpop, insertion, eft, critical path),
``peft`` (oct, insertion, oct); two more are classic textbook algorithms: ``mcp`` (Modified
Critical Path, Wu & Gajski, IEEE TPDS 1(3), 1990: ALAP order = upward rank, insertion, earliest
start; ties by level and index instead of the successors' ALAP lists) and ``hlfet`` (Highest Level
First with Estimated Times, Adam, Chandy & Dickson, CACM 17(12), 1974: static level, no insertion,
earliest start).  Ready-list ties: level then index for every priority but ``cpop`` (index, as
:mod:`~simsched.schedulers.cpop`) and ``random``.

The ranks and cost tables are those of heft.py, cpop.py and peft.py, the processor timelines those
of :mod:`~simsched.schedulers.timeline`.  Cost: O(n log n + (e + n) m) numpy work plus gap searches.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from simsched.schedulers.cpop import critical_path
from simsched.schedulers.heft import upward_rank
from simsched.schedulers.peft import optimistic_cost_table
from simsched.schedulers.timeline import Timelines, ready_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_from, longest_path_to

Priority = Literal["upward", "downward", "cpop", "oct", "static", "random"]
ProcessorRule = Literal["eft", "est", "oct"]
PointName = Literal["heft", "cpop", "peft", "mcp", "hlfet"]

PRIORITIES: tuple[str, ...] = ("upward", "downward", "cpop", "oct", "static", "random")
PROCESSOR_RULES: tuple[str, ...] = ("eft", "est", "oct")

NAMED_POINTS: dict[str, dict] = {
    "heft": dict(priority="upward", insertion=True, processor="eft", critical_path=False),
    "cpop": dict(priority="cpop", insertion=True, processor="eft", critical_path=True),
    "peft": dict(priority="oct", insertion=True, processor="oct", critical_path=False),
    "mcp": dict(priority="upward", insertion=True, processor="est", critical_path=False),
    "hlfet": dict(priority="static", insertion=False, processor="est", critical_path=False),
}
"""Published algorithms as points of the grid."""


def grid() -> list[dict]:
    """Every point of the grid (6 priorities x 2 x 3 rules x 2 = 72), named points first."""
    named = list(NAMED_POINTS.values())
    rest = [dict(priority=p, insertion=i, processor=r, critical_path=c)
            for p in PRIORITIES for i in (True, False) for r in PROCESSOR_RULES for c in (False, True)]
    return named + [p for p in rest if p not in named]


def _ready_keys(problem: Problem, priority: str, oct_: np.ndarray | None,
                rng: np.random.Generator | None) -> tuple[np.ndarray, bool]:
    """(n, k) heap keys (smallest first) for the ready list and whether ties go by level."""
    g = problem.graph
    if priority == "random":
        rng = rng if rng is not None else np.random.default_rng(0)
        return rng.random(g.n_tasks), False
    if priority == "upward":
        value = upward_rank(problem)
    elif priority == "downward":
        value = -longest_path_to(g, problem.mean_cost, problem.mean_transfer)
    elif priority == "cpop":
        value = upward_rank(problem) + longest_path_to(g, problem.mean_cost, problem.mean_transfer)
    elif priority == "static":
        value = longest_path_from(g, problem.mean_cost)
    elif priority == "oct":
        elig = problem.eligible
        value = np.where(elig, oct_, 0.0).sum(axis=1) / elig.sum(axis=1)
    else:
        raise ValueError(f"unknown priority {priority!r}; choose from {', '.join(PRIORITIES)}")
    scale = float(np.abs(value).max()) or 1.0
    return -np.round(value / scale, 12), priority != "cpop"


def list_schedule(problem: Problem, *, priority: str = "upward", insertion: bool = True, processor: str = "eft",
                  critical_path_processor: bool = False, rng: np.random.Generator | None = None) -> Plan:
    """Place every task, taken from the ready list by ``priority``, on the processor ``processor``
    picks (see the module docstring).  O(n log n + (e + n) m) plus gap searches."""
    if processor not in PROCESSOR_RULES:
        raise ValueError(f"unknown processor rule {processor!r}; choose from {', '.join(PROCESSOR_RULES)}")
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W
    oct_ = optimistic_cost_table(problem) if "oct" in (priority, processor) else None
    key, by_level = _ready_keys(problem, priority, oct_, rng)
    on_cp = np.zeros(n, dtype=bool)
    cp_proc = -1
    if critical_path_processor:
        prio = upward_rank(problem) + longest_path_to(g, problem.mean_cost, problem.mean_transfer)
        cp = critical_path(problem, prio)
        on_cp[cp] = True
        cp_proc = int(np.argmin(W[cp].sum(axis=0)))

    def place(t: int, ready: np.ndarray, tl: Timelines) -> tuple[int, float]:
        w = W[t]
        if on_cp[t] and np.isfinite(w[cp_proc]):
            return cp_proc, tl.earliest_start_on(cp_proc, float(ready[cp_proc]), float(w[cp_proc]))
        est = tl.earliest_start(ready, w, prune=processor == "eft")
        if processor == "eft":
            q = int(np.argmin(est + w))
        elif processor == "oct":
            q = int(np.argmin(est + w + oct_[t]))
        else:
            q = int(np.lexsort((np.arange(m), est + w, np.where(np.isfinite(w), est, np.inf)))[0])
        return q, float(est[q])

    return ready_list_schedule(problem, key, place, insertion=insertion, by_level=by_level)


class ListScheduler:
    """Grid: priority (upward|downward|cpop|oct|static|random) x insertion x processor (eft|est|oct) x critical_path.

    The parametric list scheduler; named points heft, cpop, peft, mcp, hlfet (``point``).

    A grid over the axes of the classic list schedulers (see :mod:`simsched.schedulers.parametric`):
    ``point`` picks a named point (heft, cpop, peft, mcp, hlfet; default heft) and any axis given
    overrides it.  The named points heft, cpop and peft equal the dedicated implementations
    (Topcuoglu, Hariri & Wu, IEEE TPDS 2002; Arabnejad & Barbosa, IEEE TPDS 2014) task for task.
    O(n log n + (e + n) m) plus insertion gap searches; deterministic except ``priority: random``,
    which draws its order from ``rng``.

    Parameters:
        point: named point giving the defaults.
        priority: upward, downward, cpop, oct, static or random.
        insertion: fill idle gaps between placed tasks.
        processor: eft, est or oct.
        critical_path: pin the critical path to its best processor (CPOP).
    """

    name = "list"
    preset: str = "heft"

    def __init__(self, *, point: PointName | None = None, priority: Priority | None = None,
                 insertion: bool | None = None, processor: ProcessorRule | None = None,
                 critical_path: bool | None = None) -> None:
        settings = dict(NAMED_POINTS[point or self.preset])
        given = dict(priority=priority, insertion=insertion, processor=processor, critical_path=critical_path)
        settings.update({k: v for k, v in given.items() if v is not None})
        if settings["priority"] not in PRIORITIES:
            raise ValueError(f"unknown priority {settings['priority']!r}; choose from {', '.join(PRIORITIES)}")
        if settings["processor"] not in PROCESSOR_RULES:
            raise ValueError(f"unknown processor rule {settings['processor']!r}; "
                             f"choose from {', '.join(PROCESSOR_RULES)}")
        self.settings = settings

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        s = self.settings
        return list_schedule(problem, priority=s["priority"], insertion=s["insertion"], processor=s["processor"],
                             critical_path_processor=s["critical_path"], rng=rng)


class MCP(ListScheduler):
    """MCP (Modified Critical Path): ALAP order, earliest start with insertion (a point of list).

    Wu & Gajski, "Hypertool: a programming aid for message-passing systems", IEEE TPDS 1(3):330-343,
    1990.  ALAP time = critical-path length - upward rank, so ascending ALAP is descending upward
    rank; ties by level and index (the paper compares the successors' ALAP lists).  Heterogeneous
    costs use HEFT's means.  O(n log n + (e + n) m) plus gap searches; deterministic.
    """

    name = "mcp"
    preset = "mcp"


class HLFET(ListScheduler):
    """HLFET (Highest Level First with Estimated Times): static level, earliest start, appended.

    Adam, Chandy & Dickson, "A comparison of list schedules for parallel processing systems", CACM
    17(12):685-690, 1974.  Static level = longest path of mean execution times to an exit,
    communication ignored; a point of ``list``.  O(n log n + (e + n) m); deterministic.
    """

    name = "hlfet"
    preset = "hlfet"
