"""P-states (DVFS) in the compiled stream engine (numba), behind
:mod:`simsched.simulator.engine.compiled_kernel`: a task's cost stretched by the P-state it runs at, as
``Assignment._checked_cost`` stretches it, and ECS's relative superiority as an online policy
(``ecs-online``, :class:`~simsched.schedulers.ecs.OnlineECS`) decided float for float as on the SimPy engine.

The loop's P-state arguments, ``ps``: ``(slowdown (m, K), has table, ECS slowdown (m, K'), ECS busy watts
(m, K'), replayed P-states)``: the engine's ``pstate_slowdown`` (``inf`` where a processor lacks a P-state;
``has table`` false: the run has none, any P-state but 0 is refused), the policy's own tables (what it
decides with; ``speed_0 / speed_k`` and the busy watts, NaN as 0), and, for a replay, each recorded
assignment's P-state (empty: all pairs, P-state 0).  Imported only with numba installed.
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.simulator.engine.compiled_view import completion_row, cost_at

ECS = 8
"""The policy code of ``ecs-online`` in :func:`~simsched.simulator.engine.compiled_kernel.stream_loop`
(after ``MINMIN, MAXMIN = 6, 7``)."""


@numba.njit(cache=True)
def stretched(w, p, k, ps):  # pragma: no cover - compiled
    """``Assignment._checked_cost``'s P-state: the time a task of nominal cost ``w`` holds processor ``p``
    at P-state ``k`` (``w`` itself at 0), or NaN when ``p`` has no P-state ``k`` (or the run no table:
    the SimPy engine refuses it).  O(1)."""
    if k == 0:
        return w
    slow = ps[0]
    s = slow[p, k] if ps[1] and 0 < k < slow.shape[1] else np.inf
    if not s < np.inf:
        return np.nan
    return w * s


@numba.njit(cache=True)
def _superiority(e_new, est_new, eft_new, e_old, est_old, eft_old):  # pragma: no cover - compiled
    """:func:`~simsched.schedulers.ecs.relative_superiority`, the same float operations.  O(1)."""
    if e_new > 0:
        de = (e_new - e_old) / e_new
    else:
        de = 0.0 if e_old <= 0 else -np.inf
    lo = est_new if est_new <= est_old else est_old  # Python's min: the first on ties
    span = eft_new - lo
    if span > 0:
        dt = (eft_new - eft_old) / span
    else:
        dt = 0.0 if eft_new >= eft_old else -np.inf
    return -(de + dt)


@numba.njit(cache=True)
def ecs_decide(tasks, now, avail, vw, dr, ct, ps, chosen, chosen_p, chosen_k):  # pragma: no cover - compiled
    """``OnlineECS.decide``: each ready task in ``tasks`` (ascending) takes the (processor, P-state) pair
    :func:`~simsched.schedulers.ecs.superior_pair` picks among its candidates ``EST = max(avail, data
    ready)``, ``EFT = EST + W x slowdown`` (``inf`` where the product is not finite) and ``E = busy x
    (W x slowdown)``, scanned processor by processor, P-state by P-state from the first of finite EFT;
    that processor's ``avail`` becomes the pair's EFT.  Fills ``chosen``/``chosen_p``/``chosen_k`` and
    returns how many, or -1 when a task may run nowhere (the policy raises).  ``dr``/``ct`` (m,) scratch.
    O(k x (in-degree x m + m K))."""
    slow, busy = ps[2], ps[3]
    m, kk = slow.shape
    for i in range(tasks.size):
        t = tasks[i]
        completion_row(t, now, avail, *vw, dr, ct)  # dr: the view's data-ready row
        best_q = -1
        best_k = 0
        e_b = s_b = f_b = 0.0
        for q in range(m):
            a = avail[q]
            est = a if a >= dr[q] else dr[q]  # np.maximum (no NaN here)
            w = cost_at(t, q, vw[14], vw[15], vw[16], vw[17], vw[18], vw[19])
            for k in range(kk):
                d = w * slow[q, k]
                if not (d > -np.inf and d < np.inf):
                    continue  # EFT inf: not a candidate
                e = busy[q, k] * d
                f = est + d
                if not f < np.inf:
                    continue
                if best_q < 0 or _superiority(e, est, f, e_b, s_b, f_b) > 0:
                    best_q, best_k, e_b, s_b, f_b = q, k, e, est, f
        if best_q < 0:
            return -1
        chosen[i] = t
        chosen_p[i] = best_q
        chosen_k[i] = best_k
        avail[best_q] = f_b
    return tasks.size
