"""The model-based agent's parts: slot-factorised latent, branch points, dreams that end exactly
when the imagined episode has placed all its tasks, and a controller that is its own policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from simsched.learned.rl.config import TrainConfig, WorldConfig  # noqa: E402
from simsched.learned.rl.ppo import make_env  # noqa: E402
from simsched.learned.rl.world import (  # noqa: E402
    collect_real,
    dream_ppo,
    encode,
    heuristic_agreement,
    imagine,
    imagined_returns,
    real_starts,
    start_states,
    train_latent,
    train_mdn,
)
from simsched.learned.rl.world_model import WorldAgent, slot_tables, z_size  # noqa: E402


@pytest.fixture(scope="module")
def world():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = TrainConfig(scenario="../scenarios/rl/random_dag_4p.yaml", tasks=(8, 12), seed=0,
                      base=str(Path(__file__).parent))
    cfg.world = WorldConfig(lstm=32, z_dim=8, slot_dim=3, mixtures=2, encoder_epochs=1, wm_epochs=1,
                            dream_batch=16, dream_horizon=6, dream_iterations=2, ensemble=2)
    agent = WorldAgent.create(cfg.world, 16, 1)
    env = make_env(cfg)
    rng = np.random.default_rng(0)
    eps = collect_real(env, agent, [1, 2, 3], "random", rng)
    train_latent(agent, eps, cfg.world, rng)
    zs = encode(agent, eps)
    for m in agent.members:
        train_mdn(agent, eps, zs, cfg.world, rng, m)
    return cfg, agent, env, eps, zs


def test_latent_has_one_embedding_per_slot_and_zero_for_empty_slots(world):
    cfg, agent, env, eps, zs = world
    w = cfg.world
    for e, z in zip(eps, zs):
        assert z.shape == (len(e.actions), z_size(w))
        slots = z[:, w.z_dim:].reshape(len(e.actions), -1, w.slot_dim)
        assert torch.all(slots[torch.from_numpy(~e.valid)] == 0)
        # the slot table is the one the real env offered: every recorded action is a valid slot
        assert e.valid[np.arange(len(e.actions)), e.actions].all()


def test_branch_points_know_how_many_tasks_remain(world):
    cfg, agent, env, eps, zs = world
    st = real_starts(agent, eps, zs)
    n = [len(e.actions) for e in eps]
    assert st["left"].tolist() == [k for m in n for k in range(m, 0, -1)]
    assert st["h"].shape == (sum(n), cfg.world.lstm)
    first = np.cumsum([0] + n[:-1])
    assert torch.all(st["h"][first] == 0)  # each episode starts from M's initial state


def test_a_dream_ends_when_its_last_task_is_placed(world):
    """Branches started one task before the end take exactly one imagined step, whatever M's
    termination head says: the controller cannot end a dream early to escape its rewards."""
    cfg, agent, env, eps, zs = world
    st = real_starts(agent, eps, zs)
    last = st["left"] == 1
    one = {k: (v if k == "reward_range" else v[last]) for k, v in st.items()}
    out = dream_ppo(agent, one, cfg.world, cfg, 1.0, torch.Generator().manual_seed(0), iterations=3)
    assert out["dream_steps"] == 3 * cfg.world.dream_batch
    out = dream_ppo(agent, st, cfg.world, cfg, 1.0, torch.Generator().manual_seed(0), iterations=2)
    assert out["dream_steps"] <= 2 * cfg.world.dream_batch * cfg.world.dream_horizon


def test_greedy_agent_acts_on_valid_slots_and_agreement_is_a_fraction(world):
    cfg, agent, env, eps, zs = world
    a = heuristic_agreement(agent, env, [1_000_000_001, 1_000_000_002])
    assert 0.0 <= a <= 1.0
    env.reset(seed=7)
    pairs, valid = slot_tables(env.obs, env.info_static.rank, cfg.world.task_slots, cfg.world.proc_slots)
    (t, p), _ = agent.act(env.info_static, env.view, agent.initial_state(), env.obs)
    assert any(valid[i] and tuple(pairs[i]) == (t, p) for i in range(len(valid)))


def test_a_checkpoint_of_another_world_model_version_is_a_user_error(tmp_path, world):
    from simsched.errors import SimschedError
    from simsched.learned.rl import checkpoint

    cfg, agent, *_ = world
    conf = cfg.model_dump()
    conf["world"]["bc_coef"] = 0.1  # a field of the first world model, since removed
    path = tmp_path / "old.pt"
    checkpoint.save(path, "rl-world", conf, agent.state_dict())
    with pytest.raises(SimschedError, match="another version"):
        WorldAgent.from_checkpoint(checkpoint.load(path, "rl-world"))


def test_ensemble_disagreement_is_the_pessimism_that_lowers_imagined_rewards(world):
    """Two members fitted from different initialisations disagree (> 0) and a single model does
    not; the penalised dream return falls as ``pessimism`` grows, from the same branch points."""
    cfg, agent, env, eps, zs = world
    st = real_starts(agent, eps, zs)
    assert st["h_others"].shape == (st["h"].shape[0], 1, cfg.world.lstm)
    pick = torch.arange(st["z"].shape[0])
    a = torch.from_numpy(np.concatenate([e.actions for e in eps])).long()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        *_, dis = imagine(agent, st["z"], a, start_states(agent, st, pick), 1.0, gen, st["reward_range"])
        single = type(agent)(agent.w, agent.latent, agent.mdn, agent.ctrl)
        *_, dis1 = imagine(single, st["z"], a, start_states(single, st, pick), 1.0, gen, st["reward_range"])
    assert bool((dis > 0).all()) and bool((dis1 == 0).all())
    returns = []
    for pessimism in (0.0, 5.0):
        w = cfg.world.model_copy(update={"pessimism": pessimism, "dream_lr": 1e-12})
        torch.manual_seed(0)
        returns.append(dream_ppo(agent, st, w, cfg, 1.0, torch.Generator().manual_seed(0), iterations=1))
    assert returns[1]["dream_return"] < returns[0]["dream_return"]
    assert returns[1]["disagreement"] > 0


def test_imagined_episode_returns_stay_within_the_real_reward_range(world):
    cfg, agent, env, eps, zs = world
    agent.starts = real_starts(agent, eps, zs)
    seeds = [1_000_000_001, 1_000_000_002, 1_000_000_003]
    im = imagined_returns(agent, env, seeds)
    n = np.array([env.family.draw(s).problem.graph.n_tasks for s in seeds])
    lo, hi = agent.starts["reward_range"][:2].tolist()
    assert im.shape == (3,)
    assert np.all(im >= n * lo - 1e-5) and np.all(im <= n * hi + 1e-5)


def test_an_ensemble_checkpoint_round_trips(tmp_path, world):
    from simsched.learned.rl import checkpoint

    cfg, agent, *_ = world
    path = tmp_path / "w.pt"
    conf = cfg.model_dump()
    conf["ppo"].update(hidden=16, layers=1)  # the fixture's V
    checkpoint.save(path, "rl-world", conf, agent.state_dict())
    back = WorldAgent.from_checkpoint(checkpoint.load(path, "rl-world"))
    assert len(back.members) == 2
    for m, n in zip(agent.members, back.members):
        for (k, v), (_, u) in zip(m.state_dict().items(), n.state_dict().items()):
            assert torch.equal(v, u), k
