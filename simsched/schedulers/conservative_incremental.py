"""The common decision point of conservative backfilling, planned on a profile kept from the last one:
no waiting job is zero-length, no reservation has passed by, no processor is promised twice.  Plain
Python over numpy arrays, compiled by numba from this very source for large logs
(:mod:`simsched.schedulers.conservative_kernel`), like :mod:`~simsched.schedulers.conservative_plan`,
whose :func:`~simsched.schedulers.conservative_plan.plan_queue` plans every other decision point (and
is what this module is tested against, reservation for reservation).

**The profile** is a step function of time alone (no zero-length job waits, so every instant is one
step): two arrays, times ``t`` and free processors ``f`` from each time on, filling ``[lo, hi)`` of
arrays with room on both sides, without redundant keys (two steps with the same free count are one).
:func:`plan_step` does not rebuild it from every running job and reservation (a sort, O(e log e)):
it *updates* the last decision point's final profile by what changed since — the running jobs' ends
(the last call's taken out, this one's put in), the idle processors, the reservations of the jobs
that left the queue — in one merge, O(n + c log c) for ``c`` changes.  A key is inserted by shifting
the shorter side of the arrays, O(log n + min(i - lo, hi - i)).

**Why the update is the rebuild.**  From ``now`` on, a profile is the idle processors, plus those of
each running job from its (estimated) end, minus those of each reservation over its slot.  The first
two terms are given whole at every call, so the merge adds this call's and takes out the last one's;
a reservation changes between two calls only by leaving (its job started, or went back to the queue
without one), its slot then given back (a job that started holds the same processors until the same
end as a running job: the two cancel).  Every job held now must have been held then at the same
time, checked job by job; else the profile is built from scratch by the same merge.

**Compression without taking jobs out.**  With every free count ``>= 0`` and each held job of width
``k`` and length ``d > 0`` at ``s``, taking it out and putting it back at its earliest slot (the
definition) gives: the start of the first run of steps with at least ``k`` free that lasts ``d`` or
reaches ``s``, found in the profile *with* the job, else ``s`` (:func:`_fit`).  Proof: before ``s``
the profile with and without the job are the same; after it the job's own ``k`` processors come back
over ``[s, s + d)``, so without the job the run that reaches ``s`` goes on to ``s + d`` at least (a
fit, float addition being monotone: ``T < s`` gives ``T + d <= s + d``), a run ending before ``s``
fits or not in both, and with no such run the job's own slot (free ``>= 0`` plus its ``k``) is the
first fit.  So a job that does not move (most) costs a scan of the steps before its slot and no
update; one that moves, two interval updates.  The run scans (and what they return) depend only on
the step function, so the keys that a full build would keep and this profile drops change nothing.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.conservative_plan import plan_queue


def _insert(t, f, lo, hi, x):
    """Index of time ``x`` (``> t[lo]``, or present) in the profile ``[lo, hi)``, inserted (free as
    the step it cuts) if missing by shifting the shorter side that has room; ``(index, lo, hi)``.
    O(log n + min(i - lo, hi - i))."""
    i = lo + np.searchsorted(t[lo:hi], x)
    if i < hi and t[i] == x:
        return i, lo, hi
    v = f[i - 1]
    if lo > 0 and (i - lo <= hi - i or hi == t.size):
        for p in range(lo - 1, i - 1):
            t[p] = t[p + 1]
            f[p] = f[p + 1]
        lo -= 1
        i -= 1
    else:
        for p in range(hi, i, -1):
            t[p] = t[p - 1]
            f[p] = f[p - 1]
        hi += 1
    t[i] = x
    f[i] = v
    return i, lo, hi


def _take(t, f, lo, hi, s, d, k):
    """Take ``k`` processors (``k < 0`` gives them back) over ``[s, s + d)``, ``d > 0``, ``s >=
    t[lo]``; returns ``(lo, hi)``.  O(log n + shift + steps inside)."""
    a, lo, hi = _insert(t, f, lo, hi, s)
    lo0 = lo
    b, lo, hi = _insert(t, f, lo, hi, s + d)
    if lo < lo0:  # the head moved left by one, ``a`` with it (``a < b``)
        a -= 1
    for i in range(a, b):
        f[i] -= k
    return lo, hi


def _fit(t, f, lo, hi, k, d, s):
    """The first run of steps with at least ``k`` free that lasts ``d`` or reaches ``s``: its start;
    ``s`` when none starts before ``s`` (``s`` NaN: the earliest fit of a new job, NaN when none,
    only if the last step has fewer than ``k`` free).  For a held job at ``s`` with every free count
    ``>= 0``: where taking it out and putting it back would put it (module docstring).
    O(steps before the result)."""
    i = lo
    while i < hi:
        if t[i] >= s:
            return s
        if f[i] >= k:
            b = i
            while i < hi and f[i] >= k:
                i += 1
            if i == hi or t[i] >= s or t[i] >= t[b] + d:
                return t[b]
        else:
            i += 1
    return s


def _merge(t0, f0, lo0, hi0, now, et, eg, base, t, f, room):
    """The profile from ``now`` on: the step function ``(t0, f0)[lo0:hi0]`` (zero when empty) plus
    ``base`` plus a step of ``eg[i]`` at each ``et[i]`` (any order; those at or before ``now`` count
    from ``now``), without redundant keys, written into ``(t, f)`` (other arrays, of at least
    ``hi0 - lo0 + et.size + 1 + 2 room``) from index ``room`` on; ``(lo, hi)``.  O(n + c log c) for
    ``c`` steps added.  Raises ValueError on a NaN time (a bug: it would never be passed)."""
    for e in range(et.size):
        if np.isnan(et[e]):
            raise ValueError("a NaN time in the profile")
    order = np.argsort(et, kind="mergesort")
    old = 0
    i = lo0
    while i < hi0 and t0[i] <= now:
        old = f0[i]
        i += 1
    acc = base
    e = 0
    while e < et.size and et[order[e]] <= now:
        acc += eg[order[e]]
        e += 1
    lo = hi = room
    t[hi] = now
    f[hi] = old + acc
    hi += 1
    while i < hi0 or e < et.size:
        x = t0[i] if i < hi0 else np.inf
        if e < et.size and et[order[e]] < x:
            x = et[order[e]]
        while i < hi0 and t0[i] == x:
            old = f0[i]
            i += 1
        while e < et.size and et[order[e]] == x:
            acc += eg[order[e]]
            e += 1
        if old + acc != f[hi - 1]:
            t[hi] = x
            f[hi] = old + acc
            hi += 1
    return lo, hi


def _put(et, eg, p, times, gains, sign):
    """Steps of ``sign * gains`` at ``times`` written into ``et``, ``eg`` from index ``p``; returns the
    next index.  O(len)."""
    for i in range(times.size):
        et[p] = times[i]
        eg[p] = sign * gains[i]
        p += 1
    return p


def _slot(et, eg, p, s, d, k):
    """A slot of ``k`` processors taken over ``[s, s + d)`` (``k < 0``: given back) as two steps
    written into ``et``, ``eg`` at ``p``; returns ``p + 2``."""
    et[p] = s
    eg[p] = -k
    et[p + 1] = s + d
    eg[p + 1] = k
    return p + 2


def _changes(q, res, req, procs, ends, rp, pends, prp, prev_q, prev_s):
    """The steps that turn the last decision point's final profile into this one's: this call's
    running ends put in, the last call's taken out, the reservation of every job held then and not
    now given back (``prev_q``, ``prev_s``: the queue then, in order, and its reservations);
    ``(times, gains, ok)``, ``ok`` false when the jobs held now are not those held then at the same
    times (the profile is then built from scratch).  O(q + r)."""
    et = np.empty(ends.size + pends.size + 2 * prev_q.size, dtype=np.float64)
    eg = np.empty(et.size, dtype=np.int64)
    p = _put(et, eg, 0, ends, rp, 1)
    p = _put(et, eg, p, pends, prp, -1)
    c = 0  # the next job held now, in queue order
    for a in range(prev_q.size):
        j = prev_q[a]
        while c < q.size and np.isnan(res[q[c]]):
            c += 1
        if c < q.size and q[c] == j:  # still held: at the same time
            if prev_s[a] != res[j]:
                return et[:0], eg[:0], False
            c += 1
        elif np.isnan(prev_s[a]):
            return et[:0], eg[:0], False
        else:  # gone: its slot given back
            p = _slot(et, eg, p, prev_s[a], req[j], -procs[j])
    while c < q.size and np.isnan(res[q[c]]):
        c += 1
    return et[:p], eg[:p], c == q.size  # (a job held now and not then: none)


def _from_scratch(q, res, req, procs, ends, rp):
    """The steps of a whole profile: running ends, and each held reservation taken.  O(q + r)."""
    n = ends.size
    for i in range(q.size):
        if not np.isnan(res[q[i]]):
            n += 2
    et = np.empty(n, dtype=np.float64)
    eg = np.empty(n, dtype=np.int64)
    p = _put(et, eg, 0, ends, rp, 1)
    for i in range(q.size):
        j = q[i]
        if not np.isnan(res[j]):
            p = _slot(et, eg, p, res[j], req[j], procs[j])
    return et, eg


def _place(q, res, req, procs, early, t, f, lo, hi, starts):
    """Compression (when ``early``) then each new job's reservation on the profile ``(t, f)[lo:hi]``
    (every free count ``>= 0``, every waiting job lasting, none held before ``t[lo]``), in queue
    order; the reservations go to ``res`` when every job found a slot (``starts``: scratch of
    ``q.size``).  Returns ``(k, lo, hi)``, ``k`` the width of a job that found none (-1: none).
    O(steps before each held job's slot + moves' and new jobs' updates)."""
    for i in range(q.size):
        j = q[i]
        starts[i] = res[j]
        if early and not np.isnan(res[j]):
            d, k = req[j], procs[j]
            s = _fit(t, f, lo, hi, k, d, res[j])
            if s < res[j]:
                lo, hi = _take(t, f, lo, hi, res[j], d, -k)
                lo, hi = _take(t, f, lo, hi, s, d, k)
                starts[i] = s
    for i in range(q.size):
        j = q[i]
        if np.isnan(res[j]):
            d, k = req[j], procs[j]
            s = _fit(t, f, lo, hi, k, d, np.nan)
            if np.isnan(s):
                return k, lo, hi
            lo, hi = _take(t, f, lo, hi, s, d, k)
            starts[i] = s
    for i in range(q.size):
        res[q[i]] = starts[i]
    return -1, lo, hi


def plan_step(q, res, req, procs, now, free_now, ends, rp, early, T, F, cur, plo, phi, pfree, pends, prp, prev_q,
              S, out):
    """The planning of :func:`~simsched.schedulers.conservative_plan.plan_queue` (same first
    arguments; the same reservations in ``res``) given the last call's final profile ``(T[cur],
    F[cur])[plo:phi]`` (``plo < 0``: none), its idle processors ``pfree``, running ends ``pends`` /
    ``prp``, queue ``prev_q`` and the reservations it gave, ``S[:prev_q.size]``; then the due jobs
    that start now.  Writes this call's profile into row ``1 - cur`` of ``T``, ``F`` (each row at
    least ``phi - plo + ends.size + pends.size + 2 (prev_q.size + q.size) + 4 q.size + 5`` long), its
    reservations into ``S`` and the jobs to start, in queue order, into ``out`` (both at least
    ``q.size``), and sets those jobs' ``res`` to NaN.  Returns ``(k, lo, hi, started, wake)``: ``k``
    the width of a job that found no slot (-1: none), ``[lo, hi)`` the new profile (``lo < 0`` when
    this call went to ``plan_queue``: a zero-length job waits, a reservation passed by, or some
    processor is promised twice), ``started`` the count in ``out``, ``wake`` the earliest
    reservation after ``now`` (-inf: none).  O(n + c log c) to update the profile, then a scan of
    the steps before each held job's slot, updates only for the jobs that move, and an earliest fit
    and update for each new job."""
    general = False
    for i in range(q.size):
        j = q[i]
        if req[j] <= 0 or res[j] < now:
            general = True
    lo, hi = -1, 0
    if not general:
        t, f = T[1 - cur], F[1 - cur]
        room = 2 * q.size + 2
        et, eg, ok = _changes(q, res, req, procs, ends, rp, pends, prp, prev_q, S)
        if plo >= 0 and ok:
            lo, hi = _merge(T[cur], F[cur], plo, phi, now, et, eg, free_now - pfree, t, f, room)
        else:
            et, eg = _from_scratch(q, res, req, procs, ends, rp)
            lo, hi = _merge(T[cur], F[cur], 0, 0, now, et, eg, free_now, t, f, room)
        for i in range(lo, hi):
            if f[i] < 0:
                general = True
        if not general:
            k, lo, hi = _place(q, res, req, procs, early, t, f, lo, hi, S)
            if k >= 0:
                return k, lo, hi, 0, -np.inf
    if general:
        lo = -1
        k = plan_queue(q, res, req, procs, now, free_now, ends, rp, early)
        if k >= 0:
            return k, lo, hi, 0, -np.inf
    started = 0
    wake = -np.inf
    free = free_now
    for i in range(q.size):
        j = q[i]
        S[i] = res[j]
        if res[j] <= now:  # due jobs in queue order; one that cannot start keeps its processors
            if procs[j] <= free:
                out[started] = j
                started += 1
            free -= procs[j]
        elif wake < now or res[j] < wake:
            wake = res[j]
    for i in range(started):
        res[out[i]] = np.nan
    return -1, lo, hi, started, wake
