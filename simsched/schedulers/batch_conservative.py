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

**The profile** is rebuilt at every decision point from the running jobs and the held reservations
(two sorted arrays: step start times and free processors, O((q + r) log(q + r))), then the
*planning* — compression, then a reservation for each arrival — runs on it.  Each placement is an
earliest-fit search (the first run of steps with at least ``k`` free processors lasting the
requested time: O(steps before the slot)) and an interval update (O(steps)).  For logs of at least
:data:`COMPILED_MIN_JOBS` jobs, when numba is installed (extra ``simsched[fast]``), the build and
the planning run compiled in one call per decision point
(:mod:`simsched.schedulers.conservative_kernel`); otherwise on
:class:`~simsched.simulator.batch.Profile` in numpy, one call per search or update (~0.2 ms per
search under cProfile on the RICC log: see docs/cluster-traces.md).  The two give bit-identical
reservations (the same float operations in the same order).  Per decision point O(q x (q + r))
with an early end (compression), O(a x (q + r)) for ``a`` arrivals otherwise, for ``q`` waiting and
``r`` running jobs.  Everything else per decision point is numpy over the queue (no Python loop
over waiting jobs except the due ones).
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.batch import BatchEngineError, BatchView, Profile
from simsched.workloads.importers.swf import RigidTrace

COMPILED_MIN_JOBS = 1_000
"""Logs of at least this many jobs plan in compiled code when numba is installed: below it the numpy
profile costs less than loading numba (~0.2-0.5 s of CPU, once per process)."""


def plan_numpy(prof: Profile, held: tuple[np.ndarray, np.ndarray, np.ndarray],
               new: tuple[np.ndarray, np.ndarray], compress: bool) -> tuple[np.ndarray, np.ndarray]:
    """One decision point's planning on ``prof`` (running jobs and every held reservation in it):
    when ``compress``, each held job ``(start, requested, procs)`` in queue order is taken out and
    put back at its earliest slot; then each new job ``(requested, procs)`` in queue order is
    reserved at its earliest slot.  Returns the held jobs' starts (unchanged without ``compress``)
    and the new jobs' starts.  O((h + a) x steps) numpy calls."""
    hs, hd, hk = (x.tolist() for x in held)
    now = float(prof.times[0])
    if compress:
        for j, (s, d, k) in enumerate(zip(hs, hd, hk)):
            prof.add(s, d, -k)
            s2 = prof.earliest(k, d, after=now)
            prof.add(s2, d, k)
            hs[j] = s2
    ns = []
    for d, k in zip(*(x.tolist() for x in new)):
        s = prof.earliest(k, d, after=now)
        prof.add(s, d, k)
        ns.append(s)
    return np.asarray(hs, dtype=np.float64), np.asarray(ns, dtype=np.float64)


class ConservativeBackfill:
    """Conservative backfilling: every waiting job holds a reservation none may delay (Mu'alem &
    Feitelson 2001)."""

    name = "conservative-backfill"
    compiled: bool | None = None
    """Plan in compiled code (``True``, needs numba), in numpy (``False``), or by the log's size when
    numba is installed (``None``); set on an instance before its run (the tests hold the two equal)."""

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = np.ascontiguousarray(trace.procs, dtype=np.int64)  # one compiled signature
        self.procs_l = trace.procs.tolist()
        self.req_l = trace.requested.tolist()
        self.requested = np.ascontiguousarray(trace.requested, dtype=np.float64)
        self.reserved = np.full(trace.n, np.nan)  # each waiting job's reservation (NaN: none yet)
        use = self.compiled
        if use is None:
            from simsched.schedulers.timeline import compiled_available

            use = trace.n >= COMPILED_MIN_JOBS and compiled_available()
            if trace.n >= COMPILED_MIN_JOBS and not use:
                import warnings

                warnings.warn(f"conservative-backfill plans {trace.n:,} jobs in Python without numba (minutes on "
                              "a large log); `pip install -e '.[fast]'` compiles it", stacklevel=2)
        self._compiled = bool(use)

    def reservations(self) -> dict[int, float]:
        """Every waiting job's reservation, ``{job: start}``, as of the last decision point.  O(n)."""
        held = np.flatnonzero(~np.isnan(self.reserved))
        return dict(zip(held.tolist(), self.reserved[held].tolist()))

    def decide(self, view: BatchView) -> list[int]:
        now, q = view.now, view.queue_array
        if not q.size:
            return []
        res = self.reserved
        ends, rp = view.running_ends()
        est_end = view.est_end
        early = any(est_end[j] > now for j in view.finished)  # capacity came back before it was expected
        if self._compiled:
            from simsched.schedulers.conservative_kernel import plan_queue

            k = plan_queue(q, res, self.requested, self.procs, float(now), int(view.free), ends, rp, early)
            if k >= 0:
                raise BatchEngineError(f"no slot for {k} processors in the profile")
        else:
            self._plan_numpy(q, now, view.free, ends, rp, early)
        rq = res[q]
        out, free = [], view.free
        procs, req = self.procs_l, self.req_l
        for j in q[rq <= now].tolist():  # due jobs in submit order; one that cannot start keeps its processors
            if procs[j] <= free:
                out.append(j)
                free -= procs[j]
            elif req[j] > 0:
                free -= procs[j]
        if out:
            res[out] = np.nan
        later = rq[rq > now]
        if later.size:  # a reservation no arrival or end may reach (after a job overran its requested time)
            view.wake_at(float(later.min()))
        return out

    def _plan_numpy(self, q: np.ndarray, now: float, free: int, ends: np.ndarray, rp: np.ndarray,
                    early: bool) -> None:
        """The planning on :class:`Profile` in numpy: hold every reserved job at ``max(reservation,
        now)``, compress when ``early`` or a reservation passed by, reserve the new jobs."""
        res = self.reserved
        r = res[q]
        has = ~np.isnan(r)
        held, new = q[has], q[~has]
        old = r[has]
        res_t = np.maximum(old, now)
        hd, hk = self.requested[held], self.procs[held]
        prof = Profile(now, free, ends, rp, (res_t, hd, hk))
        stale = bool(np.any(res_t > old))  # a reservation passed by (a job overran its requested time)
        hs, ns = plan_numpy(prof, (res_t, hd, hk), (self.requested[new], self.procs[new]), early or stale)
        if early or stale:  # compression, in submit order: each job at its earliest slot, never later
            res[held] = hs
        res[new] = ns
