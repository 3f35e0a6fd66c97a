"""The one registry of schedulers: a name maps to ``"module:Class"``.

Adding a scheduler is one new module plus one line in :data:`BUILTIN`.  Modules are imported only
when a scheduler is used, so ``simsched --help`` stays fast and heavy dependencies (torch) load only
for the schedulers that need them.

A scheduler class is constructed with its parameters as keyword arguments (the YAML form
``{name: ga, generations: 200}`` becomes ``GA(generations=200)``) and implements either
:class:`~simsched.simulator.policy.StaticPlanner` or :class:`~simsched.simulator.policy.OnlinePolicy`.

Plug-ins need no fork: a scenario or the command line may name any class by import path
(``my_pkg.sched:MyScheduler``), and an installed package may register names in the
``simsched.schedulers`` entry-point group (:data:`ENTRY_POINT_GROUP`).  :func:`origin` says where a
name comes from; a plug-in that fails to import or implements neither interface raises a
:class:`SimschedError` (exit 2) saying which plug-in and why.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import inspect
import re
from typing import Any

from simsched.errors import SimschedError

BUILTIN: dict[str, str] = {
    "heft": "simsched.schedulers.heft:HEFT",
    "cpop": "simsched.schedulers.cpop:CPOP",
    "peft": "simsched.schedulers.peft:PEFT",
    "etf": "simsched.schedulers.etf:ETF",
    "dls": "simsched.schedulers.dls:DLS",
    "heft-lookahead": "simsched.schedulers.lookahead:HEFTLookahead",
    "ipeft": "simsched.schedulers.ipeft:IPEFT",
    "hoft": "simsched.schedulers.hoft:HOFT",
    "bil": "simsched.schedulers.bil:BIL",
    "fcp": "simsched.schedulers.fcp:FCP",
    "flb": "simsched.schedulers.flb:FLB",
    "list": "simsched.schedulers.parametric:ListScheduler",
    "mcp": "simsched.schedulers.parametric:MCP",
    "hlfet": "simsched.schedulers.parametric:HLFET",
    "heft-dup": "simsched.schedulers.duplication:HEFTDuplication",
    "ga": "simsched.schedulers.ga:GA",
    "deepsched": "simsched.learned.deepsched.scheduler:DeepSched",
    "optimal": "simsched.schedulers.exact:Optimal",
    "random": "simsched.schedulers.online:RandomPolicy",
    "round-robin": "simsched.schedulers.online:RoundRobin",
    "olb": "simsched.schedulers.online:OLB",
    "met": "simsched.schedulers.online:MET",
    "mct": "simsched.schedulers.online:MCT",
    "minmin": "simsched.schedulers.online:MinMin",
    "maxmin": "simsched.schedulers.online:MaxMin",
    "sufferage": "simsched.schedulers.sufferage:Sufferage",
    "online-heft": "simsched.schedulers.jobaware:OnlineHEFT",
    "srjf-eft": "simsched.schedulers.jobaware:ShortestJobEFT",
    "fair-eft": "simsched.schedulers.jobaware:FairShareEFT",
    "rl": "simsched.learned.rl.policy:RLPolicy",
    "rl-world": "simsched.learned.rl.policy:RLWorldPolicy",
}

ENTRY_POINT_GROUP = "simsched.schedulers"
"""Installed packages register schedulers under this entry-point group, e.g. in ``pyproject.toml``::

    [project.entry-points."simsched.schedulers"]
    shortest-task-first = "my_pkg.sched:ShortestTaskFirst"
"""

CHECK_HINTS: dict[str, dict[str, int]] = {
    "optimal": {"max_tasks": 6, "max_processors": 3, "examples": 4},
    "exact": {"max_tasks": 6, "max_processors": 3, "examples": 4},
    "ga": {"max_tasks": 8, "max_processors": 3, "examples": 4},
}
"""Size hints for the contract check (:func:`simsched.testing.contract.check_scheduler`) of slow
schedulers: at most ``max_tasks`` tasks and ``max_processors`` processors per example and at most
``examples`` examples per property.  A class attribute ``check_hints`` (same keys) overrides these."""

NEEDS_LEARNED = frozenset({"deepsched", "rl", "rl-world"})
"""Built-ins that run a network: creating one without PyTorch (extra ``learned``) is a clear exit-2 error."""

_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_import_path(name: str) -> bool:
    """True for ``"package.module:Class"`` (the ``module:attribute`` form of entry points).  O(len)."""
    return bool(_IMPORT_PATH.match(name))


def entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Schedulers installed packages register in :data:`ENTRY_POINT_GROUP`, by name (builtin names
    win; of two packages registering one name, the first found wins).  Read fresh on every call
    (a few ms), so a package installed while Python runs is seen."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in BUILTIN and ep.name not in found:
            found[ep.name] = ep
    return found


def names() -> list[str]:
    """Every registered scheduler name: the built-in ones in registration order, then those of
    installed packages (entry points) by name.  Import paths are accepted too but not listed."""
    return [*BUILTIN, *sorted(entry_points())]


def origin(name: str) -> str:
    """Where ``name`` comes from: ``"builtin"``, ``"entry point (DIST)"`` (the installed package)
    or ``"import path"``; :class:`SimschedError` if it is none of these."""
    if name in BUILTIN:
        return "builtin"
    ep = entry_points().get(name)
    if ep is not None:
        dist = getattr(ep, "dist", None)
        return f"entry point ({dist.name})" if dist is not None else "entry point"
    if is_import_path(name):
        return "import path"
    raise SimschedError(f"unknown scheduler {name!r}{suggest(name)}; `simsched list` shows them all, "
                        f"and a plug-in may be named by import path, e.g. 'my_pkg.sched:MyScheduler'")


def suggest(name: str) -> str:
    """`` (did you mean 'x'?)`` for the closest registered name, or an empty string."""
    close = difflib.get_close_matches(name, names(), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _import_attr(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_class(name: str) -> type:
    """The scheduler class ``name`` stands for: a built-in name, an entry-point name or an import
    path ``module:Class``.  Raises :class:`SimschedError` (exit 2) when the name is unknown (with the
    closest match), when the plug-in fails to import (with the import error), or when the class
    implements neither interface (naming the missing methods)."""
    where = origin(name)
    try:
        if name in BUILTIN:
            obj = _import_attr(BUILTIN[name])
        elif where.startswith("entry point"):
            obj = entry_points()[name].load()
        else:
            obj = _import_attr(name)
    except SimschedError:
        raise
    except Exception as exc:
        if isinstance(exc, ImportError) and name in NEEDS_LEARNED:
            _require_learned(name)
        raise SimschedError(f"scheduler {name!r} ({where}) cannot be loaded: {type(exc).__name__}: {exc}") from None
    check_interface(obj, f"scheduler {name!r} ({where})")
    return obj


def _require_learned(name: str) -> None:
    from simsched.extras import require_learned

    require_learned(f"scheduler {name!r}")


def check_interface(obj: Any, label: str) -> None:
    """:class:`SimschedError` unless ``obj`` is a class implementing
    :class:`~simsched.simulator.policy.StaticPlanner` (``plan``) or
    :class:`~simsched.simulator.policy.OnlinePolicy` (``reset`` and ``decide``)."""
    if not inspect.isclass(obj):
        raise SimschedError(f"{label} is {type(obj).__name__} {obj!r}, not a scheduler class")
    if callable(getattr(obj, "plan", None)):
        return
    has = [m for m in ("reset", "decide") if callable(getattr(obj, m, None))]
    missing = [m for m in ("reset", "decide") if m not in has]
    if not missing:
        return
    if has:
        raise SimschedError(f"{label}: class {obj.__name__} looks like an online policy but has no "
                            f"{' and no '.join(missing)}() method; an OnlinePolicy needs reset(problem, rng) "
                            f"and decide(view)")
    raise SimschedError(f"{label}: class {obj.__name__} implements no scheduler interface: a StaticPlanner "
                        f"needs plan(problem, rng), an OnlinePolicy needs reset(problem, rng) and decide(view)")


def summary(cls: type) -> str:
    """First line of the class docstring: the one-line description ``simsched list`` shows."""
    doc = inspect.getdoc(cls) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def kind(cls: type) -> str:
    """``"static"`` for planners, ``"online"`` for policies."""
    return "static" if callable(getattr(cls, "plan", None)) else "online"


def check_hints(name: str | None = None, cls: type | None = None) -> dict[str, int]:
    """Contract-check size hints for a scheduler: :data:`CHECK_HINTS` for its name, overridden by
    the class attribute ``check_hints`` (empty when there are none)."""
    hints = dict(CHECK_HINTS.get(name or "", {}))
    hints.update(getattr(cls, "check_hints", None) or {})
    return hints


def checked_params(name: str, cls: type, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` checked against the constructor of ``cls`` (the class ``name`` resolved to), without
    constructing anything: unknown names and values that do not fit an annotation raise a
    :class:`SimschedError` naming the scheduler, the parameter and what it accepts.  Returns the
    converted values.  O(number of params)."""
    try:
        sig = inspect.signature(cls, eval_str=True)
    except Exception as exc:  # a plug-in with unresolvable annotations
        raise SimschedError(f"scheduler {name!r}: cannot read its parameters: {exc}") from None
    accepted = [p for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY or p.kind == p.POSITIONAL_OR_KEYWORD]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    for key in params:
        if key not in sig.parameters and not takes_any:
            options = ", ".join(p.name for p in accepted) or "none"
            raise SimschedError(f"scheduler {name!r} has no parameter {key!r} (it accepts: {options})")
    from pydantic import TypeAdapter, ValidationError

    checked = {}
    for key, value in params.items():
        ann = sig.parameters[key].annotation if key in sig.parameters else inspect.Parameter.empty
        if ann is inspect.Parameter.empty or isinstance(ann, str):
            checked[key] = value
            continue
        try:
            checked[key] = TypeAdapter(ann).validate_python(value)
        except ValidationError as exc:
            msg = exc.errors()[0]["msg"]
            raise SimschedError(f"scheduler {name!r}, parameter {key!r}: {msg} (got {value!r})") from None
    return checked


def instantiate(name: str, cls: type, checked: dict[str, Any]) -> Any:
    """``cls(**checked)`` for parameters already passed through :func:`checked_params`: the one place a
    scheduler is constructed.  A constructor's own refusal (``TypeError``/``ValueError``, or a plug-in's
    any exception) becomes a :class:`SimschedError` naming the scheduler."""
    if name in NEEDS_LEARNED:
        _require_learned(name)
    try:
        instance = cls(**checked)
    except SimschedError:
        raise
    except (TypeError, ValueError) as exc:
        raise SimschedError(f"scheduler {name!r}: {exc}") from None
    except Exception as exc:
        if name in BUILTIN:
            raise
        raise SimschedError(f"scheduler {name!r}: its constructor raised {type(exc).__name__}: {exc}") from None
    if not getattr(instance, "name", None):
        instance.name = name
    return instance


def create(name: str, **params: Any) -> Any:
    """Instantiate the scheduler ``name`` with ``params``: :func:`load_class`, then
    :func:`checked_params`, then :func:`instantiate` (see each for the errors it raises)."""
    cls = load_class(name)
    return instantiate(name, cls, checked_params(name, cls, params))
