"""What an online run counts and records: :class:`OnlineStats` (decisions, policy time, assignments,
events, failures ...) and, in runs with disruptions, :class:`DisruptionLog` (every attempt and down
interval, which the energy accounting of :mod:`simsched.simulator.power` reads).

Plain records, filled by the run's concerns (:mod:`~simsched.simulator.engine.decide` counts
decisions and policy time, :mod:`~simsched.simulator.engine.assign` assignments,
:mod:`~simsched.simulator.engine.disruptions` failures, restarts, slowed tasks and lost work,
:mod:`~simsched.simulator.engine.loop` the events) and by the compiled loop, which returns the same
fields."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class DisruptionLog:
    """What happened in a run with disruptions: every task attempt ``(task, processor, start, end,
    completed)`` and every down interval ``(processor, start, end)`` (``end`` may be ``inf`` for a
    repair still pending when the run ended)."""

    attempts: list[tuple[int, int, float, float, bool]] = field(default_factory=list)
    down: list[tuple[int, float, float]] = field(default_factory=list)
    pstates: list[int] = field(default_factory=list)
    """The P-state of each attempt (parallel to ``attempts``) in runs with P-states; empty otherwise."""

    def lost_work(self, n_tasks: int) -> np.ndarray:
        """(n,) processor time spent on attempts a failure killed, per task.  O(attempts)."""
        out = np.zeros(n_tasks)
        for v, _p, a, b, ok in self.attempts:
            if not ok:
                out[v] += b - a
        return out


@dataclass
class OnlineStats:
    """Counters of an online run: ``decisions`` (calls to ``policy.decide``), ``policy_time_s``
    (wall time spent inside them: the scheduler time the runner reports), ``assignments`` and
    ``events`` (SimPy events processed)."""

    decisions: int = 0
    policy_time_s: float = 0.0
    assignments: int = 0
    events: int = 0
    failures: int = 0
    restarts: int = 0
    slowed_tasks: int = 0
    lost_work: float = 0.0
    """Processor time spent on task attempts that a failure killed."""
    log: DisruptionLog | None = None
    """Every attempt and down interval, in runs with disruptions."""
    pstate: np.ndarray | None = None
    """(n,) the P-state each task (its last attempt) ran at, when the run had P-states (``pstate_slowdown``)."""
    done: np.ndarray | None = None
    """(n,) when each task was done for the workflow system (its post step ended: ``finish + post``), in
    runs with workflow-system overheads; the workflow's end is its max.  None otherwise."""
    read_time: np.ndarray | None = None
    """(n,) seconds each task spent reading its inputs from storage (its read flow, latency included),
    in runs with storage; None otherwise."""
    write_time: np.ndarray | None = None
    """(n,) seconds each task spent writing its outputs to storage, in runs with storage."""
    bytes_read: float = 0.0
    """Bytes read from storage (runs with storage)."""
    bytes_written: float = 0.0
    """Bytes written to storage (runs with storage)."""
    memory_waits: int = 0
    """Tasks that waited for memory on their host before starting (runs with host memory,
    :mod:`simsched.simulator.engine.hostmem`)."""
    engine: str = "simpy"
    """Which engine ran: ``simpy`` (the ground truth) or ``compiled`` (:mod:`simsched.simulator.engine.compiled`)."""
