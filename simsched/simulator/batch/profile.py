"""The availability profile: free processors over future time, in which backfilling policies find
and reserve slots (:class:`Profile`)."""

from __future__ import annotations

import numpy as np

from simsched.simulator.batch.policy import BatchEngineError


class Profile:
    """Free processors over future time, a step function from ``now``: ``free[i]`` processors are
    free during ``[times[i], times[i+1])`` (the last step lasts for ever).  Backfilling policies
    find the earliest slot for a job and reserve it here.  Every operation is O(steps) in numpy."""

    def __init__(self, now: float, free_now: int, ends: np.ndarray, procs: np.ndarray,
                 held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """The profile at ``now`` with ``free_now`` idle processors, running jobs releasing
        ``procs`` at ``ends`` (each ``>= now``) and reservations ``held = (starts, durations,
        procs)`` (starts ``>= now``; zero durations take nothing).  O(k log k) for k events."""
        at, delta = [np.asarray([now], dtype=np.float64), np.asarray(ends, dtype=np.float64)], [
            np.asarray([free_now], dtype=np.int64), np.asarray(procs, dtype=np.int64)]
        if held is not None:
            s, d, k = (np.asarray(x) for x in held)
            on = d > 0
            at += [s[on], s[on] + d[on]]
            delta += [-k[on].astype(np.int64), k[on].astype(np.int64)]
        times, where = np.unique(np.concatenate(at), return_inverse=True)
        gain = np.zeros(times.size, dtype=np.int64)
        np.add.at(gain, where, np.concatenate(delta))
        self.times = times.astype(np.float64)
        self.free = np.cumsum(gain)

    def earliest(self, k: int, d: float, after: float | None = None) -> float:
        """The earliest time ``>= after`` (default: the profile's start) at which ``k`` processors
        stay free for ``d`` seconds.  ``k`` must not exceed the last step's free processors."""
        t, f = self.times, self.free
        lo = 0 if after is None else max(int(np.searchsorted(t, after, side="right")) - 1, 0)
        ok = f[lo:] >= k
        bad = np.flatnonzero(~ok)
        starts = t[lo:].copy()
        if after is not None:
            starts[0] = max(starts[0], after)
        if bad.size == 0:
            return float(starts[0])
        nxt = np.searchsorted(bad, np.arange(ok.size), side="left")  # first bad index >= i
        next_bad_time = np.where(nxt < bad.size, t[lo:][bad[np.minimum(nxt, bad.size - 1)]], np.inf)
        fits = ok & (next_bad_time >= starts + d)
        i = int(np.argmax(fits))
        if not fits[i]:
            raise BatchEngineError(f"no slot for {k} processors in the profile (largest: {int(f[-1])})")
        return float(starts[i])

    def _split(self, x: float) -> int:
        i = int(np.searchsorted(self.times, x, side="left"))
        if i < self.times.size and self.times[i] == x:
            return i
        self.times = np.insert(self.times, i, x)
        self.free = np.insert(self.free, i, self.free[i - 1] if i > 0 else self.free[0])
        return i

    def add(self, s: float, d: float, k: int) -> None:
        """Take ``k`` processors during ``[s, s + d)`` (``k < 0`` gives them back).  Zero ``d`` takes nothing."""
        if d <= 0:
            return
        a = self._split(s)
        b = self._split(s + d)
        self.free[a:b] -= k
