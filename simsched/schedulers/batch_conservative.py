"""Conservative backfilling (Mu'alem & Feitelson, "Utilization, predictability, workloads, and user
runtime estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001).

Every waiting job holds a reservation in the availability profile
(:class:`~simsched.simulator.batch.Profile`), made when it arrives at the earliest time its
processors are free for its requested time given the running jobs and every earlier reservation; a
job starts when its reservation comes.  When jobs end (possibly earlier than requested), the
reservations are *compressed* in submit order (only when capacity came free earlier than
expected, or a job overran its requested time): each is taken out and put back at the earliest slot,
which is never later than the one it had (its old slot is still free), so no reservation is ever
delayed when requested times are upper bounds of the run times (or jobs are killed at them).  Due
jobs start in submit order; one that cannot start at its reservation (zero-length jobs taking
processors for an instant, or a job overrunning its requested time) keeps its processors from the
due jobs behind it.  A zero-length job's reservation holds no processor-time: it starts at the
first decision point at or after its reservation where its processors are free (so it, and only
it, may start later than its reservation).

O(q x (q + r)) per decision point with an ended job (compression), O(a x (q + r)) for ``a``
arrivals otherwise.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.batch import BatchView, Profile
from simsched.workloads.importers.swf import RigidTrace


class ConservativeBackfill:
    """Conservative backfilling: every waiting job holds a reservation none may delay (Mu'alem & Feitelson 2001)."""

    name = "conservative-backfill"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()
        self.requested = trace.requested.tolist()
        self.reserved: dict[int, float] = {}

    def decide(self, view: BatchView) -> list[int]:
        now, q = view.now, view.queue
        if not q:
            return []
        ends, rp = view.running_ends()
        held = [j for j in q if j in self.reserved]
        res_t = np.array([max(self.reserved[j], now) for j in held], dtype=np.float64)
        req, procs = self.requested, self.procs
        prof = Profile(now, view.free, ends, rp, (res_t, np.array([req[j] for j in held], dtype=np.float64),
                                                  np.array([procs[j] for j in held], dtype=np.int64)))
        early = any(view.est_end[j] > now for j in view.finished)  # capacity freed before it was expected
        stale = bool(held) and bool(np.any(res_t > np.array([self.reserved[j] for j in held])))  # overran jobs
        if early or stale:  # compression, in submit order: each job at its earliest slot, never later
            for j, s in zip(held, res_t.tolist()):
                d, k = self.requested[j], self.procs[j]
                prof.add(s, d, -k)
                s2 = prof.earliest(k, d, after=now)
                prof.add(s2, d, k)
                self.reserved[j] = s2
        for j in q:
            if j not in self.reserved:
                d, k = self.requested[j], self.procs[j]
                s = prof.earliest(k, d, after=now)
                prof.add(s, d, k)
                self.reserved[j] = s
        out, free = [], view.free
        for j in q:  # due jobs in submit order; one that cannot start now keeps its processors from later ones
            if self.reserved[j] <= now:
                if self.procs[j] <= free:
                    out.append(j)
                    free -= self.procs[j]
                elif self.requested[j] > 0:
                    free -= self.procs[j]
        for j in out:
            del self.reserved[j]
        later = [s for s in self.reserved.values() if s > now]
        if later:  # a reservation no arrival or end may reach (after a job overran its requested time)
            view.wake_at(min(later))
        return out
