"""Training configuration of the RL agents (``simsched train rl CONFIG.yaml``), validated by pydantic.

Paths (``scenario``, ``output``) are relative to the config file.  Unknown keys are errors.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from simsched import limits
from simsched.errors import SimschedError

Width = Annotated[int, AfterValidator(limits.net_width)]
"""A network width, at most ``max_net_width`` (checked before any tensor is made)."""
Layers = Annotated[int, AfterValidator(limits.net_layers)]
"""A count of layers (or of ensemble members), at most ``max_net_layers``."""


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PPOConfig(_M):
    """PPO (Schulman et al. 2017) with GAE (Schulman et al. 2016)."""

    iterations: int = Field(40, ge=1)
    episodes_per_iter: int = Field(8, ge=1)
    epochs: int = Field(4, ge=1)
    minibatch: int = Field(128, ge=1)
    lr: float = Field(3e-4, gt=0)
    clip: float = Field(0.2, gt=0)
    gamma: float = Field(1.0, gt=0, le=1)
    lam: float = Field(0.95, ge=0, le=1)
    entropy: float = Field(0.01, ge=0)
    value_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    hidden: Width = Field(64, ge=4)
    layers: Layers = Field(3, ge=1)
    bc_episodes: int = Field(0, ge=0)
    """Warm start: behaviour cloning of the rank + earliest-finish heuristic on this many episodes
    (their real steps count) before PPO; 0 = PPO from scratch."""
    bc_epochs: int = Field(6, ge=1)
    bc_teacher: str = Field("rank", pattern="^(rank|srjf)$")
    """Whom behaviour cloning imitates: ``rank`` (highest upward rank, earliest finish: online
    HEFT) or ``srjf`` (the task of the job with the least remaining work, earliest finish)."""


class WorldConfig(_M):
    """World Models (Ha & Schmidhuber 2018): MDN-RNN over the GNN latent, controller by PPO in it."""

    enabled: bool = True
    real_fraction: float = Field(0.25, gt=0, le=1)
    """Real-simulator steps as a fraction of the model-free agent's (the done-when budget: 1/4)."""
    rounds: int = Field(2, ge=1)
    z_dim: Width = Field(32, ge=2)
    lstm: Width = Field(256, ge=8)
    mixtures: Width = Field(5, ge=1)
    temperature: float = Field(1.0, gt=0)
    encoder_epochs: int = Field(30, ge=1)
    wm_epochs: int = Field(40, ge=1)
    dream_iterations: int = Field(60, ge=1)
    dream_batch: int = Field(256, ge=1)
    dream_horizon: int = Field(15, ge=1)
    """Length of each imagined branch from a real decision point (bootstrapped by C's value)."""
    task_slots: Width = Field(8, ge=1)
    proc_slots: Width = Field(4, ge=1)
    slot_order: str = Field("rank", pattern="^(rank|job)$")
    """Which ready tasks fill the task slots, in order: ``rank`` (highest upward rank first: slot 0
    is online HEFT's action) or ``job`` (the task's job with the least remaining mean work first,
    upward rank breaking ties: slot 0 is close to ``srjf-eft``'s action, which counts only unplaced
    work; for job streams)."""
    lr: float = Field(1e-3, gt=0)
    tau_sweep: list[float] = [0.1, 0.5, 1.0, 1.5, 2.0, 3.0]
    max_real_steps: int | None = Field(None, ge=1)
    """Cap on the real-simulator steps of all rounds together (behaviour-cloning data included),
    on top of ``real_fraction``; evaluation episodes are reported apart (``eval_steps``)."""
    first_policy: str = Field("random", pattern="^(random|heuristic)$")
    """Data policy of round 1: a uniformly random valid policy, or the rank + earliest-finish
    heuristic (slot 0) with ``explore`` random valid actions (its data, not its decisions: C is
    never trained to copy it)."""
    explore: float = Field(0.2, ge=0, le=1)
    """Probability of a random valid action in the real data-collection rollouts."""
    keep_controller: bool = False
    """Later rounds fine-tune C instead of training a fresh controller."""
    dream_lr: float = Field(3e-4, gt=0)
    dream_entropy: float = Field(0.01, ge=0)
    dream_minibatch: int = Field(512, ge=1)
    slot_dim: Width = Field(4, ge=1)
    """Width of each action slot's embedding in the latent ``z``."""
    ensemble: Layers = Field(1, ge=1)
    """Members of M's ensemble (each fitted on the same data from its own initialisation and order);
    dreams draw each transition from a random member and measure their disagreement."""
    pessimism: float = Field(0.0, ge=0)
    """Imagined reward minus this multiple of the ensemble's disagreement (MOPO); needs ensemble > 1."""
    bootstrap: str = Field("controller", pattern="^(controller|real)$")
    """Value at the end of a dream branch: C's own value head, or V's value head fitted on the real
    returns-to-go (``real``: anchored in real returns)."""

    @model_validator(mode="after")
    def _slot_actions_bounded(self) -> WorldConfig:
        """The slot actions (task_slots x proc_slots) are a width of the world model's heads."""
        try:
            limits.net_width(self.task_slots * self.proc_slots)
        except ValueError as exc:
            raise ValueError(f"task_slots x proc_slots (the slot actions, a width of the world model): {exc}") from None
        return self

    @model_validator(mode="after")
    def _pessimism_needs_an_ensemble(self) -> WorldConfig:
        if self.pessimism > 0 and self.ensemble < 2:
            raise ValueError("pessimism penalises the disagreement of an ensemble: set ensemble >= 2")
        return self


def _training_seed(v: int | None, what: str) -> int | None:
    """``v`` unless it lies in the evaluate or fresh seed space (a ValueError, located by pydantic)."""
    from simsched.run.seedspace import training_refusal

    why = training_refusal(v)
    if why is not None:
        raise ValueError(why)
    return v


class EvalConfig(_M):
    every: int = Field(10, ge=1)
    seeds: int = Field(20, ge=1)
    final_seeds: int = Field(100, ge=1)
    seed_offset: int = Field(1_000_000_000, ge=0, le=2**63 - 1)
    """Evaluation seeds start here: never drawn in training (training seeds are < 2**31 - offset).
    The first ``seeds`` of them select the checkpoint, so they may not lie in the tool's evaluate or
    fresh seed space (:mod:`simsched.run.seedspace`)."""

    @field_validator("seed_offset")
    @classmethod
    def _selection_not_evaluation(cls, v: int) -> int:
        return _training_seed(v, "seed_offset")


class DisruptionConfig(_M):
    """Processor failures and stragglers (:class:`~simsched.simulator.engine.Disruptions`)."""

    failure_rate: float = Field(0.0, ge=0)
    repair_time: float = Field(10.0, ge=0)
    slowdown_rate: float = Field(0.0, ge=0)
    slowdown_duration: float = Field(20.0, ge=0)
    slowdown: float = Field(3.0, ge=1)


class TrainConfig(_M):
    scenario: str = "random_dag_4p.yaml"
    tasks: tuple[int, int] = (20, 50)
    """Tasks per graph (per job in a job stream), uniform in this range."""
    jobs: int = Field(1, ge=1)
    """Jobs per episode: a Poisson stream of this many graphs (1: a single DAG)."""
    job_rate: float = Field(0.01, gt=0)
    """Arrival rate of the job stream (mean gap between arrivals ``1 / job_rate``)."""
    sigma: tuple[float, float] | None = None
    """Per-episode lognormal noise sigma drawn uniformly in this range (instead of the scenario's
    noise)."""
    disruptions: DisruptionConfig = DisruptionConfig()
    reward: str = "makespan"
    stream_scenario: str | None = None
    """A stream scenario (``workload.stream``) whose world episodes are drawn from instead of the
    ``scenario``/``tasks``/``jobs``/``sigma``/``disruptions`` family (job mix, arrivals, noise,
    failures and stragglers all from it; training streams never coincide with its days)."""
    arrived_only: bool = False
    """Observe only the tasks and jobs that have arrived (:mod:`simsched.learned.rl.features`): what an
    online scheduler can know; job-stream checkpoints set it.  Stored in the checkpoint, so ``rl``
    observes the way its network was trained."""
    world_obs: bool = False
    """Append the world description (:func:`~simsched.learned.rl.features.world_block`: offered load
    so far, platform shape, job mix, failures seen; arrived work only) to the global features.
    Stored in the checkpoint; checkpoints without it observe exactly as before."""
    worlds: bool = False
    """Draw every training episode from a different world of the worlds sampler
    (:class:`~simsched.learned.rl.worldfamily.WorldsFamily`: platform shapes, loads, job mixes, failures;
    ``train`` seed space) instead of ``scenario`` or ``stream_scenario``."""
    fixed_seed: int | None = Field(None, ge=0, le=2**63 - 1)
    seed: int = Field(0, ge=0, le=2**63 - 1)
    threads: int = Field(1, ge=1)
    output: str = "runs/rl"
    ppo: PPOConfig = PPOConfig()
    world: WorldConfig = WorldConfig()
    eval: EvalConfig = EvalConfig()
    base: str = Field(".", exclude=True)

    @field_validator("seed", "fixed_seed")
    @classmethod
    def _not_evaluation(cls, v: int | None, info) -> int | None:
        return _training_seed(v, info.field_name)

    @field_validator("sigma")
    @classmethod
    def _sigma_range(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not 0 <= v[0] <= v[1]:
            raise ValueError(f"sigma must be a range [lo, hi] with 0 <= lo <= hi, got {list(v)}")
        return v

    def path(self, p: str) -> Path:
        q = Path(p)
        return q if q.is_absolute() else Path(os.path.normpath(Path(self.base) / q))


def load_config(path: str | Path) -> TrainConfig:
    """The validated config at ``path``; :class:`SimschedError` naming the field otherwise."""
    from simsched.yamlio import load_yaml  # depth and size limits, lines in errors

    path = Path(path)
    doc = load_yaml(path, require_mapping=False)
    raw = doc.data or {}
    if not isinstance(raw, dict):
        raise SimschedError("a training config is a mapping of fields (see scenarios/rl/train_tiny.yaml)", file=path)
    try:
        cfg = TrainConfig(**raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        raise SimschedError(f"{msg}; fix it in the training config (fields: docs/rl.md)", file=path,
                            line=doc.line_of(tuple(err["loc"])), field=where) from None
    cfg.base = str(path.parent)
    return cfg
