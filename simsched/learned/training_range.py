"""The safety line of learned schedulers: what a checkpoint was trained on, and whether an instance
lies outside it.

A learned scheduler (``deepsched``, ``rl``, ``rl-world``) derives from :class:`RangeChecked` and
implements ``training_range()`` returning a :class:`TrainingRange`, derived from what its checkpoint
stores — task and processor counts, workload families, CCR — and a short content hash of the
checkpoint file. The runner calls it once per scheduler: an instance outside any stored range gives
one warning line naming the range, and every result row records the checkpoint's id. Cost: one hash
of the checkpoint file (cached per path and modification time) and O(n m + e) for the instance's
CCR. The runner reaches the hooks (``checkpoint_id``, ``range_warning``) by ``getattr``: it sits on
a lower floor and imports nothing here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsched.simulator.problem import Problem

_IDS: dict[tuple[str, float], str] = {}


def checkpoint_id(path: str | Path) -> str:
    """First 12 hex digits of the SHA-256 of the checkpoint file's bytes."""
    p = Path(path)
    key = (str(p.resolve()), p.stat().st_mtime)
    if key not in _IDS:
        _IDS[key] = hashlib.sha256(p.read_bytes()).hexdigest()[:12]
    return _IDS[key]


def instance_ccr(problem: Problem) -> float:
    """Communication-to-computation ratio: mean edge transfer time (HEFT's c-bar) over mean
    execution time; 0 without edges.  O(n m + e)."""
    if problem.graph.n_edges == 0:
        return 0.0
    return float(np.mean(problem.mean_transfer) / max(float(np.mean(problem.mean_cost)), 1e-300))


def _span(v: tuple[float, float], fmt: str = "{:g}") -> str:
    return fmt.format(v[0]) if v[0] == v[1] else f"{fmt.format(v[0])}-{fmt.format(v[1])}"


@dataclass(frozen=True)
class TrainingRange:
    """What a checkpoint was trained on; ``None`` fields are unknown (never checked)."""

    checkpoint: str
    tasks: tuple[int, int] | None = None
    processors: tuple[int, int] | None = None
    families: tuple[str, ...] | None = None
    ccr: tuple[float, float] | None = None

    @classmethod
    def from_dict(cls, checkpoint: str, doc: object) -> TrainingRange:
        """From a stored ``{"tasks": [lo, hi], "processors": [lo, hi], "families": [...], "ccr":
        [lo, hi]}``; missing or malformed entries are unknown."""
        d = doc if isinstance(doc, dict) else {}

        def pair(v: object) -> tuple | None:
            return (v[0], v[1]) if isinstance(v, list | tuple) and len(v) == 2 else None

        fams = d.get("families")
        return cls(checkpoint, pair(d.get("tasks")), pair(d.get("processors")),
                   tuple(str(f) for f in fams) if isinstance(fams, list | tuple) and fams else None,
                   pair(d.get("ccr")))

    def describe(self) -> str:
        parts = []
        if self.tasks:
            parts.append(f"{_span(self.tasks)} tasks")
        if self.processors:
            parts.append(f"{_span(self.processors)} processors")
        if self.ccr:
            parts.append(f"CCR {_span(self.ccr, '{:.3g}')}")
        if self.families:
            parts.append("families " + ", ".join(self.families))
        return "; ".join(parts) or "an unrecorded range"

    def outside(self, problem: Problem, family: str | None) -> list[str]:
        """What of ``problem`` (of workload ``family``; ``None``: unknown) lies outside the range."""
        out = []
        n, m = problem.n_tasks, problem.n_processors
        if self.tasks and not self.tasks[0] <= n <= self.tasks[1]:
            out.append(f"{n} tasks")
        if self.processors and not self.processors[0] <= m <= self.processors[1]:
            out.append(f"{m} processors")
        if self.ccr:
            c = instance_ccr(problem)
            if not self.ccr[0] * 0.999 <= c <= self.ccr[1] * 1.001:
                out.append(f"CCR {c:.3g}")
        if self.families and family is not None and family not in self.families:
            out.append(f"family {family}")
        return out


def workload_family(options: dict, form: str) -> str:
    """The family name of a scenario workload: the generator (``workflow:RECIPE`` for WfChef
    workflows) or, for an imported file, the importer's name."""
    if form != "generator":
        return form
    gen = str(options.get("generator", ""))
    if gen == "workflow":
        return f"workflow:{str(options.get('recipe', 'montage')).lower()}"
    return gen


def warning_line(label: str, rng: TrainingRange, problem: Problem, family: str | None) -> str | None:
    """One warning line when ``problem`` lies outside ``rng``, else ``None``."""
    bad = rng.outside(problem, family)
    if not bad:
        return None
    return (f"{label} (checkpoint {rng.checkpoint}) was trained on {rng.describe()}; "
            f"this instance has {', '.join(bad)}, outside that range: its plans may be poor")


class RangeChecked:
    """The runner's hooks of a learned scheduler, reached by ``getattr`` so the runner (a lower
    floor) never imports this package: :attr:`checkpoint_id` and :meth:`range_warning`.  A subclass
    implements ``training_range() -> TrainingRange``; it is computed once per instance (one
    checkpoint hash and read)."""

    def training_range(self) -> TrainingRange:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _range(self) -> TrainingRange:
        cached = self.__dict__.get("_training_range_cache")
        if cached is None:
            cached = self.training_range()
            self.__dict__["_training_range_cache"] = cached
        return cached

    @property
    def checkpoint_id(self) -> str:
        """The content id of the checkpoint (first 12 hex digits of its SHA-256)."""
        return self._range().checkpoint

    def range_warning(self, problem: Problem, label: str, workload: tuple[dict, str] | None = None) -> str | None:
        """One warning line when ``problem`` lies outside the checkpoint's training range, else
        ``None``; ``workload`` is the scenario workload's ``(options, form)`` (its family is
        checked too).  O(n m + e) for the instance's CCR."""
        family = workload_family(*workload) if workload is not None else None
        return warning_line(label, self._range(), problem, family)


def scenario_range(checkpoint: str | Path, scenario: str | Path | None, tasks: tuple[int, int] | None,
                   search: tuple[Path, ...] = ()) -> TrainingRange:
    """The range of a checkpoint trained on a generator scenario's family (the RL agents): ``tasks``
    as stored, the scenario's processor count and generator, and the CCR of 8 instances drawn from
    it (widened by 25% each way).  A scenario file that cannot be found leaves those unknown."""
    from simsched.errors import SimschedError

    ident = checkpoint_id(checkpoint)
    path = None
    if scenario:
        for base in (Path("."), *search):
            if (base / scenario).is_file():
                path = base / scenario
                break
    if path is None:
        return TrainingRange(ident, tasks)
    try:
        from simsched.learned.rl.family import Family

        fam = Family.from_scenario(path)
    except SimschedError:
        return TrainingRange(ident, tasks)
    lo, hi = tasks or fam.tasks
    ccr = []
    for i, size in enumerate((lo, hi) * 4):
        fam.tasks = (size, size)
        ccr.append(instance_ccr(fam.draw(i).problem))
    m = fam.platform.n_processors
    return TrainingRange(ident, (lo, hi), (m, m), (workload_family({"generator": fam.generator, **fam.options},
                                                                    "generator"),),
                         (min(ccr) * 0.8, max(ccr) * 1.25))
