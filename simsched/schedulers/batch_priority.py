"""Priority-function batch policies: a score per waiting job picks the queue's head; the head is
kept until it starts; optionally EASY-style backfilling behind it.  The heuristics of RLScheduler
(Zhang et al., "RLScheduler: an automated HPC batch job scheduler using reinforcement learning",
SC'20) as its code runs them, so its published table can be held against ours (docs/rlscheduler.md).

**Scores** (lower first; ties in submit order).  For a job with requested time ``r``, ``n``
processors, submit time ``s`` and waiting time ``w``:

* ``fcfs``: ``s``;
* ``sjf``: ``r`` (ties: ``s``);
* ``wfp3``: ``-(w / r)^3 * n`` (WFP3, Tang et al., "Fault-aware, utility-based job scheduling on Blue
  Gene/P systems", CLUSTER 2009);
* ``uni``: ``-(w + 1e-15) / (log2(n + 1e-15) * r)`` (UNICEF, same paper);
* ``f1``: ``log10(r) * n + 870 * log10(s)`` (F1 of Carastan-Santos & de Camargo, "Obtaining dynamic
  scheduling policies with simulation and machine learning", SC'17; ``r`` or ``s`` of 0 count as 0.1).

Submit times are the log's own (``submit + epoch``, :class:`RigidTrace`), as RLScheduler reads them.

**Waiting time** of ``wfp3``/``uni`` (``waiting``): ``"current"`` (default) is the job's wait so far,
``now - s``, as the formulas are published.  ``"rlscheduler"`` is what RLScheduler's code computes,
``scheduled_time - submit_time`` with ``scheduled_time = -1`` for every waiting job, i.e.
``w = -1 - s``: its WFP3 and UNI then order by submit time, requested time and width only (the
reason their columns in its table are so high); use it to reproduce that table.

**The head.**  At a decision point the waiting jobs are ordered by score; jobs start in that
order while they fit.  The first that does not fit becomes the *head* and stays the head, whatever
arrives later, until it starts (RLScheduler's loop picks a job and waits for it).  Without
backfilling nothing else starts meanwhile.  With ``backfill=True`` the head gets a *shadow time*
when it is chosen: the estimated end (``start + requested``) of the running job whose release first
gives it enough processors; it is not recomputed while the head waits.  Then at every decision point
every other waiting job, in submit order, starts if it fits in the free processors and
``now + r < shadow`` (strictly; no "extra processors" rule — RLScheduler's greedy backfilling, which
differs from :mod:`~simsched.schedulers.batch_easy`'s Mu'alem-Feitelson EASY).

O(q log q + r log r) per decision point for q waiting and r running jobs (numpy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace

RULES = ("fcfs", "sjf", "wfp3", "uni", "f1")
"""The priority functions, by name."""

EPS = 1e-15
"""UNI's guard against log2(1) = 0 and a zero wait, as RLScheduler's code has it."""


def priority_scores(rule: str, jobs: np.ndarray, trace: RigidTrace, now: float,
                    waiting: str = "current") -> np.ndarray:
    """The score of each job of ``jobs`` (indices into ``trace``) under ``rule`` at time ``now``
    (lower is scheduled first; see the module docstring for the formulas and ``waiting``).  O(len(jobs))."""
    s = trace.submit[jobs].astype(np.float64) + trace.epoch  # the log's own clock (F1's log10 is not shift-free)
    r = trace.requested[jobs].astype(np.float64)
    n = trace.procs[jobs].astype(np.float64)
    if rule == "fcfs":
        return s
    if rule == "sjf":
        return r
    if rule == "f1":
        return np.log10(np.where(r > 0, r, 0.1)) * n + 870.0 * np.log10(np.where(s > 0, s, 0.1))
    w = now + trace.epoch - s if waiting == "current" else -1.0 - s
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule == "wfp3":
            return -np.power(w / r, 3) * n
        if rule == "uni":
            return -(w + EPS) / (np.log2(n + EPS) * r)
    raise ValueError(f"unknown priority rule {rule!r}; choose one of {', '.join(RULES)}")


def priority_order(rule: str, queue: np.ndarray, trace: RigidTrace, now: float, waiting: str) -> np.ndarray:
    """``queue`` (submit order) sorted by score, ties in submit order (``sjf``: by submit time, then
    queue order).  O(q log q)."""
    key = priority_scores(rule, queue, trace, now, waiting)
    key = np.where(np.isnan(key), np.inf, key)  # 0/0 of a zero requested time: last, as a NaN sorts in Python
    return queue[np.argsort(key, kind="stable")]


class PriorityBatch:
    """A batch policy ordering the queue by a priority function, keeping its head until it starts,
    with or without RLScheduler's greedy backfilling behind the head (see the module docstring).

    ``rule``: one of :data:`RULES`; ``backfill``: start later jobs that end (by their requested
    time) before the head's shadow time; ``waiting``: ``"current"`` or ``"rlscheduler"`` (WFP3/UNI)."""

    name = "priority"

    def __init__(self, rule: Literal["fcfs", "sjf", "wfp3", "uni", "f1"] = "fcfs", backfill: bool = False,
                 waiting: Literal["current", "rlscheduler"] = "current") -> None:
        if rule not in RULES:
            raise ValueError(f"unknown priority rule {rule!r}; choose one of {', '.join(RULES)}")
        self.rule, self.backfill, self.waiting = rule, bool(backfill), waiting

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.trace = trace
        self.procs = trace.procs.tolist()
        self.head: int | None = None
        self.shadow = -np.inf

    def decide(self, view: BatchView) -> list[int]:
        q = view.queue_array
        if not q.size:
            self.head = None
            return []
        free = view.free
        out: list[int] = []
        order = self._order(q, view.now)
        kept = self.head if self.head is not None and bool(np.any(q == self.head)) else None
        if kept is not None:  # the kept head goes first, the rest by score
            order = np.concatenate([np.array([kept], dtype=order.dtype), order[order != kept]])
        self.head = None
        admit = self._admission(view)
        for j in order.tolist():
            if self.procs[j] > free:
                self.head = j
                break
            if admit is not None and not admit(j, free, not out):
                continue  # held back: it fits, but the policy keeps it waiting
            out.append(j)
            free -= self.procs[j]
        if self.head is None or not self.backfill:
            return out
        if self.head != kept:  # a new head: its shadow time, once
            self.shadow = self._shadow(view, out, free, self.procs[self.head])
        return out + self._backfill(view, q, out, free) if free > 0 else out

    def _order(self, q: np.ndarray, now: float) -> np.ndarray:
        """The waiting jobs ``q`` (submit order) in the order the rule starts them.  O(q log q)."""
        return priority_order(self.rule, q, self.trace, now, self.waiting)

    def _admission(self, view: BatchView) -> Callable[[int, int, bool], bool] | None:
        """``None`` (every rule here): a job that fits starts in its turn.  A policy that holds jobs back
        returns ``admit(job, free, first)``, asked for each job that fits (``first``: nothing started yet at
        this decision point); a job it refuses waits without becoming the head.  O(1)."""
        return None

    def _shadow(self, view: BatchView, started: list[int], free: int, need: int) -> float:
        """The estimated end of the running job (or one started now) whose release first gives
        ``need`` processors (``-inf`` if none does).  O(r log r)."""
        ends, procs = view.running_ends()
        if started:
            mine = np.asarray(started, dtype=np.int64)
            ends = np.concatenate([ends, view.now + self.trace.requested[mine]])
            procs = np.concatenate([procs, self.trace.procs[mine]])
            order = np.argsort(ends, kind="stable")
            ends, procs = ends[order], procs[order]
        enough = np.flatnonzero(free + np.cumsum(procs) >= need)
        return float(ends[enough[0]]) if enough.size else -np.inf

    def _backfill(self, view: BatchView, q: np.ndarray, started: list[int], free: int) -> list[int]:
        """Waiting jobs other than the head, in submit order, that fit now and end (by their
        requested time) strictly before the shadow time.  O(q)."""
        trace = self.trace
        short = (view.now + trace.requested[q] < self.shadow) & (trace.procs[q] <= free)
        short &= q != self.head
        if started:
            short &= ~np.isin(q, np.asarray(started, dtype=np.int64))
        out: list[int] = []
        for j in q[short].tolist():
            if self.procs[j] <= free:
                out.append(j)
                free -= self.procs[j]
                if free <= 0:
                    break
        return out


class _Rule(PriorityBatch):
    """One priority function as its own registry name (``rule`` fixed)."""

    rule_name = "fcfs"

    def __init__(self, backfill: bool = False, waiting: Literal["current", "rlscheduler"] = "current") -> None:
        super().__init__(self.rule_name, backfill, waiting)  # type: ignore[arg-type]


class FCFSPriority(_Rule):
    """Submit order as a priority function; with ``backfill``, RLScheduler's greedy backfilling behind the head."""

    name = "fcfs-priority"
    rule_name = "fcfs"


class SJFPriority(_Rule):
    """Shortest requested time first, the head kept until it starts; optional greedy backfilling (RLScheduler's SJF)."""

    name = "sjf-priority"
    rule_name = "sjf"


class WFP3(_Rule):
    """WFP3 (Tang et al. 2009): -(wait/requested)^3 x processors, head kept; optional greedy backfilling."""

    name = rule_name = "wfp3"


class UNI(_Rule):
    """UNICEF (Tang et al. 2009): -wait / (log2(processors) x requested), head kept; optional greedy backfilling."""

    name = rule_name = "uni"


class F1(_Rule):
    """F1 (Carastan-Santos & de Camargo, SC'17): log10(requested) x procs + 870 log10(submit); optional backfilling."""

    name = rule_name = "f1"
