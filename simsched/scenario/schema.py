"""The scenario schema: pydantic models of every YAML section, with number sanity checks
(finite, within :data:`simsched.limits.MAX_VALUE`, divisors not tiny)."""


from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from simsched import limits
from simsched.simulator.noise import NoiseKind
from simsched.simulator.platform import Processor

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


# --------------------------------------------------------------------------- schema
class _Model(NumbersChecked):
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
    code (their shapes depend on the registries).  ``autotuning`` is checked into the typed
    :class:`~simsched.scenario.autotuning.AutotuningSection` by the loader; a scenario with one may omit ``platform``,
    ``workload`` and ``schedulers`` (all three are required otherwise).  ``capacity`` (objective,
    resource, days, ...) is read by ``simsched capacity`` (:mod:`simsched.run.capacity`)."""

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


