"""A learned priority function for cluster logs: ``score = theta . (log10 r, log2 n, log10(w + 1))``
(requested time ``r``, processors ``n``, time waited so far ``w``; lower first), with the kept head and
RLScheduler's greedy backfilling of :mod:`simsched.schedulers.batch_priority`.  ``theta = (1, 0, 0)``
is SJF's order; the weights are fitted on train windows of a log by
:func:`simsched.learned.batch_fit.fit_priority` (``simsched train batch-priority``), in the spirit of
Carastan-Santos & de Camargo (SC'17), who fitted F1 on simulations.

The model file (JSON, written by the trainer) holds ``theta``, the ``fallback`` rule (the best
heuristic on the train windows) and ``use``: ``"learned"`` when the fit was significantly better than
the fallback on the select windows, else ``"fallback"`` — then this policy *is* the fallback rule and
its ``explain`` says so.  Optional ``range``: ``{lo, hi}``, the box of the three features over every
job that waited at a decision point of the train windows; where a waiting job lies outside it (with a
margin of :data:`MARGIN` on each side) the fit is extrapolating, and that decision is the fallback
rule's (checked at every decision, from the first job of a window).  :meth:`LearnedPriority.decided_by`
counts the decision points each side took.  O(q log q + r log r) per decision point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.schedulers.batch_priority import RULES, PriorityBatch
from simsched.workloads.importers.swf import RigidTrace

MARGIN = 0.1
"""Slack of the training box on each feature, in the features' own (log) units: 0.1 is a factor 1.26 in
requested time, 1.07 in processors."""


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
    box = doc.get("range")
    if box is not None and not (isinstance(box, dict) and all(
            isinstance(box.get(k), list) and len(box[k]) == 3 and all(isinstance(x, (int, float)) for x in box[k])
            and np.all(np.isfinite(box[k])) for k in ("lo", "hi")) and np.all(np.asarray(box["lo"]) <= box["hi"])):
        raise SimschedError("range must be {lo: 3 numbers, hi: 3 numbers} with lo <= hi", file=p, field="range")
    return doc


def describe_decisions(decided: dict[str, Any]) -> str:
    """A :meth:`LearnedPriority.decided_by` account (one run's, or several summed) in words: how many
    decision points the learned priority ordered and how many its named fallback rule did.  O(1)."""
    rule = decided["fallback_rule"]
    mine, theirs = int(decided.get("learned", 0)), int(decided.get(rule, 0))
    if rule == "none":
        return f"{mine:,} decision points, all by the learned priority (weights given, no fallback rule)"
    return (f"{mine:,} of {mine + theirs:,} decision points by the learned priority, {theirs:,} by its fallback "
            f"rule {rule}")


class LearnedPriority(PriorityBatch):
    """A fitted priority function over (log requested time, log processors, log wait) with greedy
    backfilling, or the best rule where the fit did not earn its place (see the module docstring).
    ``checkpoint``: the model file; ``theta``: weights given directly instead (no fallback, no range).
    ``seen``: after a run, the ``(lo, hi)`` box of the features of every job that waited at a decision
    point (what the trainer stores as ``range``)."""

    name = "learned-priority"

    def __init__(self, checkpoint: str = "", theta: tuple[float, float, float] | None = None) -> None:
        if bool(checkpoint) == (theta is not None):
            raise ValueError("give exactly one of checkpoint (a model file of `simsched train batch-priority`) "
                             "and theta")
        self.box: tuple[np.ndarray, np.ndarray] | None = None
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
            if doc.get("range") is not None:
                self.box = (np.asarray(doc["range"]["lo"], dtype=np.float64) - MARGIN,
                            np.asarray(doc["range"]["hi"], dtype=np.float64) + MARGIN)
        self.counts = {"learned": 0, "fallback": 0}
        self.seen = (np.full(3, np.inf), np.full(3, -np.inf))

    def rule_label(self) -> str:
        """The fallback rule as a scheduler label (``f1(backfill=true)``), or ``none`` without one."""
        if self.fallback is None:
            return "none"
        name = {"fcfs": "fcfs-priority", "sjf": "sjf-priority"}.get(self.fallback["rule"], self.fallback["rule"])
        return f"{name}{'(backfill=true)' if self.fallback['backfill'] else ''}"

    def decided_by(self) -> dict[str, Any]:
        """The decision points of the last run each side ordered: ``{"learned": k, "<rule label>": j,
        "fallback_rule": label}`` (``{"learned": k, "fallback_rule": "none"}`` for weights given
        directly).  O(1)."""
        learned = self.counts["learned"] if self.use == "learned" else 0
        if self.fallback is None:
            return {"learned": learned, "fallback_rule": "none"}
        return {"learned": learned, self.rule_label(): sum(self.counts.values()) - learned,
                "fallback_rule": self.rule_label()}

    def reset(self, trace: RigidTrace, m: int) -> None:
        super().reset(trace, m)
        self.counts = {"learned": 0, "fallback": 0}

    def explain(self) -> str:
        """Which policy decides: the fitted weights (and the rule that takes over outside their
        training range), or the fallback rule (and why)."""
        if self.use == "learned":
            gate = (f"; outside its training range (any waiting job's features beyond the box, margin {MARGIN}) "
                    f"the decision is {self.rule_label()}'s" if self.box is not None and self.fallback else "")
            return f"learned priority theta = {np.round(self.theta, 3).tolist()} with greedy backfilling{gate}"
        fb = self.fallback or {}
        return (f"the fallback rule {fb.get('rule')}{' with backfilling' if fb.get('backfill') else ''}: the fit was "
                f"not significantly better on the select windows")

    def _order(self, q: np.ndarray, now: float) -> np.ndarray:
        if self.use != "learned":
            self.counts["fallback"] += 1
            return super()._order(q, now)
        x = job_features(q, self.trace, now)
        self.seen = (np.minimum(self.seen[0], x.min(axis=0)), np.maximum(self.seen[1], x.max(axis=0)))
        if self.box is not None and (np.any(x < self.box[0]) or np.any(x > self.box[1])):
            self.counts["fallback"] += 1  # extrapolating: the rule decides this point
            return super()._order(q, now)
        self.counts["learned"] += 1
        return q[np.argsort(x @ self.theta, kind="stable")]
