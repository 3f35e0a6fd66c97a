"""The DeepSched YAML configuration, validated with pydantic (one file drives data, model, training,
checkpoint and evaluation).

Defaults are the DeepSched paper's (Adam, learning rate 1e-5 halved every 20 epochs, 100 epochs);
the shipped configurations override them where a CPU budget of minutes demands it and say so.
Relative paths are resolved against the configuration file's folder.  Loading is O(file size).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from simsched import limits
from simsched.errors import SimschedError

Width = Annotated[int, AfterValidator(limits.net_width)]
"""A network width, at most ``max_net_width`` (checked before any tensor is made)."""
Layers = Annotated[int, AfterValidator(limits.net_layers)]
"""A count of layers, at most ``max_net_layers``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Family(_Strict):
    """A family of problems: a workload generator with size ranges and parameters.

    ``params`` values that are lists are choices (one drawn per instance); scalars are fixed.
    ``explicit_costs`` is the probability of an explicit per-processor cost matrix (the generator is
    given ``processors``) rather than work / speed.  ``memory``: give processors finite memory
    (tasks with memory demands then have restricted eligibility).  ``log_sizes``: draw the task count
    log-uniformly in ``tasks`` (as many small as large instances).  Generators without a ``tasks``
    parameter (``cholesky``, ``fft``, ...) take their size from ``params`` (``tiles``, ``points``).
    """

    name: str
    generator: str = "random"
    tasks: tuple[int, int] = (20, 100)
    processors: tuple[int, int] = (2, 8)
    params: dict[str, Any] = Field(default_factory=dict)
    explicit_costs: float = Field(0.5, ge=0.0, le=1.0)
    memory: bool = False
    log_sizes: bool = False

    @field_validator("tasks", "processors")
    @classmethod
    def _range(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= v[0] <= v[1]:
            raise ValueError(f"need 1 <= low <= high, got {list(v)}")
        return v


class PlatformSpec(_Strict):
    """How training platforms vary: speed range, core and memory choices, network ranges."""

    speed: tuple[float, float] = (0.5, 2.0)
    cores: list[int] = Field(default_factory=lambda: [1, 2, 4, 8])
    memory: list[float] = Field(default_factory=lambda: [4.0, 8.0, 16.0, 32.0])
    bandwidth: tuple[float, float] = (0.5, 4.0)
    latency: tuple[float, float] = (0.0, 1.0)


class DataConfig(_Strict):
    """Dataset: ``seen`` families give train/val/test; ``unseen`` families (other generator
    parameters, shapes or sizes) give only a held-out test split."""

    dir: str = "deepsched-data"
    seed: int = Field(0, ge=0, le=2**63 - 1)
    train: int = Field(1000, ge=1)
    val: int = Field(100, ge=1)
    test: int = Field(100, ge=1)
    test_unseen: int = Field(100, ge=0)
    shard_size: int = Field(500, ge=1)
    seen: list[Family]
    unseen: list[Family] = Field(default_factory=list)
    platform: PlatformSpec = Field(default_factory=PlatformSpec)


class ModelConfig(_Strict):
    """Network sizes; ``dag_layers`` > 0 is the DAG-aware variant (message passing along edges)."""

    hidden: Width = Field(64, ge=4)
    machine_hidden: Width = Field(32, ge=4)
    pair_hidden: Width = Field(32, ge=2)
    gru_layers: Layers = Field(1, ge=1)
    dag_layers: Layers = Field(0, ge=0)
    dropout: float = Field(0.0, ge=0.0, lt=1.0)


class TrainConfig(_Strict):
    """Optimisation (paper defaults), device and budget.  ``dagger_rounds`` > 0: DAgger-style
    imitation — the training time is split into that many + 1 phases; after each phase the network
    decodes every training instance itself (``dagger_top_k`` candidates) and the processor HEFT's
    earliest-finish rule picks in each state it reached becomes an extra, aggregated label set."""

    epochs: int = Field(100, ge=1)
    lr: float = Field(1e-5, gt=0)
    lr_halve_every: int = Field(20, ge=1)
    batch_size: int = Field(32, ge=1)
    mse_weight: float = Field(1.0, ge=0)
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    threads: int | None = Field(None, ge=1)
    seed: int = Field(0, ge=0, le=2**63 - 1)
    max_minutes: float | None = Field(None, gt=0)
    dagger_rounds: int = Field(0, ge=0)
    dagger_top_k: int = Field(3, ge=1)


class EvalConfig(_Strict):
    """Paper reproduction: turnaround at ``sizes`` (seen and unseen families, ``instances`` each),
    the GA baseline's parameters, and timing at ``timing_sizes`` on ``timing_processors``."""

    sizes: list[int] = Field(default_factory=lambda: [50, 100, 200])
    instances: int = Field(10, ge=1)
    ga: dict[str, Any] = Field(default_factory=lambda: {"seed_heft": False, "objective": "waiting"})
    timing_sizes: list[int] = Field(default_factory=lambda: [100, 1000, 10000])
    timing_processors: int = Field(188, ge=1)
    timing_repeat: int = Field(3, ge=1)


class DeepSchedConfig(_Strict):
    name: str = "deepsched"
    checkpoint: str = "deepsched.pt"
    data: DataConfig
    model: ModelConfig = Field(default_factory=ModelConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    base_dir: str = Field(".", exclude=True)

    def path(self, value: str) -> Path:
        """``value`` resolved against the configuration file's folder (normalised: no ``a/../b``)."""
        p = Path(value)
        return p if p.is_absolute() else Path(os.path.normpath(Path(self.base_dir) / p))


def load_config(path: str | Path) -> DeepSchedConfig:
    """Read and validate a YAML configuration; every problem → :class:`SimschedError` naming the
    field path (exit 2)."""
    from simsched.fileio import not_a_file
    from simsched.yamlio import load_yaml  # depth and size limits, lines in errors

    p = Path(path)
    if (why := not_a_file(p)) is not None:  # never opened: a FIFO or a device cannot block
        raise SimschedError("no such configuration file" if why == "does not exist" else
                            f"{why} (give a DeepSched configuration file)", file=p)
    document = load_yaml(p, require_mapping=False)
    return config_from_dict(document.data, base_dir=p.resolve().parent, source=str(p), line_of=document.line_of)


def config_from_dict(doc: Any, base_dir: str | Path = ".", source: str = "config",
                     line_of: Any = None) -> DeepSchedConfig:
    """Validate an already-parsed configuration (used for the dict stored in checkpoints); with
    ``line_of`` (a YAML document's) errors name the line of the bad field."""
    if not isinstance(doc, dict):
        raise SimschedError(f"{source}: the configuration must be a mapping")
    try:
        cfg = DeepSchedConfig.model_validate({k: v for k, v in doc.items() if k != "base_dir"})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        if line_of is None:
            raise SimschedError(f"{source}: {where}: {msg}{more}") from None
        raise SimschedError(f"{msg}{more}; fix it in the configuration (fields: docs/deepsched.md)", file=source,
                            line=line_of(tuple(err["loc"])), field=where) from None
    cfg.base_dir = str(base_dir)
    return cfg
