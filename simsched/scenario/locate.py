"""Problems found in a scenario, each located by file, dotted field and line; checking keyword
parameters against a function's signature (generators, importers, schedulers)."""


from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from simsched import limits
from simsched.errors import SimschedError, did_you_mean
from simsched.scenario.schema import Loc
from simsched.yamlio import BOOL_MESSAGE, YamlDocument, strict_bools


class ScenarioError(SimschedError):
    """One or more problems in a scenario file; :attr:`problems` lists each, located.  Its own
    message is the first problem (plus how many more there are)."""

    def __init__(self, problems: Sequence[SimschedError]) -> None:
        first = problems[0]
        more = ""
        if len(problems) > 1:
            where = f" {first.file}" if first.file else ""
            more = (f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''}; "
                    f"`simsched validate{where}` lists them all)")
        super().__init__(first.message + more, file=first.file, line=first.line, field=first.field)
        self.problems = list(problems)


# --------------------------------------------------------------------------- helpers
def locate_in(error: SimschedError, file: Path | None, line: int | None, field: str | None) -> SimschedError:
    """``error`` located at ``file``/``line``/``field`` where still unknown.  An error about another
    file (an imported workload, a trace, a checkpoint) becomes a chain: the scenario's file, line and the
    field that names the other file, then the other file's own place and message
    (``my.yaml:12: workload.stream.jobs[1].wfcommons: /etc/passwd:1: invalid JSON``), never the scenario's
    line against the other file's name."""
    if error.file is not None and file is not None and Path(error.file) != Path(file):
        error.message = str(error)  # the inner file's place first: FILE[:LINE]: [field: ]message
        error.file = error.line = error.field = None
    return error.located(file=file, line=line, field=field)


def dotted(loc: Loc) -> str | None:
    """``("platform", "processors", 0, "speed")`` -> ``platform.processors[0].speed``."""
    out = ""
    for part in loc:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or None


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _closest(name: str, options: Sequence[str]) -> str:
    return did_you_mean(str(name), options)


def _model_at(root: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model class whose field ``loc[-1]`` is, following ``loc`` through nested models."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int) or not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        fields = {f.alias or k: f for k, f in model.model_fields.items()}
        if part not in fields:
            return None
        model = _inner_model(fields[part].annotation)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or k for k, f in model.model_fields.items()]


def validation_message(err: Mapping[str, Any], model: type[BaseModel] | None = None) -> str:
    """The message for one of pydantic's ``ValidationError.errors()`` entries, as every section of a
    scenario words it: an unknown field with the closest known name and the list of known ones (``model``
    is the section's model, to find the owner of ``err["loc"]``), a missing field, or pydantic's message
    with the value given.  O(fields of the owning model)."""
    kind = err["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, tuple(err["loc"])) if model is not None else None
        key = err["loc"][-1]
        if owner is not None:
            names = _field_names(owner)
            return f"unknown field {key!r}{_closest(key, names)}; expected one of: {', '.join(names)}"
        return f"unknown field {key!r}"
    if kind == "missing":
        return "this field is required"
    if kind == "value_error":
        return f"{err.get('ctx', {}).get('error', err['msg'])} (got {_short(err.get('input'))})"
    return f"{err['msg']} (got {_short(err.get('input'))})"


_TYPE_TAGS = frozenset({"float", "int", "str", "bool", "list", "dict", "tuple", "set", "none", "bytes"})


def _is_tag(part: str) -> bool:
    """Whether a location part is pydantic's name for a union member it tried: a type (``float``), a
    validator chain (``function-after[...]``), a model class (``ArrivalsSpec``) or a constrained type."""
    return part in _TYPE_TAGS or any(c in part for c in "[(<") or part[:1].isupper() or part.startswith(
        ("function-", "constrained-", "lax-or-strict", "json-or-python", "is-instance", "literal"))


_LOST = object()
"""Where :meth:`Problems._in_document` can no longer follow a location through the document."""


class Problems:
    """Collects located problems while a scenario is checked."""

    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.items: list[SimschedError] = []

    def add(self, loc: Loc, message: str) -> None:
        self.items.append(SimschedError(message, file=self.doc.file, line=self.doc.line_of(loc), field=dotted(loc)))

    def add_error(self, loc: Loc, error: SimschedError) -> None:
        self.items.append(locate_in(error, self.doc.file, self.doc.line_of(loc), dotted(loc)))

    MAX_LISTED = 1000
    """Problems of one validation listed one by one; the rest are counted in one more line (a list of
    200,000 bad entries is reported in a second, not in 200,000 lines)."""

    def add_validation(self, prefix: Loc, exc: ValidationError, model: type[BaseModel] | None = None) -> None:
        total = exc.error_count()
        for k, err in enumerate(exc.errors(include_url=False)):
            if k == self.MAX_LISTED:
                self.add(prefix, f"and {total - k:,} more problems in this section, not listed")
                break
            self.add(self._in_document(prefix + tuple(err["loc"]), err["type"]), validation_message(err, model))

    def _in_document(self, loc: Loc, kind: str) -> Loc:
        """``loc`` without the names pydantic gives the members of a union it tried (``scale.float``,
        ``procs.function-after[_procs_bound(), ...<function ... at 0x7f...>]``): a string part is kept
        where the document has that key at that place (or it is the missing field that is named), dropped
        where the value there is not a mapping or has no such key.  Where the document cannot be followed,
        the rest of ``loc`` is kept as it is.  O(len(loc))."""
        node: Any = self.doc.data
        out: list[Any] = []
        for i, part in enumerate(loc):
            if isinstance(part, str):
                if isinstance(node, Mapping) and part in node:
                    node = node[part]
                elif isinstance(node, Mapping) and kind in ("missing", "extra_forbidden") and i == len(loc) - 1:
                    pass
                elif node is not _LOST and _is_tag(part):
                    continue  # a union member's tag, not a key of the file
            elif isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
                node = node[part]
            else:
                node = _LOST
            out.append(part)
        return tuple(out)

    def raise_if_any(self) -> None:
        if self.items:
            raise ScenarioError(self.items)


def check_params(func: Callable[..., Any], params: Mapping[str, Any], *, what: str,
                 skip: Sequence[str] = ("rng",)) -> tuple[dict[str, Any], list[tuple[Loc, str]]]:
    """Validate keyword ``params`` for ``func`` against its signature: unknown names (listing the
    accepted ones), missing required ones, and values against each annotation (pydantic
    ``TypeAdapter``; a ``bool`` takes a YAML boolean only, :func:`~simsched.yamlio.strict_bools`).
    Returns the converted params and ``(loc, message)`` problems."""
    accepted = {name: p for name, p in inspect.signature(func).parameters.items()
                if name not in skip and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    out: dict[str, Any] = {}
    problems: list[tuple[Loc, str]] = []
    listed = ", ".join(accepted) or "none"
    for key, value in params.items():
        if key not in accepted:
            problems.append(((key,), f"{what} has no parameter {key!r}{_closest(key, list(accepted))}; "
                                     f"it accepts: {listed}"))
            continue
        ann = _annotation(func, accepted[key])
        if ann is inspect.Parameter.empty:
            out[key] = value
            continue
        try:
            out[key] = TypeAdapter(strict_bools(ann)).validate_python(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            msg = BOOL_MESSAGE if err["type"] == "bool_type" else err["msg"]
            problems.append(((key, *err["loc"]), f"{msg} (got {_short(value)})"))
            continue
        if isinstance(out[key], (int, float)) and not limits.finite_value(float(out[key])):
            problems.append(((key,), f"must be a finite number no larger than {limits.MAX_VALUE:g} "
                                     f"(got {_short(value)})"))
    for name, p in accepted.items():
        if p.default is inspect.Parameter.empty and name not in params:
            problems.append(((name,), f"{what} needs parameter {name!r}"))
    return out, problems


def _annotation(func: Callable[..., Any], param: inspect.Parameter) -> Any:
    """The parameter's annotation, evaluated if it is a string (``from __future__ import
    annotations``); ``Parameter.empty`` when there is none or it cannot be evaluated."""
    ann = param.annotation
    if isinstance(ann, str):
        try:
            ann = eval(ann, getattr(inspect.unwrap(func), "__globals__", {}))  # noqa: S307 - annotation text
        except Exception:
            return inspect.Parameter.empty
    return ann


def _accepts(func: Callable[..., Any], name: str) -> bool:
    return name in inspect.signature(func).parameters


