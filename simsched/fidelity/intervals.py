"""Prediction intervals for a simulated makespan: how far a held-out run may be from its simulation, from
the errors the same model made on the installation's training runs, and how often that held.

A calibrated simulation of a new run of an installation should come with an interval, not a single
number: the fidelity table shows that repeats of one workflow differ by about 10% (:mod:`.repeats`).  The
interval here is **split conformal** (Vovk, Gammerman & Shafer, *Algorithmic Learning in a Random
World*, 2005; Lei et al., "Distribution-free predictive inference for regression", JASA 113, 2018) on the
scale of the calibration's objective: with the n training runs' errors ``e_i = |log(simulated /
recorded)|`` sorted, the radius is the ``ceil((n + 1) * coverage)``-th smallest, and the interval of a
new run is ``[simulated * exp(-r), simulated * exp(r)]``.  Where ``(n + 1) * coverage > n`` there are too
few training runs to promise the coverage and the radius is infinite (said, not hidden).

What holds and what does not: for a model that did not see the training runs (today's, the documented
defaults) and runs exchangeable with them, the coverage is at least ``coverage`` on average.  A calibrated
model was *fitted* on those runs, so its training errors are smaller than its errors on new runs and the
interval is too narrow: the held-out coverage the table reports (:attr:`IntervalGroup.covered`) measures
by how much.  O(runs log runs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

COVERAGE = 0.8
"""The intended coverage of the intervals the fidelity table reports."""


def conformal_radius(errors: Sequence[float], coverage: float = COVERAGE) -> float:
    """The split-conformal radius of ``errors`` (``|log(simulated / recorded)|`` of the training runs) for
    ``coverage`` in (0, 1): the ``ceil((n + 1) coverage)``-th smallest error, ``inf`` when that exceeds n
    (too few runs).  O(n log n)."""
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage}")
    e = np.sort(np.asarray(errors, dtype=np.float64))
    k = math.ceil((e.size + 1) * coverage)
    return math.inf if k > e.size else float(e[k - 1])


@dataclass(frozen=True)
class IntervalGroup:
    """One installation's interval: its training runs, the radius (log scale; ``inf``: too few runs), its
    held-out runs and how many of them the interval covered."""

    installation: str
    train_runs: int
    radius: float
    held_out: int
    covered: int


def interval_groups(installations: Sequence[str], train: Sequence[bool], recorded: Sequence[float | None],
                    simulated: Sequence[float], coverage: float = COVERAGE,
                    known: Mapping[str, Sequence[float]] | None = None) -> list[IntervalGroup]:
    """Per installation (sorted) with held-out runs: the conformal radius of the model's errors on its
    training runs and the held-out runs the interval covered.  Runs without a recorded makespan or a
    finite simulation are left out.  ``known``: for some installations, their training runs' errors as
    recorded when they were calibrated (a profile's), used instead of the training runs among these
    rows (which may not be there: runs scored later, from another folder).  O(runs log runs)."""
    err = np.full(len(installations), math.nan)
    for i, (rec, sim) in enumerate(zip(recorded, simulated)):
        if rec and math.isfinite(sim) and sim > 0:
            err[i] = abs(math.log(sim / rec))
    out = []
    for inst in sorted(set(installations)):
        mine = np.array([x == inst for x in installations]) & ~np.isnan(err)
        trained = mine & np.asarray(train, dtype=bool)
        held = mine & ~np.asarray(train, dtype=bool)
        if not held.any():
            continue
        errors = np.asarray(known[inst], dtype=np.float64) if known and inst in known else err[trained]
        r = conformal_radius(errors, coverage)
        out.append(IntervalGroup(inst, int(errors.size), r, int(held.sum()), int((err[held] <= r).sum())))
    return out
