"""A learned priority function for cluster logs: ``score = theta . features(job)`` (lower first;
:mod:`simsched.schedulers.batch_features`), with the kept head and RLScheduler's greedy backfilling of
:mod:`simsched.schedulers.batch_priority`, and optionally a learned *hold-back* of long jobs.  With the
basic features (``log10 r``, ``log2 n``, ``log10(w + 1)``) ``theta = (1, 0, 0)`` is SJF's order.  The
weights are fitted on train windows of a log by :func:`simsched.learned.batch_fit.fit_priority`
(``simsched train batch-priority``), in the spirit of Carastan-Santos & de Camargo (SC'17), who fitted
F1 on simulations.

**Hold-back** (``hold = {long: a, keep: k}``): a job whose requested time exceeds ``10^a`` seconds starts
(in its turn or as a backfill) only if at least ``k x m`` processors stay free after it, unless the
machine is idle (nothing running, nothing started yet at this decision point — so every job of a
finite log starts, at the latest when the machine drains; no bound on its wait short of that).  A held
job waits without becoming the head.  It keeps room for the short jobs that
dominate mean bounded slowdown, the non-work-conserving choice a policy that picks its own head (as
RLScheduler's PPO does) can make.  **Backfilling order** (``backfill_order``): ``submit`` (RLScheduler's)
or ``score`` (the candidates that end before the head's shadow time, in the learned order).

The model file (JSON, written by the trainer) holds ``features`` (default the basic three), ``theta``,
``backfill_order``, ``hold``, the ``fallback`` rule (the best heuristic on the train windows) and
``use``: ``"learned"`` when the fit was significantly better than the fallback on the select windows,
else ``"fallback"`` — then this policy *is* the fallback rule and its ``explain`` says so.  Optional
``range``: ``{lo, hi}``, the box of the features over every job that waited at a decision point of the
train windows; where a waiting job lies outside it (with a margin of :data:`MARGIN` on each side) the
fit is extrapolating, and that whole decision (order, starts, backfilling) is the fallback rule's
(checked at every decision, from the first job of a window).  :meth:`LearnedPriority.decided_by`
counts the decision points each side took.  O(q log q + r log r) per decision point.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.schedulers.batch_features import BASIC, FEATURES, job_features
from simsched.schedulers.batch_priority import RULES, PriorityBatch
from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace

MARGIN = 0.1
"""Slack of the training box on each feature, in the features' own (log) units: 0.1 is a factor 1.26 in
requested time, 1.07 in processors."""


def _numbers(x: Any, k: int | None = None) -> bool:
    return (isinstance(x, list) and (k is None or len(x) == k) and all(isinstance(v, (int, float)) for v in x)
            and bool(np.all(np.isfinite(x))))


def read_model(path: str | Path) -> dict[str, Any]:
    """The model file at ``path``, checked: ``features`` (optional, distinct names of
    :data:`~simsched.schedulers.batch_features.FEATURES`; default the basic three), ``theta`` (one finite
    number per feature), ``fallback`` (``{rule, backfill}`` with a rule of :data:`RULES`), ``use``
    (``learned`` or ``fallback``), optional ``backfill_order`` (``submit``/``score``), ``hold`` (``{long:
    number, keep: 0..1}``) and ``range``; :class:`SimschedError` naming the file and the field otherwise.
    O(1)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SimschedError(f"cannot read the learned-priority model: {exc}", file=p) from None
    if not isinstance(doc, dict):
        raise SimschedError("a learned-priority model is a JSON object", file=p)
    names = doc.setdefault("features", list(BASIC))
    if not (isinstance(names, list) and names and all(n in FEATURES for n in names) and len(set(names)) == len(names)):
        raise SimschedError(f"features must be distinct names from {', '.join(FEATURES)}", file=p, field="features")
    if not _numbers(doc.get("theta"), len(names)):
        raise SimschedError(f"theta must be {len(names)} finite numbers, one per feature", file=p, field="theta")
    fb = doc.get("fallback")
    if not (isinstance(fb, dict) and fb.get("rule") in RULES and isinstance(fb.get("backfill"), bool)):
        raise SimschedError(f"fallback must be {{rule: one of {', '.join(RULES)}, backfill: true/false}}",
                            file=p, field="fallback")
    if doc.get("use") not in ("learned", "fallback"):
        raise SimschedError("use must be 'learned' or 'fallback'", file=p, field="use")
    if doc.setdefault("backfill_order", "submit") not in ("submit", "score"):
        raise SimschedError("backfill_order must be 'submit' or 'score'", file=p, field="backfill_order")
    hold = doc.get("hold")
    if hold is not None and not (isinstance(hold, dict) and _numbers([hold.get("long"), hold.get("keep")])
                                 and 0 <= hold["keep"] <= 1):
        raise SimschedError("hold must be {long: log10 seconds, keep: a fraction 0..1}", file=p, field="hold")
    box = doc.get("range")
    if box is not None and not (isinstance(box, dict) and _numbers(box.get("lo"), len(names))
                                and _numbers(box.get("hi"), len(names)) and np.all(np.asarray(box["lo"]) <= box["hi"])):
        raise SimschedError(f"range must be {{lo: {len(names)} numbers, hi: {len(names)} numbers}} with lo <= hi",
                            file=p, field="range")
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
    """A fitted priority function over job features with greedy backfilling and an optional hold-back of
    long jobs, or the best rule where the fit did not earn its place (see the module docstring).
    ``checkpoint``: the model file; or the model given directly: ``theta`` (one weight per feature),
    ``features`` (default the basic three), ``hold`` (``(long, keep)``), ``backfill_order`` — then
    without fallback or range.  ``seen``: after a run, the ``(lo, hi)`` box of the features of every job
    that waited at a decision point (what the trainer stores as ``range``)."""

    name = "learned-priority"

    def __init__(self, checkpoint: str = "", theta: tuple[float, ...] | None = None,
                 features: tuple[str, ...] | None = None, hold: tuple[float, float] | None = None,
                 backfill_order: str = "submit") -> None:
        if bool(checkpoint) == (theta is not None):
            raise ValueError("give exactly one of checkpoint (a model file of `simsched train batch-priority`) "
                             "and theta")
        self.box: tuple[np.ndarray, np.ndarray] | None = None
        if theta is not None:
            names = tuple(features) if features is not None else BASIC
            bad = [n for n in names if n not in FEATURES]
            if bad or len(theta) != len(names) or not names:
                raise ValueError(f"theta needs one weight per feature ({len(names)}); features from "
                                 f"{', '.join(FEATURES)}")
            if backfill_order not in ("submit", "score"):
                raise ValueError("backfill_order must be 'submit' or 'score'")
            super().__init__("sjf", backfill=True)
            self.theta, self.use, self.fallback = np.asarray(theta, dtype=np.float64), "learned", None
            self.features, self.order_backfill = names, backfill_order
            self.hold = (float(hold[0]), float(hold[1])) if hold is not None else None
        else:
            doc = read_model(checkpoint)
            fb = doc["fallback"]
            super().__init__(fb["rule"], backfill=fb["backfill"])
            self.theta, self.use, self.fallback = np.asarray(doc["theta"], dtype=np.float64), doc["use"], fb
            self.features, self.order_backfill = tuple(doc["features"]), doc["backfill_order"]
            h = doc.get("hold")
            self.hold = (float(h["long"]), float(h["keep"])) if h is not None else None
            if self.use == "learned":
                self.backfill = True
            if doc.get("range") is not None:
                self.box = (np.asarray(doc["range"]["lo"], dtype=np.float64) - MARGIN,
                            np.asarray(doc["range"]["hi"], dtype=np.float64) + MARGIN)
        self.counts = {"learned": 0, "fallback": 0}
        k = len(self.features)
        self.seen = (np.full(k, np.inf), np.full(k, -np.inf))
        self._mine = False  # whether the learned side decides the current decision point
        self._free = 0

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
        self.m = m
        self.counts = {"learned": 0, "fallback": 0}
        self.log_requested = np.log10(np.maximum(trace.requested.astype(np.float64), 1.0)).tolist()

    def explain(self) -> str:
        """Which policy decides: the fitted weights (and the rule that takes over outside their
        training range), or the fallback rule (and why)."""
        if self.use == "learned":
            hold = (f", holding back jobs longer than {10 ** self.hold[0]:,.0f} s unless {self.hold[1]:.0%} of the "
                    f"processors stay free" if self.hold is not None else "")
            gate = (f"; outside its training range (any waiting job's features beyond the box, margin {MARGIN}) "
                    f"the decision is {self.rule_label()}'s" if self.box is not None and self.fallback else "")
            return (f"learned priority over {', '.join(self.features)} with theta = "
                    f"{np.round(self.theta, 3).tolist()}, greedy backfilling in {self.order_backfill} order{hold}"
                    f"{gate}")
        fb = self.fallback or {}
        return (f"the fallback rule {fb.get('rule')}{' with backfilling' if fb.get('backfill') else ''}: the fit was "
                f"not significantly better on the select windows")

    def decide(self, view: BatchView) -> list[int]:
        self._free = view.free
        return super().decide(view)

    def _order(self, q: np.ndarray, now: float) -> np.ndarray:
        self._mine = False
        if self.use != "learned":
            self.counts["fallback"] += 1
            return super()._order(q, now)
        x = job_features(q, self.trace, now, self._free, self.features)
        self.seen = (np.minimum(self.seen[0], x.min(axis=0)), np.maximum(self.seen[1], x.max(axis=0)))
        if self.box is not None and (np.any(x < self.box[0]) or np.any(x > self.box[1])):
            self.counts["fallback"] += 1  # extrapolating: the rule decides this point
            return super()._order(q, now)
        self.counts["learned"] += 1
        self._mine = True
        return q[np.argsort(x @ self.theta, kind="stable")]

    def _admission(self, view: BatchView) -> Callable[[int, int, bool], bool] | None:
        if not self._mine or self.hold is None:
            return None
        long, keep = self.hold[0], math.ceil(self.hold[1] * self.m)
        idle, lr, procs = len(view.running) == 0, self.log_requested, self.procs
        return lambda j, free, first: (idle and first) or lr[j] <= long or free - procs[j] >= keep

    def _backfill(self, view: BatchView, q: np.ndarray, started: list[int], free: int) -> list[int]:
        if not self._mine:
            return super()._backfill(view, q, started, free)
        trace = self.trace
        cand = (view.now + trace.requested[q] < self.shadow) & (trace.procs[q] <= free) & (q != self.head)
        if started:
            cand &= ~np.isin(q, np.asarray(started, dtype=np.int64))
        jobs = q[cand]
        if self.order_backfill == "score" and jobs.size > 1:
            jobs = jobs[np.argsort(job_features(jobs, trace, view.now, free, self.features) @ self.theta,
                                   kind="stable")]
        admit = self._admission(view)
        out: list[int] = []
        for j in jobs.tolist():
            if self.procs[j] <= free and (admit is None or admit(j, free, False)):
                out.append(j)
                free -= self.procs[j]
                if free <= 0:
                    break
        return out
