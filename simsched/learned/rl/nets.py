"""The agents' networks, in plain torch: a message-passing GNN encoder and the two-step policy.

* :class:`GraphEncoder`: task embeddings by ``layers`` rounds of message passing over the DAG in
  both directions (mean over predecessors, mean over successors), each round also reading the
  task's job summary and the graph's global summary; then per-job summaries (mean of the job's task
  embeddings with the job features) and a global summary (mean of tasks, mean of processors, global
  features).  The global summary is the latent state ``z`` the world model works on.
* :class:`ActorCritic`: a task head scoring every task from (task, job, global) embeddings, then a
  processor head scoring each processor for the *chosen* task from (task, processor, pair
  features, global); invalid choices are masked to ``-inf``; a value head on the global summary.

Graphs of a batch are a disjoint union (offset indices), so any number of tasks and processors
works.  Cost per forward O(layers x (n + e) x hidden^2).  Architecture in the spirit of Decima (Mao
et al., SIGCOMM 2019) and READYS (Grinsztajn et al., 2021).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from simsched.learned.rl.features import (
    GLOBAL_FEATURES,
    JOB_FEATURES,
    NODE_FEATURES,
    PAIR_FEATURES,
    PROC_FEATURES,
    Observation,
)

NEG = -1e9


def mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.Tanh(), nn.Linear(h, o))


@dataclass
class Batch:
    """A disjoint union of observations as tensors (``*_graph``: owning graph of each row)."""

    nodes: torch.Tensor
    src: torch.Tensor
    dst: torch.Tensor
    node_graph: torch.Tensor
    procs: torch.Tensor
    proc_graph: torch.Tensor
    proc_offset: torch.Tensor  # (B,) first processor row of each graph
    jobs: torch.Tensor
    task_job: torch.Tensor  # global job row of each task
    job_graph: torch.Tensor
    globals: torch.Tensor
    task_mask: torch.Tensor  # (sum n,) bool
    node_offset: torch.Tensor  # (B,)
    n_procs: torch.Tensor  # (B,)
    obs: Sequence[Observation]

    @property
    def size(self) -> int:
        return int(self.globals.shape[0])


def collate(obs: Sequence[Observation]) -> Batch:
    """Stack observations into one :class:`Batch`.  O(total size)."""
    n = np.array([o.nodes.shape[0] for o in obs])
    m = np.array([o.procs.shape[0] for o in obs])
    J = np.array([o.jobs.shape[0] for o in obs])
    no = np.concatenate([[0], np.cumsum(n)[:-1]])
    po = np.concatenate([[0], np.cumsum(m)[:-1]])
    jo = np.concatenate([[0], np.cumsum(J)[:-1]])
    edges = np.concatenate([o.edges + no[i] for i, o in enumerate(obs)], axis=1)
    B = len(obs)
    t = torch.from_numpy
    return Batch(
        nodes=t(np.concatenate([o.nodes for o in obs])).float(),
        src=t(edges[0]).long(), dst=t(edges[1]).long(),
        node_graph=t(np.repeat(np.arange(B), n)).long(),
        procs=t(np.concatenate([o.procs for o in obs])).float(),
        proc_graph=t(np.repeat(np.arange(B), m)).long(),
        proc_offset=t(po).long(),
        jobs=t(np.concatenate([o.jobs for o in obs])).float(),
        task_job=t(np.concatenate([o.task_job + jo[i] for i, o in enumerate(obs)])).long(),
        job_graph=t(np.repeat(np.arange(B), J)).long(),
        globals=t(np.stack([o.globals for o in obs])).float(),
        task_mask=t(np.concatenate([o.task_mask for o in obs])),
        node_offset=t(no).long(), n_procs=t(m).long(), obs=obs)


def segment_mean(x: torch.Tensor, seg: torch.Tensor, size: int) -> torch.Tensor:
    out = torch.zeros(size, x.shape[1], dtype=x.dtype).index_add_(0, seg, x)
    cnt = torch.zeros(size, dtype=x.dtype).index_add_(0, seg, torch.ones_like(seg, dtype=x.dtype))
    return out / cnt.clamp(min=1.0)[:, None]


def segment_log_softmax(logits: torch.Tensor, seg: torch.Tensor, size: int) -> torch.Tensor:
    mx = torch.full((size,), NEG, dtype=logits.dtype).scatter_reduce(0, seg, logits, "amax")
    z = (logits - mx[seg]).exp()
    s = torch.zeros(size, dtype=logits.dtype).index_add_(0, seg, z)
    return logits - mx[seg] - s[seg].clamp(min=1e-30).log()


class GraphEncoder(nn.Module):
    """Task, job and global embeddings of a :class:`Batch` (see the module docstring)."""

    def __init__(self, hidden: int = 64, layers: int = 3, global_features: int | None = None) -> None:
        super().__init__()
        self.hidden = hidden
        global_features = GLOBAL_FEATURES if global_features is None else global_features
        self.inp = nn.Linear(NODE_FEATURES, hidden)
        self.proc_inp = mlp(PROC_FEATURES, hidden, hidden)
        self.job_inp = nn.Linear(JOB_FEATURES + hidden, hidden)
        self.glob_inp = nn.Linear(global_features + 2 * hidden, hidden)
        self.layers = nn.ModuleList(nn.Linear(5 * hidden, hidden) for _ in range(layers))

    def summaries(self, b: Batch, h: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nj = b.jobs.shape[0]
        job = torch.tanh(self.job_inp(torch.cat([b.jobs, segment_mean(h, b.task_job, nj)], 1)))
        g = torch.tanh(self.glob_inp(torch.cat([b.globals, segment_mean(h, b.node_graph, b.size),
                                                segment_mean(p, b.proc_graph, b.size)], 1)))
        return job, g

    def forward(self, b: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(h, p, job, g)``: task (sum n, H), processor (sum m, H), job (sum J, H), global (B, H)."""
        h = torch.tanh(self.inp(b.nodes))
        p = torch.tanh(self.proc_inp(b.procs))
        nn_ = h.shape[0]
        for layer in self.layers:
            fwd = segment_mean(h[b.src], b.dst, nn_)  # from predecessors
            bwd = segment_mean(h[b.dst], b.src, nn_)  # from successors
            job, g = self.summaries(b, h, p)
            h = torch.tanh(layer(torch.cat([h, fwd, bwd, job[b.task_job], g[b.node_graph]], 1))) + h
        job, g = self.summaries(b, h, p)
        return h, p, job, g


class ActorCritic(nn.Module):
    """GNN encoder + task head + processor head conditioned on the task + value head.
    ``global_features``: width of the observation's global features (:data:`GLOBAL_FEATURES`, plus
    :data:`~simsched.learned.rl.features.WORLD_OBS` when the world description is observed; None:
    :data:`GLOBAL_FEATURES`)."""

    def __init__(self, hidden: int = 64, layers: int = 3, global_features: int | None = None) -> None:
        super().__init__()
        self.encoder = GraphEncoder(hidden, layers, global_features)
        self.task_head = mlp(3 * hidden + NODE_FEATURES, hidden, 1)
        self.proc_head = mlp(3 * hidden + PAIR_FEATURES, hidden, 1)
        self.value_head = mlp(hidden, hidden, 1)

    def forward(self, b: Batch, tasks: torch.Tensor | None = None, procs: torch.Tensor | None = None,
                greedy: bool = False, generator: torch.Generator | None = None):
        """Sample (or take the given / greedy) actions; returns ``(tasks, procs, logp, entropy,
        value, g)`` with ``tasks``/``procs`` local indices per graph and ``logp`` the joint
        log-probability of the two steps."""
        h, p, job, g = self.encoder(b)
        B = b.size
        tl = self.task_head(torch.cat([h, job[b.task_job], g[b.node_graph], b.nodes], 1)).squeeze(1)
        tl = torch.where(b.task_mask, tl, torch.full_like(tl, NEG))
        tlogp = segment_log_softmax(tl, b.node_graph, B)
        if tasks is None:
            tasks = _choose(tlogp, b.node_graph, b.node_offset, B, greedy, generator)
        gt = b.node_offset + tasks  # global row of the chosen task
        # processor head for the chosen task of each graph
        pair = torch.from_numpy(np.concatenate(
            [o.pairs[int(t)] for o, t in zip(b.obs, tasks.tolist())])).float()
        pmask = torch.from_numpy(np.concatenate(
            [o.proc_mask[int(t)] for o, t in zip(b.obs, tasks.tolist())]))
        pl = self.proc_head(torch.cat([h[gt][b.proc_graph], p, pair, g[b.proc_graph]], 1)).squeeze(1)
        pl = torch.where(pmask, pl, torch.full_like(pl, NEG))
        plogp = segment_log_softmax(pl, b.proc_graph, B)
        if procs is None:
            procs = _choose(plogp, b.proc_graph, b.proc_offset, B, greedy, generator)
        logp = tlogp[gt] + plogp[b.proc_offset + procs]
        ent = _entropy(tlogp, b.node_graph, B) + _entropy(plogp, b.proc_graph, B)
        value = self.value_head(g).squeeze(1)
        return tasks, procs, logp, ent, value, g


    def scores(self, b: Batch, top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For one observation: ``(tlogp, rows, plogp)``: the task head's log-probabilities over the
        observation's rows (about ``-1e9`` where masked), the ``top`` valid rows of highest
        probability (ties: lower row), and the processor head's log-probabilities ``(len(rows), m)``
        for each of them.  One encoder forward.  O(layers x (n + e) x hidden^2 + top x m x hidden^2)."""
        h, p, job, g = self.encoder(b)
        tl = self.task_head(torch.cat([h, job[b.task_job], g[b.node_graph], b.nodes], 1)).squeeze(1)
        tl = torch.where(b.task_mask, tl, torch.full_like(tl, NEG))
        tlogp = torch.log_softmax(tl, 0)
        valid = np.flatnonzero(b.task_mask.numpy())
        rows = valid[np.argsort(-tlogp.numpy()[valid], kind="stable")[:top]]
        o, m = b.obs[0], p.shape[0]
        out = []
        for t in rows:
            pair = torch.from_numpy(o.pairs[int(t)]).float()
            pl = self.proc_head(torch.cat([h[int(t)].expand(m, -1), p, pair, g.expand(m, -1)], 1)).squeeze(1)
            pl = torch.where(torch.from_numpy(o.proc_mask[int(t)]), pl, torch.full_like(pl, NEG))
            out.append(torch.log_softmax(pl, 0))
        procs = torch.stack(out).numpy() if out else np.zeros((0, m))
        return tlogp.numpy(), rows, procs


def network_for(cfg) -> ActorCritic:
    """A fresh :class:`ActorCritic` for a training config (``simsched.learned.rl.config.TrainConfig``):
    its hidden width and rounds, and the world block in the global features when ``world_obs``."""
    from simsched.learned.rl.features import WORLD_OBS

    return ActorCritic(cfg.ppo.hidden, cfg.ppo.layers, GLOBAL_FEATURES + (WORLD_OBS if cfg.world_obs else 0))


def _choose(logp: torch.Tensor, seg: torch.Tensor, offset: torch.Tensor, size: int, greedy: bool,
            generator: torch.Generator | None) -> torch.Tensor:
    if greedy:
        key = logp
    else:  # Gumbel-max sampling per segment
        u = torch.rand(logp.shape, generator=generator).clamp(1e-12, 1 - 1e-12)
        key = logp - (-u.log()).log()
    best = torch.full((size,), -float("inf")).scatter_reduce(0, seg, key, "amax")
    idx = torch.arange(logp.shape[0])
    hit = torch.where(key == best[seg], idx, torch.full_like(idx, logp.shape[0]))
    first = torch.full((size,), logp.shape[0], dtype=torch.long).scatter_reduce(0, seg, hit, "amin")
    return first - offset


def _entropy(logp: torch.Tensor, seg: torch.Tensor, size: int) -> torch.Tensor:
    pr = logp.exp()
    term = torch.where(pr > 0, -pr * logp, torch.zeros_like(pr))
    return torch.zeros(size).index_add_(0, seg, term)
