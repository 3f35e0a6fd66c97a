"""The one registry of schedulers: a name maps to a :class:`SchedulerSpec`.

A spec carries every fact simsched keeps about a scheduler: its ``"module:Class"`` target, declared
kind (static / online / autotune), the optional extras it needs, contract-check hints and
parameters, benchmark sizes and parameters, and where its one-line description comes from.
``simsched list``, ``check``, ``bench`` and the generated scheduler table of ``docs/schedulers.md``
read only these entries.  Adding a scheduler is one new module plus one :class:`SchedulerSpec` in
:data:`SPECS` (or a :func:`register` call).  Modules are imported only
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

import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError, did_you_mean, shown
from simsched.yamlio import BOOL_MESSAGE, strict_bools

_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_import_path(name: str) -> bool:
    """True for ``"package.module:Class"`` (the ``module:attribute`` form of entry points).  O(len)."""
    return bool(_IMPORT_PATH.match(name))


KINDS = ("static", "online", "autotune", "batch")
"""Declared kinds: a ``static`` planner (``plan``), an ``online`` policy (``reset``/``decide``) of task
graphs, an ``autotune`` policy (``select``) of autotuning jobs sharing servers, a ``batch`` policy
(``reset(trace, m)``/``decide(view)``, :class:`~simsched.simulator.batch.BatchPolicy`) of rigid jobs
from a cluster log."""


@dataclass(frozen=True)
class BenchSpec:
    """How ``simsched bench schedulers`` times a scheduler: up to ``cap`` tasks at the benchmark's
    sizes, or exactly at ``sizes`` (``quick_sizes`` under ``--quick``) for slow schedulers; with
    ``params`` (``quick_params``); ``note`` is formatted with the parameters for the table."""

    cap: int | None = None
    sizes: tuple[int, ...] = ()
    quick_sizes: tuple[int, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    quick_params: dict[str, Any] | None = None
    note: str = ""

    def sizes_for(self, quick: bool) -> tuple[int, ...]:
        """The fixed sizes of a slow scheduler (empty for a capped one)."""
        return self.quick_sizes if quick and self.quick_sizes else self.sizes

    def params_for(self, quick: bool) -> dict[str, Any]:
        return dict(self.quick_params if quick and self.quick_params is not None else self.params)


@dataclass(frozen=True)
class SchedulerSpec:
    """Every fact simsched keeps about one scheduler, in one place.

    ``name`` (what scenarios and the command line write), ``target`` (``"module:Class"``, imported
    only when used), ``kind`` (one of :data:`KINDS`, declared so ``simsched list`` needs no import to
    tell it), ``extras`` (optional dependency groups it needs, e.g. ``("learned",)``), ``check``
    (contract-check size hints: ``max_tasks``, ``max_processors``, ``examples``), ``check_params``
    (cheaper parameters for many small contract runs), ``bench`` (:class:`BenchSpec`, ``None``: not
    timed by ``bench schedulers``), ``quality`` / ``quick_quality`` (parameters in ``bench quality``;
    ``quality=None`` keeps it out of that table), ``description`` (one line; ``None``: the first line
    of the class docstring), ``needs`` (what a scenario must give it, from :data:`NEEDS`: ``"power"``
    for the energy-aware schedulers, refused up front without a ``platform.power`` model by
    :func:`unmet_needs`; ``"requested"`` for a policy that observes jobs' requested times, refused on a
    log that lacks them unless the scenario accepts run times in their place, :func:`unmet_requested`)
    and ``without`` (what it would do without them, said in that refusal)."""

    name: str
    target: str
    kind: str
    extras: tuple[str, ...] = ()
    check: dict[str, int] = field(default_factory=dict)
    check_params: dict[str, Any] = field(default_factory=dict)
    bench: BenchSpec | None = None
    quality: dict[str, Any] | None = field(default_factory=dict)
    quick_quality: dict[str, Any] | None = None
    description: str | None = None
    needs: tuple[str, ...] = ()
    without: str = ""

    def __post_init__(self) -> None:
        if unknown := [n for n in self.needs if n not in NEEDS]:
            raise ValueError(f"scheduler spec {self.name!r}: needs {unknown[0]!r} is not one of {tuple(NEEDS)}")
        if self.kind not in KINDS:
            raise ValueError(f"scheduler spec {self.name!r}: kind {self.kind!r} is not one of {KINDS}")
        if not is_import_path(self.target):
            raise ValueError(f"scheduler spec {self.name!r}: target {self.target!r} is not 'module:Class'")

    def quality_params(self, quick: bool) -> dict[str, Any]:
        """Parameters for the quality benchmark (``--quick``: the cheaper ones when given)."""
        chosen = self.quick_quality if quick and self.quick_quality is not None else self.quality
        return dict(chosen or {})


NEEDS = {"power": "a power model (platform.power: watts per processor type; docs/energy.md)",
         "requested": "the jobs' requested times recorded in the log (or workload.stream.estimates: perfect)"}
"""What a scheduler may need from a scenario (:attr:`SchedulerSpec.needs`), in words."""


def unmet_needs(name: str, *, power: bool) -> str | None:
    """Why scheduler ``name`` cannot run on a scenario that has (``power``) or lacks a power model, in one
    sentence, or None when it has what it needs (plug-ins and import paths declare nothing).  O(1)."""
    found = SPECS.get(name)
    if found is None or "power" not in found.needs or power:
        return None
    return (f"{name} is energy-aware and needs {NEEDS['power']}; this platform has none"
            + (f", so {name} would run as {found.without}" if found.without else ""))


def unmet_requested(name: str, missing: str | None) -> str | None:
    """Why scheduler ``name``, a policy that observes requested times (``needs=("requested",)``), cannot
    run on a cluster log whose jobs lack them (``missing``: how many, in words, or None when every job
    has one or the scenario accepts run times in their place), in one sentence; None otherwise.  O(1)."""
    found = SPECS.get(name)
    if found is None or "requested" not in found.needs or missing is None:
        return None
    return (f"{name} observes the jobs' requested times and {missing} have none (their run time "
            f"would stand in: foresight, not an estimate); add `estimates: perfect` to workload.stream to accept "
            f"that (RLScheduler's protocol on the Lublin logs) or use a log with requested times")


_TIMED = BenchSpec(cap=84_654)
_TIMED_10K = BenchSpec(cap=10_000)
_GA_FAST = {"objective": "makespan", "time_limit_s": 600.0}

SPECS: dict[str, SchedulerSpec] = {}
"""Every built-in scheduler by name, in registration order (:func:`register` adds to it)."""


def register(spec: SchedulerSpec, *, replace: bool = False) -> SchedulerSpec:
    """Add ``spec`` to the registry (a plug-in may call this at import time, tests do to add a fake
    scheduler); :class:`ValueError` if the name is taken and ``replace`` is false.  O(1)."""
    if spec.name in SPECS and not replace:
        raise ValueError(f"scheduler {spec.name!r} is already registered")
    SPECS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (tests that registered a fake spec clean up with it)."""
    SPECS.pop(name, None)


for _spec in (
    SchedulerSpec("heft", "simsched.schedulers.heft:HEFT", "static", bench=_TIMED),
    SchedulerSpec("cpop", "simsched.schedulers.cpop:CPOP", "static", bench=_TIMED),
    SchedulerSpec("peft", "simsched.schedulers.peft:PEFT", "static", bench=_TIMED),
    SchedulerSpec("etf", "simsched.schedulers.etf:ETF", "static", bench=_TIMED),
    SchedulerSpec("dls", "simsched.schedulers.dls:DLS", "static", bench=_TIMED),
    SchedulerSpec("heft-lookahead", "simsched.schedulers.lookahead:HEFTLookahead", "static", bench=_TIMED_10K),
    SchedulerSpec("ipeft", "simsched.schedulers.ipeft:IPEFT", "static", bench=_TIMED),
    SchedulerSpec("hoft", "simsched.schedulers.hoft:HOFT", "static", bench=_TIMED),
    SchedulerSpec("bil", "simsched.schedulers.bil:BIL", "static", bench=_TIMED_10K),
    SchedulerSpec("fcp", "simsched.schedulers.fcp:FCP", "static", bench=_TIMED),
    SchedulerSpec("flb", "simsched.schedulers.flb:FLB", "static", bench=_TIMED_10K),
    # ``list``'s named points are rows of the quality table under their own names
    SchedulerSpec("list", "simsched.schedulers.parametric:ListScheduler", "static", bench=_TIMED, quality=None),
    SchedulerSpec("mcp", "simsched.schedulers.parametric:MCP", "static", bench=_TIMED),
    SchedulerSpec("hlfet", "simsched.schedulers.parametric:HLFET", "static", bench=_TIMED),
    SchedulerSpec("heft-dup", "simsched.schedulers.duplication:HEFTDuplication", "static"),
    SchedulerSpec("heft-slack", "simsched.schedulers.slack:HEFTSlack", "static", bench=_TIMED, needs=("power",),
                  without="heft"),
    SchedulerSpec("ecs", "simsched.schedulers.ecs:ECS", "static", bench=BenchSpec(sizes=(100, 200), quick_sizes=(50,)),
                  needs=("power",), without="a heuristic counting busy time as energy"),
    SchedulerSpec("ga", "simsched.schedulers.ga:GA", "static",
                  check={"max_tasks": 8, "max_processors": 3, "examples": 4},
                  check_params={"population": 16, "generations": 15},
                  bench=BenchSpec(sizes=(100, 486), quick_sizes=(100,),
                                  params={"generations": 20, "population": 50, **_GA_FAST},
                                  quick_params={"generations": 5, "population": 50, **_GA_FAST},
                                  note="{generations} generations x {population}"),
                  quality={"population": 40, "generations": 60, **_GA_FAST},
                  quick_quality={"population": 16, "generations": 5, **_GA_FAST}),
    SchedulerSpec("deepsched", "simsched.learned.deepsched.scheduler:DeepSched", "static", extras=("learned",)),
    # ``optimal`` gives the reference (the proven optimum) of the quality table's small instances
    SchedulerSpec("optimal", "simsched.schedulers.exact:Optimal", "static", extras=("exact",),
                  check={"max_tasks": 6, "max_processors": 3, "examples": 4},
                  bench=BenchSpec(sizes=(10, 20), quick_sizes=(10,), params={"time_limit_s": 10.0}),
                  quality=None),
    SchedulerSpec("search", "simsched.schedulers.search:LocalSearch", "static",
                  check={"max_tasks": 8, "max_processors": 3, "examples": 4}, check_params={"iterations": 10},
                  bench=BenchSpec(sizes=(100, 486), quick_sizes=(100,), params={"time_limit_s": 1.0},
                                  quick_params={"time_limit_s": 0.2}, note="{time_limit_s} s budget"),
                  quality={"time_limit_s": 1.0}, quick_quality={"time_limit_s": 0.2}),
    SchedulerSpec("random", "simsched.schedulers.online:RandomPolicy", "online"),
    SchedulerSpec("round-robin", "simsched.schedulers.online:RoundRobin", "online"),
    SchedulerSpec("olb", "simsched.schedulers.online:OLB", "online"),
    SchedulerSpec("ecs-online", "simsched.schedulers.ecs:OnlineECS", "online", needs=("power",),
                  without="a rule counting busy time as energy"),
    SchedulerSpec("met", "simsched.schedulers.online:MET", "online"),
    SchedulerSpec("mct", "simsched.schedulers.online:MCT", "online"),
    SchedulerSpec("minmin", "simsched.schedulers.online:MinMin", "online"),
    SchedulerSpec("maxmin", "simsched.schedulers.online:MaxMin", "online"),
    SchedulerSpec("sufferage", "simsched.schedulers.sufferage:Sufferage", "online"),
    SchedulerSpec("online-heft", "simsched.schedulers.jobaware:OnlineHEFT", "online"),
    SchedulerSpec("srjf-eft", "simsched.schedulers.jobaware:ShortestJobEFT", "online"),
    SchedulerSpec("fair-eft", "simsched.schedulers.jobaware:FairShareEFT", "online"),
    SchedulerSpec("power-cap", "simsched.schedulers.powercap:PowerCap", "online", check_params={"cap": 2.0}),
    SchedulerSpec("carbon-defer", "simsched.schedulers.carbon:CarbonDefer", "online"),
    SchedulerSpec("power-off", "simsched.schedulers.poweroff:PowerOff", "online"),
    SchedulerSpec("recorded", "simsched.schedulers.recorded:Recorded", "online"),
    SchedulerSpec("rl", "simsched.learned.rl.policy:RLPolicy", "online", extras=("learned",)),
    SchedulerSpec("rl-world", "simsched.learned.rl.policy:RLWorldPolicy", "online", extras=("learned",)),
    SchedulerSpec("rl-gate", "simsched.learned.rl.gate:GatedBinding", "online"),
    SchedulerSpec("fcfs", "simsched.schedulers.batch_fcfs:FCFS", "batch"),
    SchedulerSpec("sjf", "simsched.schedulers.batch_sjf:SJF", "batch"),
    SchedulerSpec("easy-backfill", "simsched.schedulers.batch_easy:EASYBackfill", "batch"),
    SchedulerSpec("conservative-backfill", "simsched.schedulers.batch_conservative:ConservativeBackfill", "batch"),
    SchedulerSpec("fcfs-priority", "simsched.schedulers.batch_priority:FCFSPriority", "batch"),
    SchedulerSpec("sjf-priority", "simsched.schedulers.batch_priority:SJFPriority", "batch"),
    SchedulerSpec("wfp3", "simsched.schedulers.batch_priority:WFP3", "batch"),
    SchedulerSpec("uni", "simsched.schedulers.batch_priority:UNI", "batch"),
    SchedulerSpec("f1", "simsched.schedulers.batch_priority:F1", "batch"),
    SchedulerSpec("learned-priority", "simsched.schedulers.batch_learned:LearnedPriority", "batch",
                  check_params={"theta": (1.0, 0.0, 0.0)}, needs=("requested",)),
    SchedulerSpec("sequential", "simsched.schedulers.loadaware:Sequential", "autotune"),
    SchedulerSpec("uncontrolled", "simsched.schedulers.loadaware:Uncontrolled", "autotune"),
    SchedulerSpec("dedicated", "simsched.schedulers.loadaware:Dedicated", "autotune"),
    SchedulerSpec("load-aware", "simsched.schedulers.loadaware:LoadAware", "autotune"),
    SchedulerSpec("predictive", "simsched.schedulers.loadaware:Predictive", "autotune"),
):
    register(_spec)
del _spec

TASK_GRAPH_KINDS = ("static", "online")
"""The kinds a task-graph scenario, ``simsched run -s`` and the DAG contract accept."""


class _Builtin(Mapping[str, str]):
    """``name -> "module:Class"`` of the built-in task-graph schedulers, read live from :data:`SPECS`."""

    def _items(self) -> dict[str, str]:
        return {s.name: s.target for s in SPECS.values() if s.kind in TASK_GRAPH_KINDS}

    def __getitem__(self, key: str) -> str:
        return self._items()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())


BUILTIN: Mapping[str, str] = _Builtin()
"""The task-graph schedulers' ``"module:Class"`` targets by name (a live view of :data:`SPECS`)."""



class _AutotunePolicies(Mapping[str, type]):
    """``name -> class`` of the registered autotuning policies, a live view of :data:`SPECS` (each
    class is imported when first looked up)."""

    def __getitem__(self, key: str) -> type:
        found = SPECS.get(key)
        if found is None or found.kind != "autotune":
            raise KeyError(key)
        return load_class(key)

    def __iter__(self) -> Iterator[str]:
        return iter([s.name for s in SPECS.values() if s.kind == "autotune"])

    def __len__(self) -> int:
        return sum(1 for s in SPECS.values() if s.kind == "autotune")


AUTOTUNE_POLICIES: Mapping[str, type] = _AutotunePolicies()
"""The autotuning policies by name (a live view of the ``autotune`` specs of :data:`SPECS`)."""

ENTRY_POINT_GROUP = "simsched.schedulers"
"""Installed packages register schedulers under this entry-point group, e.g. in ``pyproject.toml``::

    [project.entry-points."simsched.schedulers"]
    shortest-task-first = "my_pkg.sched:ShortestTaskFirst"
"""

def spec(name: str) -> SchedulerSpec | None:
    """The registered :class:`SchedulerSpec` of ``name`` (``None`` for entry points and import paths)."""
    return SPECS.get(name)


def specs(kinds: tuple[str, ...] = KINDS) -> list[SchedulerSpec]:
    """The registered specs of the given kinds, in registration order."""
    return [s for s in SPECS.values() if s.kind in kinds]


def entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Schedulers installed packages register in :data:`ENTRY_POINT_GROUP`, by name (registered
    names win; of two packages registering one name, the first found wins).  Read fresh on every
    call (a few ms), so a package installed while Python runs is seen."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in SPECS and ep.name not in found:
            found[ep.name] = ep
    return found


def names(kinds: tuple[str, ...] = TASK_GRAPH_KINDS) -> list[str]:
    """Registered scheduler names of the given declared kinds (default: the task-graph schedulers a
    scenario's ``schedulers:`` list takes) in registration order, then those of installed packages
    (entry points, whose kind is known only once loaded) by name.  Import paths are accepted too but
    not listed.  ``names(KINDS)`` adds the autotuning policies."""
    return [*(s.name for s in specs(kinds)), *sorted(entry_points())]


def origin(name: str) -> str:
    """Where ``name`` comes from: ``"builtin"``, ``"entry point (DIST)"`` (the installed package)
    or ``"import path"``; :class:`SimschedError` if it is none of these."""
    if name in SPECS:
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
    """`` (did you mean 'x'?)`` for the registered name closest in edit distance, or an empty string
    (:func:`~simsched.errors.did_you_mean`: ``hfet`` → ``hlfet``)."""
    return did_you_mean(name, names(KINDS))


def _import_module(module_name: str, folder: Path | None) -> Any:
    """``module_name`` from the import path, else (when its top-level package is not on the import path)
    from ``folder``: ``folder/top.py`` or the package ``folder/top/``, imported with ``folder`` first on
    ``sys.path`` for the time of the import, as ``python folder/script.py`` would.  The module stays in
    Python's module cache, so later lookups by the same name find it.  O(module)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        if folder is None or exc.name != top or not ((folder / f"{top}.py").is_file() or (folder / top).is_dir()):
            raise
    import sys

    path = str(folder)
    sys.path.insert(0, path)
    try:
        return importlib.import_module(module_name)
    finally:
        try:
            sys.path.remove(path)
        except ValueError:  # the plug-in changed sys.path itself
            pass


def _import_attr(target: str, folder: Path | None = None) -> Any:
    module_name, _, attr = target.partition(":")
    obj: Any = _import_module(module_name, folder)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_class(name: str, *, folder: Path | None = None) -> type:
    """The scheduler class ``name`` stands for: a registered name, an entry-point name or an import
    path ``module:Class``.  An import path is looked up on Python's import path, then in ``folder``
    (a scenario's own folder: ``ltf:LargestTaskFirst`` finds ``ltf.py`` beside the scenario).  Raises
    :class:`SimschedError` (exit 2) when the name is unknown (with the closest match), when the plug-in
    fails to import (with the import error and, for a module not found, the places looked in; a missing
    optional extra the spec declares is named), or when the class implements neither interface (naming
    the missing methods).  The import is O(module); later calls hit Python's module cache."""
    where = origin(name)
    found = SPECS.get(name)
    try:
        if found is not None:
            obj = _import_attr(found.target)
        elif where.startswith("entry point"):
            obj = entry_points()[name].load()
        else:
            obj = _import_attr(name, folder)
    except SimschedError:
        raise
    except Exception as exc:
        if isinstance(exc, ImportError) and found is not None:
            _require_extras(found)
        looked = ""
        if isinstance(exc, ModuleNotFoundError) and found is None and exc.name == name.partition(":")[0].split(".")[0]:
            places = [f"the scenario's folder {folder}"] if folder is not None else []
            beside = f"put {exc.name}.py beside the scenario, " if folder is not None else ""
            looked = (f" (looked in {' and in '.join([*places, 'the import path: installed packages and PYTHONPATH'])}"
                      f"; {beside}install it or add its folder to PYTHONPATH)")
        raise SimschedError(f"scheduler {name!r} ({where}) cannot be loaded: {type(exc).__name__}: {exc}{looked}") \
            from None
    check_interface(obj, f"scheduler {name!r} ({where})", autotune=found is not None and found.kind == "autotune")
    return obj


def _require_extras(found: SchedulerSpec) -> None:
    from simsched.extras import require_extras

    require_extras(found.extras, f"scheduler {found.name!r}")


def check_interface(obj: Any, label: str, *, autotune: bool = False) -> None:
    """:class:`SimschedError` unless ``obj`` is a class implementing
    :class:`~simsched.simulator.policy.StaticPlanner` (``plan``) or
    :class:`~simsched.simulator.policy.OnlinePolicy` (``reset`` and ``decide``); with ``autotune``,
    an :class:`~simsched.simulator.autotune_engine.AutotunePolicy` (``select``)."""
    if not inspect.isclass(obj):
        raise SimschedError(f"{label} is {type(obj).__name__} {obj!r}, not a scheduler class")
    if autotune:
        if callable(getattr(obj, "select", None)):
            return
        raise SimschedError(f"{label}: class {obj.__name__} has no select(view) method; an autotuning "
                            f"policy needs one")
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


def summary(cls: type, name: str | None = None) -> str:
    """The one-line description ``simsched list`` shows: the spec's ``description`` of ``name`` when it has
    one, else the first sentence of the class docstring's first paragraph (which may wrap over several
    lines), ending at the first ``. `` outside parentheses.  O(len(doc)).
    """
    found = SPECS.get(name or "")
    if found is not None and found.description:
        return found.description
    doc = (inspect.getdoc(cls) or "").strip()
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    depth = 0
    for k, ch in enumerate(paragraph):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "." and depth <= 0 and (k + 1 == len(paragraph) or paragraph[k + 1] == " "):
            return paragraph[: k + 1]
    return paragraph


def kind(cls: type, name: str | None = None) -> str:
    """The declared kind of ``name``'s spec when registered; else ``"static"`` for planners,
    ``"autotune"`` for autotuning policies (``select``), ``"online"`` for policies."""
    found = SPECS.get(name or "")
    if found is not None:
        return found.kind
    if callable(getattr(cls, "plan", None)):
        return "static"
    return "autotune" if callable(getattr(cls, "select", None)) else "online"


def check_hints(name: str | None = None, cls: type | None = None) -> dict[str, int]:
    """Contract-check size hints for a scheduler: its spec's ``check`` hints, overridden by the
    class attribute ``check_hints`` (empty when there are none)."""
    found = SPECS.get(name or "")
    hints = dict(found.check) if found is not None else {}
    hints.update(getattr(cls, "check_hints", None) or {})
    return hints


def check_params(name: str | None) -> dict[str, Any]:
    """Cheaper parameters the spec of ``name`` gives for many small contract runs (may be empty)."""
    found = SPECS.get(name or "")
    return dict(found.check_params) if found is not None else {}


def check_kind(name: str, kinds: tuple[str, ...] = TASK_GRAPH_KINDS) -> None:
    """:class:`SimschedError` when ``name`` is registered with a declared kind not in ``kinds`` (an
    autotuning policy named where task-graph schedulers go, or the other way round).  O(1)."""
    found = SPECS.get(name)
    if found is not None and found.kind not in kinds:
        what, where = (("an autotuning policy", "an autotuning section's policies") if found.kind == "autotune"
                       else ("a batch policy", "a scenario whose workload is a cluster log (stream: {swf: ...})")
                       if found.kind == "batch" else (f"a {found.kind} scheduler", "a scenario's schedulers"))
        raise SimschedError(f"{name!r} is {what}: name it in {where}; here {' or '.join(kinds)} ones are "
                            f"expected")


def _check_param_number(name: str, key: str, raw: Any, value: Any) -> None:
    """The shared number rule (:func:`simsched.limits.not_a_number_check`) for a scheduler parameter
    whose annotation took a number: no bools standing for numbers, no NaN or infinity, magnitudes
    within :data:`simsched.limits.MAX_VALUE`; a wall-time budget (a parameter named ``*time_limit_s``)
    at most ``max_time_limit_s`` (an infinite search never ends).  O(1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return  # a bool parameter, a string, a list: not a number
    try:
        limits.not_a_number_check(raw if isinstance(raw, (int, float)) else value, integer=isinstance(value, int))
    except ValueError as exc:
        raise SimschedError(f"scheduler {name!r}, parameter {key!r}: {exc} (got {shown(raw)})") from None
    if key.endswith("time_limit_s"):
        cap = limits.current().max_time_limit_s
        if not 0 < value <= cap:
            raise limits.LimitError(f"scheduler {name!r}, parameter {key!r}: a time limit must be > 0 and at most "
                                    f"{cap:g} s (max_time_limit_s; to allow more, set SIMSCHED_MAX_TIME_LIMIT_S), "
                                    f"got {value:g}")


class ParameterError(SimschedError):
    """A scheduler parameter that is unknown or whose value does not fit; :attr:`param` is its name."""

    def __init__(self, message: str, *, param: str) -> None:
        super().__init__(message)
        self.param = param


def checked_params(name: str, cls: type, params: dict[str, Any], *,
                   kinds: tuple[str, ...] = TASK_GRAPH_KINDS) -> dict[str, Any]:
    """``params`` checked against the constructor of ``cls`` (the class ``name`` resolved to), without
    constructing anything: a name of another declared kind than ``kinds`` (:func:`check_kind`),
    unknown names and values that do not fit an annotation raise a :class:`ParameterError` naming the
    scheduler, the parameter (also in its ``param``, so a scenario can point at that key's line) and
    what it accepts.  A ``bool`` parameter takes a YAML boolean only (:func:`~simsched.yamlio.strict_bools`:
    not ``"yes"``, not ``1``).  Returns the converted values.  O(number of params)."""
    check_kind(name, kinds)
    try:
        sig = inspect.signature(cls, eval_str=True)
    except Exception as exc:  # a plug-in with unresolvable annotations
        raise SimschedError(f"scheduler {name!r}: cannot read its parameters: {exc}") from None
    accepted = [p for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY or p.kind == p.POSITIONAL_OR_KEYWORD]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    for key in params:
        if key not in sig.parameters and not takes_any:
            options = ", ".join(p.name for p in accepted) or "none"
            raise ParameterError(f"scheduler {name!r} has no parameter {key!r} (it accepts: {options})", param=key)
    checked = {}
    for key, value in params.items():
        ann = sig.parameters[key].annotation if key in sig.parameters else inspect.Parameter.empty
        if ann is inspect.Parameter.empty or isinstance(ann, str):
            checked[key] = value
            continue
        from pydantic import TypeAdapter, ValidationError  # only for a value to check (~6 MB imported)

        try:
            checked[key] = TypeAdapter(strict_bools(ann)).validate_python(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            msg = BOOL_MESSAGE if err["type"] == "bool_type" else err["msg"]
            raise ParameterError(f"scheduler {name!r}, parameter {key!r}: {msg} (got {shown(value)})",
                                 param=key) from None
        _check_param_number(name, key, value, checked[key])
    return checked


def instantiate(name: str, cls: type, checked: dict[str, Any]) -> Any:
    """``cls(**checked)`` for parameters already passed through :func:`checked_params`: the one place a
    scheduler is constructed.  A constructor's own refusal (``TypeError``/``ValueError``, or a plug-in's
    any exception) becomes a :class:`SimschedError` naming the scheduler; so does a missing optional
    extra the scheduler's spec declares."""
    found = SPECS.get(name)
    if found is not None:
        _require_extras(found)
    try:
        instance = cls(**checked)
    except SimschedError:
        raise
    except (TypeError, ValueError) as exc:
        raise SimschedError(f"scheduler {name!r}: {exc}") from None
    except Exception as exc:
        if name in SPECS:
            raise
        raise SimschedError(f"scheduler {name!r}: its constructor raised {type(exc).__name__}: {exc}") from None
    if not getattr(instance, "name", None):
        instance.name = name
    return instance


def create(name: str, *, kinds: tuple[str, ...] = TASK_GRAPH_KINDS, **params: Any) -> Any:
    """Instantiate the scheduler ``name`` with ``params``: :func:`check_kind` (``kinds``: the declared
    kinds accepted here), :func:`load_class`, :func:`checked_params`, then :func:`instantiate` (see
    each for the errors it raises)."""
    check_kind(name, kinds)
    cls = load_class(name)
    return instantiate(name, cls, checked_params(name, cls, params, kinds=kinds))
