"""The batch policies on a heterogeneous machine: FCFS, SJF, EASY and conservative backfilling
for tasks that need ``k`` processors of one type, choosing the type and ``k`` themselves.

The machine is one pool of identical processors per type; a task's *options* are the (pool, ``k``)
pairs its demand and the cost model allow, each with its run time
(:mod:`simsched.simulator.batch_typed`).  Run times are known (perfect estimates), so every
running task's end is known and each pool has an availability profile
(:class:`~simsched.simulator.batch.Profile`) of free processors over future time.

**The option rule.**  Whenever a waiting task is considered, it takes the option with the
**earliest finish** in the policy's current profile (its earliest start there for ``k``
processors during its run time, plus the run time); ties: fewer processors, then the lower pool
(type) index — the rule of gang-aware EFT (:mod:`simsched.schedulers.gang_eft`).  A moldable
task's ``k`` comes from the same rule.  The task starts now exactly when that option starts now.

**The policies** differ only in which waiting tasks keep a reservation in the profile:

* ``fcfs`` — tasks in release order; the first whose best option does not start now blocks every
  task behind it (no reservation, no backfilling);
* ``sjf`` — the same in increasing run time (a task's shortest option; ties in release order);
* ``easy-backfill`` (Lifka 1995) — the first task that cannot start now reserves its best option
  (the *head*); every later task starts now if its best option, in the profile holding the head's
  reservation, starts now (so it never delays the head);
* ``conservative-backfill`` (Mu'alem & Feitelson 2001) — every waiting task, in release order,
  reserves its best option in the profile holding the reservations of the tasks before it; those
  whose reservation is now start.  Reservations are recomputed at every decision point; with
  exact run times a task's earliest slot never gets later, so no reservation is ever delayed.

On one pool with rigid tasks these are exactly the identical-processor policies of
:mod:`simsched.schedulers` under perfect estimates (a test holds the two engines equal).
O(q x options x profile steps) per decision point for q waiting tasks (EASY and FCFS stop early
where nothing more can start).
"""

from __future__ import annotations

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.batch import Profile
from simsched.simulator.batch_typed import TypedJobs, TypedView

RULES: dict[str, tuple[int | None, bool]] = {
    "fcfs": (0, False),
    "sjf": (0, True),
    "easy-backfill": (1, False),
    "conservative-backfill": (None, False),
}
"""Batch policy name -> (reservations kept: 0, 1 or all (``None``); order by run time)."""


def best_option(jobs: TypedJobs, j: int, profiles: list[Profile], now: float) -> tuple[float, int, float]:
    """``(start, option, finish)`` of task ``j``'s earliest-finish option in ``profiles`` (one per
    pool); ties: fewer processors, then the lower pool.  O(options x steps)."""
    best: tuple[float, int, int, float, int] | None = None
    for o in jobs.options(j):
        p, k, d = int(jobs.opt_pool[o]), int(jobs.opt_k[o]), float(jobs.opt_dur[o])
        s = profiles[p].earliest(k, d, after=now)
        key = (s + d, k, p, s, o)
        if best is None or key[:3] < best[:3]:
            best = key
    assert best is not None  # typed_jobs gives every task an option
    return best[3], best[4], best[0]


class TypedBatch:
    """A batch policy (``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``) on a machine
    of several processor types, each task on ``k`` processors of one type chosen by earliest finish
    (see the module docstring)."""

    def __init__(self, name: str) -> None:
        if name not in RULES:
            raise SimschedError(f"batch policy {name!r} has no rule for tasks on several processor types; "
                                f"these do: {', '.join(RULES)}")
        self.name = name
        self.depth, self.by_length = RULES[name]

    def reset(self, jobs: TypedJobs) -> None:
        self.jobs = jobs
        shortest = np.minimum.reduceat(jobs.opt_dur, jobs.opt_ptr[:-1]) if jobs.n else np.zeros(0)
        self.shortest = shortest

    def decide(self, view: TypedView) -> list[tuple[int, int]]:
        jobs, now = self.jobs, view.now
        order = view.queue
        if not order:
            return []
        if self.by_length:
            order = [j for _d, _i, j in sorted((float(self.shortest[j]), i, j) for i, j in enumerate(order))]
        profiles = []
        for p in range(jobs.pool_size.size):
            ends, procs = view.running_ends(p)
            profiles.append(Profile(now, int(view.free[p]), ends, procs))
        out: list[tuple[int, int]] = []
        reserved = 0
        for j in order:
            s, o, _f = best_option(jobs, j, profiles, now)
            p, k, d = int(jobs.opt_pool[o]), int(jobs.opt_k[o]), float(jobs.opt_dur[o])
            if s <= now:
                profiles[p].add(now, d, k)
                out.append((j, o))
                continue
            if self.depth == 0:
                break
            if self.depth is None or reserved < self.depth:
                profiles[p].add(s, d, k)
                reserved += 1
        return out
