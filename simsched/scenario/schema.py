"""The scenario schema: pydantic models of every YAML section, with number sanity checks
(finite, within :data:`simsched.limits.MAX_VALUE`, divisors not tiny)."""


from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from simsched import limits
from simsched.simulator.engine.overheads import PROFILES, Overheads
from simsched.simulator.noise import NoiseKind
from simsched.simulator.platform import Processor, host_slots
from simsched.simulator.power import ProcessorPower, PState

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


MAX_INT = limits.MAX_INT
not_a_number_check = limits.not_a_number_check


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not {str(value).lower()} (a boolean)")
    return value


def _int_in_range(value: Any) -> Any:
    not_a_number_check(value, integer=True, allow_inf=True)  # inf/NaN floats are refused by int itself
    return value


_NotBool = BeforeValidator(_no_bool)
NonNegative = Annotated[float, _NotBool, Field(ge=0), AfterValidator(_sane)]
NonNegativeOrInf = Annotated[float, _NotBool, Field(ge=0), AfterValidator(_sane_or_inf)]
Positive = Annotated[float, _NotBool, Field(gt=0), AfterValidator(_rate)]
FiniteRate = Annotated[float, _NotBool, Field(gt=0), AfterValidator(_rate), AfterValidator(_sane)]
Finite = Annotated[float, _NotBool, AfterValidator(_sane)]
PositiveInt = Annotated[int, BeforeValidator(_int_in_range), Field(ge=1)]


def _procs_bound(k: int) -> int:
    """A task's processor demand: at most the processor limit (a platform can never hold more)."""
    top = limits.current().max_processors
    if k > top:
        raise ValueError(f"must be at most the processor limit {top:,} (limits.max_processors)")
    return k


Procs = Annotated[int, _NotBool, BeforeValidator(_int_in_range), Field(ge=1), AfterValidator(_procs_bound)]
Fraction = Annotated[float, _NotBool, Field(ge=0, le=1), AfterValidator(_sane)]


def _number_kind(annotation: Any) -> str | None:
    """``"int"``/``"float"`` when a field's annotation (through ``Optional``/``Annotated``/unions) takes
    a plain number and no bool; else None.  O(size of the annotation)."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _number_kind(args[0])
    if origin in (typing.Union, types.UnionType):
        kinds = {_number_kind(a) for a in args} - {None}
        return "float" if "float" in kinds else (kinds.pop() if kinds else None)
    if annotation is float:
        return "float"
    if annotation is int:
        return "int"
    return None


class NumbersChecked(BaseModel):
    """Base of every input model (scenario sections, autotuning, studies): each top-level numeric
    field gets :func:`not_a_number_check` before pydantic's own coercion, so a field added later is
    covered without a line written for it.  Infinities pass only where the field's own validators
    accept them (``.inf`` memory, bandwidth); plain ``float`` fields refuse them."""

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        kind = _number_kind(field.annotation) if field is not None else None
        if kind is not None and value is not None:
            allows_inf = any(getattr(m, "func", None) in (_sane_or_inf, _rate) for m in field.metadata) or any(
                getattr(m, "func", None) in (_sane_or_inf, _rate)
                for a in typing.get_args(field.annotation) for m in getattr(a, "__metadata__", ()))
            not_a_number_check(value, integer=kind == "int", allow_inf=allows_inf)
        return value


Amount = Annotated[float, _NotBool, Field(ge=0), AfterValidator(_sane)]
"""A finite number >= 0 that is not a boolean (watts, joules, delays, prices)."""
Factor = Annotated[float, _NotBool, Field(gt=0), AfterValidator(_rate), AfterValidator(_sane)]


# --------------------------------------------------------------------------- schema
class _Model(NumbersChecked):
    """Every scenario section rejects unknown fields and is immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


Cores = Annotated[int, _NotBool, BeforeValidator(_int_in_range), Field(ge=1), AfterValidator(_procs_bound)]
"""The cores a task needs at once: a whole number from 1 to ``limits.max_processors`` (each core is a
slot, a processor; a host's own ``cores`` are bounded with its ``count``, against the scenario's
limits, when the platform is built)."""


class ProcessorSpec(_Model):
    """One processor, or ``count`` identical ones named ``name0 .. name{count-1}``; with ``cores: c >
    1`` each is a host of ``c`` one-core slots ``<name>/c0 .. <name>/c{c-1}`` (docs/model.md).
    ``host_memory``: the memory of the host(s) these processors sit on, shared by every task running
    on the host at once (docs/execution-model.md, "Host memory"); ``memory`` bounds one task."""

    name: str
    type: str = "cpu"
    speed: FiniteRate = 1.0
    cores: PositiveInt = 1
    memory: Positive = float("inf")
    host: str | None = None
    count: PositiveInt | None = None
    host_memory: FiniteRate | None = None

    @property
    def names(self) -> list[str]:
        """The entry's processor names, ``name`` or ``name0 .. name{count-1}`` (with ``cores: c > 1``
        each names a host of ``c`` slots, and is no processor's name itself).  O(count)."""
        return [self.name] if self.count is None else [f"{self.name}{i}" for i in range(self.count)]

    @property
    def n_slots(self) -> int:
        """How many processors (slots) this entry expands into: ``count x cores``.  O(1)."""
        return (self.count or 1) * self.cores

    def expand(self) -> list[Processor]:
        """The processors this entry stands for: one per ``count`` (each its own host unless ``host``
        is given), or with ``cores: c > 1`` the ``c`` slots of each (:func:`host_slots`: named
        ``<name>/c<i>``, on host ``host`` or else the processor's own name), with this entry's
        ``host_memory`` (none when not given; the loader gives every processor of a host the value one
        entry declares for it).  O(count x cores)."""
        extra = {} if self.host_memory is None else {"host_memory": self.host_memory}
        return [p for n in self.names for p in host_slots(n, self.cores, type=self.type, speed=self.speed,
                                                        memory=self.memory, host=self.host or "", **extra)]


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


def exactly_one(section: object, *fields: str, hints: dict[str, str] | None = None) -> None:
    """The rule of a section whose source has alternatives (a constant or a trace, a model or a task
    list, one of several arrival processes): exactly one of ``fields`` of ``section`` is given (not
    None), or a ``ValueError`` "give exactly one of A, B or C", each name followed by its ``hints``
    entry in parentheses where there is one; pydantic locates it at the section's line.  O(fields)."""
    if sum(getattr(section, name) is not None for name in fields) == 1:
        return
    named = [f"{name} ({hints[name]})" if hints and name in hints else name for name in fields]
    raise ValueError(f"give exactly one of {', '.join(named[:-1])} or {named[-1]}")


def busy_not_below_idle(busy: float, idle: float, busy_name: str = "busy power",
                        idle_name: str = "idle power") -> None:
    """The one rule of every power table (a P-state, a processor type, the autotuning servers' GPUs): a
    busy draw at least the idle one, or a ``ValueError`` naming both in watts, which pydantic locates at
    the section's line.  O(1)."""
    if busy < idle:
        raise ValueError(f"{busy_name} {busy:g} W is below {idle_name} {idle:g} W")


class PStateSpec(_Model):
    """One P-state: ``speed`` factor (> 0), watts ``busy`` and ``idle`` (busy >= idle)."""

    speed: Factor
    busy: Amount
    idle: Amount

    @model_validator(mode="after")
    def _busy_over_idle(self) -> PStateSpec:
        busy_not_below_idle(self.busy, self.idle)
        return self


class PowerSpec(_Model):
    """What one processor type (or one processor) draws, in watts: ``idle`` and ``busy`` (one P-state of
    speed 1) or ``pstates`` (the first is the nominal one); ``powered_off`` (not ``off``: YAML reads a
    bare ``off`` as false), ``failed`` (default: ``powered_off``); the
    cost of a P-state switch and of powering off and on (delays in time units, energies in joules).
    See docs/energy.md."""

    idle: Amount | None = None
    busy: Amount | None = None
    pstates: list[PStateSpec] | None = Field(default=None, min_length=1, max_length=64)
    powered_off: Amount = 0.0
    failed: Amount | None = None
    switch_latency: Amount = 0.0
    switch_energy: Amount = 0.0
    on_delay: Amount = 0.0
    on_energy: Amount = 0.0
    off_delay: Amount = 0.0
    off_energy: Amount = 0.0

    @model_validator(mode="before")
    @classmethod
    def _no_yaml_booleans(cls, data: Any) -> Any:
        """A bare ``off`` (or ``on``, ``yes``, ``no``) as a key reads as a YAML boolean: say which field
        was meant instead of pydantic's ``Keys should be strings``."""
        if isinstance(data, dict):
            flags = [k for k in data if isinstance(k, bool)]
            if flags:
                raise ValueError(f"a key reads as the YAML boolean {flags[0]} (a bare off, on, yes or no): the "
                                 "watts of a switched-off processor are `powered_off:` (docs/energy.md)")
        return data

    @model_validator(mode="after")
    def _one_form(self) -> PowerSpec:
        simple = self.idle is not None or self.busy is not None
        if simple and self.pstates is not None:
            raise ValueError("give either idle and busy, or pstates, not both")
        if self.pstates is None and (self.idle is None or self.busy is None):
            raise ValueError("give idle and busy watts (or a list of pstates)")
        if simple:
            busy_not_below_idle(self.busy, self.idle)
        return self

    def build(self) -> ProcessorPower:
        states = (tuple(PState(s.speed, s.busy, s.idle) for s in self.pstates) if self.pstates is not None
                  else (PState(1.0, self.busy, self.idle),))
        return ProcessorPower(states, self.powered_off, self.failed, self.switch_latency, self.switch_energy,
                              self.on_delay, self.on_energy, self.off_delay, self.off_energy)


class PowerSection(_Model):
    """``platform.power``: a :class:`PowerSpec` per processor ``types`` entry, overridden per processor
    name in ``processors``; ``link_energy`` joules per unit of data moved between two processors;
    ``time_unit_s`` seconds per simulated time unit."""

    types: dict[str, PowerSpec] = {}
    processors: dict[str, PowerSpec] = {}
    link_energy: Amount = 0.0
    time_unit_s: Factor = 1.0


class PriceSpec(_Model):
    """The price of one processor type: ``hourly`` per processor-hour (billed per ``second`` or per
    started ``hour``) and/or ``purchase`` amortised over ``lifetime_hours``."""

    hourly: Amount = 0.0
    billing: Literal["second", "hour"] = "second"
    purchase: Amount = 0.0
    lifetime_hours: Factor | None = None

    @model_validator(mode="after")
    def _lifetime(self) -> PriceSpec:
        if self.purchase > 0 and self.lifetime_hours is None:
            raise ValueError("a purchase price needs lifetime_hours to be amortised over")
        return self


class PricesSection(_Model):
    """``platform.prices``: ``kwh`` (money per kWh drawn) and a :class:`PriceSpec` per processor type."""

    kwh: Amount = 0.0
    types: dict[str, PriceSpec] = {}


class CarbonSection(_Model):
    """``platform.carbon``: grid intensity in gCO2/kWh, a constant ``intensity`` or a CSV ``trace``
    (header ``time,intensity``), with ``interpolation``; ``types`` gives a processor type its own trace."""

    intensity: Amount | None = None
    trace: str | None = None
    interpolation: Literal["step", "linear"] = "step"
    types: dict[str, str] = {}

    @model_validator(mode="after")
    def _one_source(self) -> CarbonSection:
        exactly_one(self, "intensity", "trace", hints={"intensity": "a constant gCO2/kWh", "trace": "a CSV file"})
        return self


class OverheadsSpec(_Model):
    """``platform.overheads``: a workflow system's overheads in seconds (the scenario's time unit) —
    a ``profile`` (the documented defaults of ``pegasus``, ``makeflow`` or ``nextflow``) and/or the
    fields, which override the profile's (docs/execution-model.md).  A bare profile name is accepted
    for the whole section."""

    profile: str | None = None
    submit: Amount | None = None
    dispatch_interval: Amount | None = None
    dispatch_per_queued: Amount | None = None
    cycle: Amount | None = None
    pre: Amount | None = None
    post: Amount | None = None
    startup: Amount | None = None

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, name: str | None) -> str | None:
        if name is not None and name not in PROFILES:
            raise ValueError(f"unknown profile {name!r}; the profiles: {', '.join(sorted(PROFILES))}")
        return name

    def build(self) -> Overheads:
        """The :class:`~simsched.simulator.engine.Overheads` this section stands for."""
        fields = {k: v for k, v in self.model_dump(exclude={"profile"}).items() if v is not None}
        return Overheads.profile(self.profile, **fields) if self.profile is not None else Overheads(**fields)


def _profile_name(value: Any) -> Any:
    """``overheads: pegasus`` is ``overheads: {profile: pegasus}``."""
    return {"profile": value} if isinstance(value, str) else value


class StorageSpec(_Model):
    """``platform.storage``: the storage service tasks read their input files from and write their
    outputs to — ``bandwidth`` in bytes per second (shared fairly among concurrent transfers),
    ``latency`` in seconds per transfer, ``data_unit`` bytes per unit of the workload's edge data
    (default: the workload importer's ``data_unit`` option when given, else 1e6, the WfFormat and DAX
    importers' megabytes)."""

    bandwidth: FiniteRate
    latency: Amount = 0.0
    data_unit: FiniteRate | None = None


class PlatformSpec(_Model):
    """Processors, the default network, per-pair links and per-kind affinities; optional ``power``,
    ``prices`` and ``carbon`` (docs/energy.md); optional workflow-system ``overheads`` and a
    ``storage`` service (docs/execution-model.md)."""

    processors: list[ProcessorSpec] = Field(min_length=1)
    network: NetworkSpec = NetworkSpec()
    links: list[LinkSpec] = []
    affinity: dict[str, dict[str, NonNegative]] = {}
    power: PowerSection | None = None
    prices: PricesSection | None = None
    carbon: CarbonSection | None = None
    overheads: Annotated[OverheadsSpec | None, BeforeValidator(_profile_name)] = None
    storage: StorageSpec | None = None


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


class FailureRates(_Model):
    """Mean time between failures and mean time to repair (both > 0) of one processor."""

    mtbf: FiniteRate
    mttr: FiniteRate


class FailuresSection(_Model):
    """``failures``: default ``mtbf``/``mttr`` for every processor, overrides per ``types`` and per
    processor name (``processors``), and an optional ``trace`` of down intervals."""

    mtbf: FiniteRate | None = None
    mttr: FiniteRate | None = None
    types: dict[str, FailureRates] = {}
    processors: dict[str, FailureRates] = {}
    trace: str | None = None

    @model_validator(mode="after")
    def _pair(self) -> FailuresSection:
        if (self.mtbf is None) != (self.mttr is None):
            raise ValueError("give mtbf and mttr together")
        return self


class StragglersSection(_Model):
    """``stragglers``: slowdown episodes per processor at ``rate`` per unit of time, of mean length
    ``duration``; a task started during one takes ``slowdown`` times longer."""

    rate: FiniteRate
    duration: FiniteRate
    slowdown: float = Field(default=3.0, ge=1.0, le=1e6)


class ScenarioModel(_Model):
    """The top level of a scenario file.  ``workload`` and ``schedulers`` are checked by their own
    code (their shapes depend on the registries).  ``autotuning`` is checked into the typed
    :class:`~simsched.scenario.autotuning.AutotuningSection` by the loader; a scenario with one may omit ``platform``,
    ``workload`` and ``schedulers`` (all three are required otherwise).  ``capacity`` (objective,
    resource, days, ...) is read by ``simsched capacity`` (:mod:`simsched.capacity.question`)."""

    name: str | None = None
    description: str = ""
    seed: Annotated[int, Field(ge=0)] = 0
    repetitions: PositiveInt = 1
    platform: PlatformSpec | None = None
    workload: dict[str, Any] | None = None
    noise: NoiseSpec = NoiseSpec()
    schedulers: list[Any] | None = Field(default=None, min_length=1)
    autotuning: dict[str, Any] | None = None
    capacity: dict[str, Any] | None = None
    limits: LimitsSpec = LimitsSpec()
    failures: FailuresSection | None = None
    """Processor failures (turned into the engine's disruptions by :mod:`simsched.scenario.dynamics`)."""
    stragglers: StragglersSection | None = None
    """Straggler episodes (turned into the engine's disruptions by :mod:`simsched.scenario.dynamics`)."""


class SpeedupSpec(_Model):
    """A moldable task's speedup model: ``{model: amdahl, serial: f}`` (Amdahl 1967) or ``{model:
    downey, A: .., sigma: ..}`` (Downey 1997: average parallelism ``A >= 1``, variance ``sigma >=
    0``).  See :func:`simsched.simulator.gang.downey`."""

    model: Literal["amdahl", "downey"]
    serial: Fraction | None = None
    """Amdahl's serial fraction f (default 0)."""
    A: Annotated[float, _NotBool, Field(ge=1), AfterValidator(_sane)] | None = None
    """Downey's average parallelism A >= 1."""
    sigma: NonNegative | None = None
    """Downey's variance sigma >= 0 (sigma <= 1: low variance; sigma >= 1: high)."""

    @model_validator(mode="after")
    def _fields_of_model(self) -> SpeedupSpec:
        if self.model == "downey":
            if self.A is None or self.sigma is None:
                raise ValueError("Downey's model needs A (average parallelism, >= 1) and sigma (variance, >= 0)")
            if self.serial is not None:
                raise ValueError("serial belongs to Amdahl's model, not Downey's")
        elif self.A is not None or self.sigma is not None:
            raise ValueError("A and sigma belong to Downey's model; Amdahl's takes serial")
        return self


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
    cores: Cores | None = None
    """Cores the task needs at once: ``k > 1`` makes it a rigid gang of ``k`` one-core slots of one host
    (``procs: k`` with ``same_host``, when the problem is built; docs/model.md)."""
    procs: Procs | tuple[Procs, Procs] | None = None
    """Processors of one type the task needs at once: ``k`` (rigid) or ``[k_min, k_max]`` (moldable:
    the scheduler chooses k; Amdahl's law with ``serial``).  See :mod:`simsched.simulator.gang`."""
    serial: Fraction | None = None
    """Serial fraction f of a moldable task: ``t(k) = t(1) * (f + (1 - f) / k)`` (Amdahl 1967)."""
    speedup: SpeedupSpec | None = None
    """A moldable task's speedup model (instead of ``serial``): Amdahl's or Downey's."""
    same_host: StrictBool | None = None
    """All of the task's processors on one host (and of one type)."""

    @model_validator(mode="after")
    def _cores_or_procs(self) -> TaskSpec:
        if self.cores is not None and self.cores > 1:
            given = [k for k in ("procs", "same_host", "serial", "speedup") if getattr(self, k) is not None]
            if given:
                raise ValueError(f"cores: {self.cores} makes the task a rigid gang of {self.cores} one-core slots of "
                                 f"one host; give cores or {'/'.join(given)}, not both")
        return self

    @model_validator(mode="after")
    def _one_speedup_model(self) -> TaskSpec:
        if self.speedup is not None:
            if self.serial is not None:
                raise ValueError("give serial or speedup, not both (serial is Amdahl's model)")
            if not (isinstance(self.procs, tuple) and self.procs[0] < self.procs[1]):
                raise ValueError("a speedup model applies to a moldable task: give procs: [k_min, k_max] "
                                 "with k_min < k_max")
        return self

    @field_validator("procs")
    @classmethod
    def _procs_range(cls, v: Any) -> Any:
        if isinstance(v, tuple) and v[0] > v[1]:
            raise ValueError(f"[k_min, k_max] needs k_min <= k_max, got [{v[0]}, {v[1]}]")
        return v


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


