"""Features of a waiting job at a decision point, for learned batch priorities
(:class:`~simsched.schedulers.batch_learned.LearnedPriority`).

Each is a number per waiting job computed from what a batch policy may see (requested time ``r``,
processors ``n``, submit time, ``now``, the free processors; never the run time), in units where one
step is a factor of 10 (times) or 2 (processors), so weights stay comparable across logs:

* ``log_requested``: ``log10(max(r, 1))``;
* ``log_procs``: ``log2(n)``;
* ``log_wait``: ``log10(w + 1)`` with ``w = now - submit``;
* ``fits``: 1 if ``n`` fits in the free processors now, else 0;
* ``log_slowdown``: ``log10`` of the bounded slowdown the job would have if it started now,
  ``max(1, (w + r) / max(r, 10))`` (its requested time standing in for its run time);
* ``requested_rank``: the job's rank by requested time among the waiting jobs, scaled to ``[0, 1]``
  (ties in submit order; 0 for a queue of one);
* ``procs_over_free``: ``log2(n / max(free, 1))``, clipped to ``[-8, 8]``;
* ``log_area``: ``log_requested * log_procs / 8`` (a product: the score is linear in the features,
  this one lets long *and* wide jobs weigh more than the sum of the two).

:data:`BASIC` (the first three) is the feature set of a model file that names none.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simsched.workloads.importers.swf import RigidTrace

FEATURES = ("log_requested", "log_procs", "log_wait", "fits", "log_slowdown", "requested_rank", "procs_over_free",
            "log_area")
"""Every feature, in the order the trainer uses them."""

BASIC = FEATURES[:3]
"""The features of a model that names none: requested time, processors, time waited."""


def job_features(jobs: np.ndarray, trace: RigidTrace, now: float, free: int = 0,
                 names: Sequence[str] = BASIC) -> np.ndarray:
    """``(len(jobs), len(names))``: the named features (module docstring) of each waiting job of
    ``jobs`` (indices into ``trace``, submit order) at time ``now`` with ``free`` processors idle.
    ``ValueError`` for an unknown name.  O(q log q) (``requested_rank`` sorts), O(q) otherwise."""
    r = np.maximum(trace.requested[jobs].astype(np.float64), 1.0)
    n = trace.procs[jobs].astype(np.float64)
    w = np.maximum(now - trace.submit[jobs], 0.0)
    cols = []
    for name in names:
        if name == "log_requested":
            cols.append(np.log10(r))
        elif name == "log_procs":
            cols.append(np.log2(n))
        elif name == "log_wait":
            cols.append(np.log10(w + 1.0))
        elif name == "fits":
            cols.append((n <= free).astype(np.float64))
        elif name == "log_slowdown":
            cols.append(np.log10(np.maximum((w + r) / np.maximum(r, 10.0), 1.0)))
        elif name == "requested_rank":
            rank = np.empty(r.size)
            rank[np.argsort(r, kind="stable")] = np.arange(r.size)
            cols.append(rank / max(r.size - 1, 1))
        elif name == "procs_over_free":
            cols.append(np.clip(np.log2(n / max(free, 1)), -8.0, 8.0))
        elif name == "log_area":
            cols.append(np.log10(r) * np.log2(n) / 8.0)
        else:
            raise ValueError(f"unknown feature {name!r}; choose from {', '.join(FEATURES)}")
    return np.column_stack(cols) if cols else np.zeros((len(jobs), 0))
