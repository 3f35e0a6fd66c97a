"""Episodes across worlds: :class:`WorldsFamily` draws each training episode of ``rl`` from a different
world of the worlds sampler (:mod:`simsched.learned.rl.worlds`).  Its own module so that the sampler
(which imports the gate and, through it, the agents) is never imported by the family module the
agents use: no import cycle."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simsched.learned.rl.family import Episode
from simsched.simulator.engine import Disruptions
from simsched.simulator.noise import NoiseModel
from simsched.simulator.problem import Problem


@dataclass
class WorldsFamily:
    """Episodes each from a different world of the worlds sampler (:func:`simsched.learned.rl.worlds.
    world_scenario`: 3-14 processors with 1-4 fast ones 1.5-6x as fast, loads 50-120%, job mixes of
    generators and shipped workflows, failures and stragglers on or off, noise sigma 0.1-0.7), for
    training ``rl`` across worlds.  Seed ``k`` of :meth:`draw` is the ``k``-th world of the ``train``
    seed space (counted from its low end, :data:`simsched.run.seedspace.RANGES`), so no episode is a world of the select
    space or a day of any scenario's evaluate space.  Same interface as :class:`Family` for the env
    (``tasks``/``n_jobs``/``max_processors`` for padding, :meth:`draw`); each episode carries its
    world's disruptions.  O(one stream draw) per episode."""

    tasks: tuple[int, int] = (1, 64)
    n_jobs: int = 32
    max_processors: int = 14
    noise: NoiseModel = field(default_factory=lambda: NoiseModel("lognormal", 0.3))  # unused: each world's own
    disruptions: Disruptions = field(default_factory=Disruptions)  # unused: each episode's own

    @staticmethod
    def world_seed(k: int) -> int:
        """The ``k``-th seed of the ``train`` space (worlds' base 0, as the gate's training).  O(1)."""
        from simsched.run.seedspace import RANGES

        return int(RANGES["train"][0]) + int(k)

    def world(self, k: int):  # -> (Scenario, JobStream)
        """The scenario and stream of the ``k``-th training world."""
        from simsched.learned.rl.worlds import world_scenario

        return world_scenario(self.world_seed(k))

    def draw(self, seed: int) -> Episode:
        """The episode of the ``seed``-th training world: its stream, its noise drawn as ``simsched run``
        draws a day's (:func:`~simsched.run.streams.world_streams`), its disruptions.  Deterministic."""
        from simsched.run.streams import world_streams

        sc, stream = self.world(seed)
        problem = Problem(stream.graph, sc.platform, sc.affinity)
        _, noise_rng, _ = world_streams(self.world_seed(seed))
        factors = None if sc.noise.deterministic else sc.noise.factors(problem.n_tasks, noise_rng)
        dis = sc.disruptions if sc.disruptions is not None else Disruptions()
        dis_seed = int(np.random.SeedSequence([int(seed), 0x5152]).generate_state(1)[0])
        return Episode(problem, np.asarray(stream.jobs), np.asarray(stream.job_arrival), factors, dis_seed, dis)
