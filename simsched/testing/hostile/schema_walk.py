"""The schema walk: every field of every input model reachable from the scenario file (and the study
file), each placed in a base document where the rest is valid.  A new model reachable from the schema is
walked without a change here; a new section kept as a plain mapping is reported by :func:`unreached_models`
until it is named in :data:`SECTIONS`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel

from simsched.testing.hostile.documents import BASES, get_at


@dataclass(frozen=True)
class FieldTarget:
    """One field of one model at one place of one base document."""

    model: str
    name: str
    path: tuple[Any, ...]
    annotation: Any
    base: str
    metadata: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.model}.{self.name}"

    @property
    def dotted(self) -> str:
        return ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in self.path).replace(".[", "[")


def _sections() -> dict[str, tuple[type[BaseModel], str]]:
    from simsched.scenario.autotuning import AutotuningSection
    from simsched.scenario.schema import FailuresSection, InlineWorkload, StragglersSection
    from simsched.scenario.stream_section import BatchTraceSection, StreamSection

    return {"workload": (InlineWorkload, "graph"), "workload.stream": (StreamSection, "stream"),
            "workload.stream (cluster log)": (BatchTraceSection, "cluster"),
            "failures": (FailuresSection, "stream"), "stragglers": (StragglersSection, "stream"),
            "autotuning": (AutotuningSection, "autotuning")}


SECTIONS = _sections
"""The override table of the walk: the scenario fields the top-level model keeps as ``dict[str, Any]``
(their shape depends on a registry or on other fields), with the model that types each and its base."""


def _models(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """Models inside ``annotation`` and how they are reached: ``"one"``, ``"list"`` or ``"dict"``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "one")]
    if origin is Annotated:
        return _models(args[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in args for m in _models(a)]
    if origin in (list, tuple, Sequence):
        return [(m, "list") for a in args for m, _ in _models(a)]
    if origin is dict and len(args) == 2:
        return [(m, "dict") for m, _ in _models(args[1])]
    return []


def walk_schema(roots: Sequence[tuple[type[BaseModel], str]] = ()) -> list[FieldTarget]:
    """Every field of every model reachable from the scenario file and from ``roots`` (more top-level
    models with their base, e.g. the study file's :class:`~simsched.study.spec.StudyModel` and
    ``"study"``: the caller passes what lives on this floor), each at a place of a base document where
    the rest is valid.  O(fields)."""
    from simsched.capacity.question import SECTION_FIELDS as _SECTION_FIELDS
    from simsched.scenario.schema import ScenarioModel

    sections = SECTIONS()
    out: list[FieldTarget] = []

    def walk(model: type[BaseModel], path: tuple[Any, ...], base: str, seen: tuple[type, ...]) -> None:
        doc = BASES[base][0]()
        for name, info in model.model_fields.items():
            key = info.alias or name
            here = (*path, key)
            out.append(FieldTarget(model.__name__, name, here, info.annotation, base, tuple(info.metadata)))
            for sub, how in _models(info.annotation):
                if sub in seen:
                    continue
                node = get_at(doc, here)
                if how == "list":
                    walk(sub, (*here, 0), base, (*seen, sub))
                elif how == "dict":
                    first = next(iter(node), "x") if isinstance(node, dict) else "x"
                    walk(sub, (*here, first), base, (*seen, sub))
                else:
                    walk(sub, here, base, (*seen, sub))
            dotted = ".".join(str(p) for p in here)
            if dotted in sections:
                sub, sub_base = sections[dotted]
                walk(sub, here, sub_base, (*seen, sub))
                if dotted == "workload":  # the stream forms live under workload too
                    for form in ("workload.stream", "workload.stream (cluster log)"):
                        sub, sub_base = sections[form]
                        walk(sub, (*here, "stream"), sub_base, (*seen, sub))

    walk(ScenarioModel, (), "graph", (ScenarioModel,))
    for name, kind in _SECTION_FIELDS.items():
        out.append(FieldTarget("CapacitySection", name, ("capacity", name), kind, "capacity"))
    for model, base in roots:
        walk(model, (), base, (model,))
    # the traced stream's fields are attacked again on a base with a trace
    for t in list(out):
        if t.model == "ArrivalsSpec" and t.name == "trace":
            out.append(dataclasses.replace(t, base="traced"))
    return out


def unreached_models(roots: Sequence[tuple[type[BaseModel], str]] = ()) -> list[str]:
    """Input models (subclasses of :class:`~simsched.scenario.schema.NumbersChecked` imported so far)
    that the walk does not reach: a section added as a plain mapping and not named in :data:`SECTIONS`."""
    import simsched.scenario.autotuning  # noqa: F401  (their models register as subclasses)
    import simsched.scenario.stream_section  # noqa: F401
    from simsched.scenario.schema import NumbersChecked

    reached = {t.model for t in walk_schema(roots)}
    found: list[str] = []
    stack = list(NumbersChecked.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.model_fields and not cls.__name__.startswith("_") and cls.__name__ not in reached:
            found.append(f"{cls.__module__}.{cls.__name__}")
    return sorted(found)
