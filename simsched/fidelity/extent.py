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
tasks, levels of the graph, critical path of the recorded runtimes, bytes moved; and the work, the sum
of the recorded runtimes, that contention for slots acts on.  The fidelity table
says which runs lie beyond it by more than :data:`SLACK`.  A flag, not a refusal: an extrapolation may
well hold, but nothing measured says it does.  O(n + e) per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simsched.fidelity.bottleneck import moved_bytes
from simsched.fidelity.corpus import Execution
from simsched.fidelity.model import task_io

FEATURES: tuple[str, ...] = ("tasks", "levels", "critical_path_s", "work_s", "bytes")
"""What the training range spans, in the order :func:`features` gives them."""

LABELS: dict[str, str] = {"tasks": "tasks", "levels": "levels", "critical_path_s": "critical path",
                          "work_s": "work", "bytes": "bytes"}
"""How tables name each feature."""

SLACK = 1.25
"""How far beyond its training range a run may lie before it is flagged: a factor on either end.  Repeats
of one configuration differ by tens of percent in their recorded runtimes (WfInstances' srasearch:
critical paths within a factor of two), so a run of a configuration that was trained on should not be
flagged for lying a little beyond the runs that happened to be drawn for training."""

Range = Mapping[str, tuple[float, float]]


def features(execution: Execution) -> dict[str, float]:
    """A run's :data:`FEATURES`: its tasks, the levels of its graph, the critical path of its recorded
    runtimes and their sum in seconds, and the bytes it moves through storage if no file stays on a
    host (:func:`~simsched.fidelity.bottleneck.moved_bytes`).  O(n + e)."""
    run = execution.run
    return {"tasks": float(run.n_tasks), "levels": float(execution.graph.depth),
            "critical_path_s": float(run.critical_path(execution.graph)), "work_s": float(run.runtime.sum()),
            "bytes": moved_bytes(task_io(run))}


def training_range(train: Sequence[Execution]) -> dict[str, tuple[float, float]]:
    """``{feature: (lowest, highest)}`` over the runs of ``train`` (none: an empty mapping).
    O(runs x (n + e))."""
    rows = [features(e) for e in train]
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
