"""Run-to-run spread: how closely the *other* runs of the same workflow on the same installation predict a
run — the error no deterministic model of that run can be expected to beat.

WfInstances records several runs of one workflow on one installation (five of each Makeflow BLAST and
BWA size, five of each SRA-search size).  Their makespans differ although the workflow, the machines and
the workflow system are the same: the system's own variability (queueing, storage contention, other
users) is not in the trace.  This module measures that spread in the units of the fidelity table:

* **Repeats** are executions of one installation whose file names differ only in a trailing run number
  (the WfInstances convention, ``blast-chameleon-large-003.json``) and whose graphs have the same numbers
  of tasks and edges (:func:`repeat_key`).  A corpus without such names has no repeats, and the report
  says so rather than guessing.
* **The repeats' prediction** of run i (:func:`repeat_predictions`) is a model that knows run i's own
  task runtimes (as every model of the fidelity table does) and the overhead its repeats showed:
  ``today_i + median_j (recorded_j - today_j)`` over the repeats j != i, where ``today`` is today's model
  (the runtimes' schedule, no overheads).  It sees recorded makespans of other held-out runs, so it is a
  reference (an oracle of the spread), not a model one could calibrate.
* :func:`spread_groups`: per installation with repeats, over its **held-out** runs that have repeats,
  the error of that prediction beside the calibrated model's on the same runs, and two spreads that
  need no model (:func:`group_deviations`): how far each run's recorded makespan lies from the median
  of its workflow's runs, and how far its simulation under today's model (its recorded runtimes laid
  out by the recorded placement: what a model is given) lies from theirs.  Where the second is small
  and the first is not, the runs gave a model the same input and took different times: no
  deterministic model of a run comes closer to them, on the median, than about the first.

Complexity: O(runs) to group, O(sum of group sizes squared) to predict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_RUN_NUMBER = re.compile(r"[-_]\d+$")


def repeat_key(name: str, installation: str, n_tasks: int, n_edges: int) -> tuple[str, str, int, int] | None:
    """The key shared by the repeats of one workflow: the installation, the file's name without its
    extension and trailing run number, and the graph's size; None when the name has no run number.
    O(len(name))."""
    stem = name.rsplit("/", 1)[-1]
    stem = stem[:-5] if stem.endswith(".json") else stem
    base = _RUN_NUMBER.sub("", stem)
    if base == stem:
        return None
    return installation, name[: len(name) - len(name.rsplit("/", 1)[-1])] + base, n_tasks, n_edges


def _groups(keys: Sequence[tuple | None], usable: Sequence[bool]) -> list[list[int]]:
    """The indices of the usable runs sharing a key (None: no repeats), groups of two or more only.
    O(runs)."""
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        if k is not None and usable[i]:
            groups.setdefault(k, []).append(i)
    return [m for m in groups.values() if len(m) >= 2]


def repeat_predictions(keys: Sequence[tuple | None], recorded: Sequence[float | None],
                       today: Sequence[float]) -> np.ndarray:
    """Per run, the repeats' prediction of its makespan (module docstring), NaN for a run without a
    repeat that has a recorded makespan and a finite today's simulation.  O(sum of group sizes^2)."""
    out = np.full(len(keys), math.nan)
    for members in _groups(keys, [bool(recorded[i]) and math.isfinite(today[i]) for i in range(len(keys))]):
        excess = np.array([recorded[i] - today[i] for i in members], dtype=np.float64)
        for pos, i in enumerate(members):
            out[i] = today[i] + float(np.median(np.delete(excess, pos)))
    return out


def group_deviations(keys: Sequence[tuple | None], values: Sequence[float | None]) -> np.ndarray:
    """Per run, ``|value / median of its repeats' values - 1|`` over its whole group of repeats (itself
    included; the keys of :func:`repeat_key`), NaN for a run without a repeat or a value that is
    missing, not finite or not positive.  O(runs log runs)."""
    out = np.full(len(keys), math.nan)
    for members in _groups(keys, [v is not None and math.isfinite(v) and v > 0 for v in values]):
        v = np.array([values[i] for i in members], dtype=np.float64)
        out[members] = np.abs(v / np.median(v) - 1.0)
    return out


@dataclass(frozen=True)
class SpreadGroup:
    """One installation's held-out runs that have repeats: how many, and the median and mean
    ``|relative error|`` of the repeats' prediction and of the calibrated model on those same runs
    (NaN without a calibrated model); the median of :func:`group_deviations` of their recorded
    makespans (``makespan_spread``) and of today's simulations of them (``input_spread``)."""

    installation: str
    runs: int
    repeats_median: float
    repeats_mean: float
    model_median: float
    model_mean: float
    makespan_spread: float = math.nan
    input_spread: float = math.nan


def spread_groups(installations: Sequence[str], held_out: Sequence[bool], recorded: Sequence[float | None],
                  predicted: np.ndarray, model: np.ndarray, makespan_spread: np.ndarray | None = None,
                  input_spread: np.ndarray | None = None) -> list[SpreadGroup]:
    """Per installation (sorted), over its held-out runs with a repeats' prediction: the errors of that
    prediction (``predicted``) and of ``model`` (simulated makespans, NaN where absent), and the medians
    of the runs' ``makespan_spread`` and ``input_spread`` (:func:`group_deviations`; NaN when not
    given).  O(runs)."""
    out = []
    for inst in sorted(set(installations)):
        idx = [i for i, x in enumerate(installations)
               if x == inst and held_out[i] and recorded[i] and math.isfinite(predicted[i])]
        if not idx:
            continue
        rec = np.array([recorded[i] for i in idx], dtype=np.float64)
        rep = np.abs(predicted[idx] / rec - 1.0)
        mod = np.abs(model[idx] / rec - 1.0) if model.size else np.full(len(idx), math.nan)
        finite = mod[np.isfinite(mod)]
        spreads = [float(np.nanmedian(a[idx])) if a is not None and np.isfinite(a[idx]).any() else math.nan
                   for a in (makespan_spread, input_spread)]
        out.append(SpreadGroup(inst, len(idx), float(np.median(rep)), float(rep.mean()),
                               float(np.median(finite)) if finite.size else math.nan,
                               float(finite.mean()) if finite.size else math.nan, *spreads))
    return out
