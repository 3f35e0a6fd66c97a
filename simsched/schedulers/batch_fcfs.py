"""First come, first served for rigid batch jobs: start waiting jobs in submit order while they
fit; the first that does not fit blocks every job behind it (no backfilling).

The baseline of every batch-scheduling study (e.g. Feitelson et al., "Theory and practice in
parallel job scheduling", JSSPP 1997).  O(started jobs) per decision point.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace


def start_in_order(order: np.ndarray, procs: list[int], free: int, chunk: int = 64) -> list[int]:
    """The prefix of ``order`` (job indices) that fits in ``free`` processors, taken job by job
    (stops at the first job that does not fit).  O(prefix + chunk): it reads ``order`` ``chunk``
    jobs at a time, so a long queue costs nothing behind its blocked head."""
    out: list[int] = []
    for lo in range(0, len(order), chunk):
        for j in order[lo:lo + chunk].tolist():
            if procs[j] > free:
                return out
            out.append(j)
            free -= procs[j]
    return out


class FCFS:
    """Rigid batch jobs first come, first served; the queue's head blocks the rest (no backfilling)."""

    name = "fcfs"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()

    def decide(self, view: BatchView) -> list[int]:
        return start_in_order(view.queue_array, self.procs, view.free)
