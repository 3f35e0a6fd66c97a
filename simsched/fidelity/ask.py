"""The two calls of the command line: :func:`calibrate_corpus` (``simsched calibrate``) and
:func:`fidelity_of` (``simsched fidelity``).  Each checks its options, reads the corpus with the split
the calibration used, and returns its answer as data; printing and writing are the caller's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simsched.errors import SimschedError
from simsched.fidelity.calibrate import (
    PRIOR_WEIGHT,
    Calibration,
    bounds_for,
    calibrate,
    check_options,
    parse_bounds,
    training_runs,
)
from simsched.fidelity.corpus import SPLIT, Corpus, read_corpus
from simsched.fidelity.identify import Diagnosis, diagnose
from simsched.fidelity.model import check_scheduler
from simsched.fidelity.profile import Profile, read_profile
from simsched.fidelity.search import SEARCH
from simsched.fidelity.table import FidelityTable, fidelity_table

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Calibrated:
    """What :func:`calibrate_corpus` answers: the corpus read (its split), each installation's
    calibration and, beside each, what its training runs cannot pin down
    (:mod:`~simsched.fidelity.identify`)."""

    corpus: Corpus
    calibrations: tuple[Calibration, ...]
    diagnoses: tuple[Diagnosis, ...] = ()


def calibrate_corpus(sources: Sequence[str | Path], *, budget_s: float, seed: int = 0, installation: str | None = None,
                     bounds: Sequence[str] = (), skip_refused: bool = False, hold_out: Sequence[str] = (),
                     per_application: bool = True, min_runs: int = 3, prior: float = PRIOR_WEIGHT,
                     search: str = SEARCH, regression: bool = True, split_runs: bool = True,
                     evaluations: int | None = None, split_kind: str = SPLIT,
                     progress: Progress | None = None) -> Calibrated:
    """Read ``sources`` (split with ``seed``, a split of kind ``split_kind``; without ``split_runs``
    every run trains), keep
    ``installation`` (all when None) and calibrate each installation on its training runs
    (``hold_out``: applications held out whole) within ``budget_s`` CPU seconds in all, ``bounds``
    (``NAME=LOW,HIGH``) overriding the default box, and with ``per_application`` each application of
    ``min_runs`` training runs or more refined from its installation's point, each fit pulled towards
    its start by ``prior``, each installation searched by ``search`` (:mod:`~simsched.fidelity.search`)
    from the better of its start and, with ``regression``, its bottleneck regression
    (:mod:`~simsched.fidelity.bottleneck`; :func:`~simsched.fidelity.calibrate.calibrate`; ``evaluations``:
    a budget in simulations instead of CPU seconds), and
    diagnose what each unit's training runs cannot pin down (:func:`~simsched.fidelity.identify.diagnose`).
    The options are checked before the corpus is read."""
    check_options(budget_s=budget_s, min_runs=min_runs, prior=prior, search=search, evaluations=evaluations)
    overrides = parse_bounds(bounds)
    corpus = read_corpus(sources, seed=seed, skip_refused=skip_refused, hold_out=hold_out, split_runs=split_runs,
                         split_kind=split_kind,
                         progress=None if progress is None else lambda d, n: progress(d, n, "reading the corpus"))
    corpus = corpus.select(installation)
    done = calibrate(corpus, budget_s=budget_s, seed=seed, bounds=overrides, per_application=per_application,
                     min_runs=min_runs, prior=prior, search=search, regression=regression, evaluations=evaluations,
                     progress=progress)
    runs = training_runs(corpus)
    boxes = {label: bounds_for(train, overrides) for label, train in runs.items()}
    diagnoses = []
    for c in done:
        names = set(c.train)
        train = [e for e in runs[c.installation] if e.name in names]
        diagnoses.append(diagnose(c.label, c.parameters, train, boxes[c.installation]))
    return Calibrated(corpus, tuple(done), tuple(diagnoses))


def fidelity_of(sources: Sequence[str | Path], *, profile: str | Path | None = None, seed: int | None = None,
                scheduler: str = "recorded", keep: bool = False, skip_refused: bool = False,
                split_kind: str | None = None, progress: Progress | None = None) -> FidelityTable:
    """Read ``sources`` and tabulate every execution under today's model and, with ``profile``, the
    calibrated one (:func:`~simsched.fidelity.table.fidelity_table`).  The split is the profile's: a run
    of an installation it calibrated is a training run exactly when the profile was trained on it, every
    other run of that installation is held out (so runs brought later, from another folder, are scored
    as unseen); the other installations are split with the profile's seed and kind.  ``seed`` and
    ``split_kind`` (:data:`~simsched.fidelity.corpus.SPLITS`; None: the default) give the split without
    a profile and must agree with the profile's when given with one."""
    check_scheduler(scheduler)
    read: Profile | None = read_profile(profile) if profile is not None else None
    if read is not None and seed is not None and seed != read.seed:
        raise SimschedError(f"the profile says which runs it was trained on, and splits the installations it did "
                            f"not calibrate with its own seed ({read.seed}); leave --seed out (seed {seed} would split "
                            f"those differently from the profile)", field="--seed")
    if read is not None and split_kind is not None and split_kind != read.split_kind:
        raise SimschedError(f"the profile splits the installations it did not calibrate as it was split itself "
                            f"({read.split_kind!r}); leave --split-kind out", field="--split-kind")
    split_seed = read.seed if read is not None else (seed or 0)
    split_kind = read.split_kind if read is not None else (split_kind or SPLIT)
    corpus = read_corpus(sources, seed=split_seed, skip_refused=skip_refused,
                         hold_out=read.hold_out if read is not None else (), split_kind=split_kind,
                         progress=None if progress is None else lambda d, n: progress(d, n, "reading the corpus"))
    return fidelity_table(corpus, profile=read, scheduler=scheduler, keep=keep,
                          progress=None if progress is None else lambda d, n, _name: progress(d, n, "simulating"))
