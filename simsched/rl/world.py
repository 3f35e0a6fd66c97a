"""The model-based agent ``rl-world``: World Models (Ha & Schmidhuber, "Recurrent world models
facilitate policy evolution", NeurIPS 2018) applied to scheduling.

* **V** — a :class:`~simsched.rl.nets.GraphEncoder` (the same GNN as the model-free agent) maps a
  decision point to a latent ``z`` (``z_dim``, tanh); it is trained on the real rollouts to predict
  the return-to-go and the validity of the actions, then frozen.
* **M** — an MDN-RNN: an LSTM (``lstm`` = 256 units) reads ``(z_t, a_t)``; from its state a mixture
  of ``mixtures`` Gaussians predicts ``z_{t+1}``, and heads predict the reward, the termination and
  the validity of every action at ``t + 1``.  Sampling at temperature ``tau`` divides the mixture
  logits by ``tau`` and multiplies the standard deviations by ``sqrt(tau)``.
* **C** — a controller on ``[z, h]`` trained by PPO (clipped objective, GAE) entirely inside M's
  dreams, then run in the real SimPy-driven env.

Actions form a fixed set so that M can model them: ``task_slots x proc_slots`` pairs (the k-th
ready task by upward rank, the j-th processor by expected finish time for it).  Data: the first
round uses a uniformly random valid policy, later rounds the controller (as Ha & Schmidhuber's
iterative training).  A dream step is one batched LSTM step: far cheaper than a real step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from simsched.rl.config import TrainConfig, WorldConfig
from simsched.rl.env import SchedulingEnv
from simsched.rl.features import Observation, StaticInfo, observe
from simsched.rl.nets import GraphEncoder, collate
from simsched.simulator.policy import DecisionView


# --------------------------------------------------------------------------- slot actions
def slot_tables(obs: Observation, rank: np.ndarray, K: int, P: int) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, valid)``: ``pairs[a] = (task, processor)`` for slot action ``a = k * P + j`` and the
    (K*P,) validity mask.  O(k log k + K m log m)."""
    ready = np.flatnonzero(obs.task_mask)
    ready = ready[np.lexsort((ready, -rank[ready]))][:K]
    pairs = np.full((K * P, 2), -1, dtype=np.int64)
    valid = np.zeros(K * P, dtype=bool)
    for k, t in enumerate(ready.tolist()):
        ct = obs.completion[t]
        procs = np.argsort(ct, kind="stable")[: P]
        for j, p in enumerate(procs.tolist()):
            if np.isfinite(ct[p]):
                pairs[k * P + j] = (t, p)
                valid[k * P + j] = True
    return pairs, valid


# --------------------------------------------------------------------------- networks
class Latent(nn.Module):
    """V: GNN encoder to ``z``, with training heads for return-to-go and action validity."""

    def __init__(self, w: WorldConfig, hidden: int = 64, layers: int = 3) -> None:
        super().__init__()
        self.gnn = GraphEncoder(hidden, layers)
        self.to_z = nn.Linear(hidden, w.z_dim)
        self.value = nn.Linear(w.z_dim, 1)
        self.valid = nn.Linear(w.z_dim, w.task_slots * w.proc_slots)

    def forward(self, obs: list[Observation]) -> torch.Tensor:
        _, _, _, g = self.gnn(collate(obs))
        return torch.tanh(self.to_z(g))


class MDNRNN(nn.Module):
    """M: LSTM over ``(z, a)`` with an MDN head for ``z'`` and reward / done / validity heads."""

    def __init__(self, w: WorldConfig) -> None:
        super().__init__()
        self.A, self.Z, self.K = w.task_slots * w.proc_slots, w.z_dim, w.mixtures
        self.lstm = nn.LSTMCell(self.Z + self.A, w.lstm)
        self.mdn = nn.Linear(w.lstm, self.K * (1 + 2 * self.Z))
        self.reward = nn.Linear(w.lstm, 1)
        self.done = nn.Linear(w.lstm, 1)
        self.valid = nn.Linear(w.lstm, self.A)

    def step(self, z: torch.Tensor, a: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        h, c = self.lstm(torch.cat([z, F.one_hot(a, self.A).float()], 1), state)
        out = self.mdn(h)
        logit_pi = out[:, : self.K]
        mu = out[:, self.K: self.K * (1 + self.Z)].view(-1, self.K, self.Z)
        log_sigma = out[:, self.K * (1 + self.Z):].view(-1, self.K, self.Z).clamp(-6, 2)
        heads = (self.reward(h).squeeze(1), self.done(h).squeeze(1), self.valid(h))
        return (h, c), (logit_pi, mu, log_sigma), heads

    def nll(self, mdn, z_next: torch.Tensor) -> torch.Tensor:
        logit_pi, mu, log_sigma = mdn
        zn = z_next[:, None, :]
        lp = -0.5 * (((zn - mu) / log_sigma.exp()) ** 2) - log_sigma - 0.5 * math.log(2 * math.pi)
        return -torch.logsumexp(F.log_softmax(logit_pi, 1) + lp.sum(2), 1)

    @staticmethod
    def sample(mdn, tau: float, gen: torch.Generator | None = None) -> torch.Tensor:
        logit_pi, mu, log_sigma = mdn
        k = torch.multinomial(F.softmax(logit_pi / tau, 1), 1, generator=gen).squeeze(1)
        idx = torch.arange(mu.shape[0])
        eps = torch.randn(mu[idx, k].shape, generator=gen)
        return mu[idx, k] + log_sigma[idx, k].exp() * math.sqrt(tau) * eps

    def initial(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.zeros(batch, self.lstm.hidden_size)
        return z, z.clone()


class Controller(nn.Module):
    """C: masked policy and value on ``[z, h]``."""

    def __init__(self, w: WorldConfig) -> None:
        super().__init__()
        A = w.task_slots * w.proc_slots
        self.pi = nn.Sequential(nn.Linear(w.z_dim + w.lstm, 64), nn.Tanh(), nn.Linear(64, A))
        self.v = nn.Sequential(nn.Linear(w.z_dim + w.lstm, 64), nn.Tanh(), nn.Linear(64, 1))

    def forward(self, z: torch.Tensor, h: torch.Tensor, mask: torch.Tensor):
        x = torch.cat([z, h], 1)
        logits = self.pi(x).masked_fill(~mask, -1e9)
        return F.log_softmax(logits, 1), self.v(x).squeeze(1)


# --------------------------------------------------------------------------- the agent
@dataclass(eq=False)
class WorldAgent:
    """V + M + C, acting in the real simulator."""

    w: WorldConfig
    latent: Latent
    mdn: MDNRNN
    ctrl: Controller

    def initial_state(self):
        return self.mdn.initial(1)

    def act(self, info: StaticInfo, view: DecisionView, state, obs: Observation | None = None,
            explore: float = 0.0, rng: np.random.Generator | None = None):
        """Greedy slot action on the real decision point (real validity mask); advances M's state."""
        obs = obs if obs is not None else observe(info, view)
        pairs, valid = slot_tables(obs, info.rank, self.w.task_slots, self.w.proc_slots)
        with torch.no_grad():
            z = self.latent([obs])
            mask = torch.from_numpy(valid)[None]
            logp, _ = self.ctrl(z, state[0], mask)
            if explore > 0 and rng is not None and rng.random() < explore:
                a = int(rng.choice(np.flatnonzero(valid)))
            else:
                a = int(torch.argmax(logp[0]))
            state, _, _ = self.mdn.step(z, torch.tensor([a]), state)
        return tuple(int(x) for x in pairs[a]), state

    def state_dict(self) -> dict:
        sd = {"starts": self.starts, "start_valid": self.start_valid} if hasattr(self, "starts") else {}
        for name, mod in (("latent", self.latent), ("mdn", self.mdn), ("ctrl", self.ctrl)):
            sd.update({f"{name}.{k}": v for k, v in mod.state_dict().items()})
        return sd

    @classmethod
    def create(cls, w: WorldConfig, hidden: int, layers: int) -> WorldAgent:
        return cls(w, Latent(w, hidden, layers), MDNRNN(w), Controller(w))

    @classmethod
    def from_checkpoint(cls, ck: dict) -> WorldAgent:
        cfg = TrainConfig(**{k: v for k, v in ck["config"].items() if k != "base"})
        agent = cls.create(cfg.world, cfg.ppo.hidden, cfg.ppo.layers)
        for name, mod in (("latent", agent.latent), ("mdn", agent.mdn), ("ctrl", agent.ctrl)):
            mod.load_state_dict({k[len(name) + 1:]: v for k, v in ck["state"].items() if k.startswith(name + ".")})
            mod.eval()
        if "starts" in ck["state"]:
            agent.starts, agent.start_valid = ck["state"]["starts"], ck["state"]["start_valid"]
        return agent


# --------------------------------------------------------------------------- data
@dataclass
class Episode:
    obs: list
    actions: np.ndarray
    rewards: np.ndarray
    valid: np.ndarray  # (T, A) validity at each step
    expert: np.ndarray | None = None  # (T,) slot of the rank + earliest-finish heuristic


def expert_slot(env: SchedulingEnv, pairs: np.ndarray) -> int:
    """Slot of :meth:`SchedulingEnv.fallback_action` (no simulator step: a lookup on the view)."""
    t, p = env.fallback_action()
    hit = np.flatnonzero((pairs[:, 0] == t) & (pairs[:, 1] == p))
    return int(hit[0]) if hit.size else 0


def collect_real(env: SchedulingEnv, agent: WorldAgent, seeds: list[int], policy: str | bool,
                 rng: np.random.Generator, explore: float = 0.2) -> list[Episode]:
    """Real-simulator rollouts with ``policy``: ``"random"`` (uniform over valid slots),
    ``"heuristic"`` (the heuristic's slot, a random valid one with probability ``explore``) or
    ``"agent"`` (epsilon-greedy controller).  ``True`` / ``False`` mean random / agent.  Each step
    also records the heuristic's slot (behaviour-cloning label, at no extra real step)."""
    policy = {True: "random", False: "agent"}.get(policy, policy)  # type: ignore[arg-type]
    eps = []
    w = agent.w
    for s in seeds:
        env.reset(seed=s)
        state = agent.initial_state()
        obs, acts, rews, valids, experts = [], [], [], [], []
        done = False
        while not done:
            o = env.obs
            pairs, valid = slot_tables(o, env.info_static.rank, w.task_slots, w.proc_slots)
            ex = expert_slot(env, pairs)
            if policy == "random" or (policy == "heuristic" and rng.random() < explore):
                a = int(rng.choice(np.flatnonzero(valid)))
            elif policy == "heuristic":
                a = ex
            else:
                (t, p), state = agent.act(env.info_static, env.view, state, o, explore, rng)
                a = int(np.flatnonzero((pairs[:, 0] == t) & (pairs[:, 1] == p))[0])
            _, r, done, _, _ = env.step(tuple(pairs[a]))
            obs.append(o)
            acts.append(a)
            rews.append(r)
            valids.append(valid)
            experts.append(ex)
        eps.append(Episode(obs, np.array(acts), np.array(rews, dtype=np.float32), np.array(valids),
                           np.array(experts)))
    return eps


def train_latent(agent: WorldAgent, eps: list[Episode], w: WorldConfig, rng: np.random.Generator) -> float:
    """Fit V on return-to-go and validity (supervised); returns the final loss."""
    obs = [o for e in eps for o in e.obs]
    rtg = np.concatenate([np.cumsum(e.rewards[::-1])[::-1] for e in eps]).astype(np.float32)
    valid = torch.from_numpy(np.concatenate([e.valid for e in eps])).float()
    rtg_t = torch.from_numpy(rtg)
    opt = torch.optim.Adam(agent.latent.parameters(), lr=w.lr)
    loss = torch.tensor(0.0)
    for _ in range(w.encoder_epochs):
        perm = rng.permutation(len(obs))
        for i in range(0, len(obs), 256):
            idx = perm[i:i + 256]
            z = agent.latent([obs[j] for j in idx])
            ti = torch.from_numpy(idx)
            loss = F.mse_loss(agent.latent.value(z).squeeze(1), rtg_t[ti]) + \
                F.binary_cross_entropy_with_logits(agent.latent.valid(z), valid[ti])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(loss.detach())


def encode(agent: WorldAgent, eps: list[Episode]) -> list[torch.Tensor]:
    with torch.no_grad():
        return [agent.latent(e.obs) for e in eps]


def train_mdn(agent: WorldAgent, eps: list[Episode], zs: list[torch.Tensor], w: WorldConfig,
              rng: np.random.Generator) -> dict:
    """Fit M by teacher forcing over whole episodes (padded batch).  Returns final losses."""
    T = max(len(e.actions) for e in eps)
    B, Z, A = len(eps), w.z_dim, w.task_slots * w.proc_slots
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
    opt = torch.optim.Adam(agent.mdn.parameters(), lr=w.lr)
    out = {}
    for _ in range(w.wm_epochs):
        for i0 in range(0, B, 32):
            sl = slice(i0, i0 + 32)
            b = zp[sl].shape[0]
            state = agent.mdn.initial(b)
            l_z = l_r = l_d = l_v = 0.0
            m = mask[sl]
            for t in range(T):
                state, mdn, (r, d, v) = agent.mdn.step(zp[sl, t], ap[sl, t], state)
                mt = m[:, t]
                notlast = mt * (1 - dp[sl, t])
                l_z = l_z + (agent.mdn.nll(mdn, zp[sl, t + 1]) * notlast).sum()
                l_r = l_r + (((r - rp[sl, t]) ** 2) * mt).sum()
                l_d = l_d + (F.binary_cross_entropy_with_logits(d, dp[sl, t], reduction="none") * mt).sum()
                l_v = l_v + (F.binary_cross_entropy_with_logits(v, vp[sl, t], reduction="none").mean(1)
                             * notlast).sum()
            cnt = m.sum()
            loss = (l_z / Z + 100.0 * l_r + l_d + l_v) / cnt
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.mdn.parameters(), 1.0)
            opt.step()
            out = {"z_nll": float(l_z.detach() / cnt / Z), "reward_mse": float(l_r.detach() / cnt),
                   "done_bce": float(l_d.detach() / cnt)}
    return out


def real_inputs(agent: WorldAgent, eps: list[Episode], zs: list[torch.Tensor]) -> dict:
    """C's inputs along the real episodes: ``z_t``, M's ``h_t`` (teacher-forced on the actions
    taken, as when acting), the real validity mask, the heuristic's slot and the return-to-go."""
    Z, H, M, E, R = [], [], [], [], []
    with torch.no_grad():
        for e, z in zip(eps, zs):
            state = agent.mdn.initial(1)
            hs = []
            for t in range(len(e.actions)):
                hs.append(state[0][0])
                state, _, _ = agent.mdn.step(z[t:t + 1], torch.tensor([int(e.actions[t])]), state)
            Z.append(z)
            H.append(torch.stack(hs))
            M.append(torch.from_numpy(e.valid))
            E.append(torch.from_numpy(e.expert if e.expert is not None else np.zeros(len(e.actions), np.int64)))
            R.append(torch.from_numpy(np.cumsum(e.rewards[::-1])[::-1].copy()))
    return {"z": torch.cat(Z), "h": torch.cat(H), "mask": torch.cat(M), "expert": torch.cat(E).long(),
            "rtg": torch.cat(R).float()}


def bc_controller(agent: WorldAgent, real: dict, w: WorldConfig, rng: np.random.Generator) -> float:
    """Warm start of C: cross-entropy to the heuristic's slot and value regression on the real
    return-to-go, on the collected real episodes (no real step).  Returns the final loss."""
    ctrl = agent.ctrl
    opt = torch.optim.Adam(ctrl.parameters(), lr=1e-3)
    n = real["z"].shape[0]
    loss = torch.tensor(0.0)
    for _ in range(w.bc_epochs):
        perm = torch.from_numpy(rng.permutation(n))
        for i in range(0, n, 256):
            idx = perm[i:i + 256]
            logp, v = ctrl(real["z"][idx], real["h"][idx], real["mask"][idx])
            loss = F.nll_loss(logp, real["expert"][idx]) + 0.5 * F.mse_loss(v, real["rtg"][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(loss.detach())


def dream_ppo(agent: WorldAgent, starts: torch.Tensor, start_valid: torch.Tensor, w: WorldConfig,
              cfg: TrainConfig, tau: float, gen: torch.Generator, iterations: int | None = None,
              real: dict | None = None) -> dict:
    """Train C by PPO inside M (no real step); with ``real`` and ``w.bc_coef`` > 0, a
    behaviour-cloning term on the real episodes anchors C to the heuristic.  Returns dream
    statistics and the seconds per dream step (one batched LSTM step / batch size)."""
    ctrl, mdn = agent.ctrl, agent.mdn
    opt = torch.optim.Adam(ctrl.parameters(), lr=w.dream_lr)
    Bsz, H = w.dream_batch, w.dream_horizon
    steps, wall, ret_mean = 0, 0.0, 0.0
    for _ in range(iterations or w.dream_iterations):
        t0 = time.perf_counter()
        with torch.no_grad():
            pick = torch.randint(0, starts.shape[0], (Bsz,), generator=gen)
            z, mask = starts[pick], start_valid[pick]
            state = mdn.initial(Bsz)
            alive = torch.ones(Bsz)
            Zs, Hs, Ms, As, Ls, Vs, Rs, Al = [], [], [], [], [], [], [], []
            for _t in range(H):
                logp, v = ctrl(z, state[0], mask)
                a = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
                Zs.append(z), Hs.append(state[0]), Ms.append(mask), As.append(a)
                Ls.append(logp.gather(1, a[:, None]).squeeze(1)), Vs.append(v), Al.append(alive)
                state, mdn_out, (r, d, vl) = mdn.step(z, a, state)
                z = MDNRNN.sample(mdn_out, tau, gen)
                mask = torch.sigmoid(vl) > 0.5
                none = ~mask.any(1)
                if none.any():
                    mask[none, vl[none].argmax(1)] = True
                Rs.append(r * alive)
                ended = torch.bernoulli(torch.sigmoid(d), generator=gen)
                alive = alive * (1 - ended)
                steps += int((Al[-1] > 0).sum())
                if alive.sum() == 0:
                    break
        wall += time.perf_counter() - t0
        T = len(As)
        R = torch.stack(Rs, 1)
        V = torch.stack(Vs, 1)
        live = torch.stack(Al, 1)
        adv = torch.zeros_like(R)
        last = torch.zeros(Bsz)
        for t in range(T - 1, -1, -1):
            nxt = V[:, t + 1] * live[:, t + 1] if t + 1 < T else torch.zeros(Bsz)
            delta = R[:, t] + nxt - V[:, t]
            last = (delta + cfg.ppo.lam * last) * live[:, t]
            adv[:, t] = last
        ret = adv + V
        ret_mean = float((R * live).sum(1).mean())
        sel = live.reshape(-1) > 0
        Zf, Hf = torch.stack(Zs, 1).reshape(-1, w.z_dim)[sel], torch.stack(Hs, 1).reshape(-1, w.lstm)[sel]
        Mf, Af = torch.stack(Ms, 1).reshape(-1, Ms[0].shape[1])[sel], torch.stack(As, 1).reshape(-1)[sel]
        Lf, retf, advf = torch.stack(Ls, 1).reshape(-1)[sel], ret.reshape(-1)[sel], adv.reshape(-1)[sel]
        advf = (advf - advf.mean()) / (advf.std() + 1e-8)
        for _ in range(4):
            logp, v = ctrl(Zf, Hf, Mf)
            lp = logp.gather(1, Af[:, None]).squeeze(1)
            ratio = (lp - Lf).exp()
            pl = -torch.min(ratio * advf, ratio.clamp(0.8, 1.2) * advf).mean()
            ent = -(logp.exp() * logp.clamp(min=-30)).sum(1).mean()
            loss = pl + 0.5 * ((v - retf) ** 2).mean() - 0.01 * ent
            if real is not None and w.bc_coef > 0:
                bi = torch.randint(0, real["z"].shape[0], (min(1024, real["z"].shape[0]),), generator=gen)
                blp, _ = ctrl(real["z"][bi], real["h"][bi], real["mask"][bi])
                loss = loss + w.bc_coef * F.nll_loss(blp, real["expert"][bi])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ctrl.parameters(), 0.5)
            opt.step()
    return {"dream_steps": steps, "dream_step_s": wall / max(steps, 1), "dream_return": ret_mean}


def world_actor(agent: WorldAgent) -> Callable:
    """Greedy episode of ``agent`` in the real env (for :func:`simsched.rl.ppo.evaluate`)."""
    def act(env: SchedulingEnv, ep) -> float:
        env.load(ep)
        state, done = agent.initial_state(), False
        while not done:
            (t, p), state = agent.act(env.info_static, env.view, state, env.obs)
            _, _, done, _, _ = env.step((t, p))
        return env.makespan()
    return act


def train_world(cfg: TrainConfig, real_budget: int, progress: Callable[[str, dict], None] | None = None,
                env: SchedulingEnv | None = None) -> tuple[WorldAgent, list[dict], dict]:
    """The full model-based pipeline within ``real_budget`` real-simulator steps (split over
    ``rounds``); returns the agent, per-round history and timing figures."""
    from simsched.rl.ppo import eval_seeds, evaluate, make_env

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
    train_steps = eval_steps = 0  # real steps of training (all data, BC included) / of evaluation

    def real_eval() -> float:
        """Mean ratio on the evaluation seeds (reporting only: C is not selected on it)."""
        nonlocal eval_steps
        before = env.real_steps
        ev = evaluate(env, world_actor(agent), eval_seeds(cfg, cfg.eval.seeds))
        eval_steps += env.real_steps - before
        env.real_steps = before
        return float(ev["ratio"].mean())

    for rnd in range(w.rounds):
        start = env.real_steps
        tr = time.perf_counter()
        # one episode at a time; the last one may overshoot the round's share by < one episode
        while env.real_steps - start < per_round and env.real_steps < real_budget:
            seeds = rng.integers(0, cfg.eval.seed_offset, 1).tolist()
            policy = w.first_policy if rnd == 0 else "agent"
            data += collect_real(env, agent, seeds, policy, rng, w.explore)
        train_steps = env.real_steps
        timing["real_step_s"] = (time.perf_counter() - tr) / max(env.real_steps - start, 1)
        lat_loss = train_latent(agent, data, w, rng)
        zs = encode(agent, data)
        wm = train_mdn(agent, data, zs, w, rng)
        starts = torch.stack([z[0] for z in zs])
        start_valid = torch.from_numpy(np.stack([e.valid[0] for e in data]))
        extra: dict = {}
        real = real_inputs(agent, data, zs) if (w.bc_epochs or w.bc_coef) else None
        if not (w.keep_controller and rnd > 0):
            agent.ctrl = Controller(w)  # retrain C in the new dream
        if w.bc_epochs and real is not None:
            extra["bc_loss"] = bc_controller(agent, real, w, rng)
            extra["bc_eval_ratio"] = real_eval()
        dream = dream_ppo(agent, starts, start_valid, w, cfg, w.temperature, gen, real=real)
        ratio = real_eval()
        rec = {"round": rnd + 1, "real_steps": train_steps, "eval_steps": eval_steps,
               "wall_s": time.perf_counter() - t0, "latent_loss": lat_loss, **wm, **extra, **dream,
               "eval_ratio": ratio}
        history.append(rec)
        if progress is not None:
            progress("round", rec)
    timing["dream_step_s"] = history[-1]["dream_step_s"]
    agent.starts, agent.start_valid = starts, start_valid  # for the temperature sweep
    return agent, history, timing


def temperature_sweep(agent: WorldAgent, cfg: TrainConfig, env: SchedulingEnv, taus: list[float],
                      seeds: list[int]) -> list[dict]:
    """Table 5.1-style sweep: retrain C in the dream at each ``tau`` (a fresh controller, trained
    only in the dream: no behaviour-cloning warm start, whose real episodes are not kept),
    evaluate in the real env."""
    from simsched.rl.ppo import evaluate

    rows = []
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    for tau in taus:
        agent.ctrl = Controller(agent.w)
        torch.manual_seed(cfg.seed + 3)
        dream = dream_ppo(agent, agent.starts, agent.start_valid, agent.w, cfg, float(tau), gen)
        ev = evaluate(env, world_actor(agent), seeds)
        r = ev["ratio"]
        rows.append({"tau": float(tau), "dream_return": dream["dream_return"],
                     "real_ratio": float(r.mean()), "ci95": float(1.96 * r.std(ddof=1) / math.sqrt(r.size))})
    return rows
