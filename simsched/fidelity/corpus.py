"""A corpus of recorded executions: found in folders, read, grouped into installations, split.

:func:`read_corpus` finds the WfFormat instances (``*.json``) under the folders and files it is given,
reads each with :func:`~simsched.workloads.importers.wfformat_recorded.read_recorded` (a record that
could not have happened is a located :class:`~simsched.errors.SimschedError`: exit 2, or, with
``skip_refused``, a refusal listed in :attr:`Corpus.refused`), groups the runs into installations
(:func:`~simsched.workloads.recorded.installations`: one workflow system on one pool of machines, the
unit calibration fits and scores) and splits each installation into a training part and a held-out
part (:func:`split`).

The split is what keeps the fidelity table honest: calibration sees the training runs only, and the
table's aggregates are over held-out runs only.  It depends on the file names and the seed, never on
what the files hold, so adding a run of one application moves no run of another across the split
(:data:`SPLITS`: the default; the earlier ``alternate`` split is kept so that its numbers reproduce).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from simsched.errors import SimschedError, did_you_mean
from simsched.workloads.importers.wfformat_recorded import read_recorded
from simsched.workloads.recorded import RecordedRun, installations
from simsched.workloads.taskgraph import TaskGraph

TRAIN, HELD_OUT = "train", "held-out"
"""The two parts of an installation's runs (:attr:`Execution.part`)."""

SPLITS: tuple[str, ...] = ("per-application", "alternate")
"""The splits by name (``--split-kind``; :func:`split`), the default first:

* ``per-application``: each application's runs alternate between the parts along a seeded order,
  from a seeded first part, and the applications with a single run alternate likewise among
  themselves; so a run added to one application moves no run of another that ran twice or more, and
  every seed draws afresh where every application has one run (an installation running each workflow
  once, as the corpus's Nextflow one);
* ``alternate`` (the split before this one): one alternation along all the applications in
  alphabetical order, its phase carried from one to the next: a run added to one application flips
  the runs of every application after it, and where every application has one run the split is the
  same for every seed.  Kept so that the numbers measured with it reproduce."""
SPLIT = SPLITS[0]
"""The default split."""


def check_split_kind(kind: object) -> None:
    """:class:`SimschedError` (field ``--split-kind``) unless ``kind`` names one of :data:`SPLITS`."""
    if kind not in SPLITS:
        raise SimschedError(f"must be one of {', '.join(SPLITS)}, got {kind!r}", field="--split-kind")


@dataclass(frozen=True, eq=False)
class Execution:
    """One recorded execution of a corpus: ``name`` (its path under the folder it was found in, as
    written in tables), ``path`` (the file), ``application`` (the file name up to its first ``-``, as
    WfInstances names its files: ``1000genome``, ``blast``), the imported ``graph`` and ``run``, its
    ``installation`` label, its ``part`` (:data:`TRAIN` or :data:`HELD_OUT`) and the SHA-256 ``digest``
    of the file's bytes (what a profile records of the runs it was trained on)."""

    name: str
    path: Path
    application: str
    graph: TaskGraph
    run: RecordedRun
    installation: str
    part: str
    digest: str = ""

    @property
    def wms(self) -> str:
        """The workflow system's name, lower case (``unknown`` when the run does not say)."""
        return (self.run.wms_name or "unknown").lower()

    @property
    def held_out(self) -> bool:
        return self.part == HELD_OUT


@dataclass(frozen=True)
class Corpus:
    """Executions in the order found (folders walked in sorted order), the files refused with
    their located reasons (``(name, message)``; only with ``skip_refused``), the split's seed, the
    applications it holds out whole and its kind (:func:`split`)."""

    executions: tuple[Execution, ...]
    refused: tuple[tuple[str, str], ...]
    seed: int
    hold_out: frozenset[str] = frozenset()
    split_kind: str = SPLIT

    def installations(self) -> dict[str, list[Execution]]:
        """Executions by installation label, labels in order of first execution.  O(n)."""
        out: dict[str, list[Execution]] = {}
        for e in self.executions:
            out.setdefault(e.installation, []).append(e)
        return out

    def select(self, installation: str | None) -> Corpus:
        """This corpus restricted to one installation (``None``: all).  :class:`SimschedError` naming
        the labels there are when there is none of that name.  O(n)."""
        if installation is None:
            return self
        kept = tuple(e for e in self.executions if e.installation == installation)
        if not kept:
            labels = ", ".join(self.installations()) or "none"
            raise SimschedError(f"no installation {installation!r} in the corpus (there are: {labels})",
                                field="--installation")
        return Corpus(kept, self.refused, self.seed, self.hold_out, self.split_kind)


def application(path: Path) -> str:
    """The application of a WfInstances file: its name up to the first ``-`` (``montage-chameleon-dss-
    15d-001.json`` is ``montage``).  O(len)."""
    return path.stem.split("-")[0]


def find_instances(sources: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """``(file, name)`` of every ``*.json`` under ``sources`` (a folder is walked, sorted; a file is
    taken as it is), ``name`` relative to the folder it was found in.  A source that does not exist,
    or a folder with no ``*.json`` file, is a :class:`SimschedError` naming it.  O(files)."""
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for source in sources:
        root = Path(source)
        if root.is_dir():
            files = sorted(p for p in root.rglob("*.json") if p.is_file())
            if not files:
                raise SimschedError("no WfFormat instance (*.json) in this folder", file=root)
            pairs = [(p, p.relative_to(root).as_posix()) for p in files]
        elif root.is_file():
            pairs = [(root, root.name)]
        else:
            raise SimschedError("no such file or folder", file=root)
        for path, name in pairs:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                found.append((path, name))
    return found


def _rank(seed: int, name: str) -> str:
    """A run's place in the seeded order of :func:`split`: a hash of the seed and the file's name."""
    return hashlib.sha256(f"{seed}\0{Path(name).name}".encode()).hexdigest()


def _coin(seed: int, key: str) -> int:
    """A seeded bit of ``key`` (0 or 1), independent of :func:`_rank`'s order."""
    return int(hashlib.sha256(f"{seed}\0part\0{key}".encode()).hexdigest()[:8], 16) & 1


def split(names: Sequence[str], applications: Sequence[str], seed: int,
          hold_out: frozenset[str] = frozenset(), kind: str = SPLIT) -> list[str]:
    """The part (:data:`TRAIN` or :data:`HELD_OUT`) of each run of one installation.

    Every run of an application in ``hold_out`` is held out (the applications a calibration must
    predict without having seen one of their runs).  The other runs, by ``kind`` (:data:`SPLITS`):

    * ``per-application``: each application's runs, in a seeded order (a hash of the seed and the file
      name), alternate between the parts from a seeded first part (a seeded bit of the application's
      name); the applications with a single run alternate likewise among themselves, as if they were
      one application.  An installation's only run is a training run.  So about half are held out, each
      application with two runs or more has runs in both parts, an installation of two runs or more
      has at least one of each, and a run added to one application moves no run of an application
      with two runs or more but its own (a new single-run application joins the alternation of the
      others and can move them).
    * ``alternate``: ordered by application, then by the seeded hash of the file name, alternating
      along that order starting with the training part, the phase carried over from one application to
      the next (a run added to one application can flip every run of the applications after it).

    Deterministic in ``(names, applications, seed, hold_out, kind)``.  O(n log n).
    """
    check_split_kind(kind)
    rest = [i for i in range(len(names)) if applications[i] not in hold_out]
    if kind == "per-application":
        return _per_application(names, applications, seed, rest)
    order = sorted(rest, key=lambda i: (applications[i], _rank(seed, names[i]), names[i]))
    parts = [HELD_OUT] * len(names)
    for position, i in enumerate(order):
        parts[i] = TRAIN if position % 2 == 0 else HELD_OUT
    return parts


def _per_application(names: Sequence[str], applications: Sequence[str], seed: int, rest: list[int]) -> list[str]:
    """:func:`split`'s ``per-application`` parts of the runs ``rest`` (the others held out).  O(n log n)."""
    parts = [HELD_OUT] * len(names)
    by_app: dict[str, list[int]] = {}
    for i in rest:
        by_app.setdefault(applications[i], []).append(i)

    def alternate(members: list[int], phase: int) -> None:
        for position, i in enumerate(sorted(members, key=lambda j: (_rank(seed, names[j]), names[j]))):
            parts[i] = TRAIN if (position + phase) % 2 == 0 else HELD_OUT

    for app, members in by_app.items():
        if len(members) > 1:
            alternate(members, _coin(seed, app))
    alternate([m[0] for m in by_app.values() if len(m) == 1], _coin(seed, ""))  # the applications run once
    if len(rest) == 1:  # the one run of an installation trains
        parts[rest[0]] = TRAIN
    return parts


def read_corpus(sources: Sequence[str | Path], *, seed: int = 0, skip_refused: bool = False,
                hold_out: Sequence[str] = (), split_runs: bool = True, split_kind: str = SPLIT,
                progress: Callable[[int, int], None] | None = None) -> Corpus:
    """Read every instance under ``sources`` (:func:`find_instances`) into a :class:`Corpus` with its
    installations and each installation's split (:func:`split` of kind ``split_kind``, seeded with
    ``seed``, the applications ``hold_out`` held out whole: each must name an application of the
    corpus; the kind is checked before any file is read).  Without ``split_runs``
    every run is a training run but those of ``hold_out`` (a calibration on all the runs given, scored
    later on others).

    A file that :func:`read_recorded` refuses stops the reading with its located error
    (:class:`SimschedError`), unless ``skip_refused``: then it is listed in :attr:`Corpus.refused` and
    the rest are read; no readable instance at all is an error either way.  ``progress(done, total)`` is
    called after each file.  O(total size of the files).
    """
    check_split_kind(split_kind)
    pairs = find_instances(sources)
    read: list[tuple[Path, str, TaskGraph, RecordedRun]] = []
    refused: list[tuple[str, str]] = []
    for done, (path, name) in enumerate(pairs, start=1):
        try:
            graph, run = read_recorded(path)
        except SimschedError as exc:
            if not skip_refused:
                raise exc.located(file=path) from None
            refused.append((name, str(exc.located(file=path))))
        else:
            read.append((path, name, graph, run))
        if progress is not None:
            progress(done, len(pairs))
    if not read:
        where = ", ".join(str(s) for s in sources)
        note = f" ({len(refused)} refused)" if refused else ""
        raise SimschedError(f"no readable WfFormat instance in {where}{note}")
    held = frozenset(hold_out)
    known = {application(path) for path, _, _, _ in read}
    for app in sorted(held - known):
        raise SimschedError(f"no application {app!r} in the corpus{did_you_mean(app, sorted(known))} (there are: "
                            f"{', '.join(sorted(known))})", field="--hold-out")
    groups = installations([r for _, _, _, r in read])
    label_of, part_of = [""] * len(read), [TRAIN] * len(read)
    for label, members in groups:
        apps = [application(read[i][0]) for i in members]
        parts = (split([read[i][1] for i in members], apps, seed, held, split_kind) if split_runs
                 else [HELD_OUT if app in held else TRAIN for app in apps])
        for i, part in zip(members, parts):
            label_of[i], part_of[i] = label, part
    executions = tuple(Execution(name, path, application(path), graph, run, label_of[i], part_of[i],
                                 hashlib.sha256(path.read_bytes()).hexdigest())
                       for i, (path, name, graph, run) in enumerate(read))
    return Corpus(executions, tuple(refused), seed, held, split_kind)
