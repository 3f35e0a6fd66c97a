"""Conservative backfilling (Mu'alem & Feitelson, "Utilization, predictability, workloads, and user
runtime estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001).

Every waiting job holds a reservation in the availability profile, made when it arrives at the
earliest time its processors are free for its requested time given the running jobs and every
earlier reservation; a job starts when its reservation comes.  When jobs end (possibly earlier than
requested), the reservations are *compressed* in submit order (only when capacity came free earlier
than expected, or a job overran its requested time): each is taken out and put back at the earliest
slot, which is never later than the one it had (its old slot is still free), so no reservation is
ever delayed when requested times are upper bounds of the run times (or jobs are killed at them).
Due jobs start in submit order; one that cannot start at its reservation (behind a zero-length job
that takes its processors for an instant, or a job overrunning its requested time) keeps its
processors from the due jobs behind it, zero-length ones included.

**Zero-length jobs** hold their processors for the instant of their reservation, after the jobs
before them in the queue that start then and before those after them (the engine starts due jobs in
queue order, and a zero-length job ends the moment it starts): no later job may run across that
instant on its processors, so a zero-length job starts at its reservation like any other.  (They
once held nothing, and a later job running across the instant made them start late.)  The profile
therefore orders time within an instant: see :mod:`simsched.schedulers.conservative_plan`.

**The profile** is kept from one decision point to the next and updated by what changed (running
jobs ended or started, reservations of the jobs that left the queue), O(n + c log c) for ``n`` steps
and ``c`` changes; then the *planning* — compression, then a reservation for each arrival — runs on
it (:func:`~simsched.schedulers.conservative_incremental.plan_step`).  Compression finds where each
held job would go without taking it out (a scan of the steps before its slot): only the jobs that
move are updated (two interval updates, O(log n + shift + steps inside)); an arrival is an
earliest-fit search (O(steps before the slot)) and an update.  Decision points where a zero-length
job waits, a reservation passed by, or a processor is promised twice (failures) rebuild the profile
from every running job and reservation and take each held job out and back
(:func:`~simsched.schedulers.conservative_plan.plan_queue`).  The planning is plain Python over numpy
arrays; for logs of at least :data:`COMPILED_MIN_JOBS` jobs, when numba is installed (extra
``simsched[fast]``), the same source runs compiled (:mod:`simsched.schedulers.conservative_kernel`), so
the two give the same reservations.  Per decision point O(q x n) with an early end (compression),
O(n + c log c + a x n) for ``a`` arrivals otherwise, for ``q`` waiting jobs.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.batch import BatchEngineError, BatchView
from simsched.workloads.importers.swf import RigidTrace

COMPILED_MIN_JOBS = 1_000
"""Logs of at least this many jobs plan in compiled code when numba is installed: below it the plain
Python planning costs less than loading numba (~0.2-0.5 s of CPU, once per process)."""


class ConservativeBackfill:
    """Conservative backfilling: every waiting job holds a reservation none may delay (Mu'alem &
    Feitelson 2001)."""

    name = "conservative-backfill"
    compiled: bool | None = None
    """Plan in compiled code (``True``, needs numba), in plain Python (``False``), or by the log's size when
    numba is installed (``None``); set on an instance before its run (the tests hold the two equal)."""

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = np.ascontiguousarray(trace.procs, dtype=np.int64)  # one compiled signature
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
        # the last decision point's final profile (row ``cur`` of times, frees: [lo, hi), lo < 0: none) and
        # what it was built from; the reservations it gave (given); the jobs to start (out)
        self._times, self._frees = np.empty((2, 64)), np.empty((2, 64), dtype=np.int64)
        self._given, self._out = np.empty(64), np.empty(64, dtype=np.int64)
        self._last = (0, -1, 0, 0, np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))

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
            from simsched.schedulers.conservative_kernel import plan_step
        else:
            from simsched.schedulers.conservative_incremental import plan_step
        cur, lo, hi, free, pends, prp, pq = self._last
        if q.size > self._given.size:  # room for the reservations (the last ones kept) and the jobs to start
            self._given = np.concatenate([self._given, np.empty(q.size)])
            self._out = np.empty(self._given.size, dtype=np.int64)
        need = hi - lo + ends.size + pends.size + 2 * pq.size + 6 * q.size + 5
        if need > self._times.shape[1]:
            times, frees = np.empty((2, 2 * need)), np.empty((2, 2 * need), dtype=np.int64)
            times[:, :self._times.shape[1]], frees[:, :self._frees.shape[1]] = self._times, self._frees
            self._times, self._frees = times, frees
        now, free_now = float(now), int(view.free)
        k, lo, hi, started, wake = plan_step(q, res, self.requested, self.procs, now, free_now, ends, rp, early,
                                             self._times, self._frees, cur, lo, hi, free, pends, prp, pq,
                                             self._given, self._out)
        if k >= 0:
            raise BatchEngineError(f"no slot for {k} processors in the profile")
        self._last = (1 - cur, lo, hi, free_now, ends, rp, q)
        if wake > now:  # a reservation no arrival or end may reach (after a job overran its requested time)
            view.wake_at(wake)
        return self._out[:started].tolist()
