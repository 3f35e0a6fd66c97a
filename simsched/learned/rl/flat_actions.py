"""The scheduling environment with one flat, maskable action, the shape RL libraries train on.

``simsched/Scheduling-v0`` (:class:`~simsched.learned.rl.env.SchedulingEnv`) takes a ``(task, processor)``
pair and says which pairs are valid in ``info["action_mask"]``: a task mask (N,) and a processor mask per
task (N, M).  A library's masked policy (stable-baselines3's MaskablePPO from sb3-contrib, CleanRL's masked
PPO) samples one categorical action under one mask, and a processor mask that depends on the task chosen
does not factor into two independent ones.  :class:`FlatActions` therefore numbers the pairs:
action ``a`` is task ``a // M`` on processor ``a % M``, ``Discrete(N * M)``, and :meth:`FlatActions.action_masks`
(the method MaskablePPO calls, also in ``info["flat_action_mask"]``) is ``task_mask[t] and
processor_mask[t, p]`` flattened the same way, so every action the mask allows is a valid pair and the
environment's fallback for invalid actions is never needed.  Observations, rewards and episodes are the
environment's own.  No RL library is imported here: the wrapper is plain gymnasium.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class FlatActions(gym.Wrapper):
    """``Discrete(N * M)`` actions over ``env``'s ``MultiDiscrete([N, M])`` pairs, with
    :meth:`action_masks`.  ``env``: a :class:`~simsched.learned.rl.env.SchedulingEnv` (or one wrapping it)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, spaces.MultiDiscrete) or len(space.nvec) != 2:
            raise TypeError(f"FlatActions wraps a (task, processor) MultiDiscrete action space, not {space}")
        self.n_tasks, self.n_procs = (int(x) for x in space.nvec)
        self.action_space = spaces.Discrete(self.n_tasks * self.n_procs)
        self._mask = np.ones(self.n_tasks * self.n_procs, dtype=bool)

    def _flat(self, info: dict[str, Any]) -> dict[str, Any]:
        mask = info.get("action_mask")
        if mask is not None:
            pairs = (np.asarray(mask["task"], dtype=bool)[:, None] & np.asarray(mask["processor"], dtype=bool))
            flat = pairs.reshape(-1)
            # a finished episode has no valid pair: any action then (a library still asks for a mask)
            self._mask = flat if flat.any() else np.ones_like(flat)
        info["flat_action_mask"] = self._mask
        return info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return obs, self._flat(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        task, proc = divmod(int(np.asarray(action).reshape(-1)[0]), self.n_procs)
        obs, reward, terminated, truncated, info = self.env.step((task, proc))
        return obs, reward, terminated, truncated, self._flat(info)

    def action_masks(self) -> np.ndarray:
        """The valid flat actions of the current decision (bool, ``N * M``).  O(N M)."""
        return self._mask.copy()
