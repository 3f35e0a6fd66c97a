"""First come, first served for rigid batch jobs: start waiting jobs in submit order while they
fit; the first that does not fit blocks every job behind it (no backfilling).

The baseline of every batch-scheduling study (e.g. Feitelson et al., "Theory and practice in
parallel job scheduling", JSSPP 1997).  O(started jobs) per decision point.
"""

from __future__ import annotations

from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace


def start_in_order(order: list[int], procs: list[int], free: int) -> list[int]:
    """The prefix of ``order`` that fits in ``free`` processors, taken job by job (stops at the
    first job that does not fit).  O(prefix)."""
    out = []
    for j in order:
        if procs[j] > free:
            break
        out.append(j)
        free -= procs[j]
    return out


class FCFS:
    """Rigid batch jobs first come, first served; the queue's head blocks the rest (no backfilling)."""

    name = "fcfs"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()

    def decide(self, view: BatchView) -> list[int]:
        return start_in_order(view.queue, self.procs, view.free)
