"""How many recorded runs does an installation need?  A learning curve of calibration.

A user who brings a new installation has a handful of runs, not sixty.  :func:`learning_curve` answers
what calibration makes of a few: for each installation of a corpus with enough runs, it draws ``k``
of its training runs at random (``draws`` times for each ``k``), calibrates one point on them
(:func:`~simsched.fidelity.calibrate.calibrate_installation`, from the workflow system's documented
defaults, within ``budget_s`` CPU seconds per fit) and scores the point on the installation's held-out
runs (at most ``score_runs`` of them, drawn once per installation so every fit is scored on the same
runs).  Each ``prior`` (:func:`~simsched.fidelity.calibrate.shrunk`) is fitted on the very same draws,
so the comparison between priors is paired.

The split is the corpus's (seeded); the draws depend on the seed, the installation's label, ``k`` and
the draw's number only.  Cost: ``installations x len(sizes) x draws x len(priors)`` fits of
``budget_s`` each, plus their scoring (one simulation per scored run).

``simsched calibrate-curve CORPUS --seed S`` runs it and prints :func:`summary`.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import SimschedError
from simsched.fidelity.calibrate import bounds_for, calibrate_installation
from simsched.fidelity.corpus import Corpus, Execution
from simsched.fidelity.model import documented_defaults, simulate
from simsched.fidelity.search import SEARCH, check_search


@dataclass(frozen=True)
class CurvePoint:
    """One fit of the curve: ``installation``, ``k`` training runs (draw number ``draw``), ``prior``, the
    fit's training error and the signed relative makespan errors on the scored held-out runs."""

    installation: str
    k: int
    draw: int
    prior: float
    train_error: float
    errors: tuple[float, ...]


def _rng(seed: int, *key: object) -> np.random.Generator:
    digest = hashlib.sha256("\0".join(map(str, (seed, *key))).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _pick(runs: Sequence[Execution], k: int, rng: np.random.Generator) -> list[Execution]:
    """``k`` of ``runs`` without replacement, in their corpus order."""
    chosen = np.sort(rng.choice(len(runs), size=k, replace=False))
    return [runs[i] for i in chosen.tolist()]


MAX_DRAWS = 1_000
"""The most draws per size (each a calibration per prior): beyond it a curve would run for days."""


def check_options(sizes: Sequence[int], draws: int, priors: Sequence[float], budget_s: float, score_runs: int) -> None:
    """:class:`SimschedError` naming the option unless the sizes are whole numbers >= 1, ``draws`` is in
    1 .. :data:`MAX_DRAWS`, the priors are finite and >= 0, the budget per fit is a positive number of
    CPU seconds (at most a day) and ``score_runs`` >= 1.  Called before the corpus is read.  O(options)."""
    if not sizes or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in sizes):
        raise SimschedError(f"sizes must be whole numbers >= 1, got {list(sizes)!r}", field="--sizes")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1 or draws > MAX_DRAWS:
        raise SimschedError(f"must be a whole number from 1 to {MAX_DRAWS:,}, got {draws!r}", field="--draws")
    if not priors or any(not (isinstance(p, (int, float)) and 0 <= p < math.inf) for p in priors):
        raise SimschedError(f"priors must be finite numbers >= 0, got {list(priors)!r}", field="--priors")
    if not (isinstance(budget_s, (int, float)) and 0 < budget_s <= 86_400):
        raise SimschedError(f"must be a number of CPU seconds > 0 (at most a day), got {budget_s!r}", field="--budget")
    if isinstance(score_runs, bool) or not isinstance(score_runs, int) or score_runs < 1:
        raise SimschedError(f"must be a whole number >= 1, got {score_runs!r}", field="--score-runs")


def learning_curve(corpus: Corpus, *, sizes: Sequence[int] = (2, 4), draws: int = 3,
                   priors: Sequence[float] = (0.0, 1.0), budget_s: float = 8.0, score_runs: int = 8,
                   seed: int = 0, search: str = SEARCH, regression: bool = True,
                   progress: Callable[[int, int, str], None] | None = None) -> list[CurvePoint]:
    """The curve's fits (see the module docstring), for every installation with more training runs than
    the largest ``k`` and at least one held-out run with a recorded makespan.  :class:`SimschedError`
    when no installation qualifies or an option is out of range.  ``progress(done, total)`` after each
    fit, with the installation and ``k`` as its label.  ``search``: each fit's global search
    (:mod:`~simsched.fidelity.search`), from the better of the start and, with ``regression``, the
    training runs' bottleneck regression (:mod:`~simsched.fidelity.bottleneck`)."""
    check_options(sizes, draws, priors, budget_s, score_runs)
    check_search(search)
    plan = []
    for label, runs in corpus.installations().items():
        train = [e for e in runs if not e.held_out and e.run.makespan]
        held = [e for e in runs if e.held_out and e.run.makespan]
        if len(train) > max(sizes) and held:
            scored = _pick(held, min(score_runs, len(held)), _rng(seed, label, "scored"))
            plan.append((label, train, scored))
    if not plan:
        raise SimschedError(f"no installation has more than {max(sizes)} training runs and a held-out run",
                            field="--sizes")
    total = len(plan) * len(sizes) * draws * len(priors)
    out: list[CurvePoint] = []
    for label, train, scored in plan:
        start = documented_defaults(train[0].wms)
        for k in sizes:
            for d in range(draws):
                subset = _pick(train, k, _rng(seed, label, k, d))
                bounds = bounds_for(subset, {})
                for prior in priors:
                    fit = calibrate_installation(label, subset, budget_s=budget_s, seed=seed, bounds=bounds,
                                                 start=start, prior=float(prior), search=search,
                                                 regression=regression)
                    errors = tuple(simulate(e.graph, e.run, fit.parameters).makespan / e.run.makespan - 1.0
                                   for e in scored)
                    out.append(CurvePoint(label, k, d, float(prior), fit.train_error, errors))
                    if progress is not None:
                        progress(len(out), total, f"{label}, k={k}")
    return out


def as_dict(points: Sequence[CurvePoint]) -> dict:
    """The fits and their :func:`summary` as a JSON-ready document."""
    return {"fits": [{"installation": p.installation, "k": p.k, "draw": p.draw, "prior": p.prior,
                      "train_error": p.train_error, "held_out_errors": list(p.errors)} for p in points],
            "summary": [dict(zip(("k", "prior", "fits", "median", "mean", "p90"), row)) for row in summary(points)]}


def summary(points: Sequence[CurvePoint]) -> list[tuple[int, float, int, float, float, float]]:
    """``(k, prior, fits, median, mean, p90)`` of the absolute held-out errors of every fit with that
    ``k`` and ``prior``, pooled over installations and draws, ordered by ``k`` then ``prior``."""
    groups: dict[tuple[int, float], list[CurvePoint]] = {}
    for p in points:
        groups.setdefault((p.k, p.prior), []).append(p)
    rows = []
    for (k, prior), group in sorted(groups.items()):
        errors = sorted(abs(e) for p in group for e in p.errors)
        p90 = errors[min(len(errors) - 1, int(math.ceil(0.9 * len(errors))) - 1)]
        rows.append((k, prior, len(group), statistics.median(errors), statistics.fmean(errors), p90))
    return rows
