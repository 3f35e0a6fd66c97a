"""The searches of a calibration: a global search over the box of the free parameters, then a local
refinement from its best point (:func:`~simsched.fidelity.calibrate.calibrate_installation`).

Every search minimises ``f`` over the box ``box`` (one row ``(low, high)`` per free parameter, on the
scale the parameter is searched on) and records its best point itself: ``f`` keeps ``best`` (``value``,
``x``, ...) up to date and raises :class:`Spent` when the CPU budget is gone, which ends any search at
once with the best point so far.  Both searches below work in the unit box (each parameter a fraction
of its range) so that one step size means the same for a dispatcher's interval and a bandwidth.

* **CMA-ES** (:func:`cma_search`, the default; Hansen & Ostermeier, "Completely derandomized
  self-adaptation in evolution strategies", Evolutionary Computation 9, 2001; pycma) from the best of
  a small Latin hypercube sample and the start point, with a step of :data:`SIGMA0` of the box,
  restarted from the best point with a doubled population when it stops (the IPOP rule of Auger &
  Hansen, CEC 2005), until two restarts in a row find nothing better;
* **differential evolution** (:func:`de_search`; Storn & Price, J. Global Optimization 11, 1997; scipy)
  from a Latin hypercube with the start point as one member (the default until this release).

Why CMA-ES by default: the objective is a simulation of every training run (milliseconds to a second
each), so a calibration affords a few hundred of them in ten dimensions: a few generations of a
differential evolution of 50 members, little more than its random initial population, where CMA-ES,
ten members a generation, adapts its step and its directions from the first ones.  Measured on the
training error reached within the same CPU budget (``tools/calibration_searches.py``, docs/fidelity.md
"The search"), the number a search is for; held-out runs never entered the choice.  A Bayesian
optimiser (optuna, scikit-optimize) spends fewer simulations per step but its surrogate's cost grows
with the points and a few hundred simulations are what a calibration has.  Then :func:`refine`:
Nelder-Mead from the best point, restarted with a halved simplex while it improves.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import differential_evolution, minimize

from simsched.errors import SimschedError

SEARCHES: tuple[str, ...] = ("cma", "de")
"""The global searches by name (``--search``)."""
SEARCH = "cma"
"""The default global search."""
SIGMA0 = 0.3
"""CMA-ES's initial step, as a fraction of each parameter's range."""
STALE_RESTARTS = 2
"""CMA-ES stops restarting after this many restarts in a row that found nothing better by
:data:`IMPROVEMENT`."""
IMPROVEMENT = 1e-4
"""The least decrease of the objective a restart must find to count (a mean ``|log|`` error of 1e-4 is
a hundredth of a percent)."""


def check_search(search: object) -> None:
    """:class:`SimschedError` (field ``--search``) unless ``search`` names one of :data:`SEARCHES`."""
    if search not in SEARCHES:
        raise SimschedError(f"must be one of {', '.join(SEARCHES)}, got {search!r}", field="--search")


def prepare(search: str) -> None:
    """Import what ``search`` needs (pycma and scipy's quasi-Monte Carlo module for CMA-ES: seconds of
    CPU on a cold start) before any budget's clock starts, so that no installation pays it."""
    if search == "cma":
        import cma  # noqa: F401
        from scipy.stats import qmc  # noqa: F401


class Spent(Exception):
    """Raised inside the objective when the CPU budget is spent (stops any search)."""


def _unit(box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low end and the width (1 where the range is a point) of each row of ``box``."""
    width = box[:, 1] - box[:, 0]
    return box[:, 0], np.where(width > 0, width, 1.0)


def global_search(search: str, f: Callable[[np.ndarray], float], best: dict, box: np.ndarray, *, seed: int,
                  x0: np.ndarray, integrality: list[bool], popsize: int) -> None:
    """The global search named ``search`` (one of :data:`SEARCHES`) of ``f`` over ``box`` from ``x0``;
    returns when it has converged, raises :class:`Spent` when the budget is gone.  ``popsize`` is
    differential evolution's population per free parameter (CMA-ES sets its own)."""
    if search == "cma":
        cma_search(f, best, box, seed=seed)
    elif search == "de":
        de_search(f, box, seed=seed, x0=x0, integrality=integrality, popsize=popsize)
    else:
        raise ValueError(f"unknown search {search!r} (one of {', '.join(SEARCHES)})")


def cma_search(f: Callable[[np.ndarray], float], best: dict, box: np.ndarray, *, seed: int) -> None:
    """A Latin hypercube of ``2 d + 1`` points over the box (seeded; the start point, already in
    ``best``, competes with them), then CMA-ES in the unit box from the best point so far with step
    :data:`SIGMA0`, restarted from the best point with a doubled population whenever it stops, until
    :data:`STALE_RESTARTS` restarts in a row improve ``best["value"]`` by less than :data:`IMPROVEMENT`.
    The sample is what lets the search leave the start's basin (on the training runs of one
    installation CMA-ES from the start alone ended at 0.143 where differential evolution, whose
    population is such a sample, found 0.097); CMA-ES is what makes the most of the few hundred
    simulations after it.  Integer parameters are searched as reals and rounded by ``f`` (a plateau
    CMA-ES steps across).  Deterministic for ``seed`` (pycma seeds numpy's global generator with
    ``seed + 1 + restart`` at every restart).  Each generation costs ``popsize`` calls of ``f`` and
    O(d^2) of its own.  With one free parameter it stops after the sample (pycma needs two dimensions;
    :func:`refine`'s Nelder-Mead is a line search there)."""
    from scipy.stats import qmc

    low, width = _unit(box)
    d = box.shape[0]
    for u in qmc.LatinHypercube(d=d, seed=np.random.default_rng(seed)).random(2 * d + 1):
        f(low + u * width)
    if d < 2:
        return
    import cma  # a dependency, imported by prepare before the clock starts

    def g(u: np.ndarray) -> float:
        return f(low + np.clip(u, 0.0, 1.0) * width)

    popsize: int | None = None
    stale, restart = 0, 0
    while stale < STALE_RESTARTS:
        before = best["value"]
        u0 = np.clip((best["x"] - low) / width, 0.0, 1.0)
        options = {"bounds": [0.0, 1.0], "seed": seed + 1 + restart, "verbose": -9, "tolfun": 1e-5, "tolx": 1e-4}
        if popsize is not None:
            options["popsize"] = popsize
        es = cma.CMAEvolutionStrategy(u0.tolist(), SIGMA0, options)
        while not es.stop():
            xs = es.ask()
            es.tell(xs, [g(np.asarray(x, dtype=np.float64)) for x in xs])
        popsize = 2 * es.popsize
        restart += 1
        stale = stale + 1 if best["value"] > before - IMPROVEMENT else 0


def de_search(f: Callable[[np.ndarray], float], box: np.ndarray, *, seed: int, x0: np.ndarray,
              integrality: list[bool], popsize: int) -> None:
    """scipy's differential evolution over ``box`` (seeded, Latin hypercube start with ``x0`` a member,
    integer parameters declared integral, no polishing) until it converges (``tol`` 1e-3)."""
    differential_evolution(f, [tuple(b) for b in box.tolist()], seed=np.random.default_rng(seed), popsize=popsize,
                           maxiter=10_000, tol=1e-3, polish=False, init="latinhypercube", x0=x0,
                           integrality=integrality)


def simplex(u: np.ndarray, step: float) -> np.ndarray:
    """A Nelder-Mead start simplex around ``u`` in the unit box: ``u`` and one vertex per axis moved by
    ``step`` (inwards where ``u`` is near the top).  O(d^2)."""
    out = np.tile(u, (u.size + 1, 1))
    for i in range(u.size):
        out[i + 1, i] = u[i] + step if u[i] + step <= 1.0 else u[i] - step
    return out


def refine(f: Callable[[np.ndarray], float], best: dict, box: np.ndarray) -> str:
    """Nelder-Mead in the unit box from ``best["x"]`` (restarted with a halved simplex while it
    improves), until it converges (``"converged"``) or the budget stops ``f`` (``"budget"``)."""
    low, width = _unit(box)

    def g(u: np.ndarray) -> float:
        return f(low + np.clip(u, 0.0, 1.0) * width)

    step = 0.1
    while step >= 1e-3:
        before = best["value"]
        u = (best["x"] - low) / width
        try:
            minimize(g, u, method="Nelder-Mead", bounds=[(0.0, 1.0)] * u.size,
                     options={"initial_simplex": simplex(u, step), "xatol": 1e-4, "fatol": 1e-5, "maxfev": 100_000})
        except Spent:
            return "budget"
        if best["value"] >= before - 1e-5:
            step /= 2
    return "converged"
