"""What a batch run produced (:class:`BatchResult`) and what is measured from it.

Measured from the run (:meth:`BatchResult.metrics`), from each job's release (its submit time, or
for a task of a DAG job the end of its last predecessor): wait, response, bounded slowdown
``max(1, response / max(run, tau))`` with ``tau = 10`` s (Feitelson et al., "Theory and practice in
parallel job scheduling", JSSPP 1997), utilisation over ``[first submit, last end]`` and lost
capacity (processor-seconds idle while some job waits, over ``m`` x the span; Zotkin & Keleher 1999).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simsched.workloads.importers.swf import RigidTrace

TAU = 10.0
"""Bounded-slowdown threshold in seconds (runs shorter than it count as ``TAU`` long)."""


@dataclass
class BatchResult:
    """One run: per job ``start`` and ``end`` (``end - start`` is the time it held its processors),
    ``killed`` (cut at its requested time), and the machine's state after every decision point:
    ``t`` (times), ``busy`` (processors in use from that time on), ``queued`` (jobs waiting)."""

    trace: RigidTrace
    m: int
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    t: np.ndarray
    busy: np.ndarray
    queued: np.ndarray
    decisions: int = 0
    policy_time_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    released: np.ndarray | None = None
    """When each job joined the queue: its submit time, or when its last predecessor ended."""
    up: np.ndarray | None = None
    """Processors up after every decision point (``None``: no failures, all ``m``)."""
    lost: np.ndarray | None = None
    """Jobs killed by a failure and not requeued (``None``: none could be)."""
    attempts: list[tuple[int, float, float, tuple[int, ...], bool]] = field(default_factory=list)
    """With failures: every run of a job, ``(job, start, end, processors, completed)``."""
    down: list[tuple[int, float, float]] = field(default_factory=list)
    """With failures: every down interval ``(processor, start, end)`` that began before the run ended."""

    def metrics(self, tau: float = TAU) -> dict[str, Any]:
        """``wait_mean``, ``wait_p95``, ``response_mean``, ``response_p95``, ``bsld_mean``,
        ``bsld_p95``, ``utilisation`` (also as ``utilization``, the task-graph rows' key, so one
        capacity objective reads both), ``lost_capacity``, ``makespan``, ``jobs``, ``killed_jobs``,
        and ``per_user`` (user -> ``{jobs, wait_mean, bsld_mean}``) when the trace names users.
        With failures also ``failures`` (processor failures), ``requeues``, ``lost_jobs`` (their
        waits and slowdowns are left out of the means), ``wasted_work`` (processor-seconds of runs
        cut by a failure) and ``down_capacity`` (processor-seconds down), both over ``m`` x the
        span; ``lost_capacity`` then counts only processors that are up.  O(n log n)."""
        tr = self.trace
        since = tr.submit if self.released is None else self.released  # in the queue from its release
        done = np.ones(tr.n, dtype=bool) if self.lost is None else ~self.lost
        wait = (self.start - since)[done]
        resp = (self.end - since)[done]
        ran = (self.end - self.start)[done]
        bsld = np.maximum(1.0, resp / np.maximum(ran, tau))
        first, last = float(tr.submit.min()), float(self.end.max())
        span = last - first
        used = float(np.dot(tr.procs[done], ran))
        # lost capacity: idle processors (up ones) while some job waits, integrated between decision points
        dt = np.diff(np.append(self.t, last))
        up = self.m if self.up is None else self.up
        idle = (up - self.busy) * (self.queued > 0)
        lost = float(np.dot(idle, dt))
        if not done.any():  # every job lost to failures: no wait or slowdown to average
            wait = resp = bsld = np.full(1, np.nan)
        out: dict[str, Any] = {
            "jobs": tr.n, "wait_mean": float(wait.mean()), "wait_p95": float(np.percentile(wait, 95)),
            "response_mean": float(resp.mean()), "response_p95": float(np.percentile(resp, 95)),
            "bsld_mean": float(bsld.mean()), "bsld_p95": float(np.percentile(bsld, 95)),
            "utilisation": used / (self.m * span) if span > 0 else 0.0,
            "utilization": used / (self.m * span) if span > 0 else 0.0,  # the task-graph rows' spelling
            "lost_capacity": lost / (self.m * span) if span > 0 else 0.0,
            "makespan": span, "killed_jobs": int(self.killed.sum()),
        }
        if self.up is not None:
            wasted = sum(len(p) * (b - a) for _j, a, b, p, ok in self.attempts if not ok)
            down = sum(min(b, last) - a for _p, a, b in self.down if a < last)
            scale = self.m * span if span > 0 else float("inf")
            out.update(failures=len(self.down), requeues=sum(1 for a in self.attempts if not a[4]) - int(
                (~done).sum()), lost_jobs=int((~done).sum()), wasted_work=wasted / scale, down_capacity=down / scale)
        if tr.has_users:
            users = np.unique(tr.user)
            user = tr.user[done] if done.any() else tr.user[:1]
            out["per_user"] = {int(u): {"jobs": int((tr.user == u).sum()),
                                        "wait_mean": float(wait[user == u].mean()) if (user == u).any() else None,
                                        "bsld_mean": float(bsld[user == u].mean()) if (user == u).any() else None}
                               for u in users.tolist()}
        return out
