"""The RL environment and agents: gymnasium checker, action masks, a tiny PPO run that learns."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import simsched.learned.rl  # noqa: E402,F401  (registers the env)
from simsched.errors import SimschedError  # noqa: E402
from simsched.learned.rl.config import TrainConfig  # noqa: E402
from simsched.learned.rl.env import SchedulingEnv, default_family  # noqa: E402
from simsched.simulator.engine import Disruptions  # noqa: E402


def test_env_passes_the_gymnasium_checker():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("simsched/Scheduling-v0")
    check_env(env.unwrapped, skip_render_check=True)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**6), min_size=60, max_size=60),
       reward=st.sampled_from(["heft", "makespan", "jobs"]), failures=st.booleans())
def test_masks_never_allow_an_invalid_action(seed, picks, reward, failures):
    fam = default_family()
    fam.tasks = (5, 15)
    fam.n_jobs = 2
    fam.job_rate = 0.05
    if failures:
        fam.disruptions = Disruptions(failure_rate=0.01, slowdown_rate=0.01)
    env = SchedulingEnv(fam, reward=reward, max_tasks=32, max_jobs=4)
    obs, info = env.reset(seed=seed)
    done, k, steps = False, 0, 0
    while not done:
        mask = info["action_mask"]
        view = env.view
        ready = set(view.ready.tolist())
        tasks = np.flatnonzero(mask["task"])
        assert set(tasks.tolist()) == ready and tasks.size > 0  # exactly the ready tasks
        t = int(tasks[picks[k % 60] % tasks.size])
        procs = np.flatnonzero(mask["processor"][t])
        assert procs.size > 0 and view.problem.eligible[t, procs].all()
        assert not mask["processor"][list(set(range(env.N)) - ready)].any()
        p = int(procs[picks[(k + 1) % 60] % procs.size])
        k += 2
        obs, r, done, trunc, info = env.step((t, p))
        assert not info["invalid_action"] and np.isfinite(r) and not trunc
        assert env.observation_space.contains(obs)
        steps += 1
    # a failure hands the running and queued tasks back to the agent, which places them again
    assert steps >= env.episode.problem.n_tasks and (failures or steps == env.episode.problem.n_tasks)
    # an action the mask forbids is replaced and flagged, never executed
    env.reset(seed=seed)
    bad = int(np.flatnonzero(env._info()["action_mask"]["task"] == 0)[0])
    _, _, _, _, info = env.step((bad, 0))
    assert info["invalid_action"]


def test_env_is_deterministic_per_seed_and_rewards_sum_to_the_makespan():
    env = SchedulingEnv()
    out = []
    for _ in range(2):
        obs, info = env.reset(seed=3)
        total, done = 0.0, False
        while not done:
            obs, r, done, _, info = env.step(env.fallback_action())
            total += r
        out.append((total, info["makespan"], obs["nodes"].sum()))
    assert out[0] == out[1]
    assert np.isclose(out[0][0], -out[0][1] / info["heft_makespan"])


def test_tiny_ppo_learns_on_a_fixed_problem():
    """PPO from scratch on one 10-task problem beats a random policy (same noise seeds)."""
    from simsched.learned.rl.ppo import make_env, run_episode, train_ppo

    torch.set_num_threads(1)  # tiny networks: extra OpenMP threads only spin when a core is busy
    cfg = TrainConfig(scenario="../scenarios/rl/random_dag_4p.yaml", tasks=(10, 10), fixed_seed=5, seed=0,
                      base=str(__import__("pathlib").Path(__file__).parent))
    cfg.ppo.iterations, cfg.ppo.episodes_per_iter, cfg.ppo.lr = 25, 6, 2e-3
    cfg.ppo.hidden, cfg.ppo.layers, cfg.ppo.epochs, cfg.ppo.minibatch = 32, 2, 4, 64
    cfg.eval.every, cfg.eval.seeds = 25, 4
    net, hist = train_ppo(cfg)
    env = make_env(cfg)
    gen = torch.Generator().manual_seed(0)
    random_net = type(net)(32, 2)
    trained = [run_episode(env, net, 10_000 + s, True, None)[2] for s in range(20)]
    rand = [run_episode(env, random_net, 10_000 + s, False, gen)[2] for s in range(20)]
    assert np.mean(trained) < np.mean(rand) - 0.1, (np.mean(trained), np.mean(rand))


def test_registered_agents_run_online_and_corrupt_checkpoints_are_user_errors(tmp_path):
    from simsched.schedulers import registry
    from simsched.simulator.engine import run_online
    from simsched.simulator.schedule import validate_schedule

    ep = default_family().draw(123)
    for name in ("rl", "rl-world"):
        s, stats = run_online(ep.problem, registry.create(name), ep.factors)
        assert validate_schedule(s, ep.problem, check_durations=False) == []
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(SimschedError):
        run_online(ep.problem, registry.create("rl", checkpoint=str(bad)))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("ppo: {iterations: -1}\n")
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "train", "rl", str(cfg)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "iterations" in r.stderr and "Traceback" not in r.stderr


def test_cli_start_up_imports_neither_torch_nor_gymnasium():
    code = "import sys, simsched.cli.main; assert 'torch' not in sys.modules and 'gymnasium' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_final_seeds_never_overlap_selection_or_training_seeds():
    from simsched.learned.rl.ppo import eval_seeds, final_seeds

    cfg = TrainConfig.model_validate({"scenario": "scenarios/rl/random_dag_4p.yaml",
                                      "eval": {"seeds": 20, "final_seeds": 100}})
    selection, final = eval_seeds(cfg, cfg.eval.seeds), final_seeds(cfg)
    assert len(selection) == 20 and len(final) == 100 and len(set(final)) == 100
    assert not set(selection) & set(final)
    assert min(final) > max(selection) and min(selection) >= cfg.eval.seed_offset  # training draws below it
    one = TrainConfig.model_validate({"scenario": "scenarios/rl/random_dag_4p.yaml",
                                      "eval": {"seeds": 1, "final_seeds": 1}})
    assert final_seeds(one) == [one.eval.seed_offset + 1]
