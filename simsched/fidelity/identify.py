"""What a calibration's training runs cannot pin down: **identifiability**, said at calibration time.

A calibration fits ten parameters to a handful of makespans.  Where the training runs vary two
mechanisms together (BWA's tasks and bytes grow in proportion; every BLAST run has three levels), any
split of the time between those mechanisms fits the runs equally well, and the search settles on one
for reasons of its own; a held-out run that varies them in another proportion then meets a split that
nothing measured.  That is the commonest way a calibrated point that fits its training runs to a few
percent misses a new run by tens of percent (docs/fidelity.md, "Calibrate on past runs, predict new
ones").  A user can know it before predicting, from the training runs alone:

* **Which mechanisms the runs tell apart.**  Each mechanism adds time in proportion to a quantity the
  run states (:mod:`~simsched.fidelity.bottleneck`: start-up once, the critical path, the levels, the
  tasks, the bytes).  The training runs' quantities, each row divided by its recorded makespan (the
  scale of the objective) and each column scaled to unit length, form a matrix whose singular values say
  how many independent directions the runs exercise.  A direction whose singular value is below
  :data:`TOLERANCE` of the largest changes the training makespans too little to be measured against the
  spread of repeats; the mechanisms that carry that direction (their share of it, the diagonal of the
  projection onto those directions, at least :data:`SHARE`) cannot be told apart by these runs.  With
  fewer runs than mechanisms some always cannot.  This is the collinearity diagnosis of linear
  regression (Belsley, Kuh and Welsch, *Regression Diagnostics*, 1980, ch. 3: condition indices and the
  variance-decomposition proportions) applied to the linear signature of the model.
* **Which fitted parameters ended at the edge of their search box** where the edge is not a natural
  "none" (an overhead at its highest, the runtime factor at either end, the storage at its slowest): the
  runs asked for more than the box allows, and the parameter is standing in for something the model
  does not have.

And, for each run predicted later, **whether it varies what its training runs could not tell apart**
(:func:`unexercised_share`): a profile keeps its training runs' mix (``train_mix``), and ``simsched
fidelity`` flags a held-out run as *unpinned* when :data:`UNPINNED` or more of its own mix lies outside
the directions they exercised.  Such a run's predicted makespan rests on a split of time between
mechanisms that nothing measured, whatever the training error was.

A diagnosis, not a refusal: the calibration is written as before.  O(runs x (n + e)) for the runs'
quantities, then an SVD of a runs x 5 matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from simsched.fidelity.bottleneck import COLUMNS, run_features
from simsched.fidelity.calibrate import Bound
from simsched.fidelity.corpus import Execution
from simsched.fidelity.model import Parameters, task_io

MECHANISMS: dict[str, str] = {"startup": "start-up", "critical path": "runtimes", "levels": "overheads",
                              "tasks": "dispatcher", "bytes": "storage"}
"""The mechanism each of the regression's :data:`~simsched.fidelity.bottleneck.COLUMNS` measures, as
tables name it: the start-up, the runtimes (``runtime_factor``), the per-task overheads (``submit``,
``pre``, ``post``, ``cycle``), the dispatcher, the storage."""

TOLERANCE = 0.05
"""A direction of the runs' quantities is exercised when its singular value is at least this share of the
largest: a combination below it moves the training makespans by less than a twentieth of what the best
exercised one does, under the median spread of repeats of one workflow on one installation (7-12% on
WfInstances, docs/fidelity.md, "How close can any model be?")."""

SHARE = 0.2
"""A mechanism cannot be told apart when at least this share of its column lies in the directions the
runs do not exercise."""

UNPINNED = 2 * TOLERANCE
"""A run is **unpinned** by its calibration when at least this share of its mix lies outside the
directions the training runs exercised (:func:`unexercised_share`): twice what marks a direction as not
exercised, so that a run like the training runs, whose mix lies within their own spread, is not flagged."""

TOGETHER = 1.5
"""Two quantities move together over the training runs when their ratio varies by less than this factor
from run to run (:func:`together`): what a user would vary in the runs to add."""

_PER = {"critical path": "second of critical path", "levels": "level", "tasks": "task", "bytes": "byte"}

EDGE = 0.01
"""A fitted parameter is at the edge of its box when within this share of the box's width of it (on the
scale the search uses: logarithmic for a log-scaled bound)."""

_FLAG_HIGH = ("submit", "dispatch_interval", "dispatch_per_queued", "cycle", "pre", "post", "startup", "latency",
              "runtime_factor")
"""Parameters whose highest value is no natural "none": at it, the runs asked for more."""
_FLAG_LOW = ("runtime_factor", "bandwidth")
"""Parameters whose lowest value is no natural "none" (an overhead of 0 is "no overhead"; one slot is a
serial installation)."""


@dataclass(frozen=True)
class Diagnosis:
    """What one calibration unit's training runs pin down: ``exercised`` of the ``mechanisms`` the
    runs' quantities vary independently, those they cannot tell apart (``confounded``, in the order of
    :data:`MECHANISMS`), those no run exercises at all (``absent``: a quantity that is 0 in every run,
    such as bytes where no run records a file size) and the fitted parameters at the edge of their box
    (``at_edge``: ``name=value (highest|lowest)``)."""

    label: str
    runs: int
    mechanisms: int
    exercised: int
    confounded: tuple[str, ...]
    absent: tuple[str, ...]
    at_edge: tuple[str, ...]
    together: tuple[str, ...] = ()
    """Why, in the runs' own terms: the quantities of the confounded mechanisms that barely vary, alone or
    per one another (:func:`together`), e.g. ``levels 1.00x``, ``bytes per task 1.12x``."""

    @property
    def clean(self) -> bool:
        """Nothing to say: every mechanism told apart, none absent, no parameter at an edge."""
        return not (self.confounded or self.absent or self.at_edge)


def directions(mix: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The directions the training runs' ``mix`` exercises (runs x columns: each run's
    :func:`~simsched.fidelity.bottleneck.run_features` per second of its recorded makespan): each column's
    length (its scale; 1 for a column 0 in every run), the right singular vectors of the scaled matrix (a
    columns x columns orthonormal basis, strongest first) and how many of them are exercised
    (:data:`TOLERANCE`).  O(runs x columns^2)."""
    scale = np.linalg.norm(mix, axis=0)
    scale[scale == 0] = 1.0
    _, s, vt = np.linalg.svd(mix / scale, full_matrices=True)
    exercised = int((s >= TOLERANCE * s[0]).sum()) if s.size and s[0] > 0 else 0
    return scale, vt, exercised


def confounded(mix: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """From the training runs' ``mix`` (as :func:`directions` takes it): how many independent directions the runs
    exercise, the columns they cannot tell apart and the columns that are 0 in every run (see the module
    docstring).  O(runs x columns^2)."""
    present = (mix > 0).any(axis=0)
    _, vt, exercised = directions(mix)
    share = (vt[exercised:] ** 2).sum(axis=0)  # the directions not exercised, and those no run can
    weak = tuple(int(j) for j in np.flatnonzero((share >= SHARE) & present))
    return exercised, weak, tuple(int(j) for j in np.flatnonzero(~present))


def together(quantities: np.ndarray, columns: Sequence[int]) -> tuple[str, ...]:
    """Of ``columns`` (indices into :data:`~simsched.fidelity.bottleneck.COLUMNS`, as :func:`confounded`
    names them) the pairs whose ratio varies by less than :data:`TOGETHER` over the runs' ``quantities``
    (runs x columns, :func:`~simsched.fidelity.bottleneck.run_features`), each as ``"B per A 1.12x"``
    (``"B 1.00x"`` against the start-up's constant: B itself barely varies).  A pair where either
    quantity is 0 in some run is told apart by that run.  O(runs x columns^2)."""
    out = []
    for a, b in combinations(sorted(columns), 2):
        x, y = quantities[:, a], quantities[:, b]
        if not ((x > 0).all() and (y > 0).all()):
            continue
        ratio = y / x
        spread = float(ratio.max() / ratio.min())
        if spread < TOGETHER:
            what = COLUMNS[b] if a == 0 else f"{COLUMNS[b]} per {_PER[COLUMNS[a]]}"
            out.append(f"{what} {spread:.2f}x")
    return tuple(out)


def unexercised_share(mix: np.ndarray, scale: np.ndarray, vt: np.ndarray, exercised: int) -> float:
    """How much of one run's ``mix`` lies outside the directions its training runs exercised
    (:func:`directions`): the length of its scaled mix's part outside the span of the first ``exercised``
    basis vectors over its whole length, from 0 (a mix the training runs pinned down) to 1.  Blind to the
    row's scale: the run's quantities themselves (its makespan, to be predicted, unknown) give the same.  A run with a
    quantity every training run lacked (bytes where none recorded any) lies outside along that quantity.
    The leverage of a new point in a regression, made scale-free: a large share means the run's makespan
    depends on a split of time between mechanisms that its training runs never had to choose.
    O(columns^2)."""
    x = mix / scale
    length = float(np.linalg.norm(x))
    if length == 0.0:
        return 0.0
    basis = vt[:exercised]
    return float(np.linalg.norm(x - basis.T @ (basis @ x))) / length


def at_edge(parameters: Parameters, bounds: Mapping[str, Bound]) -> tuple[str, ...]:
    """The free ``parameters`` (those ``bounds`` does not fix) within :data:`EDGE` of an end of their
    bound that is no natural "none" (``name=value (highest)`` / ``(lowest)``).  O(parameters)."""
    out = []
    for name, value in parameters.as_dict().items():
        b = bounds.get(name)
        if b is None or b.fixed or value is None:
            continue
        lo, hi, v = (np.log10([b.low, b.high, max(float(value), b.low)]) if b.log
                     else (b.low, b.high, float(value)))
        near = EDGE * (hi - lo)
        if name in _FLAG_HIGH and v >= hi - near:
            out.append(f"{name}={value:.4g} (highest)")
        elif name in _FLAG_LOW and v <= lo + near:
            out.append(f"{name}={value:.4g} (lowest)")
    return tuple(out)


def diagnose(label: str, parameters: Parameters, train: Sequence[Execution],
             bounds: Mapping[str, Bound]) -> Diagnosis:
    """The :class:`Diagnosis` of the calibration unit ``label`` whose ``parameters`` were fitted on
    ``train`` (its runs without a recorded makespan are left out) within ``bounds``: from a
    :class:`~simsched.fidelity.calibrate.Calibration` as it ends, or from a profile's entry and the
    corpus it was calibrated on.  O(runs x (n + e))."""
    runs = [e for e in train if e.run.makespan and e.run.makespan > 0]
    names = list(MECHANISMS.values())
    why: tuple[str, ...] = ()
    if runs:
        quantities = np.vstack([run_features(e, task_io(e.run)) for e in runs])
        makespans = np.array([e.run.makespan for e in runs], dtype=np.float64)
        exercised, weak, absent = confounded(quantities / makespans[:, None])
        why = together(quantities, weak) if len(runs) > 1 else ()
    else:
        exercised, weak, absent = 0, tuple(range(len(COLUMNS))), ()
    return Diagnosis(label, len(runs), len(COLUMNS), exercised, tuple(names[j] for j in weak),
                     tuple(names[j] for j in absent), at_edge(parameters, bounds), why)
