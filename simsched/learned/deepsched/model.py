"""The DeepSched network (torch; this module is imported only when a network is built or loaded).

Architecture after the DeepSched paper (a network trained to imitate HEFT), with its known defects
fixed:

* **machine encoder**: Conv1D over the processor axis (kernel 1: permutation-equivariant and blind to
  padding) then fully connected; a masked mean/max pool gives a platform context;
* **task encoder**: one bidirectional GRU over the tasks in arrival order (packed, so padding never
  enters the recurrence) whose *per-step* outputs go through a fully connected layer — the paper's
  code kept only the final state, so every task got the same encoding;
* **DAG-aware variant** (``dag_layers`` > 0): rounds of message passing along the task graph's edges
  (mean over predecessors and over successors, residual update);
* **fusion**: each task encoding stacked with the platform context;
* **classifier**: for every (task, processor) pair, task, machine and pair features (execution time,
  relative speed, eligibility) are summed into a hidden vector and a Conv1D (kernel 1) over the
  task's candidate processors scores them — so the processor count may vary; ineligible and padded
  processors are masked out;
* **regressor**: a Conv1D over the task sequence (kernel 3, inputs masked so padding reads as zeros)
  predicts normalised (start, finish) from the fused encoding and the classifier's expected machine;
* **loss**: cross-entropy on processors + ``mse_weight`` x mean squared error on (start, finish),
  both over real tasks only.

Normalisation is per instance, never by training-set constants: every input feature is given both
as extracted (already divided by the instance's own time scale) and standardised over the real
tasks, processors or eligible pairs of its own instance (masked mean and standard deviation), so a
1,000-task workflow and a 20-task DAG present the network the same value ranges.  Forward cost:
O(n H^2 + m H^2 + n m P) per instance (P = pair_hidden); the pair head runs in task chunks to
bound memory at large n x m.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from simsched.learned.deepsched.features import MACHINE_FEATURES, PAIR_FEATURES, TASK_FEATURES

NEG = -1e9
_PAIR_CHUNK_ELEMENTS = 1 << 22  # tasks x processors x hidden per chunk of the pair head


def instance_norm(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[x, (x - mean) / (std + 0.05)]`` on the last axis, mean and std over the ``mask``-ed entries
    of each instance (the leading axis); masked-out entries read 0 in the standardised half."""
    w = mask.to(x.dtype).unsqueeze(-1)
    dims = tuple(range(1, x.dim() - 1))
    count = w.sum(dim=dims, keepdim=True).clamp_min(1.0)
    mean = (x * w).sum(dim=dims, keepdim=True) / count
    var = (((x - mean) ** 2) * w).sum(dim=dims, keepdim=True) / count
    return torch.cat([x, (x - mean) / (var.sqrt() + 0.05) * w], dim=-1)


class DagLayer(nn.Module):
    """One round of message passing: h += MLP([h, mean over predecessors, mean over successors])."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.msg = nn.Linear(hidden + 1, hidden)
        self.update = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))

    def forward(self, h: torch.Tensor, edges: torch.Tensor, edge_data: torch.Tensor,
                degrees: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """``degrees``: (in, out) degree per flat task, at least 1 (:func:`degrees`; computed if not given)."""
        b, n, hid = h.shape
        flat = h.reshape(b * n, hid)
        if edges.numel() == 0:
            z = torch.zeros_like(flat)
            return h + self.update(torch.cat([flat, z, z], dim=1)).reshape(b, n, hid)
        src, dst = edges[:, 0], edges[:, 1]
        deg_in, deg_out = degrees if degrees is not None else edge_degrees(edges, b * n, h.dtype)
        # msg([h_j, d]) = W_h h_j + (w_d d + bias): the node part once per task, not once per edge
        node = flat @ self.msg.weight[:, :hid].T                                          # (b n, hid)
        edge = torch.addcmul(self.msg.bias, edge_data[:, None], self.msg.weight[:, hid])  # (e, hid)
        down = torch.relu_(node.index_select(0, src).add_(edge))
        up = torch.relu_(node.index_select(0, dst).add_(edge))
        from_pred = torch.zeros_like(flat).index_add_(0, dst, down).div_(deg_in)
        from_succ = torch.zeros_like(flat).index_add_(0, src, up).div_(deg_out)
        return h + self.update(torch.cat([flat, from_pred, from_succ], dim=1)).reshape(b, n, hid)


def edge_degrees(edges: torch.Tensor, rows: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(in, out) degree of each of ``rows`` flat tasks as (rows, 1) columns, clamped to >= 1.  O(e)."""
    ones = torch.ones(edges.shape[0], 1, dtype=dtype, device=edges.device)
    deg_in = torch.zeros(rows, 1, dtype=dtype, device=edges.device).index_add_(0, edges[:, 1], ones)
    deg_out = torch.zeros(rows, 1, dtype=dtype, device=edges.device).index_add_(0, edges[:, 0], ones)
    return deg_in.clamp_min_(1), deg_out.clamp_min_(1)


class DeepSchedNet(nn.Module):
    """Machine encoder + task encoder (+ DAG layers) → fused → pair classifier and time regressor."""

    def __init__(self, hidden: int = 64, machine_hidden: int = 32, gru_layers: int = 1, dag_layers: int = 0,
                 dropout: float = 0.0, pair_hidden: int = 32) -> None:
        super().__init__()
        ft, fm, fp = len(TASK_FEATURES), len(MACHINE_FEATURES), len(PAIR_FEATURES)
        ft, fm, fp = 2 * ft, 2 * fm, 2 * fp  # raw + per-instance standardised copy of each feature
        self.machine_enc = nn.Sequential(nn.Conv1d(fm, machine_hidden, 1), nn.ReLU(),
                                         nn.Conv1d(machine_hidden, machine_hidden, 1), nn.ReLU())
        self.machine_fc = nn.Sequential(nn.Linear(2 * machine_hidden, hidden), nn.ReLU())
        self.task_in = nn.Sequential(nn.Linear(ft, hidden), nn.ReLU())
        self.gru = nn.GRU(hidden, hidden, num_layers=gru_layers, batch_first=True, bidirectional=True,
                          dropout=dropout if gru_layers > 1 else 0.0)
        self.task_fc = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU())
        self.dag = nn.ModuleList(DagLayer(hidden) for _ in range(dag_layers))
        self.fuse = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Dropout(dropout))
        ph = pair_hidden
        self.cls_task = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, ph))
        self.cls_machine = nn.Sequential(nn.Linear(machine_hidden, machine_hidden), nn.ReLU(),
                                         nn.Linear(machine_hidden, ph, bias=False))
        self.cls_pair = nn.Linear(fp, ph, bias=False)
        # kernel-1 Conv1D over the candidate processors, written as a position-wise linear layer on the
        # last axis (the same operation, one matmul); per pair only O(pair_hidden) work, so the
        # classifier costs O(n m pair_hidden) and the O(H^2) layers run per task and per machine
        self.cls_head = nn.Sequential(nn.ReLU(), nn.Linear(ph, 1))
        self.reg = nn.Sequential(nn.Conv1d(hidden + ph + fp, hidden, 3, padding=1), nn.ReLU(),
                                 nn.Conv1d(hidden, 2, 1))

    # ------------------------------------------------------------------ forward
    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, N, M) with ineligible/padded pairs at -1e9, times (B, N, 2))."""
        tmask, pmask, elig = batch["task_mask"], batch["proc_mask"], batch["eligible"]
        b, n = tmask.shape
        # machines: Conv1d over the processor axis, masked pooling → platform context
        mx = instance_norm(batch["machine"], pmask) * pmask[..., None]
        g = self.machine_enc(mx.transpose(1, 2)).transpose(1, 2) * pmask[..., None]     # (B, M, mh)
        count = pmask.sum(1, keepdim=True).clamp_min(1)
        pooled_max = g.masked_fill(~pmask[..., None], NEG).max(1).values
        ctx = self.machine_fc(torch.cat([g.sum(1) / count, pooled_max], dim=1))          # (B, H)
        # tasks: bidirectional GRU over arrival order, per-step outputs
        tx = self.task_in(instance_norm(batch["task"], tmask)) * tmask[..., None]
        lengths = tmask.sum(1).clamp_min(1).cpu()
        if bool((lengths == n).all()):  # no padding: packing would change nothing but cost two copies
            out, _ = self.gru(tx)
        else:
            packed = nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=True, enforce_sorted=False)
            out, _ = self.gru(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=n)
        h = self.task_fc(out) * tmask[..., None]
        degrees = edge_degrees(batch["edges"], b * n, h.dtype) if self.dag and batch["edges"].numel() else None
        for layer in self.dag:
            h = layer(h, batch["edges"], batch["edge_data"], degrees) * tmask[..., None]
        fused = self.fuse(torch.cat([h, ctx[:, None, :].expand(b, n, -1)], dim=2)) * tmask[..., None]
        # classifier over (task, processor) pairs, in task chunks
        pair = instance_norm(batch["pair"], elig & tmask[..., None] & pmask[:, None, :])
        gm = self.cls_machine(g)                                                          # (B, M, H)
        tpart = self.cls_task(fused)                                                      # (B, N, H)
        m, ph = g.shape[1], tpart.shape[2]
        step = max(1, _PAIR_CHUNK_ELEMENTS // max(1, b * m * ph))
        chunks = []
        for lo in range(0, n, step):
            z = tpart[:, lo:lo + step, None, :] + gm[:, None, :, :]
            z += self.cls_pair(pair[:, lo:lo + step])
            chunks.append(self.cls_head(z)[..., 0])
        logits = torch.cat(chunks, dim=1)
        valid = elig & pmask[:, None, :]
        logits = logits.masked_fill(~valid, NEG)
        # regressor: Conv1d over the task sequence on [fused, expected machine, expected pair features]
        prob = torch.softmax(logits, dim=2) * valid
        exp_machine = torch.einsum("bnm,bmh->bnh", prob, gm)
        exp_pair = torch.einsum("bnm,bnmf->bnf", prob, pair)
        r = torch.cat([fused, exp_machine, exp_pair], dim=2) * tmask[..., None]
        times = self.reg(r.transpose(1, 2)).transpose(1, 2)
        return logits, times


def loss_fn(logits: torch.Tensor, times: torch.Tensor, batch: dict[str, torch.Tensor],
            mse_weight: float = 1.0) -> tuple[torch.Tensor, dict[str, float]]:
    """CE on HEFT's processor + ``mse_weight`` x MSE on normalised (start, finish), real tasks only."""
    mask = batch["task_mask"]
    ce = F.cross_entropy(logits[mask], batch["proc"][mask])
    mse = ((times - batch["times"]) ** 2).sum(-1)[mask].mean()
    correct = (logits.argmax(-1) == batch["proc"])[mask].float().mean()
    return ce + mse_weight * mse, {"ce": float(ce.detach()), "mse": float(mse.detach()), "acc": float(correct)}


def collate(records: list[dict], device: str = "cpu", labels: bool = True) -> dict[str, torch.Tensor]:
    """Pad a list of records (see :mod:`simsched.learned.deepsched.data`) into one batch; edges are
    shifted to flat (batch x task) indices.  O(sum of n m)."""
    b = len(records)
    n = max(r["task"].shape[0] for r in records)
    m = max(r["machine"].shape[0] for r in records)
    ft, fm, fp = records[0]["task"].shape[1], records[0]["machine"].shape[1], records[0]["pair"].shape[2]
    task = np.zeros((b, n, ft), np.float32)
    machine = np.zeros((b, m, fm), np.float32)
    pair = np.zeros((b, n, m, fp), np.float32)
    elig = np.zeros((b, n, m), bool)
    tmask = np.zeros((b, n), bool)
    pmask = np.zeros((b, m), bool)
    edges, edata = [], []
    proc = np.zeros((b, n), np.int64)
    times = np.zeros((b, n, 2), np.float32)
    for i, r in enumerate(records):
        ni, mi = r["task"].shape[0], r["machine"].shape[0]
        task[i, :ni], machine[i, :mi], pair[i, :ni, :mi] = r["task"], r["machine"], r["pair"]
        elig[i, :ni, :mi] = r["eligible"]
        tmask[i, :ni], pmask[i, :mi] = True, True
        edges.append(r["edges"] + i * n)
        edata.append(r["edge_data"])
        if labels:
            proc[i, :ni], times[i, :ni] = r["proc"], r["times"]
    out = dict(task=task, machine=machine, pair=pair, eligible=elig, task_mask=tmask, proc_mask=pmask,
               edges=np.concatenate(edges).reshape(-1, 2).astype(np.int64),
               edge_data=np.concatenate(edata).astype(np.float32))
    if labels:
        out.update(proc=proc, times=times)
    return {k: torch.from_numpy(v).to(device) for k, v in out.items()}
