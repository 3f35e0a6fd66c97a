"""A start point for a calibration read off the training runs by a linear regression, before any
simulation: the **bottleneck regression**.

A search started from the workflow system's documented defaults, or from an installation's point for
one of its applications, can stall on a compromise between mechanisms (a point that makes small runs
too slow and large ones too fast) when a budget allows only a few dozen simulations of a large
training set: Nelder-Mead then takes the whole budget to walk down a diagonal valley in ten
dimensions.  Yet each mechanism of the model leaves a signature that is linear in a quantity of the run
that can be read without simulating it:

* the workflow's start-up: a constant per run;
* the runtimes: the recorded critical path times ``runtime_factor``;
* the per-task overheads (``submit``, ``pre``, ``post``, half a ``cycle`` on average): once per level
  of the graph on its longest chain;
* the dispatcher: ``dispatch_interval`` per task released;
* the storage service: the bytes the run moves divided by ``bandwidth`` when it is the bottleneck.

:func:`regression_start` fits the recorded makespans as a non-negative combination of these five
columns (:func:`scipy.optimize.nnls`; rows divided by the recorded makespan, so the fit minimises
relative errors, the scale of the calibration's objective) and maps the coefficients back onto the
parameters.  A sum where the simulator takes maxima and overlaps, so never the answer; a point in the
right basin, which the calibration's search evaluates like any other and keeps only when it is better on
the training runs (:func:`~simsched.fidelity.calibrate.calibrate_installation`): a method-of-moments
start for a simulation-based fit, which costs one simulation of the training set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from simsched.fidelity.corpus import Execution
from simsched.fidelity.model import Parameters
from simsched.simulator.engine import TaskIO

COLUMNS: tuple[str, ...] = ("startup", "critical path", "levels", "tasks", "bytes")
"""The regression's columns, in the order of :func:`run_features`."""

PER_LEVEL: tuple[str, ...] = ("submit", "pre", "post")
"""The overheads a task pays once each on its way through the workflow, which the ``levels`` column's
coefficient is shared among (with half a ``cycle``)."""


def moved_bytes(io: TaskIO) -> float:
    """The bytes a run's I/O plan ``io`` reads and writes through storage if no file stayed on a host:
    every input and output file of every task at its size, plus the measured bytes not explained by
    files.  An upper bound of what the storage model moves (a file kept on the host that wrote it is not
    read again).  O(n + file references)."""
    return float(io.size[io.in_files].sum() + io.size[io.out_files].sum() + io.extra_read.sum()
                 + io.extra_write.sum())


def run_features(execution: Execution, io: TaskIO) -> np.ndarray:
    """The regression's row of one run (:data:`COLUMNS`): 1, the critical path of its recorded
    runtimes in seconds, the levels of its graph, its tasks, the bytes it moves (:func:`moved_bytes`).
    O(n + e)."""
    run = execution.run
    return np.array([1.0, run.critical_path(execution.graph), float(execution.graph.depth), float(run.n_tasks),
                     moved_bytes(io)], dtype=np.float64)


def regression_start(train: Sequence[Execution], io: Sequence[TaskIO], base: Parameters) -> Parameters | None:
    """``base`` with the start-up, the runtime factor, the per-task overheads, the dispatcher's interval
    and the storage bandwidth replaced by a non-negative least-squares fit of the recorded makespans of
    ``train`` (``io``: each run's I/O plan) on :func:`run_features`, each row divided by its makespan (see
    the module docstring).  The ``levels`` coefficient is shared among ``submit``, ``pre`` and ``post``
    in ``base``'s proportions (equally where ``base`` has none), after half of ``base``'s ``cycle``;
    a bytes coefficient of 0 means no storage bottleneck (``bandwidth`` None).  Other parameters
    (``slots``, ``cycle``, ``dispatch_per_queued``, ``latency``) are ``base``'s.  Values are not
    clipped to a search box (the caller does).  None when no run has a recorded makespan > 0 or the fit
    gives no positive runtime factor (a critical path the makespans do not grow with).
    O(runs x (n + e)) for the features, then a 5-column NNLS."""
    from scipy.optimize import nnls

    rows, target = [], []
    for e, plan in zip(train, io):
        if e.run.makespan and e.run.makespan > 0:
            rows.append(run_features(e, plan) / e.run.makespan)
            target.append(1.0)
    if not rows:
        return None
    a = np.vstack(rows)
    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    coef, _ = nnls(a / scale, np.asarray(target), maxiter=50 * a.shape[1])
    startup, factor, per_level, interval, per_byte = (coef / scale).tolist()
    if not factor > 0 or not math.isfinite(factor):
        return None
    per_level = max(per_level - base.cycle / 2.0, 0.0)
    shares = np.array([getattr(base, name) for name in PER_LEVEL], dtype=np.float64)
    shares = shares / shares.sum() if shares.sum() > 0 else np.full(len(PER_LEVEL), 1.0 / len(PER_LEVEL))
    overheads = {name: float(per_level * s) for name, s in zip(PER_LEVEL, shares)}
    bandwidth = 1.0 / per_byte if per_byte > 0 else None
    return replace(base, startup=float(startup), runtime_factor=float(factor), dispatch_interval=float(interval),
                   bandwidth=bandwidth, **overheads)
