"""How far a run lies from the runs a calibration was trained on: **the training range**.

A calibrated point is fitted where its training runs are.  Mechanisms those runs never exercise are not
pinned down by them: fitted on small and medium runs whose makespans are set by the dispatcher, the
number of slots per host is free to take any value that fits them, and a run of long tasks then meets a
contention the installation does not have; fitted on runs that move gigabytes, the storage bandwidth
says nothing about runs that move terabytes.  Inside the range the held-out errors of the fidelity table
apply; beyond it they do not (docs/fidelity.md, "Calibrate on past runs, predict new ones", measures the
difference).

So a profile records, per calibrated unit, the range its training runs span in the four quantities the
bottleneck regression reads off a run without simulating it (:mod:`~simsched.fidelity.bottleneck`):
tasks, levels of the graph, critical path of the recorded runtimes, bytes moved; the work, the sum of
the recorded runtimes, that contention for slots acts on; and the run's **shape**, its work and bytes
per task.  The fidelity table says which runs lie beyond the range by more than :data:`SLACK`, and
tells two kinds apart: a run **larger** (or **smaller**) than the training runs but of their shape (only
its size beyond: more tasks, more of everything per run, or less), which extrapolates along the direction the training
runs varied in, and a run of **another shape** (longer tasks, more bytes per task), which exercises in
another proportion mechanisms the training runs may have had no way to tell apart (tasks and bytes that
grew together: a per-task overhead and a storage bandwidth explain them equally well).  A flag, not a
refusal: an extrapolation may well hold, but nothing measured says it does.  O(n + e) per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from simsched.fidelity.bottleneck import run_features
from simsched.fidelity.corpus import Execution
from simsched.fidelity.model import task_io
from simsched.simulator.engine import TaskIO

SIZE: tuple[str, ...] = ("tasks", "levels", "critical_path_s", "work_s", "bytes")
"""The features that say how large a run is."""

SHAPE: tuple[str, ...] = ("work_per_task_s", "bytes_per_task")
"""The features that say what a run's tasks are like, whatever their number."""

FEATURES: tuple[str, ...] = SIZE + SHAPE
"""What the training range spans, in the order :func:`features` gives them."""

LABELS: dict[str, str] = {"tasks": "tasks", "levels": "levels", "critical_path_s": "critical path",
                          "work_s": "work", "bytes": "bytes", "work_per_task_s": "work per task",
                          "bytes_per_task": "bytes per task"}
"""How tables name each feature."""

SLACK = 1.25
"""How far beyond its training range a run may lie before it is flagged: a factor on either end.  Repeats
of one configuration differ by tens of percent in their recorded runtimes (WfInstances' srasearch:
critical paths within a factor of two), so a run of a configuration that was trained on should not be
flagged for lying a little beyond the runs that happened to be drawn for training."""

Range = Mapping[str, tuple[float, float]]


def features(execution: Execution, io: TaskIO | None = None, row: np.ndarray | None = None) -> dict[str, float]:
    """A run's :data:`FEATURES`: its tasks, the levels of its graph, the critical path of its recorded
    runtimes and their sum in seconds, the bytes it moves through storage if no file stays on a host
    (:func:`~simsched.fidelity.bottleneck.moved_bytes`), and the last two per task; ``io``: the run's
    :func:`~simsched.fidelity.model.task_io` where the caller built it already, ``row``: its
    :func:`~simsched.fidelity.bottleneck.run_features` likewise (the same quantities, computed in one
    place).  O(n + e)."""
    if row is None:
        row = run_features(execution, task_io(execution.run) if io is None else io)
    _, critical, levels, tasks, moved = (float(v) for v in row)
    work = float(execution.run.runtime.sum())
    return {"tasks": tasks, "levels": levels, "critical_path_s": critical, "work_s": work, "bytes": moved,
            "work_per_task_s": work / max(tasks, 1.0), "bytes_per_task": moved / max(tasks, 1.0)}


def training_range(train: Sequence[Execution], rows: Sequence[np.ndarray] | None = None
                   ) -> dict[str, tuple[float, float]]:
    """``{feature: (lowest, highest)}`` over the runs of ``train`` (none: an empty mapping); ``rows``:
    their :func:`~simsched.fidelity.bottleneck.run_features` where the caller has them.
    O(runs x (n + e))."""
    rows = [features(e, row=None if rows is None else rows[i]) for i, e in enumerate(train)]
    return {f: (min(r[f] for r in rows), max(r[f] for r in rows)) for f in FEATURES} if rows else {}


def beyond(values: Mapping[str, float], span: Range, slack: float = SLACK) -> tuple[str, ...]:
    """The features of ``values`` outside ``[lowest / slack, highest x slack]`` of ``span`` (a feature the
    range does not hold is not judged).  O(features)."""
    out = []
    for name in FEATURES:
        if name in span and name in values:
            low, high = span[name]
            if not low / slack <= values[name] <= high * slack:
                out.append(name)
    return tuple(out)


def below(values: Mapping[str, float], span: Range, slack: float = SLACK) -> tuple[str, ...]:
    """The features of ``values`` under ``lowest / slack`` of ``span``: those of :func:`beyond` where the
    run lies below the range rather than above it.  O(features)."""
    return tuple(name for name in FEATURES if name in span and name in values
                 and values[name] < span[name][0] / slack)


def kind(far: Sequence[str], under: Sequence[str] = ()) -> str:
    """What the features a run lies beyond (:func:`beyond`; ``under``: those of them below the range,
    :func:`below`) make of it: ``"within"`` (none), ``"another shape"`` (a :data:`SHAPE` feature among
    them), else by size alone ``"larger"`` (every one above), ``"smaller"`` (every one below) or
    ``"another size"`` (some above, some below: more tasks but fewer bytes)."""
    if not far:
        return "within"
    if any(f in SHAPE for f in far):
        return "another shape"
    low = sum(f in under for f in far)
    return "larger" if low == 0 else "smaller" if low == len(far) else "another size"


KINDS: tuple[str, ...] = ("within", "larger", "smaller", "another size", "another shape")
"""The kinds :func:`kind` gives, in the order tables list them."""
