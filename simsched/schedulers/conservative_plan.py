"""The planning step of conservative backfilling behind
:class:`~simsched.schedulers.batch_conservative.ConservativeBackfill` (Mu'alem & Feitelson, IEEE TPDS
12(6), 2001), in plain Python over numpy arrays: run as it is for small logs, and compiled by numba
from this very source for large ones (:mod:`simsched.schedulers.conservative_kernel`), so the two
give the same reservations by construction.  The policy plans here the decision points where a
zero-length job waits, a reservation passed by or a processor is promised twice; the others on the
profile kept from the last one (:mod:`simsched.schedulers.conservative_incremental`, tested against
this planning).

**Time within an instant.**  At one instant the engine ends jobs first, then starts the due jobs in
queue order, and a zero-length job ends the moment it starts.  So the profile is a step function of
*keys* ``(time, rank)`` compared lexicographically: rank ``0`` holds the instant's ends (and the
profile's start); a job starts at ``(s, j)`` with ``j`` its *rank in the instant* (:func:`instant_ranks`:
``4c`` for a job that lasts, ``4c + 1`` for a zero-length one, ``c`` the zero-length jobs before it
in the queue); a job that lasts ends at ``(s + d, 0)`` and a zero-length job at ``(s, j + 1)`` — it
holds its processors for its instant, after the jobs before it in the queue that start then and
before those after it.  (Jobs that last between two zero-length ones share a rank: their order
within an instant changes nothing, and the profile keeps one step per time where the log has no
zero-length job, as the time-only profile did.)  A job that lasts
covers the instants of the zero-length jobs behind it that start with it or while it runs, so no
later job can take a zero-length job's processors at its reservation (they did before: a zero-length
reservation held nothing, and a later job running across it made it start late).  For logs without
zero-length jobs the reservations are the time-only profile's, float for float: a lasting job
covers every key of its start instant from its own on, whose least free count is the instant's last.

The profile is four arrays (times, ranks, free processors from each key on, and how many jobs start
or end at each key) with room for the breakpoints this decision can add (two per take or give-back).
``earliest`` tries the profile's start and the times at which some job starts or ends, in order, and
returns the first at which the keys the job would cover all have enough free processors: O(steps
before the slot).  ``add`` takes or gives back processors over a
job's keys: a binary search for each end, a shift of the arrays' tails to insert a missing
breakpoint, and a loop over the steps inside: O(steps).
"""

from __future__ import annotations

import numpy as np

ENDS = 0
"""The rank of an instant's ends (and of the profile's start): that of the jobs that last and start
before any zero-length one (see :func:`instant_ranks`), so where the log has no zero-length job each
time is one step, as in the time-only profile (a job that lasts starts after the ends of its instant
either way, and one that ends there frees its processors for the jobs that start there)."""


def _split(t, r, f, c, size, x, rx):
    """Index of key ``(x, rx)`` in the profile, inserting it (free as the step it cuts, no job's
    boundary yet) if missing; returns ``(index, new size)``.  O(log size + the shift)."""
    lo, hi = 0, size
    while lo < hi:  # bisect left on (time, rank)
        mid = (lo + hi) // 2
        if t[mid] < x or (t[mid] == x and r[mid] < rx):
            lo = mid + 1
        else:
            hi = mid
    i = lo
    if i < size and t[i] == x and r[i] == rx:
        return i, size
    v = f[i - 1] if i > 0 else f[0]
    for p in range(size, i, -1):
        t[p] = t[p - 1]
        r[p] = r[p - 1]
        f[p] = f[p - 1]
        c[p] = c[p - 1]
    t[i] = x
    r[i] = rx
    f[i] = v
    c[i] = 0
    return i, size + 1


def _add(t, r, f, c, size, s, d, k, j, count):
    """Take ``k`` processors (``k < 0`` gives them back) over the keys of the job of instant rank
    ``j`` starting at ``s`` for ``d`` (``[(s, j), (s + d, 0))``, or its instant ``[(s, j), (s,
    j + 1))`` when ``d == 0``; a negative ``d`` takes nothing), adding ``count`` to the number of
    boundaries at its two keys; returns the new size.  O(size)."""
    if d < 0:
        return size
    a, size = _split(t, r, f, c, size, s, j)
    if d > 0:
        b, size = _split(t, r, f, c, size, s + d, ENDS)
    else:
        b, size = _split(t, r, f, c, size, s, j + 1)
    if k != 0:
        for i in range(a, b):
            f[i] -= k
    c[a] += count
    c[b] += count
    return size


def _earliest(t, r, f, c, size, k, d, j):
    """The earliest time at which the job of instant rank ``j`` (``k`` processors for ``d``) fits,
    among the profile's start and the times some job (running or holding a reservation, or the job
    itself while it is compressed) starts or ends — keys left behind by a job taken out are not
    tried, so the answer does not depend on the order of earlier operations: every key it would
    cover (the step holding ``(T, j)``, then every step before ``(T + d, 0)`` when it lasts) has
    at least ``k`` free.  When none does (possible only after a job overran its requested time),
    the float after the last such time.  NaN when ``k`` is above the last step's free.
    O(steps before the slot)."""
    g = 0
    while g < size:
        T = t[g]
        if f[g] < k and r[g] <= j and (g + 1 == size or t[g + 1] != T):
            g += 1  # a time of one step, short of processors: the common case, skipped at once
            continue
        h = g
        live = g == 0
        while h < size and t[h] == T:  # the keys at time T: [g, h)
            if c[h] > 0:
                live = True
            h += 1
        if not live:
            g = h
            continue
        a = g - 1  # the step holding (T, j): the last key at time T ranked at most j, else the one before
        while a + 1 < h and r[a + 1] <= j:
            a += 1
        if a < 0:
            a = 0
        bad = -1
        i = a
        while i < size and (i == a or (d > 0 and t[i] < T + d)):
            if f[i] < k:
                bad = i
                break
            i += 1
        if bad < 0:
            return T
        # every time after T and before the bad step's covers it too: go on from that step's time
        # (when it is later than T), else from the next time after T
        if t[bad] > T:
            g = bad
            while t[g - 1] == t[bad]:  # back to the first step of the bad step's time (g > h here)
                g -= 1
        else:
            g = h
    if k > f[size - 1]:
        return np.nan
    # none fits: only when a job overran and the reservations it passed by pile up at the last
    # time of the profile, whose later zero-length jobs this job would run across; the first time
    # after every boundary (all is free then)
    last = t[0]
    for i in range(size):
        if c[i] > 0:
            last = t[i]
    return np.nextafter(last, np.inf)


def _earliest_runs(t, f, size, k, d):
    """:func:`_earliest` when no zero-length job waits (every rank is 0, each time one step): the
    first run of steps with at least ``k`` free that lasts ``d`` — the same time (a time left behind
    by a job taken out has the free count of the step before it, so the first fit is never one), in
    one pass over the steps before the slot.  NaN when none."""
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


def _build(now, free_now, ends, rp, hs, hd, hk, hj, room, points):
    """The profile at ``now``: ``free_now`` idle processors, running jobs releasing ``rp`` at ``ends``
    (each ``>= now``), held jobs (instant ranks ``hj``) taking ``hk`` at ``hs`` for ``hd``; a key
    for every event, its free processors the running sum of the gains, its count of events in ``c``.
    Arrays ``(t, r, f, c)`` with ``room`` more slots than keys; ``points``: some rank is not 0 (a
    zero-length job waits), else one sort by time.  O(e log e) for e events."""
    e = 1 + ends.size
    for i in range(hd.size):
        if hd[i] >= 0:
            e += 2
    at = np.empty(e, dtype=np.float64)
    rank = np.empty(e, dtype=np.int64)
    gain = np.empty(e, dtype=np.int64)
    at[0] = now
    rank[0] = ENDS
    gain[0] = free_now
    p = 1
    for i in range(ends.size):
        at[p] = ends[i]
        rank[p] = ENDS
        gain[p] = rp[i]
        p += 1
    for i in range(hd.size):
        if hd[i] >= 0:
            at[p] = hs[i]
            rank[p] = hj[i]
            gain[p] = -hk[i]
            if hd[i] > 0:
                at[p + 1] = hs[i] + hd[i]
                rank[p + 1] = ENDS
            else:
                at[p + 1] = hs[i]
                rank[p + 1] = hj[i] + 1
            gain[p + 1] = hk[i]
            p += 2
    if points:
        by_rank = np.argsort(rank, kind="mergesort")
        order = by_rank[np.argsort(at[by_rank], kind="mergesort")]  # by time, then rank
    else:
        order = np.argsort(at, kind="mergesort")
    t = np.empty(e + room, dtype=np.float64)
    r = np.empty(e + room, dtype=np.int64)
    f = np.empty(e + room, dtype=np.int64)
    c = np.empty(e + room, dtype=np.int64)
    size = 0
    run = 0
    for i in range(e):
        x, rx = at[order[i]], rank[order[i]]
        run += gain[order[i]]
        if size and t[size - 1] == x and r[size - 1] == rx:
            f[size - 1] = run
            c[size - 1] += 1
        else:
            t[size] = x
            r[size] = rx
            f[size] = run
            c[size] = 1
            size += 1
    return t, r, f, c, size


def _replan(t, r, f, c, size, hs, hd, hk, hj, nd, nk, nj, compress, points):
    """Compression (when ``compress``: each held job in queue order taken out and put back at its
    earliest slot, never later than the one it had) then each new job's reservation; returns
    ``(held starts, new starts, k)``, ``k`` the width of a job that found no slot (-1: none).
    ``points``: some zero-length job waits (else the one-pass search, :func:`_earliest_runs`)."""
    hs = hs.copy()
    ns = np.empty(nd.size, dtype=np.float64)
    if compress:
        for i in range(hs.size):  # the old slot stays a time to try (its boundaries counted) until re-placed
            d, k, j = hd[i], hk[i], hj[i]
            size = _add(t, r, f, c, size, hs[i], d, -k, j, 0)
            s = _earliest(t, r, f, c, size, k, d, j) if points else _earliest_runs(t, f, size, k, d)
            if np.isnan(s):
                return hs, ns, k
            size = _add(t, r, f, c, size, s, d, k, j, 1)
            if points:  # the boundaries count only for the search with zero-length jobs
                size = _add(t, r, f, c, size, hs[i], d, 0, j, -1)
            hs[i] = s
    for i in range(ns.size):
        d, k, j = nd[i], nk[i], nj[i]
        s = _earliest(t, r, f, c, size, k, d, j) if points else _earliest_runs(t, f, size, k, d)
        if np.isnan(s):
            return hs, ns, k
        size = _add(t, r, f, c, size, s, d, k, j, 1)
        ns[i] = s
    return hs, ns, -1


def instant_ranks(q, req):
    """Each waiting job's rank in an instant (queue ``q`` in order, requested times ``req``): ``4c``
    for a job that lasts, ``4c + 1`` for a zero-length one (its instant ends at ``4c + 2``), ``c`` the
    zero-length jobs before it in the queue.  O(q)."""
    out = np.empty(q.size, dtype=np.int64)
    c = 0
    for i in range(q.size):
        if req[q[i]] == 0:
            out[i] = 4 * c + 1
            c += 1
        else:
            out[i] = 4 * c
    return out


def build_profile(now, free_now, ends, rp, hs, hd, hk, hj):
    """``(times, ranks, free)`` of the profile :func:`_build` makes (for the tests)."""
    t, r, f, _c, size = _build(now, free_now, ends, rp, hs, hd, hk, hj, 0, True)
    return t[:size].copy(), r[:size].copy(), f[:size].copy()


def plan_queue(q, res, req, procs, now, free_now, ends, rp, early):
    """A whole decision point's planning: the waiting jobs ``q`` (queue order) with a reservation in
    ``res`` (NaN: none yet) are held at ``max(res, now)`` in the profile built with the running jobs
    (``ends``, ``rp``); when ``early`` (capacity came back before it was expected) or a reservation
    has passed by, the held ones are compressed; every new one is reserved.  ``res`` is updated in
    place; returns the width of a job that found no slot, -1 when every one did.
    O((q + r) log(q + r)) to build, then O((h + a) x steps) for h held and a new jobs."""
    nh = 0
    for i in range(q.size):
        if not np.isnan(res[q[i]]):
            nh += 1
    held = np.empty(nh, dtype=np.int64)
    hj = np.empty(nh, dtype=np.int64)
    new = np.empty(q.size - nh, dtype=np.int64)
    nj = np.empty(q.size - nh, dtype=np.int64)
    ranks = instant_ranks(q, req)
    a = b = 0
    for i in range(q.size):
        j = q[i]
        if np.isnan(res[j]):
            new[b] = j
            nj[b] = ranks[i]
            b += 1
        else:
            held[a] = j
            hj[a] = ranks[i]
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
    points = False
    for i in range(q.size):
        if req[q[i]] == 0:
            points = True
    t, r, f, c, size = _build(now, free_now, ends, rp, hs, hd, hk, hj, 4 * q.size + 4, points)
    compress = early or stale
    hs2, ns, k = _replan(t, r, f, c, size, hs, hd, hk, hj, req[new], procs[new], nj, compress, points)
    if k >= 0:
        return k
    if compress:
        for i in range(nh):
            res[held[i]] = hs2[i]
    for i in range(new.size):
        res[new[i]] = ns[i]
    return -1
