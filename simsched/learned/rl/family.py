"""The scenario family an RL agent trains and is evaluated on: problems drawn per seed.

A :class:`Family` takes a scenario's platform, workload generator options and noise model and draws,
per episode, a fresh graph with a number of tasks uniform in ``tasks`` (e.g. random DAGs of 20-50
tasks), optionally a Poisson stream of several such jobs, the duration-noise factors (optionally with a
lognormal sigma drawn per episode), and the
disruptions (failures, slowdowns).  :meth:`Family.draw` is deterministic in its seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.engine import Disruptions
from simsched.simulator.noise import NoiseModel
from simsched.simulator.platform import Platform
from simsched.simulator.problem import Problem, spread_over_platform
from simsched.workloads.taskgraph import TaskGraph


@dataclass
class Episode:
    """One drawn problem: ``problem``, per-task ``jobs`` and ``job_arrival``, noise ``factors``, and
    the seed for the disruption stream."""

    problem: Problem
    jobs: np.ndarray
    job_arrival: np.ndarray
    factors: np.ndarray | None
    disruption_seed: int
    disruptions: Disruptions | None = None
    """The episode's own failures and stragglers (a world's); None: the family's."""


@dataclass
class Family:
    """Platform + generator options + noise, with per-episode task counts and job streams."""

    platform: Platform
    generator: str = "random"
    options: dict[str, Any] = field(default_factory=dict)
    tasks: tuple[int, int] = (20, 50)
    noise: NoiseModel = field(default_factory=lambda: NoiseModel("lognormal", 0.3))
    n_jobs: int = 1
    job_rate: float = 0.01
    disruptions: Disruptions = field(default_factory=Disruptions)
    affinity: dict[str, dict[str, float]] = field(default_factory=dict)
    sigma_range: tuple[float, float] | None = None
    """When set, each episode draws a lognormal sigma uniformly in this range (``noise`` unused)."""

    @classmethod
    def from_scenario(cls, path: str | Path, **overrides: Any) -> Family:
        """The family of the scenario at ``path`` (its platform, generator workload and noise)."""
        from simsched.scenario import load_scenario

        sc = load_scenario(path)
        if sc.workload is None or sc.platform is None or sc.workload.form != "generator":
            raise SimschedError(f"{path}: an RL scenario needs a platform and a generator workload")
        options = {k: v for k, v in sc.workload.options.items() if k not in ("generator", "tasks")}
        fam = cls(sc.platform, sc.workload.options["generator"], options, noise=sc.noise,
                  affinity={k: dict(v) for k, v in sc.affinity.items()})
        for key, value in overrides.items():
            if value is not None:
                setattr(fam, key, value)
        fam.tasks = (int(fam.tasks[0]), int(fam.tasks[1]))
        if not 1 <= fam.tasks[0] <= fam.tasks[1]:
            raise SimschedError(f"tasks must be a range [lo, hi] with 1 <= lo <= hi, got {list(fam.tasks)}")
        return fam

    def _graph(self, rng: np.random.Generator) -> TaskGraph:
        from simsched.workloads.generators import GENERATORS

        k = int(rng.integers(self.tasks[0], self.tasks[1] + 1))
        opts = dict(self.options)
        if opts.get("processors", None) is not None:
            opts["processors"] = self.platform.n_processors
        # the platform's speeds and affinities drive a generated cost matrix, as in a scenario
        return spread_over_platform(GENERATORS[self.generator](k, rng=rng, **opts), self.platform, self.affinity)

    def draw(self, seed: int) -> Episode:
        """The episode of ``seed``: graph(s), noise factors and disruption seed.  O(tasks + edges)."""
        from simsched.workloads.jobs import poisson_stream

        graph_ss, noise_ss, dis_ss = np.random.SeedSequence(int(seed)).spawn(3)
        rng = np.random.default_rng(graph_ss)
        stream = poisson_stream(self._graph, self.n_jobs, self.job_rate, rng)
        graph = stream.graph if self.n_jobs > 1 else stream.graph.with_(
            names=[name.split(".", 1)[1] for name in stream.graph.names])
        problem = Problem(graph, self.platform, self.affinity)
        noise_rng = np.random.default_rng(noise_ss)
        noise = self.noise
        if self.sigma_range is not None:
            noise = NoiseModel("lognormal", float(noise_rng.uniform(*self.sigma_range)))
        factors = None if noise.deterministic else noise.factors(graph.n_tasks, noise_rng)
        return Episode(problem, np.asarray(stream.jobs), np.asarray(stream.job_arrival), factors,
                       int(dis_ss.generate_state(1)[0]))


@dataclass
class StreamFamily:
    """Episodes drawn from a dynamic *stream scenario* (``workload.stream`` with its job mix, arrival
    process, noise, failures and stragglers: e.g. ``scenarios/streams/rl_dynamic.yaml``), for training
    ``rl`` in the world it is judged in.  Training streams are drawn from
    ``SeedSequence([seed, TRAINING_STREAM])``, never from ``default_rng(seed)`` as ``simsched run``
    draws a day, so no training or selection episode is one of the scenario's days (selection or
    evaluation).  Same interface as :class:`Family` (``platform``, ``noise``, ``disruptions``,
    ``tasks``/``n_jobs`` for padding, :meth:`draw`).  O(tasks x processors + edges) per draw."""

    scenario: Any
    tasks: tuple[int, int] = (1, 64)
    n_jobs: int = 1

    TRAINING_STREAM = 0x5151

    @classmethod
    def from_scenario(cls, path: str | Path) -> StreamFamily:
        from simsched.run.streams import stream_of
        from simsched.scenario import load_scenario

        sc = load_scenario(path)
        if sc.workload is None or sc.workload.form != "stream":
            raise SimschedError(f"{path}: stream_scenario needs a scenario whose workload is a stream")
        probe = [stream_of(sc, s) for s in range(3)]  # padding: the largest job and the job count seen
        biggest = max(int(np.bincount(st.jobs).max()) for st in probe)
        jobs = max(st.n_jobs for st in probe)
        return cls(sc, (1, 2 * biggest), 2 * jobs)

    @property
    def platform(self) -> Platform:
        return self.scenario.platform

    @property
    def noise(self) -> NoiseModel:
        return self.scenario.noise

    @property
    def disruptions(self) -> Disruptions:
        return self.scenario.disruptions if self.scenario.disruptions is not None else Disruptions()

    def draw(self, seed: int) -> Episode:
        """The training episode of ``seed`` (see the class docstring).  Deterministic in ``seed``."""
        stream_ss, noise_ss, dis_ss = np.random.SeedSequence([int(seed), self.TRAINING_STREAM]).spawn(3)
        spec = self.scenario.workload.options["stream"]
        stream = spec.draw(np.random.default_rng(stream_ss), self.platform, self.scenario.affinity)
        problem = Problem(stream.graph, self.platform, self.scenario.affinity)
        noise = self.noise
        factors = None if noise.deterministic else noise.factors(problem.n_tasks, np.random.default_rng(noise_ss))
        return Episode(problem, np.asarray(stream.jobs), np.asarray(stream.job_arrival), factors,
                       int(dis_ss.generate_state(1)[0]))

