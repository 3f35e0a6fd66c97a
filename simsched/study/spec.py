"""Study files: a base scenario, a grid (or list) of overrides, schedulers and seeds.

::

    name: ccr-shape
    scenario: ../quickstart.yaml          # a scenario file (relative to this file) or an inline mapping
    grid:                                 # every combination of these values ...
      workload.ccr: [0.1, 1, 10]
      workload.shape: [0.5, 2]
    points:                               # ... times each of these override sets (optional)
      - {platform.processors[1].count: 1}
      - {platform.processors[1].count: 4}
    schedulers: [heft, cpop, peft]        # replaces the scenario's list (same syntax)
    seeds: [0, 1, 2]                      # or repetitions: N (seeds seed .. seed+N-1 of the scenario)

:func:`load_study` validates the file (unknown fields, wrong types; each error names the file, the
field and the line) and then *every* study point: the overrides are applied to the raw scenario data
(:func:`~simsched.scenario.overrides.apply_overrides`) and the result goes through
:func:`~simsched.scenario.parse_scenario`, so a bad override fails before anything runs,
with its dotted path.  Each point gets an id hashed from its scenario data (names, descriptions and
the scheduler list excluded) and each run — (point, scheduler, seed) — a task id hashed from the
point id, the scheduler's name and parameters and the seed: ``--resume`` recognises finished runs by
these ids, so extending a grid or adding a scheduler reruns only what is new.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario import Problems, Scenario, ScenarioError, dotted, parse_scenario
from simsched.scenario.overrides import parse_path
from simsched.scenario.schema import NumbersChecked
from simsched.yamlio import YamlDocument, load_yaml

RESERVED = ("seed", "repetitions", "schedulers")
"""Scenario fields a study sets through its own ``seeds``/``repetitions``/``schedulers`` fields."""


class StudyModel(NumbersChecked):
    """The top level of a study file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    description: str = ""
    scenario: str | dict[str, Any]
    grid: dict[str, Annotated[list[Any], Field(min_length=1)]] = {}
    points: list[dict[str, Any]] = []
    schedulers: Annotated[list[Any], Field(min_length=1)] | None = None
    seeds: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)] | None = None
    repetitions: Annotated[int, Field(ge=1)] | None = None


@dataclass(frozen=True)
class StudyTask:
    """One run: a study point, a scheduler (its label in the point's scenario) and a seed."""

    task_id: str
    point: int
    scheduler: str
    seed: int


@dataclass(frozen=True)
class StudyPoint:
    """One scenario variant: its index, the override values that make it, the overridden raw data
    (what a worker parses), and the validated scenario."""

    index: int
    overrides: Mapping[str, Any]
    data: Mapping[str, Any] = field(repr=False)
    point_id: str
    scenario: Scenario = field(repr=False, compare=False)
    seeds: tuple[int, ...] = ()

    def tasks(self) -> list[StudyTask]:
        """Every (scheduler, seed) run of this point, schedulers first, in file order."""
        out = []
        for spec in self.scenario.schedulers:
            for seed in self.seeds:
                key = _digest([self.point_id, spec.name, _canonical(dict(spec.params)), seed], 16)
                out.append(StudyTask(key, self.index, spec.label, seed))
        return out


@dataclass(frozen=True)
class Study:
    """A validated study: its points in grid order and the override fields (result columns)."""

    name: str
    description: str
    file: Path | None
    points: tuple[StudyPoint, ...]
    fields: tuple[str, ...]
    scenario_file: Path | None = None

    def tasks(self) -> list[StudyTask]:
        """All runs, point by point (the order rows are written in)."""
        return [t for p in self.points for t in p.tasks()]

    def identity(self) -> dict[str, Any]:
        """What a results file stores to recognise its study on ``--resume``: the name, the point ids,
        a fingerprint of the whole spec (points, schedulers, seeds) and the number of runs (so that a
        reader of an interrupted sweep's results can say "143 of 144 runs").  O(runs)."""
        points = [p.point_id for p in self.points]
        tasks = self.tasks()
        return {"study": self.name, "fingerprint": _digest([self.name, [t.task_id for t in tasks]], 16),
                "points": points, "runs": len(tasks)}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def _digest(value: Any, n: int) -> str:
    return hashlib.sha1(_canonical(value).encode("utf-8")).hexdigest()[:n]


def point_id(data: Mapping[str, Any]) -> str:
    """Id of a scenario variant: a hash of its data without name, description and schedulers."""
    return _digest({k: v for k, v in data.items() if k not in ("name", "description", "schedulers")}, 12)


def _sub_document(doc: YamlDocument, prefix: tuple[Any, ...]) -> YamlDocument:
    """The part of ``doc`` at ``prefix`` as its own document (lines kept, paths re-rooted)."""
    n = len(prefix)
    lines = {k[n:]: v for k, v in doc.lines.items() if k[:n] == prefix}
    node: Any = doc.data
    for key in prefix:
        node = node[key]
    return YamlDocument(node, lines, doc.file)


def _override_sets(model: StudyModel, doc: YamlDocument, problems: Problems) -> list[dict[str, Any]]:
    """Every combination: each ``points`` entry (or none) times the grid's cartesian product."""
    for key in model.grid:
        _check_path(key, ("grid", key), problems)
    for i, entry in enumerate(model.points):
        for key in entry:
            _check_path(key, ("points", i, key), problems)
    keys = list(model.grid)
    n_points = math.prod(len(model.grid[k]) for k in keys) * max(1, len(model.points))
    per_point = len(model.seeds or ()) or model.repetitions or 1
    try:  # before the points are expanded (a 10^12-point grid must not be listed)
        limits.check_grid(n_points * per_point * len(model.schedulers or [None]))
    except SimschedError as exc:
        problems.add_error(("grid",) if model.grid else ("points",), exc)
        problems.raise_if_any()
    grid = [dict(zip(keys, combo)) for combo in itertools.product(*(model.grid[k] for k in keys))]
    bases = [dict(p) for p in model.points] or [{}]
    return [{**base, **combo} for base in bases for combo in grid]


def _check_path(text: Any, loc: tuple[Any, ...], problems: Problems) -> None:
    try:
        path = parse_path(text)
    except SimschedError as exc:
        problems.add(loc, exc.message)
        return
    if path[0] in RESERVED and len(path) == 1:
        problems.add(loc, f"{path[0]!r} is set by the study's own "
                          f"{'schedulers' if path[0] == 'schedulers' else 'seeds/repetitions'} field")


def _blame(overrides: Mapping[str, Any], field_: str | None) -> str | None:
    """The override that most likely caused a problem at ``field_``."""
    if field_:
        for key in overrides:
            if field_ == key or field_.startswith(key + ".") or field_.startswith(key + "[") \
                    or key.startswith(field_ + ".") or key.startswith(field_ + "["):
                return key
    return None


def _override_loc(model: StudyModel, key: str, point_values: Mapping[str, Any]) -> tuple[Any, ...]:
    if key in model.grid:
        return ("grid", key)
    for i, entry in enumerate(model.points):
        if key in entry and all(point_values.get(k) == v for k, v in entry.items()):
            return ("points", i, key)
    return ()


def load_study(path: str | Path) -> Study:
    """Read and validate the study file at ``path`` and every point it expands to (see the module
    docstring).  Raises :class:`SimschedError`/:class:`ScenarioError` naming file, field and line.
    O(points x scenario size) plus one scenario validation per point."""
    doc = load_yaml(path)
    problems = Problems(doc)
    try:
        model = StudyModel.model_validate(doc.data)
    except ValidationError as exc:
        problems.add_validation((), exc, StudyModel)
        problems.raise_if_any()
        raise  # pragma: no cover
    if model.seeds is not None and model.repetitions is not None:
        problems.add(("repetitions",), "give seeds or repetitions, not both")
    sets = _override_sets(model, doc, problems)
    problems.raise_if_any()
    if isinstance(model.scenario, str):
        base_path = Path(model.scenario)
        base_path = base_path if base_path.is_absolute() else Path(path).parent / base_path
        try:
            base = load_yaml(base_path)
        except SimschedError as exc:
            raise exc.located(file=doc.file, line=doc.line_of(("scenario",)), field="scenario") from None
    else:
        base = _sub_document(doc, ("scenario",))
    fields = tuple(dict.fromkeys(k for s in sets for k in s))
    points = []
    seen: dict[str, int] = {}
    for index, values in enumerate(sets):
        point = _make_point(index, values, base, model, doc)
        if point.point_id in seen:
            raise SimschedError(f"points {seen[point.point_id]} and {index} are the same scenario "
                                f"({point_label(values)}); list each value once", file=doc.file,
                                line=doc.line_of(("grid",) if model.grid else ("points",)),
                                field="grid" if model.grid else "points")
        seen[point.point_id] = index
        points.append(point)
    name = model.name or (doc.file.stem if doc.file is not None else "study")
    return Study(name, model.description, doc.file, tuple(points), fields,
                 base.file if isinstance(model.scenario, str) else None)


def _make_point(index: int, values: dict[str, Any], base: YamlDocument, model: StudyModel,
                doc: YamlDocument) -> StudyPoint:
    """Apply ``values`` (and the study's schedulers) to the base data and validate the result."""
    from simsched.scenario.overrides import apply_overrides

    label = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the base scenario"
    try:
        data = apply_overrides(base.data, values)
    except SimschedError as exc:
        loc = _override_loc(model, exc.field or "", values)
        raise SimschedError(f"point {index} ({label}): {exc.message}", file=doc.file, line=doc.line_of(loc),
                            field=dotted(loc) or exc.field) from None
    if model.schedulers is not None:
        data["schedulers"] = list(model.schedulers)
    try:
        scenario = parse_scenario(YamlDocument(data, base.lines, base.file))
    except ScenarioError as exc:
        first = exc.problems[0]
        culprit = _blame(values, first.field)
        if culprit is not None:
            loc = _override_loc(model, culprit, values)
            raise SimschedError(f"point {index} ({label}): {first.field}: {first.message}", file=doc.file,
                                line=doc.line_of(loc), field=dotted(loc)) from None
        if first.field and first.field.startswith("schedulers") and model.schedulers is not None:
            loc = ("schedulers", *parse_path(first.field)[1:])
            raise SimschedError(first.message, file=doc.file, line=doc.line_of(loc), field=dotted(loc)) from None
        raise SimschedError(f"point {index} ({label}): {first}", file=doc.file,
                            line=doc.line_of(("scenario",)), field="scenario") from None
    if not scenario.has_task_graph:
        raise SimschedError("a study needs a scenario with a platform and a workload", file=doc.file,
                            line=doc.line_of(("scenario",)), field="scenario")
    seeds = _seeds(model, scenario)
    return StudyPoint(index, dict(values), data, point_id(data), scenario, seeds)


def _seeds(model: StudyModel, scenario: Scenario) -> tuple[int, ...]:
    if model.seeds is not None:
        return tuple(dict.fromkeys(model.seeds))
    reps = model.repetitions or scenario.repetitions
    return tuple(scenario.seed + r for r in range(reps))


def point_label(overrides: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """``workload.ccr=0.1, workload.shape=2`` (or ``-`` for a study without overrides)."""
    keys = fields if fields is not None else list(overrides)
    return ", ".join(f"{k}={overrides.get(k)}" for k in keys) or "-"
