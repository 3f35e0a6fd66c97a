"""Scenario files: YAML validated into typed objects, with errors that say where.

A scenario names a platform, a workload, the schedulers to compare, duration noise, a seed and a
number of repetitions (see ``docs/`` and ``scenarios/`` for examples)::

    name: quickstart
    seed: 42
    repetitions: 5
    platform:
      processors: [{name: cpu, type: cpu, count: 8}, {name: gpu, type: gpu, speed: 4, count: 2}]
      network: {bandwidth: 10.0, latency: 0.1}
    workload: {generator: random, tasks: 100}
    noise: {model: lognormal, sigma: 0.1}
    schedulers: [heft, cpop, {name: mct}]

:func:`load_scenario` reads a file and returns a :class:`Scenario`; every problem it finds is
reported with the file, the dotted field path and the line (all of them at once, in
:attr:`ScenarioError.problems`).  :func:`build_problem` turns a scenario into the
:class:`~simsched.simulator.problem.Problem` the schedulers see; graph errors (a cycle, a negative
cost, a task no processor may run) are located in the file as well.

The workload section has several *forms*, chosen by its keys:

* inline: ``tasks: [...]`` and ``edges: [...]``;
* ``generator: NAME`` plus that generator's parameters
  (:data:`simsched.workloads.generators.GENERATORS`);
* ``FORM: path`` plus options, for every ``FORM`` in ``simsched.workloads.importers.IMPORTERS``
  (paths relative to the scenario file).

Generator parameters and importer options are checked against the function's signature, so a new
generator or importer needs no change here.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from simsched import limits
from simsched.errors import SimschedError
from simsched.simulator.noise import NoiseKind, NoiseModel
from simsched.simulator.platform import Link, Platform, Processor
from simsched.simulator.problem import Problem, spread_over_platform
from simsched.workloads.taskgraph import TaskGraph
from simsched.yamlio import YamlDocument, load_yaml

Loc = tuple[Any, ...]

def _sane(x: float) -> float:
    if not limits.finite_value(x):
        raise ValueError(f"must be a finite number no larger than {limits.MAX_VALUE:g}")
    return x


def _sane_or_inf(x: float) -> float:
    return x if x == float("inf") else _sane(x)


def _rate(x: float) -> float:
    """A divisor (speed, bandwidth): tiny values would overflow every time computed from them."""
    if x != float("inf") and not (1 / limits.MAX_VALUE <= x <= limits.MAX_VALUE):
        raise ValueError(f"must be between {1 / limits.MAX_VALUE:g} and {limits.MAX_VALUE:g} (or .inf)")
    return x


NonNegative = Annotated[float, Field(ge=0), AfterValidator(_sane)]
NonNegativeOrInf = Annotated[float, Field(ge=0), AfterValidator(_sane_or_inf)]
Positive = Annotated[float, Field(gt=0), AfterValidator(_rate)]
FiniteRate = Annotated[float, Field(gt=0), AfterValidator(_rate), AfterValidator(_sane)]
Finite = Annotated[float, AfterValidator(_sane)]
PositiveInt = Annotated[int, Field(ge=1)]


# --------------------------------------------------------------------------- schema
class _Model(BaseModel):
    """Every scenario section rejects unknown fields and is immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ProcessorSpec(_Model):
    """One processor, or ``count`` identical ones named ``name0 .. name{count-1}``."""

    name: str
    type: str = "cpu"
    speed: FiniteRate = 1.0
    cores: PositiveInt = 1
    memory: Positive = float("inf")
    host: str | None = None
    count: PositiveInt | None = None

    def expand(self) -> list[Processor]:
        """The processors this entry stands for (one per ``count``; each is its own host unless
        ``host`` is given)."""
        names = [self.name] if self.count is None else [f"{self.name}{i}" for i in range(self.count)]
        return [Processor(name=n, type=self.type, speed=self.speed, cores=self.cores, memory=self.memory,
                          host=self.host or "") for n in names]


class NetworkSpec(_Model):
    """Default network: ``bandwidth``/``latency`` between hosts, ``host_*`` within a host."""

    bandwidth: Positive = 1.0
    latency: NonNegative = 0.0
    host_bandwidth: Positive = float("inf")
    host_latency: NonNegative = 0.0


class LinkSpec(_Model):
    """A link overriding the default network between two processors or hosts (both directions)."""

    from_: str = Field(alias="from")
    to: str
    bandwidth: Positive
    latency: NonNegative = 0.0


class PlatformSpec(_Model):
    """Processors, the default network, per-pair links and per-kind affinities."""

    processors: list[ProcessorSpec] = Field(min_length=1)
    network: NetworkSpec = NetworkSpec()
    links: list[LinkSpec] = []
    affinity: dict[str, dict[str, NonNegative]] = {}


class NoiseSpec(_Model):
    """Multiplicative duration noise (see :mod:`simsched.simulator.noise`)."""

    model: NoiseKind = "none"
    sigma: NonNegative = 0.1


class LimitsSpec(_Model):
    """Raise (or lower) the size limits of :mod:`simsched.limits` for this scenario."""

    max_tasks: PositiveInt | None = None
    max_processors: PositiveInt | None = None
    max_memory_mb: FiniteRate | None = None

    def overrides(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class ScenarioModel(_Model):
    """The top level of a scenario file.  ``workload`` and ``schedulers`` are checked by their own
    code (their shapes depend on the registries).  ``autotuning`` is an opaque section, checked by
    :mod:`simsched.run.autotune` when available; a scenario with one may omit ``platform``,
    ``workload`` and ``schedulers`` (all three are required otherwise)."""

    name: str | None = None
    description: str = ""
    seed: Annotated[int, Field(ge=0)] = 0
    repetitions: PositiveInt = 1
    platform: PlatformSpec | None = None
    workload: dict[str, Any] | None = None
    noise: NoiseSpec = NoiseSpec()
    schedulers: list[Any] | None = Field(default=None, min_length=1)
    autotuning: dict[str, Any] | None = None
    limits: LimitsSpec = LimitsSpec()
    failures: dict[str, Any] | None = None
    """Processor failures (checked by :mod:`simsched.scenario.stream`)."""
    stragglers: dict[str, Any] | None = None
    """Straggler episodes (checked by :mod:`simsched.scenario.stream`)."""


class TaskSpec(_Model):
    """An inline task: explicit ``cost`` per processor (``null`` or ``.inf`` = may not run there) or
    ``work`` (time = work / speed / affinity)."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    name: str
    cost: list[NonNegativeOrInf | None] | None = None
    work: NonNegative | None = None
    kind: str | None = None
    arrival: NonNegative | None = None
    priority: Finite | None = None
    memory: NonNegative | None = None
    cores: PositiveInt | None = None


class EdgeSpec(_Model):
    """An inline edge: ``data`` units move from ``from`` to ``to``."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    from_: str = Field(alias="from")
    to: str
    data: NonNegative = 0.0


class InlineWorkload(_Model):
    """``tasks`` and ``edges`` written in the scenario."""

    tasks: list[TaskSpec]
    edges: list[EdgeSpec] = []


# --------------------------------------------------------------------------- results of loading
@dataclass(frozen=True)
class WorkloadSpec:
    """A validated workload section: its ``form`` (``inline``, ``generator`` or an importer name),
    the checked options, and how to build the graph."""

    form: str
    options: Mapping[str, Any]
    build: Callable[[int, np.random.Generator], TaskGraph] = field(repr=False)
    loc: Loc = ("workload",)

    @property
    def written_inline(self) -> bool:
        """True for tasks and edges written in the scenario itself (not the ``inline: FILE`` form)."""
        return self.form == "inline" and "tasks" in self.options

    def describe(self) -> str:
        if self.written_inline:
            return f"inline graph of {len(self.options['tasks'])} tasks"
        if self.form == "generator":
            return f"generator {self.options['generator']!r}"
        if self.form == "stream":
            return self.options["stream"].describe()
        return f"{self.form} file {self.options.get('path')}"


@dataclass(frozen=True)
class SchedulerSpec:
    """A scheduler to run: registry ``name``, its ``params`` and the ``label`` shown in results."""

    name: str
    params: Mapping[str, Any]
    label: str

    def create(self) -> Any:
        """A fresh instance (schedulers may keep state between calls; each run gets its own)."""
        from simsched.schedulers import registry

        return registry.create(self.name, **dict(self.params))


@dataclass(frozen=True)
class Scenario:
    """A validated scenario, ready to run.  ``platform`` and ``workload`` are None only in a
    scenario that has just an ``autotuning`` section (see :attr:`has_task_graph`)."""

    name: str
    description: str
    seed: int
    repetitions: int
    platform: Platform | None
    affinity: Mapping[str, Mapping[str, float]]
    workload: WorkloadSpec | None
    noise: NoiseModel
    schedulers: tuple[SchedulerSpec, ...]
    autotuning: Mapping[str, Any] | None = None
    file: Path | None = None
    document: YamlDocument | None = field(default=None, repr=False, compare=False)
    limits: Mapping[str, Any] = field(default_factory=dict)
    disruptions: Any = None
    """:class:`~simsched.simulator.engine.Disruptions` from the ``failures``/``stragglers`` sections, or None."""

    @property
    def is_dynamic(self) -> bool:
        """True for a job-stream workload or a scenario with failures or stragglers: it runs through
        :mod:`simsched.run.streams` (the SimPy engine only; the fast evaluator cannot model it)."""
        return (self.workload is not None and self.workload.form == "stream") or self.disruptions is not None

    def locate(self, error: SimschedError, loc: Loc) -> SimschedError:
        """``error`` with this file, the dotted ``loc`` and its line filled in where still unknown.
        An error about another file (an imported workload) keeps that file and its own line; when
        it has no line, it is reported at the scenario field that names the file instead."""
        line = self.document.line_of(loc) if self.document is not None else None
        return locate_in(error, self.file, line, dotted(loc))

    @property
    def has_task_graph(self) -> bool:
        """True when the scenario has a platform and a workload (false for autotuning-only ones)."""
        return self.platform is not None and self.workload is not None

    @property
    def scheduler_labels(self) -> list[str]:
        return [s.label for s in self.schedulers]


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
    file (an imported workload, a checkpoint) keeps that file and its own line; when it has no line,
    it is reported at the scenario field that names the file, never with the scenario's line
    against the other file's name."""
    if error.file is not None and file is not None and Path(error.file) != Path(file):
        if error.line is not None:
            return error
        inner = f"{error.field}: " if error.field else ""
        error.message = f"in {error.file}: {inner}{error.message}"
        error.file, error.field = None, None
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
    close = difflib.get_close_matches(str(name), list(options), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


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


class _Problems:
    """Collects located problems while a scenario is checked."""

    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.items: list[SimschedError] = []

    def add(self, loc: Loc, message: str) -> None:
        self.items.append(SimschedError(message, file=self.doc.file, line=self.doc.line_of(loc), field=dotted(loc)))

    def add_error(self, loc: Loc, error: SimschedError) -> None:
        self.items.append(locate_in(error, self.doc.file, self.doc.line_of(loc), dotted(loc)))

    def add_validation(self, prefix: Loc, exc: ValidationError, model: type[BaseModel] | None = None) -> None:
        for err in exc.errors():
            loc = prefix + tuple(err["loc"])
            kind = err["type"]
            if kind == "extra_forbidden":
                owner = _model_at(model, tuple(err["loc"])) if model is not None else None
                key = err["loc"][-1]
                if owner is not None:
                    names = _field_names(owner)
                    msg = f"unknown field {key!r}{_closest(key, names)}; expected one of: {', '.join(names)}"
                else:
                    msg = f"unknown field {key!r}"
            elif kind == "missing":
                msg = "this field is required"
            elif kind == "value_error":
                msg = f"{err.get('ctx', {}).get('error', err['msg'])} (got {_short(err.get('input'))})"
            else:
                msg = f"{err['msg']} (got {_short(err.get('input'))})"
            self.add(loc, msg)

    def raise_if_any(self) -> None:
        if self.items:
            raise ScenarioError(self.items)


def check_params(func: Callable[..., Any], params: Mapping[str, Any], *, what: str,
                 skip: Sequence[str] = ("rng",)) -> tuple[dict[str, Any], list[tuple[Loc, str]]]:
    """Validate keyword ``params`` for ``func`` against its signature: unknown names (listing the
    accepted ones), missing required ones, and values against each annotation (pydantic
    ``TypeAdapter``).  Returns the converted params and ``(loc, message)`` problems."""
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
            out[key] = TypeAdapter(ann).validate_python(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            problems.append(((key, *err["loc"]), f"{err['msg']} (got {_short(value)})"))
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


# --------------------------------------------------------------------------- workload forms
def _importers() -> Mapping[str, Callable[..., TaskGraph]]:
    """``simsched.workloads.importers.IMPORTERS`` if that module is available, else nothing."""
    try:
        from simsched.workloads.importers import IMPORTERS
    except ImportError:
        return {}
    return IMPORTERS


def _parse_workload(raw: Mapping[str, Any], m: int, base: Path, problems: _Problems) -> WorkloadSpec | None:
    """Choose the workload form from its keys and validate it (see the module docstring)."""
    top: Loc = ("workload",)
    if "stream" in raw:
        from simsched.scenario.stream import parse_stream

        if len(raw) > 1:
            problems.add(top, f"a stream workload has only the 'stream' key (its jobs go under stream.jobs); "
                              f"also given: {', '.join(k for k in raw if k != 'stream')}")
            return None
        return parse_stream(raw["stream"], m, base, problems)
    if "generator" in raw:
        from simsched.workloads.generators import GENERATORS

        return _parse_generator(raw, m, GENERATORS, problems)
    if isinstance(raw.get("tasks"), list) or "edges" in raw:
        return _parse_inline(raw, m, problems)
    importers = _importers()
    forms = [k for k in raw if k in importers]
    if len(forms) == 1:
        return _parse_import(forms[0], raw, importers[forms[0]], base, problems)
    if len(forms) > 1:
        problems.add(top, f"give one workload form, not several ({', '.join(forms)})")
        return None
    from simsched.workloads.generators import GENERATORS

    file_forms = ", ".join(f"{k}: PATH" for k in importers) or "none installed"
    problems.add(top, f"the workload needs inline 'tasks' (and 'edges'), 'generator: NAME' "
                      f"(one of: {', '.join(GENERATORS)}), or a file form ({file_forms})")
    return None


def _parse_generator(raw: Mapping[str, Any], m: int, generators: Mapping[str, Callable[..., TaskGraph]],
                     problems: _Problems) -> WorkloadSpec | None:
    name = raw["generator"]
    if not isinstance(name, str) or name not in generators:
        problems.add(("workload", "generator"), f"unknown generator {name!r}{_closest(str(name), list(generators))}; "
                                                f"known: {', '.join(generators)}")
        return None
    func = generators[name]
    given = {k: v for k, v in raw.items() if k != "generator"}
    params, found = check_params(func, given, what=f"generator {name!r}")
    for loc, msg in found:
        problems.add(("workload", *loc), msg)
    if found:
        return None
    if "processors" not in given and _accepts(func, "processors"):
        params["processors"] = m

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:
        return func(**params, rng=rng)

    return WorkloadSpec("generator", {"generator": name, **params}, build, ("workload",))


def _parse_inline(raw: Mapping[str, Any], m: int, problems: _Problems) -> WorkloadSpec | None:
    try:
        spec = InlineWorkload.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(("workload",), exc, InlineWorkload)
        return None
    ok = True
    for i, task in enumerate(spec.tasks):
        if task.cost is not None and len(task.cost) != m:
            problems.add(("workload", "tasks", i, "cost"),
                         f"task {task.name!r} gives {len(task.cost)} costs but the platform has {m} processors; "
                         f"give one cost per processor, in the platform's order")
            ok = False
    if not ok:
        return None
    tasks = []
    for t in spec.tasks:
        rec = t.model_dump(exclude_none=True)
        if t.cost is not None:
            rec["cost"] = [float("inf") if c is None else c for c in t.cost]
        tasks.append(rec)
    edges = [(e.from_, e.to, e.data) for e in spec.edges]

    def build(_m: int, _rng: np.random.Generator) -> TaskGraph:
        return TaskGraph.from_named(tasks, edges)

    return WorkloadSpec("inline", {"tasks": tasks, "edges": edges}, build, ("workload", "tasks"))


def _parse_import(form: str, raw: Mapping[str, Any], func: Callable[..., TaskGraph], base: Path,
                  problems: _Problems) -> WorkloadSpec | None:
    value = raw[form]
    params = list(inspect.signature(func, eval_str=True).parameters.values())
    first = params[0].name if params else None
    # an importer whose first parameter is a ``str`` takes a name (e.g. ``model: resnet18``);
    # any other takes a file, relative to the scenario
    takes_name = bool(params) and params[0].annotation is str
    if not isinstance(value, str) or not value:
        wanted = "a name" if takes_name else "a file path"
        problems.add(("workload", form), f"{form} needs {wanted} (got {_short(value)})")
        return None
    if takes_name:
        source: Any = value
    else:
        source = Path(value) if Path(value).is_absolute() else base / value
        if not source.is_file():
            problems.add(("workload", form), f"{form} file not found: {source}")
            return None
    given = {k: v for k, v in raw.items() if k != form}
    options, found = check_params(func, given, what=f"importer {form!r}", skip=("rng", first))
    for loc, msg in found:
        problems.add(("workload", *loc), msg)
    if found:
        return None

    def build(_m: int, _rng: np.random.Generator) -> TaskGraph:
        return func(source, **options)

    return WorkloadSpec(form, {"name" if takes_name else "path": str(source), **options}, build, ("workload", form))


# --------------------------------------------------------------------------- schedulers
def scheduler_label(name: str, params: Mapping[str, Any]) -> str:
    """``name``, or ``name(key=value, ...)`` with the parameters that differ from the scheduler's
    defaults (``ga(objective=makespan)``), so a results row says what ran."""
    from simsched.schedulers import registry

    try:
        signature = inspect.signature(registry.load_class(name))
    except (SimschedError, TypeError, ValueError):
        signature = None
    changed = []
    for key, value in params.items():
        param = signature.parameters.get(key) if signature is not None else None
        if param is not None and param.default is not inspect.Parameter.empty and param.default == value:
            continue
        changed.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
    return f"{name}({', '.join(changed)})" if changed else name


def _parse_schedulers(entries: Sequence[Any], problems: _Problems) -> tuple[SchedulerSpec, ...]:
    """Names or ``{name: ..., param: ...}``; each name must be registered and its params accepted."""
    from simsched.schedulers import registry

    parsed: list[tuple[str, dict[str, Any]]] = []
    for i, entry in enumerate(entries):
        loc: Loc = ("schedulers", i)
        if isinstance(entry, str):
            name, params = entry, {}
        elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
            name, params = entry["name"], {k: v for k, v in entry.items() if k != "name"}
            loc = (*loc, "name")
        else:
            problems.add(loc, f"a scheduler is a name or a mapping with 'name' and its parameters, "
                              f"got {_short(entry)}")
            continue
        try:  # unknown names, plug-ins that fail to load and bad parameters all raise here
            registry.create(name, **params)
        except SimschedError as exc:
            problems.add_error(loc, exc)
            continue
        except ImportError as exc:
            problems.add(loc, f"scheduler {name!r} cannot be loaded: {exc}")
            continue
        parsed.append((name, params))
    specs = [SchedulerSpec(name, params, scheduler_label(name, params)) for name, params in parsed]
    labels = [s.label for s in specs]
    for i, label in enumerate(labels):
        if label in labels[:i]:
            problems.add(("schedulers", i), f"scheduler {label!r} is listed twice")
    return tuple(specs)


# --------------------------------------------------------------------------- loading
def _build_platform(spec: PlatformSpec, problems: _Problems) -> Platform | None:
    processors = [p for entry in spec.processors for p in entry.expand()]
    names = {p.name for p in processors} | {p.host for p in processors}
    for i, link in enumerate(spec.links):
        for key, end in (("from", link.from_), ("to", link.to)):
            if end not in names:
                problems.add(("platform", "links", i, key),
                             f"no processor or host named {end!r}{_closest(end, sorted(names))}")
    seen: dict[str, int] = {}
    for i, entry in enumerate(spec.processors):
        for p in entry.expand():
            if p.name in seen:
                problems.add(("platform", "processors", i, "name"),
                             f"processor name {p.name!r} is used twice (also by processors[{seen[p.name]}])")
            seen.setdefault(p.name, i)
    types = sorted({p.type for p in processors})
    for kind, per_type in spec.affinity.items():
        for ptype in per_type:
            if ptype not in types:
                problems.add(("platform", "affinity", kind, ptype),
                             f"no processor has type {ptype!r}{_closest(ptype, types)}; the platform's types: "
                             f"{', '.join(types)}")
    if problems.items:
        return None
    net = spec.network
    links = [Link(lk.from_, lk.to, lk.bandwidth, lk.latency) for lk in spec.links]
    try:
        return Platform.uniform(processors, net.bandwidth, net.latency, host_bandwidth=net.host_bandwidth,
                                host_latency=net.host_latency, links=links)
    except SimschedError as exc:
        problems.add_error(("platform",), exc)
        return None


def parse_scenario(doc: YamlDocument, *, name: str | None = None) -> Scenario:
    """Validate a loaded document into a :class:`Scenario`; raises :class:`ScenarioError` listing
    every problem found (each with file, field and line)."""
    problems = _Problems(doc)
    if not isinstance(doc.data, dict):
        problems.add((), "the top level must be a mapping of fields (name: ..., platform: ...)")
        problems.raise_if_any()
    if {"scenario", "grid"} & set(doc.data) and not {"platform", "workload"} & set(doc.data):
        where = f" {doc.file}" if doc.file is not None else ""
        problems.add(("scenario",) if "scenario" in doc.data else ("grid",),
                     f"this is a study file (a base scenario and a grid of variants): use `simsched sweep{where}`")
        problems.raise_if_any()
    try:
        model = ScenarioModel.model_validate(doc.data)
    except ValidationError as exc:
        problems.add_validation((), exc, ScenarioModel)
        # check what can be checked independently, so one run lists as much as possible
        if isinstance(doc.data.get("schedulers"), list):
            _parse_schedulers(doc.data["schedulers"], problems)
        problems.raise_if_any()
        raise  # pragma: no cover - add_validation always adds a problem
    task_graph_part = [k for k in ("platform", "workload", "schedulers") if getattr(model, k) is not None]
    if model.autotuning is None or task_graph_part:
        for key in ("platform", "workload", "schedulers"):
            if getattr(model, key) is None:
                problems.add((key,), "this field is required")
    if model.autotuning is not None:
        _check_autotuning(model.autotuning, doc, problems)
    platform = workload = None
    schedulers: tuple[SchedulerSpec, ...] = ()
    if model.platform is not None:
        m = sum(p.count or 1 for p in model.platform.processors)
        try:
            with limits.using(model.limits.overrides()):
                limits.check_processors(m)
        except SimschedError as exc:
            problems.add_error(("platform", "processors"), exc)
            problems.raise_if_any()
        platform = _build_platform(model.platform, problems)
        base = doc.file.parent if doc.file is not None else Path.cwd()
        if model.workload is not None:
            workload = _parse_workload(model.workload, m, base, problems)
    disruptions = None
    if model.failures is not None or model.stragglers is not None:
        from simsched.scenario.stream import parse_dynamics

        disruptions = parse_dynamics(model.failures, model.stragglers, platform,
                                     doc.file.parent if doc.file is not None else Path.cwd(), problems)
    if model.schedulers is not None:
        schedulers = _parse_schedulers(model.schedulers, problems)
        try:
            limits.check_runs(len(model.schedulers) * model.repetitions)
        except SimschedError as exc:
            problems.add_error(("repetitions",), exc)
    noise = None
    try:
        noise = NoiseModel(model.noise.model, model.noise.sigma)
    except SimschedError as exc:
        problems.add_error(("noise",), exc)
    problems.raise_if_any()
    assert noise is not None
    default_name = doc.file.stem if doc.file is not None else "scenario"
    return Scenario(
        name=model.name or name or default_name, description=model.description, seed=model.seed,
        repetitions=model.repetitions, platform=platform,
        affinity=model.platform.affinity if model.platform is not None else {},
        workload=workload, noise=noise, schedulers=schedulers, autotuning=model.autotuning,
        file=doc.file, document=doc, limits=model.limits.overrides(), disruptions=disruptions,
    )


def _check_autotuning(section: dict[str, Any], doc: YamlDocument, problems: _Problems) -> None:
    """Check the ``autotuning:`` section with :mod:`simsched.run.autotune` if it is there."""
    try:
        from simsched.run.autotune import validate_section
    except ImportError:
        return
    try:
        validate_section(section, line_of=doc.line_of, file=doc.file)
    except SimschedError as exc:
        problems.items.append(exc.located(file=doc.file, line=doc.line_of(("autotuning",))))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate the scenario file at ``path``.

    Raises :class:`~simsched.errors.SimschedError` for an unreadable file or invalid YAML, and
    :class:`ScenarioError` (listing every problem, each with file, dotted field and line) for
    content that does not fit the schema.
    """
    return parse_scenario(load_yaml(path))


# --------------------------------------------------------------------------- building the problem
def _graph_error_loc(scenario: Scenario, message: str) -> Loc:
    """Best field for a graph error: the inline edge or task it names, else the workload."""
    from simsched.workloads.importers.records import error_position

    spec = scenario.workload
    if spec is None:
        return ("workload",)
    if not spec.written_inline:
        return spec.loc
    where = error_position(message, [t["name"] for t in spec.options["tasks"]],
                           [(a, b) for a, b, _ in spec.options["edges"]])
    return spec.loc if where is None else ("workload", *where)


def build_graph(scenario: Scenario, seed: int) -> TaskGraph:
    """The scenario's task graph; a generator draws from ``numpy.random.default_rng(seed)``.  Graph
    errors are located in the scenario file."""
    if scenario.workload is None or scenario.platform is None:
        raise SimschedError("this scenario has no platform and workload, only an autotuning section",
                            file=scenario.file)
    spec = scenario.workload
    if spec.form == "stream":
        from simsched.scenario.stream import build_stream

        return build_stream(scenario, seed).graph
    try:
        with limits.using(scenario.limits):
            graph = spec.build(scenario.platform.n_processors, np.random.default_rng(seed))
            if spec.form == "generator":
                graph = spread_over_platform(graph, scenario.platform, scenario.affinity)
            return graph
    except SimschedError as exc:
        if spec.form == "generator" and exc.field in spec.options:  # a generator names its parameter
            loc, exc.field = ("workload", exc.field), None
            raise scenario.locate(exc, loc) from None
        raise scenario.locate(exc, _graph_error_loc(scenario, exc.message)) from None
    except (ValueError, OverflowError, MemoryError) as exc:  # numpy refusing a generator's parameters
        if spec.form != "generator":
            raise
        error = SimschedError(f"generator {spec.options['generator']!r} cannot use these parameters: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        raise scenario.locate(error, spec.loc) from None


def _check_platform_fields_used(scenario: Scenario, graph: TaskGraph) -> None:
    """Refuse a speed or affinity the cost model would ignore: an affinity for a task kind the
    workload does not have, or speeds/affinities beside explicit per-processor costs."""
    assert scenario.platform is not None and scenario.workload is not None
    kinds = set(graph.kind_names)
    for kind in scenario.affinity:
        if kind not in kinds:
            raise scenario.locate(SimschedError(
                f"no task of kind {kind!r} in the workload{_closest(kind, sorted(kinds))}; its kinds: "
                f"{', '.join(sorted(kinds))}"), ("platform", "affinity", kind))
    if graph.cost is None or scenario.workload.form in ("generator", "stream"):
        return
    where = "the inline tasks give" if scenario.workload.form == "inline" else "the workload file gives"
    if scenario.affinity:
        raise scenario.locate(SimschedError(
            f"{where} explicit per-processor costs, so the affinity would have no effect; give tasks "
            f"'work' instead of 'cost', or drop the affinity"), ("platform", "affinity"))
    speeds = scenario.platform.speed
    if (speeds != 1.0).any():
        proc = scenario.platform.processors[int(np.flatnonzero(speeds != 1.0)[0])]
        data = scenario.document.data if scenario.document is not None else {}
        entries = ((data.get("platform") or {}).get("processors") or []) if isinstance(data, dict) else []
        at = [j for j, e in enumerate(entries) if isinstance(e, dict) and e.get("speed", 1.0) != 1.0]
        raise scenario.locate(SimschedError(
            f"{where} explicit per-processor costs, so the speed {proc.speed:g} of processor {proc.name!r} would "
            f"have no effect; give tasks 'work' instead of 'cost', or drop the speed"),
            ("platform", "processors", at[0], "speed") if at else ("platform", "processors"))


def build_problem(scenario: Scenario, seed: int | None = None) -> Problem:
    """The :class:`Problem` (graph on platform, with the cost model applied) for ``seed`` (default:
    the scenario's).  A cycle, a negative cost, an empty graph or a task no processor may run raise a
    :class:`SimschedError` naming the file, the field and the line."""
    graph = build_graph(scenario, scenario.seed if seed is None else seed)
    _check_platform_fields_used(scenario, graph)
    try:
        with limits.using(scenario.limits):
            limits.check_matrix(graph.n_tasks, scenario.platform.n_processors)
        return Problem(graph, scenario.platform, scenario.affinity)
    except SimschedError as exc:
        raise scenario.locate(exc, _graph_error_loc(scenario, exc.message)) from None
