"""Sufferage (Maheswaran, Ali, Siegel, Hensgen & Freund, HCW 1999), batch mode over the ready set.

In passes over the unmapped ready tasks: every task's *sufferage* is how much it would lose if it
did not get its best processor (second-best minus best expected completion time; infinite when
only one processor may run it).  Each processor goes to the task, among those whose best processor
it is, that suffers most (ties: the task offered first); the others wait for the next pass, in
which completion times include the tasks just mapped.  Completion times are
``max(available, data ready) + W`` (the :class:`~simsched.simulator.policy.DecisionView`
estimate), as for Min-Min and Max-Min in :mod:`~simsched.schedulers.online`.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.online import Assignments, _Board, _Policy
from simsched.simulator.policy import DecisionView


def sufferage_map(view: DecisionView) -> Assignments:
    """Sufferage assignments for ``view.ready``.  A pass is O(k m) numpy work and maps at least one
    task, so O(k^2 m) per decision at worst (typically a few passes)."""
    tasks = view.ready
    board = _Board(view, tasks)
    left = np.arange(tasks.size)
    out: Assignments = []
    while left.size:
        ct = board.ct[left]
        if ct.shape[1] > 1:
            two = np.partition(ct, 1, axis=1)[:, :2]
        else:
            two = np.concatenate([ct, np.full_like(ct, np.inf)], axis=1)
        best_p = np.argmin(ct, axis=1)
        with np.errstate(invalid="ignore"):
            suffer = np.where(np.isfinite(two[:, 1]), two[:, 1] - two[:, 0], np.inf)
        order = np.lexsort((left, -suffer, best_p))  # by processor, most suffering first
        first = np.ones(order.size, dtype=bool)
        first[1:] = best_p[order][1:] != best_p[order][:-1]
        winners = order[first]
        for i in winners:
            row, p = int(left[i]), int(best_p[i])
            board.assign(row, p)
            out.append((int(tasks[row]), p))
        keep = np.ones(left.size, dtype=bool)
        keep[winners] = False
        left = left[keep]
    return out


class Sufferage(_Policy):
    """Sufferage: batch mode; each processor goes to the ready task that would suffer most without it.

    Maheswaran, Ali, Siegel, Hensgen & Freund, "Dynamic matching and scheduling of a class of
    independent tasks onto heterogeneous computing systems", HCW 1999 (and JPDC 59(2), 1999).
    O(k^2 m) per decision at worst with k ready tasks; deterministic.
    """

    name = "sufferage"

    def decide(self, view: DecisionView) -> Assignments:
        return sufferage_map(view)
