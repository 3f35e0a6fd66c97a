"""The model-based agent ``rl-world``'s networks: V, M and C of World Models (Ha & Schmidhuber,
"Recurrent world models facilitate policy evolution", NeurIPS 2018) applied to scheduling, and the
:class:`WorldAgent` that holds them (acting, saving, loading).  How they are trained — real rollouts,
V, M, dreams, PPO inside them — is :mod:`simsched.learned.rl.world`; the design is described there.

* **V** (:class:`Latent`) maps a decision point to ``z = [z_g, z_1 ... z_A]``: a global part and one
  embedding per action slot (``task_slots x proc_slots`` pairs, :func:`slot_tables`).
* **M** (:class:`MDNRNN`) an LSTM with a mixture-density head predicting ``z_{t+1}``, the reward, the
  termination and the next validity of every action.
* **C** (:class:`Controller`) scores every slot from ``[z_a, position_a, z_g, h]``, shared weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from simsched.learned.rl.config import WorldConfig
from simsched.learned.rl.features import PAIR_FEATURES, Observation, StaticInfo, observe
from simsched.learned.rl.nets import GraphEncoder, collate, mlp
from simsched.simulator.policy import DecisionView


# --------------------------------------------------------------------------- slot actions
def slot_tables(obs: Observation, rank: np.ndarray, K: int, P: int,
                order: str = "rank") -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, valid)``: ``pairs[a] = (task, processor)`` for slot action ``a = k * P + j`` and the
    (K*P,) validity mask.  Task slot ``k`` holds the k-th ready task by ``order``: ``rank`` (highest
    upward rank first) or ``job`` (least remaining mean work of the task's job first, as
    shortest-remaining-job-first; rank breaks ties); processor slot ``j`` the j-th processor by
    expected finish time.  Ties: lowest task / processor index first.  O(k log k + K m log m)."""
    ready = np.flatnonzero(obs.task_mask)
    keys = [ready, -rank[ready]]
    if order == "job":
        keys.append(obs.jobs[obs.task_job[ready], 1])
    elif order != "rank":
        raise ValueError(f"slot order must be 'rank' or 'job', got {order!r}")
    ready = ready[np.lexsort(keys)][:K]
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


def agent_slots(w: WorldConfig, obs: Observation, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`slot_tables` with the agent's slot counts and order."""
    return slot_tables(obs, rank, w.task_slots, w.proc_slots, w.slot_order)


def n_actions(w: WorldConfig) -> int:
    return w.task_slots * w.proc_slots


def z_size(w: WorldConfig) -> int:
    """Width of the latent: the global part and one embedding per slot."""
    return w.z_dim + n_actions(w) * w.slot_dim


def chosen_slot(z: torch.Tensor, a: torch.Tensor, w: WorldConfig) -> torch.Tensor:
    """``z_{a}``: the embedding of the chosen slot of each row.  O(B slot_dim)."""
    slots = z[:, w.z_dim:].view(z.shape[0], n_actions(w), w.slot_dim)
    return slots[torch.arange(z.shape[0]), a]


# --------------------------------------------------------------------------- networks
class Latent(nn.Module):
    """V: GNN encoder to ``z``, with training heads (return-to-go and validity from ``z_g``; reward
    and return-to-go of the taken action from ``[z_g, z_a]``)."""

    def __init__(self, w: WorldConfig, hidden: int = 64, layers: int = 3) -> None:
        super().__init__()
        self.w = w
        A = n_actions(w)
        self.gnn = GraphEncoder(hidden, layers)
        self.to_z = nn.Linear(hidden, w.z_dim)
        self.slot = mlp(2 * hidden + PAIR_FEATURES, hidden, w.slot_dim)
        self.value = nn.Linear(w.z_dim, 1)
        self.valid = nn.Linear(w.z_dim, A)
        self.q = mlp(w.z_dim + w.slot_dim, hidden, 2)  # (reward, return-to-go) of the taken slot

    def forward(self, obs: list[Observation], pairs: list[np.ndarray]) -> torch.Tensor:
        """``z`` of each observation given its slot table ``pairs`` (A, 2).  One GNN forward."""
        b = collate(obs)
        h, p, _, g = self.gnn(b)
        zg = torch.tanh(self.to_z(g))
        P = np.stack(pairs)  # (B, A, 2)
        ok = P[..., 0] >= 0
        tl, pl = np.where(ok, P[..., 0], 0), np.where(ok, P[..., 1], 0)
        feats = np.stack([o.pairs[t, q] for o, t, q in zip(obs, tl, pl)])  # (B, A, PAIR_FEATURES)
        rows_t = b.node_offset[:, None] + torch.from_numpy(tl)
        rows_p = b.proc_offset[:, None] + torch.from_numpy(pl)
        x = torch.cat([h[rows_t], p[rows_p], torch.from_numpy(feats).float()], 2)
        zs = torch.tanh(self.slot(x)) * torch.from_numpy(ok)[..., None].float()
        return torch.cat([zg, zs.flatten(1)], 1)


class MDNRNN(nn.Module):
    """M: LSTM over ``(z, a, z_a)`` with an MDN head for ``z'`` and reward / done / validity heads."""

    def __init__(self, w: WorldConfig) -> None:
        super().__init__()
        self.w = w
        self.A, self.Z, self.K = n_actions(w), z_size(w), w.mixtures
        self.lstm = nn.LSTMCell(self.Z + self.A + w.slot_dim, w.lstm)
        self.mdn = nn.Linear(w.lstm, self.K * (1 + 2 * self.Z))
        self.reward = nn.Linear(w.lstm, 1)
        self.done = nn.Linear(w.lstm, 1)
        self.valid = nn.Linear(w.lstm, self.A)

    def step(self, z: torch.Tensor, a: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        x = torch.cat([z, F.one_hot(a, self.A).float(), chosen_slot(z, a, self.w)], 1)
        h, c = self.lstm(x, state)
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


def slot_position(w: WorldConfig) -> torch.Tensor:
    """(A, task_slots + proc_slots): one-hot task slot (k-th by upward rank) and processor slot
    (j-th by expected finish) of every slot action; the same at every decision point."""
    k = torch.arange(n_actions(w)) // w.proc_slots
    j = torch.arange(n_actions(w)) % w.proc_slots
    return torch.cat([F.one_hot(k, w.task_slots), F.one_hot(j, w.proc_slots)], 1).float()


class Controller(nn.Module):
    """C: a masked policy scoring each slot from ``[z_a, position_a, z_g, h]`` (weights shared
    across slots, so every slot's score reads what that action would do and where it stands in the
    rank / finish-time order) and a value head on ``[z_g, h]``."""

    def __init__(self, w: WorldConfig) -> None:
        super().__init__()
        self.w = w
        self.ctx = nn.Linear(w.lstm, 32)
        self._position: torch.Tensor | None = None  # slot_position(w), made on first use (not on the meta device)
        self.score = mlp(w.slot_dim + w.task_slots + w.proc_slots + w.z_dim + 32, 64, 1)
        self.v = mlp(w.z_dim + w.lstm, 64, 1)

    def position(self) -> torch.Tensor:
        """:func:`slot_position` of the config, on the weights' device (made once: O(A (task + proc slots)))."""
        device = self.ctx.weight.device
        if self._position is None or self._position.device != device:
            self._position = slot_position(self.w).to(device)
        return self._position

    def forward(self, z: torch.Tensor, h: torch.Tensor, mask: torch.Tensor):
        w, B = self.w, z.shape[0]
        A = n_actions(w)
        zg, zs = z[:, : w.z_dim], z[:, w.z_dim:].view(B, A, w.slot_dim)
        ctx = torch.cat([zg, torch.tanh(self.ctx(h))], 1)[:, None, :].expand(B, A, -1)
        pos = self.position()[None].expand(B, -1, -1)
        logits = self.score(torch.cat([zs, pos, ctx], 2)).squeeze(2).masked_fill(~mask, -1e9)
        return F.log_softmax(logits, 1), self.v(torch.cat([zg, h], 1)).squeeze(1)


# --------------------------------------------------------------------------- the agent
@dataclass(eq=False)
class WorldAgent:
    """V + M + C, acting in the real simulator."""

    w: WorldConfig
    latent: Latent
    mdn: MDNRNN
    ctrl: Controller
    others: nn.ModuleList | None = None
    """Further members of M's ensemble (``ensemble - 1``): used only in the dream, for their
    disagreement with ``mdn`` and to draw each imagined transition from a random member."""

    @property
    def members(self) -> list[MDNRNN]:
        return [self.mdn, *(self.others or [])]

    def initial_state(self):
        return self.mdn.initial(1)

    def act(self, info: StaticInfo, view: DecisionView, state, obs: Observation | None = None,
            explore: float = 0.0, rng: np.random.Generator | None = None):
        """Greedy slot action on the real decision point (real validity mask); advances M's state."""
        obs = obs if obs is not None else observe(info, view)
        pairs, valid = agent_slots(self.w, obs, info.rank)
        with torch.no_grad():
            z = self.latent([obs], [pairs])
            mask = torch.from_numpy(valid)[None]
            logp, _ = self.ctrl(z, state[0], mask)
            if explore > 0 and rng is not None and rng.random() < explore:
                a = int(rng.choice(np.flatnonzero(valid)))
            else:
                a = int(torch.argmax(logp[0]))
            state, _, _ = self.mdn.step(z, torch.tensor([a]), state)
        return tuple(int(x) for x in pairs[a]), state

    def state_dict(self, keep_starts: int = 512) -> dict:
        """Weights of V, M and C, and ``keep_starts`` of the dream branch points (evenly spaced,
        for the report's temperature sweep; all of them would make the checkpoint ~17 MB)."""
        starts = getattr(self, "starts", {})
        if starts:
            n = starts["z"].shape[0]
            idx = torch.from_numpy(np.linspace(0, n - 1, min(n, keep_starts)).round().astype(np.int64))
            starts = {k: (v if k == "reward_range" else v[idx]) for k, v in starts.items()}
        sd = {f"starts.{k}": v for k, v in starts.items()}
        for name, mod in self._modules():
            sd.update({f"{name}.{k}": v for k, v in mod.state_dict().items()})
        return sd

    def _modules(self) -> list[tuple[str, nn.Module]]:
        mods = [("latent", self.latent), ("mdn", self.mdn), ("ctrl", self.ctrl)]
        return mods + ([("others", self.others)] if self.others is not None else [])

    @classmethod
    def create(cls, w: WorldConfig, hidden: int, layers: int) -> WorldAgent:
        others = nn.ModuleList([MDNRNN(w) for _ in range(w.ensemble - 1)]) if w.ensemble > 1 else None
        return cls(w, Latent(w, hidden, layers), MDNRNN(w), Controller(w), others)

    @classmethod
    def from_checkpoint(cls, ck: dict, path: str | None = None) -> WorldAgent:
        """The agent stored in a loaded checkpoint: its config validated by :class:`TrainConfig`, each
        module's weights checked (names and shapes) against a freshly built one."""
        from simsched.checkpoints import check_weights, load_checked_state, planned_weights
        from simsched.errors import SimschedError
        from simsched.learned.rl import checkpoint

        file = path or "<rl-world checkpoint>"
        retrain = checkpoint.RETRAIN["rl-world"]
        cfg = checkpoint.config_of(ck, file, "rl-world")
        state = ck["state"]
        if not isinstance(state, dict):
            raise SimschedError(f"the rl-world checkpoint's weights are not a mapping; {retrain}", file=file)

        def weights(agent: WorldAgent) -> dict[str, Any]:
            return {f"{name}.{k}": v for name, mod in agent._modules() for k, v in mod.state_dict().items()}

        # the agent's shapes first, on the meta device; the real one only once they are the file's
        planned = planned_weights(lambda: cls.create(cfg.world, cfg.ppo.hidden, cfg.ppo.layers), weights,
                                  file=file, what="rl-world", field="config.world")
        check_weights(planned, {k: v for k, v in state.items() if not str(k).startswith("starts.")}, file=file,
                      what="rl-world", retrain=retrain)
        agent = cls.create(cfg.world, cfg.ppo.hidden, cfg.ppo.layers)
        modules = agent._modules()
        for name, mod in modules:
            load_checked_state(mod, {k[len(name) + 1:]: v for k, v in state.items() if k.startswith(name + ".")},
                               file=file, what="rl-world", retrain=retrain, field=f"state.{name}")
            mod.eval()
        starts = {k[len("starts."):]: v for k, v in ck["state"].items() if k.startswith("starts.")}
        if starts:
            agent.starts = starts
        return agent
