"""What a batch policy sees at a decision point (:class:`BatchView`) and what it must be
(:class:`BatchPolicy`); :class:`BatchEngineError` for a decision the engine cannot carry out.

The policies (``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``) live in
:mod:`simsched.schedulers`; :class:`~simsched.simulator.batch.profile.Profile` is the availability
profile (free processors over future time) the backfilling ones reserve in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from simsched.workloads.importers.swf import RigidTrace


class BatchEngineError(RuntimeError):
    """A batch policy made an impossible decision (a simulator or policy bug, not a user error)."""


@dataclass
class BatchView:
    """What a batch policy sees at a decision point.

    ``now``; ``m`` processors, ``free`` of them idle; ``queue_array``: waiting job indices in
    submit order (int64, do not mutate; :attr:`queue` is the same as a list); ``running``:
    indices of running jobs; ``est_end``: (n,) each running job's requested end ``start +
    requested`` (meaningful only for running jobs; :meth:`running_ends` applies ``max(now, .)``);
    ``arrived`` / ``finished``: jobs that arrived / ended since the last decision point;
    ``trace``: the jobs (``procs``, ``requested``, ``submit``; the policy must not read ``run``).
    :meth:`wake_at` asks for a decision point at a later time (a reservation that no arrival or
    end would otherwise reach)."""

    now: float
    m: int
    free: int
    queue_array: np.ndarray
    running: Sequence[int]
    est_end: np.ndarray
    arrived: list[int]
    finished: list[int]
    trace: RigidTrace
    wake: Any = None
    down_until: np.ndarray | None = None
    """Estimated return time of every processor that is down now (failures only; ``None`` or empty
    without): they count as held until then in :meth:`running_ends`."""

    @property
    def queue(self) -> list[int]:
        """The waiting jobs in submit order, as a list (made on first use, O(q))."""
        cached = self.__dict__.get("_queue")
        if cached is None:
            cached = self.__dict__["_queue"] = self.queue_array.tolist()
        return cached

    def wake_at(self, t: float) -> None:
        """Ask for a decision point at time ``t > now`` (ignored otherwise).  O(log events)."""
        if self.wake is not None and t > self.now:
            self.wake(t)

    def running_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ends, procs)`` of the running jobs sorted by estimated end (``max(now, start +
        requested)``; ties in start order), with every down processor as one more entry of one
        processor held until its estimated return (after the jobs).  O(r log r)."""
        run = np.fromiter(self.running, dtype=np.int64, count=len(self.running))
        ends = np.maximum(self.est_end[run], self.now)
        procs = self.trace.procs[run]
        if self.down_until is not None and self.down_until.size:
            ends = np.concatenate([ends, np.maximum(self.down_until, self.now)])
            procs = np.concatenate([procs, np.ones(self.down_until.size, dtype=procs.dtype)])
        order = np.argsort(ends, kind="stable")
        return ends[order], procs[order]


@runtime_checkable
class BatchPolicy(Protocol):
    """A batch scheduling policy: ``reset(trace, m)`` before a run, ``decide(view)`` -> the job
    indices to start now (each waiting, together fitting in ``view.free``)."""

    name: str

    def reset(self, trace: RigidTrace, m: int) -> None: ...

    def decide(self, view: BatchView) -> list[int]: ...


class QueueWindow:
    """``policy`` seeing at most the first ``k`` waiting jobs in submit order (a queue window, as a
    policy network observes a fixed number of slots); everything else it sees is unchanged.  O(1)
    per decision point beyond the policy's own cost."""

    def __init__(self, policy: BatchPolicy, k: int) -> None:
        if k < 1:
            raise ValueError(f"a queue window holds at least 1 job, got {k}")
        self.policy, self.k = policy, int(k)
        self.name = policy.name

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.policy.reset(trace, m)

    def decide(self, view: BatchView) -> list[int]:
        if view.queue_array.size > self.k:
            view = replace(view, queue_array=view.queue_array[:self.k])
        return self.policy.decide(view)
