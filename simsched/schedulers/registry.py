"""The one registry of schedulers: a name maps to ``"module:Class"``.

Adding a scheduler is one new module plus one line in :data:`BUILTIN`.  Modules are imported only
when a scheduler is used, so ``simsched --help`` stays fast and heavy dependencies (torch) load only
for the schedulers that need them.

A scheduler class is constructed with its parameters as keyword arguments (the YAML form
``{name: ga, generations: 200}`` becomes ``GA(generations=200)``) and implements either
:class:`~simsched.simulator.policy.StaticPlanner` or :class:`~simsched.simulator.policy.OnlinePolicy`.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any

from simsched.errors import SimschedError

BUILTIN: dict[str, str] = {
    "heft": "simsched.schedulers.heft:HEFT",
    "cpop": "simsched.schedulers.cpop:CPOP",
    "random": "simsched.schedulers.online:RandomPolicy",
    "round-robin": "simsched.schedulers.online:RoundRobin",
    "olb": "simsched.schedulers.online:OLB",
    "met": "simsched.schedulers.online:MET",
    "mct": "simsched.schedulers.online:MCT",
    "minmin": "simsched.schedulers.online:MinMin",
    "maxmin": "simsched.schedulers.online:MaxMin",
}


def names() -> list[str]:
    """Every registered scheduler name, in registration order."""
    return list(BUILTIN)


def suggest(name: str) -> str:
    """`` (did you mean 'x'?)`` for the closest registered name, or an empty string."""
    close = difflib.get_close_matches(name, names(), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load_class(name: str) -> type:
    """The class registered as ``name``; :class:`SimschedError` naming the closest match if unknown."""
    if name not in BUILTIN:
        raise SimschedError(f"unknown scheduler {name!r}{suggest(name)}; `simsched list` shows them all")
    module_name, _, attr = BUILTIN[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def summary(cls: type) -> str:
    """First line of the class docstring: the one-line description ``simsched list`` shows."""
    doc = inspect.getdoc(cls) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def kind(cls: type) -> str:
    """``"static"`` for planners, ``"online"`` for policies."""
    return "static" if callable(getattr(cls, "plan", None)) else "online"


def create(name: str, **params: Any) -> Any:
    """Instantiate the scheduler ``name`` with ``params``; unknown or ill-typed parameters raise a
    :class:`SimschedError` that names the scheduler, the parameter and what it accepts."""
    cls = load_class(name)
    sig = inspect.signature(cls, eval_str=True)
    accepted = [p for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY or p.kind == p.POSITIONAL_OR_KEYWORD]
    for key in params:
        if key not in sig.parameters:
            options = ", ".join(p.name for p in accepted) or "none"
            raise SimschedError(f"scheduler {name!r} has no parameter {key!r} (it accepts: {options})")
    try:
        from pydantic import TypeAdapter, ValidationError

        checked = {}
        for key, value in params.items():
            ann = sig.parameters[key].annotation
            if ann is inspect.Parameter.empty or isinstance(ann, str):
                checked[key] = value
                continue
            try:
                checked[key] = TypeAdapter(ann).validate_python(value)
            except ValidationError as exc:
                msg = exc.errors()[0]["msg"]
                raise SimschedError(f"scheduler {name!r}, parameter {key!r}: {msg} (got {value!r})") from None
        instance = cls(**checked)
    except (TypeError, ValueError) as exc:
        raise SimschedError(f"scheduler {name!r}: {exc}") from None
    if not getattr(instance, "name", None):
        instance.name = name
    return instance
