"""A numpy inference path for ``rl-world``'s dream step: the world model M (LSTM cell + MDN head +
reward / validity heads, every ensemble member) and the controller C, with their weights exported
from torch once and no autograd, for one imagined step at a time.

Why: an unbatched torch dream step pays torch's per-operator dispatch (tens of small operators for
three LSTM cells, their heads and the controller) and was slower than a real simulator step (0.7x,
docs/rl.md).  Here one step is a handful of float32 matrix-vector products into preallocated
buffers.  The arithmetic is the torch modules' (:class:`~simsched.learned.rl.world_model.MDNRNN`,
:class:`~simsched.learned.rl.world_model.Controller`, :func:`simsched.learned.rl.world.imagine`),
written out (Hochreiter & Schmidhuber 1997 for the cell; Ha & Schmidhuber 2018 for the MDN-RNN and
the temperature ``tau``); the tests hold every output within float32 rounding of torch's.

Tricks (exact, not approximations): the LSTM's input ``[z, one_hot(a), z_a]`` is never built — the
one-hot product is column ``a`` of the input weights, and ``z_a`` is a slice of ``z``, so the input
and recurrent products are one product of ``[z, h]`` with the stacked weights plus two column
reads; only the sampled member's mixture is evaluated in full (the others' mixture means are needed
only for the ensemble disagreement, and are computed only when ``pessimism`` asks for them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simsched.learned.rl.world_model import WorldAgent, n_actions, slot_position, z_size


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32, copy=True)


def _sigmoid(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1.0
    return np.reciprocal(out, out=out)


@dataclass
class _Member:
    """One MDN-RNN's weights, rearranged for the unbatched step."""

    Wzh: np.ndarray  # (4H, Z + H): input weights of z stacked with the recurrent weights
    Wa: np.ndarray  # (A, 4H): the one-hot action's columns of the input weights, transposed
    Ws: np.ndarray  # (4H, slot_dim): the chosen slot embedding's columns
    b: np.ndarray  # (4H,) b_ih + b_hh
    Wpi: np.ndarray  # (K, H) MDN head: mixture logits
    bpi: np.ndarray
    Wmu: np.ndarray  # (K, Z, H) means
    bmu: np.ndarray
    Wls: np.ndarray  # (K, Z, H) log standard deviations
    bls: np.ndarray
    wr: np.ndarray  # (H,) reward head
    br: float
    Wv: np.ndarray  # (A, H) validity head
    bv: np.ndarray

    @classmethod
    def of(cls, m) -> _Member:
        Z, A, K = m.Z, m.A, m.K
        W = _np(m.lstm.weight_ih)
        Wm, bm = _np(m.mdn.weight), _np(m.mdn.bias)
        H = Wm.shape[1]
        return cls(np.ascontiguousarray(np.concatenate([W[:, :Z], _np(m.lstm.weight_hh)], 1)),
                   np.ascontiguousarray(W[:, Z:Z + A].T), np.ascontiguousarray(W[:, Z + A:]),
                   _np(m.lstm.bias_ih) + _np(m.lstm.bias_hh), Wm[:K], bm[:K],
                   np.ascontiguousarray(Wm[K:K * (1 + Z)].reshape(K, Z, H)), bm[K:K * (1 + Z)].reshape(K, Z),
                   np.ascontiguousarray(Wm[K * (1 + Z):].reshape(K, Z, H)), bm[K * (1 + Z):].reshape(K, Z),
                   _np(m.reward.weight)[0], float(m.reward.bias.item()), _np(m.valid.weight), _np(m.valid.bias))


class NumpyDream:
    """One unbatched dream step of a :class:`WorldAgent` in numpy: C scores the slots, every
    ensemble member advances its LSTM state, a random member's mixture is sampled at temperature
    ``tau`` for the next latent, rewards are averaged and clipped, the validity mask is the first
    member's.  Weights are copied from the agent at construction (later training of the agent is
    not seen).  Cost per step O(E H (Z + H) + H K Z + A H) multiply-adds for an ensemble of E, LSTM
    width H, latent width Z, K mixtures and A slots; the gate and controller buffers are preallocated
    (the new states and a few vectors of size H or Z are the only arrays made per step)."""

    def __init__(self, agent: WorldAgent) -> None:
        w = agent.w
        self.w = w
        self.A, self.Z, self.K, self.H = n_actions(w), z_size(w), w.mixtures, w.lstm
        self.members = [_Member.of(m) for m in agent.members]
        c = agent.ctrl
        self.ctx_W, self.ctx_b = _np(c.ctx.weight), _np(c.ctx.bias)
        s1, s2 = c.score[0], c.score[2]
        W1 = _np(s1.weight)  # (64, slot_dim + T + P + z_dim + 32)
        sd, npos = w.slot_dim, w.task_slots + w.proc_slots
        self.W1_slot = np.ascontiguousarray(W1[:, :sd].T)  # (sd, 64)
        # the position part is the same at every step: fold it into a per-slot bias
        self.slot_bias = (_np(slot_position(w)) @ W1[:, sd:sd + npos].T + _np(s1.bias)).astype(np.float32)
        self.W1_ctx = W1[:, sd + npos:]  # (64, z_dim + 32)
        self.w2, self.b2 = _np(s2.weight)[0], float(s2.bias.item())
        H4 = 4 * self.H
        self._zh = np.zeros(self.Z + self.H, np.float32)
        self._gates = np.zeros(H4, np.float32)
        self._sig = np.zeros(H4, np.float32)
        self._ctx = np.zeros(w.z_dim + 32, np.float32)
        self._hidden = np.zeros((self.A, W1.shape[0]), np.float32)

    def initial(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Zero LSTM states ``(h, c)`` of every member."""
        return [(np.zeros(self.H, np.float32), np.zeros(self.H, np.float32)) for _ in self.members]

    def policy(self, z: np.ndarray, h: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """C's masked log-probabilities over the A slots (:class:`Controller`'s policy head).
        O(64 A + 64 (z_dim + 32))."""
        w, zd = self.w, self.w.z_dim
        self._ctx[:zd] = z[:zd]
        np.tanh(self.ctx_W @ h + self.ctx_b, out=self._ctx[zd:])
        shared = self.W1_ctx @ self._ctx  # (64,)
        hid = self._hidden
        np.matmul(z[zd:].reshape(self.A, w.slot_dim), self.W1_slot, out=hid)
        hid += self.slot_bias
        hid += shared
        np.tanh(hid, out=hid)
        logits = hid @ self.w2 + self.b2
        logits[~mask] = -1e9
        m = logits.max()
        return logits - (m + math.log(np.exp(logits - m).sum()))

    def cell(self, m: _Member, z: np.ndarray, a: int, state: tuple[np.ndarray, np.ndarray]):
        """One member's LSTM step on ``(z, a, z_a)``; returns the new ``(h, c)`` (fresh arrays)."""
        h, c = state
        zh, g, sig, H = self._zh, self._gates, self._sig, self.H
        zh[: self.Z] = z
        zh[self.Z:] = h
        np.matmul(m.Wzh, zh, out=g)
        g += m.Wa[a]
        sd, zd = self.w.slot_dim, self.w.z_dim
        g += m.Ws @ z[zd + a * sd: zd + (a + 1) * sd]
        g += m.b
        _sigmoid(g, sig)
        c2 = sig[H:2 * H] * c
        c2 += sig[:H] * np.tanh(g[2 * H:3 * H])
        return sig[3 * H:] * np.tanh(c2), c2

    def mixture(self, m: _Member, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(logit_pi (K,), mu (K, Z), log_sigma (K, Z))`` of member ``m`` at state ``h`` (the whole
        MDN head; the step evaluates only the rows it needs)."""
        return (m.Wpi @ h + m.bpi, m.Wmu @ h + m.bmu, np.clip(m.Wls @ h + m.bls, -6, 2))

    def step(self, z: np.ndarray, a: int, states: list, tau: float, rng: np.random.Generator,
             reward_range: np.ndarray, pessimism: float = 0.0):
        """One imagined step (:func:`simsched.learned.rl.world.imagine` for one row): returns
        ``(z', r, mask, states', disagreement)``.  Only the rows of the MDN head the step reads are
        evaluated: the sampled member's mixture logits and its chosen component's mean and log
        standard deviation; every member's mixture means only when ``pessimism`` > 0 asks for the
        disagreement (else it is 0.0, as only the pessimistic reward reads it)."""
        states = [self.cell(m, z, a, s) for m, s in zip(self.members, states)]
        rewards = np.array([m.wr @ s[0] + m.br for m, s in zip(self.members, states)], dtype=np.float32)
        pick = int(rng.integers(len(self.members))) if len(self.members) > 1 else 0
        mp, hp = self.members[pick], states[pick][0]
        logit_pi = mp.Wpi @ hp + mp.bpi
        p = np.exp((logit_pi - logit_pi.max()) / tau)
        k = int(rng.choice(self.K, p=p / p.sum())) if self.K > 1 else 0
        mu_k = mp.Wmu[k] @ hp + mp.bmu[k]
        sigma_k = np.exp(np.clip(mp.Wls[k] @ hp + mp.bls[k], -6, 2))
        z_next = mu_k + sigma_k * math.sqrt(tau) * rng.standard_normal(self.Z).astype(np.float32)
        np.clip(z_next, -1.0, 1.0, out=z_next)
        r = float(np.clip(rewards.mean(), reward_range[0], reward_range[1]))
        m0 = self.members[0]
        vl = m0.Wv @ states[0][0] + m0.bv
        mask = vl > 0.0  # sigmoid(vl) > 0.5
        if not mask.any():
            mask[int(vl.argmax())] = True
        dis = 0.0
        if pessimism > 0 and len(self.members) > 1:
            means = []
            for m, s in zip(self.members, states):
                lp = m.Wpi @ s[0] + m.bpi
                pi = np.exp(lp - lp.max())
                means.append((pi / pi.sum()) @ (m.Wmu @ s[0] + m.bmu))
            scale = reward_range[2] if len(reward_range) > 2 else reward_range[1] - reward_range[0]
            dis = float(rewards.std(ddof=1) + np.stack(means).std(0, ddof=1).mean() * scale)
        return z_next.astype(np.float32), r, mask, states, dis


def time_unbatched(agent: WorldAgent, steps: int = 500, seed: int = 0) -> float:
    """Seconds per unbatched numpy dream step of ``agent`` (C samples a slot, then
    :meth:`NumpyDream.step` with the agent's temperature and pessimism), from zero latent and state
    on all slots valid; the mean over ``steps`` steps after a short warm-up.  O(steps) steps."""
    import time

    nd = NumpyDream(agent)
    w = agent.w
    rng = np.random.default_rng(seed)
    bounds = np.array([-1.0, 0.0, 0.1], np.float32)

    def run(n: int) -> None:
        z, states, mask = np.zeros(nd.Z, np.float32), nd.initial(), np.ones(nd.A, dtype=bool)
        for _ in range(n):
            p = np.exp(nd.policy(z, states[0][0], mask))
            a = int(rng.choice(nd.A, p=p / p.sum()))
            z, _, mask, states, _ = nd.step(z, a, states, w.temperature, rng, bounds, w.pessimism)

    run(10)
    t0 = time.perf_counter()
    run(steps)
    return (time.perf_counter() - t0) / steps
