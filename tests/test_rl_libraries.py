"""The gymnasium environment with RL libraries: :class:`FlatActions` numbers the (task, processor) pairs and
masks exactly the valid ones; stable-baselines3's MaskablePPO (the ``sb3`` extra) trains on it with a tiny
budget and never takes an invalid action; docs/rl-libraries.md runs as written.  Skipped cleanly without the
extras."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "rl-libraries.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


@pytest.fixture(autouse=True)
def _sb3_logs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stable-baselines3 makes a folder for its logs in the system's temporary folder on every ``learn``
    (``SB3-<date>``), even with nothing to log: keep the tests' in their own temporary path."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


def _env(**options):
    import gymnasium as gym

    import simsched.learned.rl  # noqa: F401  (registers the env)
    from simsched.learned.rl.flat_actions import FlatActions

    return FlatActions(gym.make("simsched/Scheduling-v0", **options))


@pytest.mark.extra("rl")
def test_flat_actions_mask_exactly_the_valid_pairs() -> None:
    env = _env()
    obs, info = env.reset(seed=3)
    n, m = env.n_tasks, env.n_procs
    assert env.action_space.n == n * m
    steps = 0
    while True:
        pairs = info["action_mask"]["task"].astype(bool)[:, None] & info["action_mask"]["processor"].astype(bool)
        mask = env.action_masks()
        assert mask.shape == (n * m,) and np.array_equal(mask, pairs.reshape(-1)) and mask.any()
        assert np.array_equal(info["flat_action_mask"], mask)
        a = int(np.flatnonzero(mask)[-1])  # the last valid pair: maps back to task a // m on processor a % m
        obs, reward, terminated, truncated, info = env.step(a)
        assert not info["invalid_action"]
        steps += 1
        if terminated:
            break
    assert steps == env.unwrapped.episode.problem.n_tasks and info["makespan"] > 0


@pytest.mark.extra("rl")
def test_flat_actions_pass_gymnasiums_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(_env().unwrapped)  # the environment itself
    env = _env()
    env.reset(seed=0)
    with pytest.raises(TypeError, match="MultiDiscrete"):
        from simsched.learned.rl.flat_actions import FlatActions

        FlatActions(env)  # already flat


@pytest.mark.extra("sb3")
def test_maskable_ppo_trains_and_never_takes_an_invalid_action() -> None:
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_checker import check_env

    class Count(gym.Wrapper):
        invalid = steps = 0

        def step(self, action):
            out = self.env.step(action)
            Count.invalid += bool(out[4]["invalid_action"])
            Count.steps += 1
            return out

        def action_masks(self):
            return self.env.action_masks()

    env = Count(_env())
    check_env(env, warn=False)
    Count.invalid = Count.steps = 0
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=128)
    assert Count.steps >= 128 and Count.invalid == 0
    assert any(not (a == b).all() for a, b in zip(before, model.policy.parameters()))  # it learned something
    obs, info = env.reset(seed=11)
    done = False
    while not done:
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        obs, _, done, _, info = env.step(action)
    assert Count.invalid == 0 and np.isfinite(info["makespan"])


@pytest.mark.extra("sb3")
def test_the_page_runs_as_written() -> None:
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 4
    namespace: dict = {}
    for k, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name} block {k + 1}", "exec"), namespace)  # noqa: S102
    assert len(namespace["ratios"]) == 5 and namespace["invalid"] == 0
    assert namespace["episode"] == 3 and namespace["loss"].requires_grad  # the plain loop ran its four episodes
