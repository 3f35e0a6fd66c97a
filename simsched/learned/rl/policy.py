"""The trained agents as :class:`~simsched.simulator.policy.OnlinePolicy` classes (registry names
``rl`` and ``rl-world``), so they run through :func:`~simsched.simulator.engine.run_online` like
MCT.  At a decision point they place ready tasks one at a time, as in the env, while an idle
processor remains (:func:`~simsched.learned.rl.features.assume_assigned` updates the view between
placements); the remaining ready tasks wait for the next decision point.  Greedy (deterministic)
actions.  Cost per placement: one GNN forward, O(layers x (n + e) x hidden^2).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from simsched.learned.rl.baselines import OneByOne
from simsched.learned.rl.features import StaticInfo, observe
from simsched.learned.training_range import RangeChecked
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem


@functools.lru_cache(maxsize=8)
def _load(kind: str, path: str):
    from simsched.learned.rl import checkpoint

    ck = checkpoint.load(path, kind)
    if kind == "rl":
        from simsched.checkpoints import load_checked_state
        from simsched.learned.rl.nets import ActorCritic

        cfg = checkpoint.config_of(ck, path, kind)
        net = ActorCritic(cfg.ppo.hidden, cfg.ppo.layers)
        load_checked_state(net, ck["state"], file=path, what=kind, retrain=checkpoint.RETRAIN[kind])
        net.eval()
        return net
    from simsched.learned.rl.world_model import WorldAgent

    return WorldAgent.from_checkpoint(ck, path)


class _Agent(OneByOne, RangeChecked):
    """A learned agent placing one task at a time (:class:`~simsched.learned.rl.baselines.OneByOne`)."""

    name = ""
    kind = ""

    def __init__(self, *, checkpoint: str | None = None) -> None:
        from simsched.learned.rl.checkpoint import shipped_path

        path = Path(checkpoint) if checkpoint else shipped_path(self.kind)
        if checkpoint and not path.exists() and Path(checkpoint).name == checkpoint:
            data = shipped_path(self.kind).parent  # a checkpoint shipped with simsched, by name
            for bundled in (data / checkpoint, data / f"{checkpoint}.pt"):
                if bundled.is_file():
                    path = bundled
                    break
        self.checkpoint = str(path)
        _load(self.kind, self.checkpoint)  # a bad checkpoint fails here, so `validate` agrees with `run`
        self.model = None
        self.info: StaticInfo | None = None

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        import torch

        torch.set_num_threads(1)
        self.model = _load(self.kind, self.checkpoint)
        self.info = StaticInfo.of(problem)

    def training_range(self):  # -> simsched.learned.training_range.TrainingRange
        """What the checkpoint was trained on: its config's task range and scenario family."""
        from simsched.learned.rl import checkpoint
        from simsched.learned.training_range import scenario_range

        cfg = checkpoint.load(self.checkpoint, self.kind).get("config") or {}
        tasks = cfg.get("tasks")
        scenarios = Path(__file__).resolve().parents[3] / "scenarios" / "rl"
        return scenario_range(self.checkpoint, cfg.get("scenario"),
                              (int(tasks[0]), int(tasks[1])) if tasks else None, (scenarios,))

    def choose(self, view: DecisionView) -> tuple[int, int]:
        raise NotImplementedError


class RLPolicy(_Agent):
    """PPO-trained GNN agent (task head, then processor head), shipped checkpoint by default.

    Model-free: PPO (Schulman et al. 2017) with GAE (Schulman et al. 2016) on the SimPy-driven
    gymnasium env, as READYS (Grinsztajn et al. 2021) / Decima (Mao et al. 2019).  One GNN forward
    per placement.  ``checkpoint``: path of a ``simsched train rl`` checkpoint, or the name of one
    shipped with simsched (default: trained on single DAGs; ``rl_online``: trained on job streams).
    """

    name = "rl"
    kind = "rl"

    def choose(self, view: DecisionView) -> tuple[int, int]:
        import torch

        from simsched.learned.rl.nets import collate

        with torch.no_grad():
            t, p, *_ = self.model(collate([observe(self.info, view)]), greedy=True)
        return int(t[0]), int(p[0])


class RLWorldPolicy(_Agent):
    """Model-based agent: controller trained by PPO inside an MDN-RNN world model.

    World Models (Ha & Schmidhuber 2018) over the GNN latent state; actions are (task slot by upward
    rank, processor slot by expected finish).  One GNN forward and one LSTM step per placement.
    ``checkpoint``: path of a ``simsched train rl`` world-model checkpoint.
    """

    name = "rl-world"
    kind = "rl-world"

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        super().reset(problem, rng)
        self.state = self.model.initial_state()

    def choose(self, view: DecisionView) -> tuple[int, int]:
        (t, p), self.state = self.model.act(self.info, view, self.state)
        return t, p
