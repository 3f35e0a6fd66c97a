"""Training the model-based agent ``rl-world`` (its networks: :mod:`simsched.learned.rl.world_model`):
World Models (Ha & Schmidhuber, "Recurrent world models
facilitate policy evolution", NeurIPS 2018) applied to scheduling.

* **V** — a :class:`~simsched.learned.rl.nets.GraphEncoder` (the same GNN as the model-free agent) maps a
  decision point to a latent ``z = [z_g, z_1 ... z_A]``: a global part (``z_dim``) and one small
  embedding (``slot_dim``) per action slot, so that the latent says what each action would do.
  V is trained on the real rollouts (return-to-go and action validity from ``z_g``; the reward and
  return-to-go of the action taken from ``[z_g, z_a]``), then frozen.
* **M** — an MDN-RNN: an LSTM (``lstm`` = 256 units) reads ``(z_t, a_t, z_{t,a_t})``; from its
  state a mixture of ``mixtures`` Gaussians predicts ``z_{t+1}``, and heads predict the reward, the
  termination and the validity of every action at ``t + 1``.  Sampling at temperature ``tau``
  divides the mixture logits by ``tau`` and multiplies the standard deviations by ``sqrt(tau)``.
* **C** — a controller scoring every slot from ``[z_a, position_a, z_g, h]`` with shared weights
  (``position_a``: the slot's place in the rank / finish-time order), trained by PPO (clipped
  objective, GAE) entirely inside M's dreams, then run in the real SimPy-driven env.

Optionally M is an ensemble (``ensemble``): each imagined transition comes from a random member and
the imagined reward is lowered by ``pessimism`` times the members' disagreement (MOPO, Yu et al.,
NeurIPS 2020); and dream branches may be bootstrapped by V's value head fitted on real returns
(``bootstrap: real``) rather than by C's own value.

Dreams branch from the real decision points (M's state teacher-forced along the real episode) and
run ``dream_horizon`` imagined steps, bootstrapped by C's value head, as MBPO (Janner et al., "When
to trust your model", NeurIPS 2019): short branches keep the model's compounding error small.
Every action places exactly one task, so an imagined episode ends when its known number of
unplaced tasks reaches zero; M's termination head is trained and reported, not trusted (a
controller learns to end dreams early through it, escaping the negative rewards).

Actions form a fixed set so that M can model them: ``task_slots x proc_slots`` pairs (the k-th
ready task by upward rank, the j-th processor by expected finish time for it).  Data: round 1 uses
``first_policy`` (uniformly random, or the rank + earliest-finish heuristic with ``explore`` random
actions), later rounds the controller (as Ha & Schmidhuber's iterative training).  A dream step is
one batched LSTM step: far cheaper than a real step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from simsched.learned.rl.config import TrainConfig, WorldConfig
from simsched.learned.rl.env import SchedulingEnv
from simsched.learned.rl.world_model import MDNRNN, Controller, WorldAgent, agent_slots, chosen_slot, n_actions, z_size


# --------------------------------------------------------------------------- data
@dataclass
class Episode:
    obs: list
    pairs: list  # (A, 2) slot table at each step
    actions: np.ndarray
    rewards: np.ndarray
    valid: np.ndarray  # (T, A) validity at each step
    expert: np.ndarray  # (T,) slot of the rank + earliest-finish heuristic (for reporting agreement)


def expert_slot(env: SchedulingEnv, pairs: np.ndarray, order: str = "rank") -> int:
    """Slot of the heuristic the slot order is built on: slot 0 for the ``job`` order
    (``srjf-eft``'s action), else the slot of :meth:`SchedulingEnv.fallback_action` (no simulator
    step: a lookup on the view)."""
    if order == "job":
        return 0
    t, p = env.fallback_action()
    hit = np.flatnonzero((pairs[:, 0] == t) & (pairs[:, 1] == p))
    return int(hit[0]) if hit.size else 0


def collect_real(env: SchedulingEnv, agent: WorldAgent, seeds: list[int], policy: str,
                 rng: np.random.Generator, explore: float = 0.2) -> list[Episode]:
    """Real-simulator rollouts with ``policy``: ``"random"`` (uniform over valid slots),
    ``"heuristic"`` (the heuristic's slot, a random valid one with probability ``explore``) or
    ``"agent"`` (the controller, epsilon-greedy with ``explore``)."""
    eps = []
    w = agent.w
    for s in seeds:
        env.reset(seed=s)
        state = agent.initial_state()
        obs, tables, acts, rews, valids, experts = [], [], [], [], [], []
        done = False
        while not done:
            o = env.obs
            pairs, valid = agent_slots(w, o, env.info_static.rank)
            ex = expert_slot(env, pairs, w.slot_order)
            if policy == "random" or (policy == "heuristic" and rng.random() < explore):
                a = int(rng.choice(np.flatnonzero(valid)))
            elif policy == "heuristic":
                a = ex
            else:
                (t, p), state = agent.act(env.info_static, env.view, state, o, explore, rng)
                a = int(np.flatnonzero((pairs[:, 0] == t) & (pairs[:, 1] == p))[0])
            _, r, done, _, _ = env.step(tuple(pairs[a]))
            obs.append(o)
            tables.append(pairs)
            acts.append(a)
            rews.append(r)
            valids.append(valid)
            experts.append(ex)
        eps.append(Episode(obs, tables, np.array(acts), np.array(rews, dtype=np.float32), np.array(valids),
                           np.array(experts)))
    return eps


def return_to_go(rewards: np.ndarray) -> np.ndarray:
    return np.cumsum(rewards[::-1])[::-1].astype(np.float32)


def train_latent(agent: WorldAgent, eps: list[Episode], w: WorldConfig, rng: np.random.Generator) -> float:
    """Fit V (supervised) on the real episodes; returns the final loss."""
    obs = [o for e in eps for o in e.obs]
    tables = [p for e in eps for p in e.pairs]
    rtg = torch.from_numpy(np.concatenate([return_to_go(e.rewards) for e in eps]))
    rew = torch.from_numpy(np.concatenate([e.rewards for e in eps]))
    act = torch.from_numpy(np.concatenate([e.actions for e in eps])).long()
    valid = torch.from_numpy(np.concatenate([e.valid for e in eps])).float()
    opt = torch.optim.Adam(agent.latent.parameters(), lr=w.lr)
    lat = agent.latent
    loss = torch.tensor(0.0)
    for _ in range(w.encoder_epochs):
        perm = rng.permutation(len(obs))
        for i in range(0, len(obs), 256):
            idx = perm[i:i + 256]
            z = lat([obs[j] for j in idx], [tables[j] for j in idx])
            ti = torch.from_numpy(idx)
            zg = z[:, : w.z_dim]
            q = lat.q(torch.cat([zg, chosen_slot(z, act[ti], w)], 1))
            loss = (F.mse_loss(lat.value(zg).squeeze(1), rtg[ti]) + F.mse_loss(q[:, 1], rtg[ti])
                    + 100.0 * F.mse_loss(q[:, 0], rew[ti])
                    + F.binary_cross_entropy_with_logits(lat.valid(zg), valid[ti]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(loss.detach())


def encode(agent: WorldAgent, eps: list[Episode]) -> list[torch.Tensor]:
    with torch.no_grad():
        return [agent.latent(e.obs, e.pairs) for e in eps]


def train_mdn(agent: WorldAgent, eps: list[Episode], zs: list[torch.Tensor], w: WorldConfig,
              rng: np.random.Generator, model: MDNRNN | None = None) -> dict:
    """Fit M (``model``: an ensemble member, ``agent.mdn`` by default) by teacher forcing over whole
    episodes (padded batch of 32).  Returns final losses."""
    model = model if model is not None else agent.mdn
    T = max(len(e.actions) for e in eps)
    B, Z, A = len(eps), z_size(w), n_actions(w)
    zp = torch.zeros(B, T + 1, Z)
    ap = torch.zeros(B, T, dtype=torch.long)
    rp = torch.zeros(B, T)
    dp = torch.zeros(B, T)
    vp = torch.zeros(B, T, A)
    mask = torch.zeros(B, T)
    for i, (e, z) in enumerate(zip(eps, zs)):
        n = len(e.actions)
        zp[i, :n] = z
        ap[i, :n] = torch.from_numpy(e.actions)
        rp[i, :n] = torch.from_numpy(e.rewards)
        dp[i, n - 1] = 1.0
        vp[i, : n - 1] = torch.from_numpy(e.valid[1:]).float()
        mask[i, :n] = 1.0
    opt = torch.optim.Adam(model.parameters(), lr=w.lr)
    out = {}
    for _ in range(w.wm_epochs):
        for i0 in rng.permutation(np.arange(0, B, 32)).tolist():
            sl = slice(i0, i0 + 32)
            b = zp[sl].shape[0]
            state = model.initial(b)
            l_z = l_r = l_d = l_v = 0.0
            m = mask[sl]
            for t in range(T):
                state, mdn, (r, d, v) = model.step(zp[sl, t], ap[sl, t], state)
                mt = m[:, t]
                notlast = mt * (1 - dp[sl, t])
                l_z = l_z + (model.nll(mdn, zp[sl, t + 1]) * notlast).sum()
                l_r = l_r + (((r - rp[sl, t]) ** 2) * mt).sum()
                l_d = l_d + (F.binary_cross_entropy_with_logits(d, dp[sl, t], reduction="none") * mt).sum()
                l_v = l_v + (F.binary_cross_entropy_with_logits(v, vp[sl, t], reduction="none").mean(1)
                             * notlast).sum()
            cnt = m.sum()
            loss = (l_z / Z + 100.0 * l_r + l_d + l_v) / cnt
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            out = {"z_nll": float(l_z.detach() / cnt / Z), "reward_mse": float(l_r.detach() / cnt),
                   "done_bce": float(l_d.detach() / cnt)}
    return out


def real_starts(agent: WorldAgent, eps: list[Episode], zs: list[torch.Tensor]) -> dict:
    """Branch points for the dreams: at every real decision point, ``z_t``, M's state ``(h_t, c_t)``
    teacher-forced on the actions taken (as when acting), the real validity mask and the number
    of tasks still to place; and the range of the real rewards (imagined ones are clipped to it).
    O(total steps) LSTM steps."""
    Z, M, R = [], [], []
    members = agent.members
    H: list[list[torch.Tensor]] = [[] for _ in members]
    C: list[list[torch.Tensor]] = [[] for _ in members]
    with torch.no_grad():
        for e, z in zip(eps, zs):
            n = len(e.actions)
            a = torch.from_numpy(e.actions).long()
            for i, m in enumerate(members):  # teacher forcing: all steps of the episode, one member
                state = m.initial(1)
                for t in range(n):
                    H[i].append(state[0][0])
                    C[i].append(state[1][0])
                    state, _, _ = m.step(z[t:t + 1], a[t:t + 1], state)
            Z.append(z)
            M.append(torch.from_numpy(e.valid))
            R.append(torch.arange(n, 0, -1))
    rewards = np.concatenate([e.rewards for e in eps])
    out = {"z": torch.cat(Z), "h": torch.stack(H[0]), "c": torch.stack(C[0]), "mask": torch.cat(M),
           "left": torch.cat(R), "reward_range": torch.tensor([rewards.min(), rewards.max(), rewards.std()])}
    if len(members) > 1:  # (N, E - 1, lstm): the other members' states at the same points
        out["h_others"] = torch.stack([torch.stack(h) for h in H[1:]], 1)
        out["c_others"] = torch.stack([torch.stack(c) for c in C[1:]], 1)
    return out


def imagine(agent: WorldAgent, z: torch.Tensor, a: torch.Tensor, states: list, tau: float,
            gen: torch.Generator | None, reward_range: torch.Tensor) -> tuple:
    """One imagined step of every row: all ensemble members read ``(z, a)``; the next latent is
    drawn from a random member per row (MBPO) at temperature ``tau`` and clipped to V's tanh range;
    the reward is the mean of the members' predictions clipped to the range seen for real; the
    validity mask is the first member's (at least one valid slot).  ``disagreement`` (for the
    pessimistic reward, MOPO-style) is the members' standard deviation of the predicted reward plus
    that of the mixture-mean next latent (averaged over its dimensions) times the real rewards'
    standard deviation; 0 for a single model.  Returns ``(z', r, mask, states', disagreement)``.
    O(E B (Z lstm + lstm^2)) for an ensemble of E."""
    members = agent.members
    outs = [m.step(z, a, s) for m, s in zip(members, states)]
    states = [o[0] for o in outs]
    samples = torch.stack([MDNRNN.sample(o[1], tau, gen) for o in outs], 1)  # (B, E, Z)
    rewards = torch.stack([o[2][0] for o in outs], 1)  # (B, E)
    pick = torch.randint(0, len(members), (z.shape[0],), generator=gen)
    z_next = samples[torch.arange(z.shape[0]), pick].clamp(-1.0, 1.0)
    r = rewards.mean(1).clamp(reward_range[0], reward_range[1])
    vl = outs[0][2][2]
    mask = torch.sigmoid(vl) > 0.5
    none = ~mask.any(1)
    if none.any():
        mask[none, vl[none].argmax(1)] = True
    if len(members) > 1:
        means = torch.stack([(F.softmax(o[1][0], 1)[..., None] * o[1][1]).sum(1) for o in outs], 1)
        scale = reward_range[2] if reward_range.numel() > 2 else reward_range[1] - reward_range[0]
        dis = rewards.std(1) + means.std(1).mean(1) * scale
    else:
        dis = torch.zeros(z.shape[0])
    return z_next, r, mask, states, dis


def start_states(agent: WorldAgent, starts: dict, pick: torch.Tensor) -> list:
    """Every ensemble member's teacher-forced LSTM state at the branch points ``pick``."""
    states = [(starts["h"][pick], starts["c"][pick])]
    for i in range(len(agent.members) - 1):
        states.append((starts["h_others"][pick, i], starts["c_others"][pick, i]))
    return states


def dream_ppo(agent: WorldAgent, starts: dict, w: WorldConfig, cfg: TrainConfig, tau: float,
              gen: torch.Generator, iterations: int | None = None) -> dict:
    """Train C by PPO inside M (no real step): each iteration branches ``dream_batch`` imagined
    rollouts of at most ``dream_horizon`` steps from real decision points, bootstraps C's value at
    the cut, and runs 4 clipped-objective epochs of ``dream_minibatch`` minibatches.  Returns
    dream statistics and the seconds per dream step (one batched LSTM step / batch size).
    With ``pessimism`` > 0 the imagined reward is lowered by that multiple of the ensemble's
    disagreement (MOPO, Yu et al. 2020); with ``bootstrap: real`` the value at the cut is V's
    value head, fitted on real returns-to-go, instead of C's own.
    Cost per iteration: ``dream_batch x dream_horizon x ensemble`` LSTM steps and
    ``dream_batch x dream_horizon`` controller rows."""
    ctrl = agent.ctrl
    opt = torch.optim.Adam(ctrl.parameters(), lr=w.dream_lr)
    Bsz, H = w.dream_batch, w.dream_horizon
    steps, wall, ret_mean, dis_sum = 0, 0.0, 0.0, 0.0
    for _ in range(iterations or w.dream_iterations):
        t0 = time.perf_counter()
        with torch.no_grad():
            pick = torch.randint(0, starts["z"].shape[0], (Bsz,), generator=gen)
            z, mask, left = starts["z"][pick], starts["mask"][pick], starts["left"][pick].clone()
            states = start_states(agent, starts, pick)
            alive = torch.ones(Bsz)
            Zs, Hs, Ms, As, Ls, Vs, Rs, Al = [], [], [], [], [], [], [], []
            for _t in range(H):
                logp, v = ctrl(z, states[0][0], mask)
                a = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
                Zs.append(z), Hs.append(states[0][0]), Ms.append(mask), As.append(a)
                Ls.append(logp.gather(1, a[:, None]).squeeze(1)), Vs.append(v), Al.append(alive)
                # stay on the support M was fitted on: V's latent is a tanh, rewards as seen for real
                z, r, mask, states, dis = imagine(agent, z, a, states, tau, gen, starts["reward_range"])
                dis_sum += float((dis * alive).sum())
                Rs.append((r - w.pessimism * dis) * alive)
                steps += int((alive > 0).sum())
                left = left - 1
                alive = alive * (left > 0).float()
                if alive.sum() == 0:
                    break
            _, v_end = ctrl(z, states[0][0], mask)
            if w.bootstrap == "real":
                v_end = agent.latent.value(z[:, : w.z_dim]).squeeze(1)
        wall += time.perf_counter() - t0
        T = len(As)
        R = torch.stack(Rs, 1)
        V = torch.stack(Vs + [v_end], 1)
        live = torch.stack(Al + [alive], 1)
        adv = torch.zeros_like(R)
        last = torch.zeros(Bsz)
        for t in range(T - 1, -1, -1):
            delta = R[:, t] + V[:, t + 1] * live[:, t + 1] - V[:, t]
            last = (delta + cfg.ppo.lam * last * live[:, t + 1]) * live[:, t]
            adv[:, t] = last
        ret = adv + V[:, :T]
        ret_mean = float(R.sum(1).mean())
        sel = live[:, :T].reshape(-1) > 0
        Zf, Hf = torch.stack(Zs, 1).reshape(-1, z.shape[1])[sel], torch.stack(Hs, 1).reshape(-1, w.lstm)[sel]
        Mf, Af = torch.stack(Ms, 1).reshape(-1, Ms[0].shape[1])[sel], torch.stack(As, 1).reshape(-1)[sel]
        Lf, retf, advf = torch.stack(Ls, 1).reshape(-1)[sel], ret.reshape(-1)[sel], adv.reshape(-1)[sel]
        advf = (advf - advf.mean()) / (advf.std() + 1e-8)
        for _ in range(4):
            perm = torch.randperm(Zf.shape[0], generator=gen)
            for i in range(0, Zf.shape[0], w.dream_minibatch):
                j = perm[i:i + w.dream_minibatch]
                logp, v = ctrl(Zf[j], Hf[j], Mf[j])
                lp = logp.gather(1, Af[j, None]).squeeze(1)
                ratio = (lp - Lf[j]).exp()
                pl = -torch.min(ratio * advf[j], ratio.clamp(0.8, 1.2) * advf[j]).mean()
                ent = -(logp.exp() * logp.clamp(min=-30)).sum(1).mean()
                loss = pl + 0.5 * ((v - retf[j]) ** 2).mean() - w.dream_entropy * ent
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(ctrl.parameters(), 0.5)
                opt.step()
    return {"dream_steps": steps, "dream_step_s": wall / max(steps, 1), "dream_return": ret_mean,
            "disagreement": dis_sum / max(steps, 1)}


def greedy_episode(agent: WorldAgent, env: SchedulingEnv, ep,
                   on_step: Callable[[tuple[int, int], tuple[int, int]], None] | None = None) -> float:
    """Run ``agent`` greedily on episode ``ep`` in the real env; ``on_step(action, heuristic's
    action)`` sees every decision.  Returns the makespan."""
    env.load(ep)
    state, done = agent.initial_state(), False
    while not done:
        if on_step is not None:
            pairs, _ = agent_slots(agent.w, env.obs, env.info_static.rank)
            ex = tuple(int(x) for x in pairs[expert_slot(env, pairs, agent.w.slot_order)])
        (t, p), state = agent.act(env.info_static, env.view, state, env.obs)
        if on_step is not None:
            on_step((t, p), ex)
        _, _, done, _, _ = env.step((t, p))
    return env.makespan()


def imagined_returns(agent: WorldAgent, env: SchedulingEnv, seeds: list[int], tau: float = 1.0) -> np.ndarray:
    """The greedy controller's whole-episode return as M imagines it, one dream per seed from the
    real first decision point, ending when all the episode's tasks are placed; to set beside the
    real return (the ``makespan`` reward sums to minus makespan / HEFT's makespan).  No real step
    beyond each episode's first observation; O(seeds x tasks) batched world-model steps."""
    w = agent.w
    obs, tables, masks, n = [], [], [], []
    for s in seeds:
        env.load(env.family.draw(s))
        pairs, valid = agent_slots(w, env.obs, env.info_static.rank)
        obs.append(env.obs), tables.append(pairs), masks.append(valid)
        n.append(env.info_static.problem.graph.n_tasks)
    rr = agent.starts["reward_range"] if hasattr(agent, "starts") else torch.tensor([-1e9, 1e9, 1.0])
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        z = agent.latent(obs, tables)
        mask = torch.from_numpy(np.stack(masks))
        left = torch.tensor(n)
        states = [m.initial(len(seeds)) for m in agent.members]
        total = torch.zeros(len(seeds))
        while bool((left > 0).any()):
            logp, _ = agent.ctrl(z, states[0][0], mask)
            z, r, mask, states, _ = imagine(agent, z, logp.argmax(1), states, tau, gen, rr)
            total += r * (left > 0).float()
            left = left - 1
    return total.numpy()


def world_actor(agent: WorldAgent) -> Callable:
    """Greedy episode of ``agent`` in the real env (for :func:`simsched.learned.rl.ppo.evaluate`)."""
    return lambda env, ep: greedy_episode(agent, env, ep)


def heuristic_agreement(agent: WorldAgent, env: SchedulingEnv, seeds: list[int]) -> float:
    """Fraction of the greedy controller's real decisions that equal the rank + earliest-finish
    heuristic's (a check that C learned its own policy rather than copying one)."""
    same: list[bool] = []
    for s in seeds:
        greedy_episode(agent, env, env.family.draw(s), lambda a, ex: same.append(a == ex))
    return float(np.mean(same)) if same else 0.0


def train_world(cfg: TrainConfig, real_budget: int, progress: Callable[[str, dict], None] | None = None,
                env: SchedulingEnv | None = None) -> tuple[WorldAgent, list[dict], dict]:
    """The full model-based pipeline within ``real_budget`` real-simulator steps (split over
    ``rounds``); returns the agent, per-round history and timing figures.  Each round: collect real
    episodes, fit V, fit M, (re)train C in the dream; evaluations on the evaluation seeds are for
    reporting only (C is never selected on them) and their steps are counted apart."""
    from simsched.learned.rl.ppo import eval_seeds, evaluate, make_env

    w = cfg.world
    torch.manual_seed(cfg.seed + 1)
    rng = np.random.default_rng(cfg.seed + 1)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    env = env or make_env(cfg)
    agent = WorldAgent.create(w, cfg.ppo.hidden, cfg.ppo.layers)
    data: list[Episode] = []
    history: list[dict] = []
    t0 = time.perf_counter()
    if w.max_real_steps is not None:
        real_budget = min(real_budget, w.max_real_steps)
    per_round = max(1, real_budget // w.rounds)
    timing: dict = {}
    train_steps = eval_steps = 0
    seeds = eval_seeds(cfg, cfg.eval.seeds)

    for rnd in range(w.rounds):
        start = env.real_steps
        tr = time.perf_counter()
        # one episode at a time; the last one may overshoot the round's share by < one episode
        while env.real_steps - start < per_round and env.real_steps < real_budget:
            draw = rng.integers(0, cfg.eval.seed_offset, 1).tolist()
            data += collect_real(env, agent, draw, w.first_policy if rnd == 0 else "agent", rng, w.explore)
        train_steps = env.real_steps
        timing["real_step_s"] = (time.perf_counter() - tr) / max(env.real_steps - start, 1)
        lat_loss = train_latent(agent, data, w, rng)
        zs = encode(agent, data)
        wm = train_mdn(agent, data, zs, w, rng)
        for m in agent.others or []:
            train_mdn(agent, data, zs, w, rng, m)
        starts = real_starts(agent, data, zs)
        if not (w.keep_controller and rnd > 0):
            agent.ctrl = Controller(w)  # retrain C in the new dream
        dream = dream_ppo(agent, starts, w, cfg, w.temperature, gen)
        before = env.real_steps
        ev = evaluate(env, world_actor(agent), seeds)
        eval_steps += env.real_steps - before
        env.real_steps = before
        agent.starts = starts
        imagined = imagined_returns(agent, env, seeds)
        rec = {"round": rnd + 1, "real_steps": train_steps, "eval_steps": eval_steps,
               "wall_s": time.perf_counter() - t0, "latent_loss": lat_loss, **wm, **dream,
               "eval_ratio": float(ev["ratio"].mean()), "imagined_return": float(imagined.mean()),
               "real_return": float(-ev["ratio"].mean())}
        history.append(rec)
        if progress is not None:
            progress("round", rec)
    timing["dream_step_s"] = history[-1]["dream_step_s"]
    agent.starts = starts  # branch points, kept for the temperature sweep
    return agent, history, timing


def temperature_sweep(agent: WorldAgent, cfg: TrainConfig, env: SchedulingEnv, taus: list[float],
                      seeds: list[int]) -> list[dict]:
    """Table 5.1-style sweep: retrain a fresh C in the dream at each ``tau`` (same world model,
    the branch points kept with it, same dream budget as training), evaluate in the real env.  The agent's
    own controller is restored afterwards."""
    from simsched.learned.rl.ppo import evaluate

    rows = []
    own = agent.ctrl
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    try:
        for tau in taus:
            torch.manual_seed(cfg.seed + 3)
            agent.ctrl = Controller(agent.w)
            dream = dream_ppo(agent, agent.starts, agent.w, cfg, float(tau), gen)
            ev = evaluate(env, world_actor(agent), seeds)
            r = ev["ratio"]
            rows.append({"tau": float(tau), "dream_return": dream["dream_return"],
                         "real_ratio": float(r.mean()),
                         "ci95": float(1.96 * r.std(ddof=1) / math.sqrt(r.size))})
    finally:
        agent.ctrl = own
    return rows
