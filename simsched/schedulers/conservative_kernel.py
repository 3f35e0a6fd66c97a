"""The compiled planning step of conservative backfilling behind
:class:`~simsched.schedulers.batch_conservative.ConservativeBackfill` (Mu'alem & Feitelson, IEEE TPDS
12(6), 2001).

Imported only when numba is installed (extra ``simsched[fast]``) and a log is large (loading numba
costs ~0.2-0.5 s of CPU, once per process); numba caches the machine code next to this file, so only
the first run on a machine pays the compilation (a few seconds).  It mirrors
:class:`~simsched.simulator.batch.Profile` (``earliest``, ``add``, ``_split``) operation for
operation, on the same float64 times and int64 free counts, so every reservation is bit-identical to
the numpy path's (a property test holds them equal on random and shipped logs).

The profile is two sorted arrays (step start times, free processors from each) with room for the
breakpoints this decision can add (at most two per take or give-back).  ``earliest`` walks the runs of steps with
enough free processors from the profile's start and returns the first run that lasts the job's
requested time: O(steps before the slot).  ``add`` takes or gives back processors over an interval:
a binary search for each end, a shift of the arrays' tails to insert a missing breakpoint, and a
loop over the steps inside: O(steps).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _split(t, f, size, x):  # pragma: no cover - compiled
    """Index of breakpoint ``x`` in ``t[:size]``, inserting it (free as the step it cuts) if missing;
    returns ``(index, new size)``.  As :meth:`Profile._split`."""
    lo, hi = 0, size
    while lo < hi:  # bisect left
        mid = (lo + hi) // 2
        if t[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    i = lo
    if i < size and t[i] == x:
        return i, size
    v = f[i - 1] if i > 0 else f[0]
    for p in range(size, i, -1):
        t[p] = t[p - 1]
        f[p] = f[p - 1]
    t[i] = x
    f[i] = v
    return i, size + 1


@numba.njit(cache=True)
def _add(t, f, size, s, d, k):  # pragma: no cover - compiled
    """Take ``k`` processors during ``[s, s + d)`` (``k < 0`` gives them back; ``d <= 0`` takes
    nothing); returns the new size.  As :meth:`Profile.add`."""
    if d <= 0:
        return size
    a, size = _split(t, f, size, s)
    b, size = _split(t, f, size, s + d)
    for i in range(a, b):
        f[i] -= k
    return size


@numba.njit(cache=True)
def _earliest(t, f, size, k, d):  # pragma: no cover - compiled
    """The earliest step start from the profile's start at which ``k`` processors stay free for
    ``d`` seconds, NaN when none (``k`` above the last step's free).  As :meth:`Profile.earliest`
    with ``after`` the profile's start: the first run of steps with ``free >= k`` whose next short
    step starts at or after the run's start plus ``d``."""
    i = 0
    while i < size:
        if f[i] >= k:
            b = i
            while i < size and f[i] >= k:
                i += 1
            if i == size or t[i] >= t[b] + d:
                return t[b]
        else:
            i += 1
    return np.nan


@numba.njit(cache=True)
def _build(now, free_now, ends, rp, hs, hd, hk, room):  # pragma: no cover - compiled
    """The profile at ``now`` as :class:`Profile`'s constructor makes it: a step at every distinct
    event time (now, each running job's end, each held reservation's start and end when it lasts),
    its free processors the running sum of the gains.  Arrays of ``room`` more slots than steps.
    O(e log e) for e events."""
    e = 1 + ends.size
    for i in range(hd.size):
        if hd[i] > 0:
            e += 2
    at = np.empty(e, dtype=np.float64)
    gain = np.empty(e, dtype=np.int64)
    at[0] = now
    gain[0] = free_now
    p = 1
    for i in range(ends.size):
        at[p] = ends[i]
        gain[p] = rp[i]
        p += 1
    for i in range(hd.size):
        if hd[i] > 0:
            at[p] = hs[i]
            gain[p] = -hk[i]
            at[p + 1] = hs[i] + hd[i]
            gain[p + 1] = hk[i]
            p += 2
    order = np.argsort(at, kind="mergesort")
    t = np.empty(e + room, dtype=np.float64)
    f = np.empty(e + room, dtype=np.int64)
    size = 0
    run = 0
    for i in range(e):
        x = at[order[i]]
        run += gain[order[i]]
        if size and t[size - 1] == x:
            f[size - 1] = run
        else:
            t[size] = x
            f[size] = run
            size += 1
    return t, f, size


@numba.njit(cache=True)
def _replan(t, f, size, hs, hd, hk, nd, nk, compress):  # pragma: no cover - compiled
    """Compression (when ``compress``) then the arrivals' reservations on the profile ``t, f``
    (see :func:`plan`); returns ``(held starts, new starts, k)``."""
    hs = hs.copy()
    ns = np.empty(nd.size, dtype=np.float64)
    if compress:
        for j in range(hs.size):
            d, k = hd[j], hk[j]
            size = _add(t, f, size, hs[j], d, -k)
            s = _earliest(t, f, size, k, d)
            if np.isnan(s):
                return hs, ns, k
            size = _add(t, f, size, s, d, k)
            hs[j] = s
    for j in range(ns.size):
        d, k = nd[j], nk[j]
        s = _earliest(t, f, size, k, d)
        if np.isnan(s):
            return hs, ns, k
        size = _add(t, f, size, s, d, k)
        ns[j] = s
    return hs, ns, -1


@numba.njit(cache=True)
def plan(times, free, held_start, held_d, held_k, new_d, new_k, compress):  # pragma: no cover - compiled
    """One decision point's planning on the profile ``(times, free)`` (which holds the running jobs
    and every held reservation): when ``compress``, each held job in turn (queue order) is taken out
    and put back at its earliest slot; then each new job (queue order) is reserved at its earliest
    slot.  Returns ``(held starts, new starts, k)``: ``k`` is the width of a job that found no slot
    (-1 when every one did).  O((h + a) x steps) for h held and a new jobs, in compiled code."""
    room = 4 * (held_start.size + new_d.size) + 4  # at most two breakpoints per take or give-back
    t = np.empty(times.size + room, dtype=np.float64)
    f = np.empty(times.size + room, dtype=np.int64)
    t[:times.size] = times
    f[:times.size] = free
    return _replan(t, f, times.size, held_start, held_d, held_k, new_d, new_k, compress)


@numba.njit(cache=True)
def build_profile(now, free_now, ends, rp, hs, hd, hk):  # pragma: no cover - compiled
    """``(times, free)`` of the profile :func:`_build` makes (for the tests)."""
    t, f, size = _build(now, free_now, ends, rp, hs, hd, hk, 0)
    return t[:size].copy(), f[:size].copy()


@numba.njit(cache=True)
def plan_queue(q, res, req, procs, now, free_now, ends, rp, early):  # pragma: no cover - compiled
    """A whole decision point's planning: the waiting jobs ``q`` (queue order) with a reservation in
    ``res`` (NaN: none yet) are held at ``max(res, now)`` in the profile built with the running jobs
    (``ends``, ``rp``); when ``early`` (capacity came back before it was expected) or a reservation
    has passed by, the held ones are compressed; every new one is reserved.  ``res`` is updated in
    place; returns the width of a job that found no slot, -1 when every one did.  As
    :class:`ConservativeBackfill`'s numpy path.  O((q + r) log(q + r)) to build, then
    O((h + a) x steps)."""
    nh = 0
    for i in range(q.size):
        if not np.isnan(res[q[i]]):
            nh += 1
    held = np.empty(nh, dtype=np.int64)
    new = np.empty(q.size - nh, dtype=np.int64)
    a = b = 0
    for i in range(q.size):
        j = q[i]
        if np.isnan(res[j]):
            new[b] = j
            b += 1
        else:
            held[a] = j
            a += 1
    hs = np.empty(nh, dtype=np.float64)
    stale = False
    for i in range(nh):
        old = res[held[i]]
        hs[i] = max(old, now)
        if hs[i] > old:
            stale = True
    hd = req[held]
    hk = procs[held]
    t, f, size = _build(now, free_now, ends, rp, hs, hd, hk, 4 * q.size + 4)
    compress = early or stale
    hs2, ns, k = _replan(t, f, size, hs, hd, hk, req[new], procs[new], compress)
    if k >= 0:
        return k
    if compress:
        for i in range(nh):
            res[held[i]] = hs2[i]
    for i in range(new.size):
        res[new[i]] = ns[i]
    return -1
