"""Power over time for reports and traces: the mean watts over slices of a run
(:func:`mean_power`), each processor's power as steps (:func:`processor_steps`), and the document of
both (:func:`power_profile`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simsched.simulator.power.accounting import EnergyAccount, step_function

if TYPE_CHECKING:
    from simsched.simulator.platform import Platform


PROFILE_BINS = 200
"""Slices of the run a power profile (:func:`power_profile`) averages over: enough for a plot, small in JSON."""


def mean_power(steps: tuple[np.ndarray, np.ndarray], edges: np.ndarray) -> np.ndarray:
    """(len(edges) - 1,) mean watts of a step function over each slice ``[edges[i], edges[i+1])``:
    the exact integral over the slice divided by its length (0 W on an empty slice), so the slices
    together hold exactly the step function's energy.  O((k + b) log k)."""
    t, w = steps
    if not w.size:
        return np.zeros(max(edges.size - 1, 0))
    cum = np.concatenate([[0.0], np.cumsum(w * np.diff(t))])  # energy up to each knot
    i = np.clip(np.searchsorted(t, edges, side="right") - 1, 0, w.size - 1)
    x = np.clip(edges, t[0], t[-1])
    upto = cum[i] + w[i] * (x - t[i])
    width = np.diff(edges)
    return np.divide(np.diff(upto), width, out=np.zeros(width.size), where=width > 0)


def processor_steps(acc: EnergyAccount, m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each of the ``m`` processors' power as a step function ``(t, w)`` on ``[0, horizon]`` (``w[i]``
    watts on ``[t[i], t[i+1])``, one step per change of power), from the account's per-processor changes.
    O(k log k + m)."""
    owners, times, deltas = acc.proc_steps
    order = np.argsort(owners, kind="stable")
    cuts = np.searchsorted(owners[order], np.arange(m + 1))
    out = []
    for p in range(m):
        t, w = step_function(times[order[cuts[p]:cuts[p + 1]]], deltas[order[cuts[p]:cuts[p + 1]]], acc.horizon)
        keep = np.ones(w.size, dtype=bool)
        keep[1:] = w[1:] != w[:-1]  # one step where the power stays the same (task after task)
        out.append((np.concatenate([t[:-1][keep], t[-1:]]), w[keep]))
    return out


def power_profile(acc: EnergyAccount, platform: Platform, time_unit_s: float = 1.0,
                  bins: int = PROFILE_BINS) -> dict[str, object]:
    """``platform``'s power over time in a run, for reports and traces::

        {"horizon", "time_unit_s",
         "watts": {type: [mean watts over each of ``bins`` equal slices of [0, horizon]]},
         "processors": {name: {"t": [change times..., horizon], "w": [watts on each step]}},
         "extra_j": joules that are no power level (P-state switches, power-ups and -downs, links)}

    Each slice's mean is exact (:func:`mean_power`), so for every type ``sum(watts) x horizon / bins``
    and for every processor ``sum(w x diff(t))``, times ``time_unit_s``, add up with ``extra_j`` to the
    run's ``energy_j``.  O(k log k + m + types x bins)."""
    owners, times, deltas = acc.proc_steps
    types = [p.type for p in platform.processors]
    names = platform.names
    kinds = np.asarray(types, dtype=object)
    edges = np.linspace(0.0, acc.horizon, bins + 1)
    watts = {}
    for kind in dict.fromkeys(types):
        sel = kinds[owners] == kind if owners.size else np.zeros(0, dtype=bool)
        steps = step_function(times[sel], deltas[sel], acc.horizon)
        watts[str(kind)] = np.maximum(mean_power(steps, edges), 0.0).tolist()
    # float sums of +/- deltas may leave -1e-13 W where the power is 0: clamped, as a document needs watts >= 0
    per = {str(n): {"t": t.tolist(), "w": np.maximum(w, 0.0).tolist()}
           for n, (t, w) in zip(names, processor_steps(acc, len(names)))}
    extra = float(acc.lumps[1].sum()) + acc.link_energy_j
    return {"horizon": float(acc.horizon), "time_unit_s": float(time_unit_s), "watts": watts, "processors": per,
            "extra_j": extra}
