"""Shortest job first for rigid batch jobs, by *requested* time (the only length a scheduler
knows): start waiting jobs in increasing requested time (ties in submit order) while they fit; the
first that does not fit blocks the rest (no backfilling).  O(q log q) per decision point for q
waiting jobs.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.batch_fcfs import start_in_order
from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace


class SJF:
    """Rigid batch jobs shortest requested time first; the shortest waiting job blocks the rest."""

    name = "sjf"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()
        self.requested = trace.requested

    def decide(self, view: BatchView) -> list[int]:
        q = view.queue_array
        if not q.size:
            return []
        order = q[np.argsort(self.requested[q], kind="stable")]
        return start_in_order(order, self.procs, view.free)
