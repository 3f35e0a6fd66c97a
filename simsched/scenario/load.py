"""Loading a scenario: the document validated into a :class:`Scenario`, each scheduler name
resolved to its registry class once."""


from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simsched import limits
from simsched.errors import SimschedError
from simsched.fileio import check_outputs, note_read
from simsched.scenario.autotuning import AutotuningSection, validate_section
from simsched.scenario.cluster_log import LOG_FORMATS
from simsched.scenario.energy import parse_energy
from simsched.scenario.locate import Loc, Problems, _closest, _short, dotted, locate_in
from simsched.scenario.schema import PlatformSpec, ScenarioModel
from simsched.scenario.workload import WorkloadSpec, _parse_workload
from simsched.simulator.noise import NoiseModel
from simsched.simulator.platform import Link, Platform
from simsched.yamlio import YamlDocument, load_yaml


@dataclass(frozen=True)
class SchedulerChoice:
    """A scheduler a scenario asks for: registry ``name``, its checked ``params``, the ``label`` shown in
    results, the class the name resolved to (once, when the scenario was loaded) and where the entry is
    in the file (``loc``).  Loading never constructs a scheduler: :meth:`create` does, once per run."""

    name: str
    params: Mapping[str, Any]
    label: str
    cls: type | None = field(default=None, compare=False, repr=False)
    loc: Loc = field(default=("schedulers",), compare=False, repr=False)

    def create(self) -> Any:
        """A fresh instance (schedulers may keep state between calls; each run gets its own)."""
        from simsched.schedulers import registry

        if self.cls is None:
            return registry.create(self.name, **dict(self.params))
        return registry.instantiate(self.name, self.cls, dict(self.params))

    def where(self, error: SimschedError) -> Loc:
        """Where :meth:`create`'s ``error`` is located: an error about another file (its checkpoint) at the
        entry's ``checkpoint`` field, any other at the entry."""
        named = isinstance(self.params.get("checkpoint"), str) and self.loc[:1] == ("schedulers",)
        if error.file is not None and named:
            return (*self.loc[:2], "checkpoint")
        return self.loc


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
    schedulers: tuple[SchedulerChoice, ...]
    autotuning: AutotuningSection | None = None
    file: Path | None = None
    document: YamlDocument | None = field(default=None, repr=False, compare=False)
    limits: Mapping[str, Any] = field(default_factory=dict)
    disruptions: Any = None
    """:class:`~simsched.simulator.engine.Disruptions` from the ``failures``/``stragglers`` sections, or None."""
    energy: Any = None
    """:class:`~simsched.simulator.power.EnergySetup` from ``platform.power``/``prices``/``carbon``, or None."""
    overheads: Any = None
    """:class:`~simsched.simulator.engine.Overheads` from ``platform.overheads`` (None when absent or all zero)."""
    storage: Any = None
    """:class:`~simsched.scenario.execution.StorageSetup` from ``platform.storage``, or None."""

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


def parse_label(text: str) -> tuple[str, dict[str, Any]]:
    """The inverse of :func:`scheduler_label`: ``"fair-eft(alpha=-1, late_binding=true)"`` ->
    ``("fair-eft", {"alpha": -1, "late_binding": True})``; a bare name -> ``(name, {})``.  Values are
    YAML scalars or flow collections (``order=[a, b]``; commas inside brackets or quotes do not split).
    A malformed text raises :class:`~simsched.errors.SimschedError` saying what was expected.  O(len)."""
    import yaml

    text = text.strip()
    if "(" not in text:
        return text, {}
    name, _, rest = text.partition("(")
    name = name.strip()
    if not name or not rest.endswith(")"):
        raise SimschedError(f"scheduler {text!r}: expected NAME or NAME(key=value, ...)")
    items, depth, quote, cur = [], 0, "", ""
    for ch in rest[:-1]:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        items.append(cur)
    params: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SimschedError(f"scheduler {text!r}: expected key=value between the parentheses, got {item.strip()!r}")
        if key in params:
            raise SimschedError(f"scheduler {text!r}: parameter {key!r} is given twice")
        try:
            params[key] = yaml.safe_load(value.strip()) if value.strip() else ""
        except yaml.YAMLError:
            raise SimschedError(f"scheduler {text!r}: the value of {key!r} is not a YAML value: "
                                f"{value.strip()!r}") from None
    return name, params


def _checkpoint_relative_to(params: dict[str, Any], base: Path | None) -> dict[str, Any]:
    """A ``checkpoint`` given as a relative path is relative to the scenario file, like every other path
    in a scenario; a bare name (``rl_dynamic``, a checkpoint shipped with simsched) stays a name."""
    value = params.get("checkpoint")
    if base is None or not isinstance(value, str) or not value or Path(value).is_absolute():
        return params
    if "/" not in value and "\\" not in value and not value.endswith(".pt"):
        return params
    return {**params, "checkpoint": str(base / value)}


def _parse_schedulers(entries: Sequence[Any], problems: Problems, base: Path | None = None,
                      construct: Sequence[str] | bool = False,
                      kinds: tuple[str, ...] | None = None) -> tuple[SchedulerChoice, ...]:
    """Names or ``{name: ..., param: ...}``; each name is resolved to its class and its params checked
    against the constructor's signature, without constructing it.  ``construct``: True, or the names
    and labels of the schedulers to construct once as well, so that what only a constructor can check
    (a checkpoint file that loads) is reported now, located; the others are not touched (a missing
    checkpoint of a scheduler not selected does not block a run)."""
    from simsched.schedulers import registry

    parsed: list[tuple[str, dict[str, Any], type, Loc]] = []
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
            cls = registry.load_class(name, folder=base)
            checked = registry.checked_params(name, cls, _checkpoint_relative_to(params, base),
                                              kinds=kinds or registry.TASK_GRAPH_KINDS)
        except registry.ParameterError as exc:  # located at the parameter's own key and line
            problems.add_error(("schedulers", i, exc.param), exc)
            continue
        except SimschedError as exc:
            problems.add_error(loc, exc)
            continue
        except ImportError as exc:
            problems.add(loc, f"scheduler {name!r} cannot be loaded: {exc}")
            continue
        checkpoint = checked.get("checkpoint")
        if isinstance(checkpoint, str) and checkpoint and Path(checkpoint).is_file():
            note_read(checkpoint)  # loaded when the scheduler is prepared: an input from now on
        parsed.append((name, checked, cls, loc))
    choices = [SchedulerChoice(name, params, scheduler_label(name, params), cls, loc)
               for name, params, cls, loc in parsed]
    labels = [s.label for s in choices]
    for i, label in enumerate(labels):
        if label in labels[:i]:
            problems.add(("schedulers", i), f"scheduler {label!r} is listed twice")
    for choice in choices:
        if construct is True or (construct and (choice.name in construct or choice.label in construct)):
            try:
                choice.create()
            except SimschedError as exc:
                problems.add_error(choice.where(exc), exc)
    return tuple(choices)


# --------------------------------------------------------------------------- loading
def _host_memory(spec: PlatformSpec, problems: Problems) -> dict[str, float]:
    """Each host's ``host_memory`` as its processor entries declare it (every entry on a host shares the
    value one of them gives); two entries giving one host different values is a problem located at the
    second's ``host_memory``.  O(processors)."""
    declared: dict[str, tuple[float, int]] = {}
    for i, entry in enumerate(spec.processors):
        if entry.host_memory is None:
            continue
        for host in dict.fromkeys(p.host for p in entry.expand()):
            first = declared.setdefault(host, (entry.host_memory, i))
            if first[0] != entry.host_memory:
                problems.add(("platform", "processors", i, "host_memory"),
                             f"host {host!r} has host_memory {first[0]:g} in processors[{first[1]}] and "
                             f"{entry.host_memory:g} here; give a host one value (on one entry is enough)")
    return {host: value for host, (value, _) in declared.items()}


def _build_platform(spec: PlatformSpec, problems: Problems) -> Platform | None:
    shared = _host_memory(spec, problems)
    processors = [replace(p, host_memory=shared[p.host]) if p.host in shared else p
                  for entry in spec.processors for p in entry.expand()]
    names = {p.name for p in processors} | {p.host for p in processors}
    for i, link in enumerate(spec.links):
        for key, end in (("from", link.from_), ("to", link.to)):
            if end not in names:
                problems.add(("platform", "links", i, key),
                             f"no processor or host named {end!r}{_closest(end, sorted(names))}")
    seen: dict[str, int] = {}
    for i, entry in enumerate(spec.processors):
        # a host of cores keeps its own name beside its slots': another processor may not take it
        for name in [p.name for p in entry.expand()] + (entry.names if entry.cores > 1 else []):
            if name in seen:
                problems.add(("platform", "processors", i, "name"),
                             f"processor name {name!r} is used twice (also by processors[{seen[name]}])")
            seen.setdefault(name, i)
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


def _too_many_slots(spec: PlatformSpec, error: SimschedError) -> Loc:
    """Where a platform over the processor limit is located: at the ``cores`` (or ``count``) of the
    first entry over it alone, else at ``platform.processors``; with cores the message says that each
    core is a processor.  O(entries)."""
    if not any(p.cores > 1 for p in spec.processors):
        return ("platform", "processors")
    error.message = error.message.replace(" processors is more", " processors (each core of a host is one: count "
                                          "x cores) is more", 1)
    top = limits.current().max_processors
    for i, p in enumerate(spec.processors):
        if p.n_slots > top:
            return ("platform", "processors", i, "cores" if p.cores > 1 else "count")
    return ("platform", "processors")


def parse_scenario(doc: YamlDocument, *, name: str | None = None, construct: Sequence[str] | bool = False) -> Scenario:
    """Validate a loaded document into a :class:`Scenario`; raises :class:`ScenarioError` listing
    every problem found (each with file, field and line).  Scheduler names are resolved to their
    classes once; ``construct`` (True, or names/labels) also constructs those schedulers once, to report
    what only a constructor checks (``simsched validate`` constructs all)."""
    problems = Problems(doc)
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
    autotuning = None if model.autotuning is None else _check_autotuning(model.autotuning, doc, problems)
    if model.autotuning is not None and not task_graph_part:  # refused, never run as if it were not there
        for key in ("failures", "stragglers"):
            if getattr(model, key) is not None:
                problems.add((key,), f"an autotuning scenario takes no {key}: the autotuning engine models none, "
                                     f"so its runs would not have them; remove the section (it applies to a "
                                     f"platform and workload)")
    platform = workload = energy = None
    schedulers: tuple[SchedulerChoice, ...] = ()
    if model.platform is not None:
        m = sum(p.n_slots for p in model.platform.processors)  # with cores: c, each core is a slot
        try:
            with limits.using(model.limits.overrides()):
                limits.check_processors(m)
        except SimschedError as exc:
            exc.field = None  # located below: at the entry's cores when it alone is over the limit
            problems.add_error(_too_many_slots(model.platform, exc), exc)
            problems.raise_if_any()
        platform = _build_platform(model.platform, problems)
        base = doc.file.parent if doc.file is not None else Path.cwd()
        energy = parse_energy(model.platform, platform, base, problems)
        if model.workload is not None and "stream" in model.workload:  # a job stream of workload forms
            from simsched.scenario.stream_parse import parse_stream

            workload = parse_stream(model.workload, m, base, problems)
        elif model.workload is not None:
            workload = _parse_workload(model.workload, m, base, problems)
    overheads = storage = None
    if model.platform is not None:
        from simsched.scenario.execution import parse_execution

        overheads, storage = parse_execution(model.platform, workload.options if workload is not None else None,
                                             problems)
    disruptions = None
    if model.failures is not None or model.stragglers is not None:
        from simsched.scenario.dynamics import parse_dynamics

        disruptions = parse_dynamics(model.failures, model.stragglers, platform,
                                     doc.file.parent if doc.file is not None else Path.cwd(), problems)
    if model.schedulers is not None:
        base_dir = doc.file.parent if doc.file is not None else None
        raw = model.workload.get("stream") if isinstance(model.workload, dict) else None
        batch = isinstance(raw, dict) and bool({*LOG_FORMATS, "procs"} & set(raw))  # rigid jobs: batch policies
        schedulers = _parse_schedulers(model.schedulers, problems, base_dir, construct,
                                       ("batch",) if batch else None)
        if platform is not None:  # energy-aware schedulers without a power model, policies that observe requested
            # times on a log without them: refused, not run as their twins or with foresight
            from simsched.schedulers.registry import unmet_needs, unmet_requested

            missing = (workload.options["batch"].missing_requested()
                       if workload is not None and workload.form == "batch" else None)
            for choice in schedulers:
                if (why := unmet_needs(choice.name, power=energy is not None)) is not None:
                    problems.add(choice.loc, f"{why}: add platform.power or choose another scheduler")
                elif (why := unmet_requested(choice.name, missing)) is not None:
                    problems.add(choice.loc, why)
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
    check_outputs()  # every file the scenario reads is known now: no output of the command may be one
    default_name = doc.file.stem if doc.file is not None else "scenario"
    return Scenario(
        name=model.name or name or default_name, description=model.description, seed=model.seed,
        repetitions=model.repetitions, platform=platform,
        affinity=model.platform.affinity if model.platform is not None else {},
        workload=workload, noise=noise, schedulers=schedulers, autotuning=autotuning,
        file=doc.file, document=doc, limits=model.limits.overrides(), disruptions=disruptions,
        energy=energy, overheads=overheads, storage=storage,
    )


def _check_autotuning(section: Any, doc: YamlDocument, problems: Problems) -> AutotuningSection | None:
    """The typed ``autotuning:`` section, or None with the problem recorded (field path and line)."""
    try:
        return validate_section(section, line_of=doc.line_of, file=doc.file)
    except SimschedError as exc:
        problems.items.append(exc.located(file=doc.file, line=doc.line_of(("autotuning",))))
        return None


def load_scenario(path: str | Path, *, construct: Sequence[str] | bool = False) -> Scenario:
    """Read and validate the scenario file at ``path``.

    Raises :class:`~simsched.errors.SimschedError` for an unreadable file or invalid YAML, and
    :class:`ScenarioError` (listing every problem, each with file, dotted field and line) for
    content that does not fit the schema.
    """
    return parse_scenario(load_yaml(path), construct=construct)


