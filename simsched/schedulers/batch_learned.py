"""A learned priority function for cluster logs: ``score = theta . (log10 r, log2 n, log10(w + 1))``
(requested time ``r``, processors ``n``, time waited so far ``w``; lower first), with the kept head and
RLScheduler's greedy backfilling of :mod:`simsched.schedulers.batch_priority`.  ``theta = (1, 0, 0)``
is SJF's order; the weights are fitted on train windows of a log by
:func:`simsched.learned.batch_fit.fit_priority` (``simsched train batch-priority``), in the spirit of
Carastan-Santos & de Camargo (SC'17), who fitted F1 on simulations.

The model file (JSON, written by the trainer) holds ``theta``, the ``fallback`` rule (the best
heuristic on the train windows) and ``use``: ``"learned"`` when the fit was significantly better than
the fallback on the select windows, else ``"fallback"`` — then this policy *is* the fallback rule and
its ``explain`` says so.  O(q log q + r log r) per decision point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.schedulers.batch_priority import RULES, PriorityBatch
from simsched.workloads.importers.swf import RigidTrace


def job_features(jobs: np.ndarray, trace: RigidTrace, now: float) -> np.ndarray:
    """``(len(jobs), 3)``: ``log10(max(r, 1))``, ``log2(n)``, ``log10(w + 1)`` of each waiting job.  O(q)."""
    r = np.maximum(trace.requested[jobs].astype(np.float64), 1.0)
    n = trace.procs[jobs].astype(np.float64)
    w = np.maximum(now - trace.submit[jobs], 0.0)
    return np.column_stack([np.log10(r), np.log2(n), np.log10(w + 1.0)])


def read_model(path: str | Path) -> dict[str, Any]:
    """The model file at ``path``, checked: ``theta`` (3 finite numbers), ``fallback`` (``{rule,
    backfill}`` with a rule of :data:`RULES`) and ``use`` (``learned`` or ``fallback``);
    :class:`SimschedError` naming the file and the field otherwise.  O(1)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SimschedError(f"cannot read the learned-priority model: {exc}", file=p) from None
    theta = doc.get("theta") if isinstance(doc, dict) else None
    if not (isinstance(theta, list) and len(theta) == 3 and all(isinstance(x, (int, float)) for x in theta)
            and np.all(np.isfinite(theta))):
        raise SimschedError("theta must be 3 finite numbers", file=p, field="theta")
    fb = doc.get("fallback")
    if not (isinstance(fb, dict) and fb.get("rule") in RULES and isinstance(fb.get("backfill"), bool)):
        raise SimschedError(f"fallback must be {{rule: one of {', '.join(RULES)}, backfill: true/false}}",
                            file=p, field="fallback")
    if doc.get("use") not in ("learned", "fallback"):
        raise SimschedError("use must be 'learned' or 'fallback'", file=p, field="use")
    return doc


class LearnedPriority(PriorityBatch):
    """A fitted priority function over (log requested time, log processors, log wait) with greedy
    backfilling, or the best rule where the fit did not earn its place (see the module docstring).
    ``checkpoint``: the model file; ``theta``: weights given directly instead (no fallback)."""

    name = "learned-priority"

    def __init__(self, checkpoint: str = "", theta: tuple[float, float, float] | None = None) -> None:
        if bool(checkpoint) == (theta is not None):
            raise ValueError("give exactly one of checkpoint (a model file of `simsched train batch-priority`) "
                             "and theta")
        if theta is not None:
            super().__init__("sjf", backfill=True)
            self.theta, self.use, self.fallback = np.asarray(theta, dtype=np.float64), "learned", None
        else:
            doc = read_model(checkpoint)
            fb = doc["fallback"]
            super().__init__(fb["rule"], backfill=fb["backfill"])
            self.theta, self.use, self.fallback = np.asarray(doc["theta"], dtype=np.float64), doc["use"], fb
            if self.use == "learned":
                self.backfill = True

    def explain(self) -> str:
        """Which policy decides: the fitted weights, or the fallback rule (and why)."""
        if self.use == "learned":
            return f"learned priority theta = {np.round(self.theta, 3).tolist()} with greedy backfilling"
        fb = self.fallback or {}
        return (f"the fallback rule {fb.get('rule')}{' with backfilling' if fb.get('backfill') else ''}: the fit was "
                f"not significantly better on the select windows")

    def _order(self, q: np.ndarray, now: float) -> np.ndarray:
        if self.use != "learned":
            return super()._order(q, now)
        key = job_features(q, self.trace, now) @ self.theta
        return q[np.argsort(key, kind="stable")]
