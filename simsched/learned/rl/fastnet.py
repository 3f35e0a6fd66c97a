"""The ``rl`` policy network's greedy forward pass in numpy, for decisions at run time.

:class:`NumpyActor` holds the weights of a trained :class:`~simsched.learned.rl.nets.ActorCritic`
as float32 arrays and computes exactly the layers of ``ActorCritic.forward(..., greedy=True)`` for
one :class:`~simsched.learned.rl.features.Observation`: the GNN encoder (message passing over the
arrived DAG in both directions, job and global summaries after every round), the task head over
the ready tasks, then the processor head for the chosen task only; no value head, no batch
bookkeeping.  Same float32 arithmetic, same masking (``-1e9``), same log-softmax and the same
first-index tie rule as torch, so it picks the same actions (``tests/test_rl_fastnet.py`` compares
every placement of whole days).

The means over predecessors and successors are one sparse product per round
(:func:`_neighbour_means`), a job's mean one small dense product; no per-task Python loop.  BLAS is
held to one thread while the agent decides (:func:`single_threaded_blas`, threadpoolctl): matrices
here are a few hundred rows by at most 192 columns, where a thread per core costs several times the
CPU of one (measured on the 2-core test machine: 185 us vs 758 us for one 200 x 320 x 64 product).

Cost per placement O(layers x (n + e) x hidden^2) for n observed tasks and e edges, as torch's, with
about a tenth of its fixed per-call overhead.  Architecture: Decima (Mao et al., SIGCOMM 2019) /
READYS (Grinsztajn et al., 2021), see :mod:`simsched.learned.rl.nets`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from simsched.learned.rl.features import Observation

NEG = np.float32(-1e9)
"""The mask value of the torch network (:data:`simsched.learned.rl.nets.NEG`)."""


def _linear(state: Mapping[str, Any], key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(W^T, b)`` of a torch ``nn.Linear`` as C-contiguous float32 arrays."""
    w = np.asarray(state[f"{key}.weight"], dtype=np.float32)
    b = np.asarray(state[f"{key}.bias"], dtype=np.float32)
    return np.ascontiguousarray(w.T), b


def _neighbour_means(src: np.ndarray, dst: np.ndarray, n: int):  # -> scipy.sparse.csr_matrix
    """The (n, 2n) sparse matrix ``A`` with ``(A @ X)[i]`` = mean of ``X[2 j]`` over the predecessors
    ``j`` of ``i`` plus mean of ``X[2 j + 1]`` over its successors: with ``X = (h @ [W_f | W_b])``
    seen as (2n, H) (rows interleaved, no copy), one product gives both message-passing terms of a
    round (torch: ``segment_mean(h[src], dst) @ W_f + segment_mean(h[dst], src) @ W_b``; empty means
    are zero).  O(e log e) to build, once per observation."""
    from scipy.sparse import csr_matrix

    indeg = np.bincount(dst, minlength=n)
    outdeg = np.bincount(src, minlength=n)
    row = np.concatenate([dst, src])
    col = np.concatenate([2 * src, 2 * dst + 1])
    val = np.concatenate([1.0 / indeg[dst], 1.0 / outdeg[src]]).astype(np.float32)
    order = np.argsort(row, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(indeg + outdeg, out=indptr[1:])
    return csr_matrix((val[order], col[order], indptr), shape=(n, 2 * n))


def _job_means(task_job: np.ndarray, n_jobs: int) -> np.ndarray:
    """(J, n) float32 ``M`` with ``M @ h`` the mean of each job's task rows (zero for a job with
    none), torch's ``segment_mean(h, task_job, J)``.  O(J n): a stream has a handful of open jobs."""
    m = np.zeros((n_jobs, task_job.size), dtype=np.float32)
    m[task_job, np.arange(task_job.size)] = 1.0
    return m / np.maximum(m.sum(1, keepdims=True), 1.0)


class NumpyActor:
    """Greedy actions of a trained ``ActorCritic`` from its ``state_dict`` (see the module
    docstring).  ``act(obs) -> (row, processor)``.  Memory: the weights (about 100k floats).

    Every linear layer over a concatenation ``[a, b, ...] @ W`` is computed as ``a @ W_a + b @ W_b
    + ...`` with each product taken where it is smallest: a mean over neighbours after the product
    (``A (h W) = (A h) W``), a job's or the global summary once per job or once per graph before
    being broadcast to its tasks, and the task head only on the ready tasks (masked rows get
    ``-1e9`` and so no probability in torch either).  The same function; float32 rounding differs
    from torch's only in the last bits (the test compares whole days' actions)."""

    def __init__(self, state: Mapping[str, Any], layers: int) -> None:
        st = {k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)) for k, v in state.items()}
        w_inp, self.b_inp = _linear(st, "encoder.inp")
        self.proc0, self.proc2 = _linear(st, "encoder.proc_inp.0"), _linear(st, "encoder.proc_inp.2")
        self.job = _linear(st, "encoder.job_inp")
        self.glob = _linear(st, "encoder.glob_inp")
        H = self.b_inp.size
        self.hidden = H
        self.layers = []
        for i in range(layers):
            w, b = _linear(st, f"encoder.layers.{i}")  # rows: h, fwd, bwd, job, g (H each)
            w_fb = np.ascontiguousarray(np.concatenate([w[H:2 * H], w[2 * H:3 * H]], 1))
            self.layers.append((np.ascontiguousarray(w[:H]), w_fb, w[3 * H:4 * H], w[4 * H:], b))
        w, self.b_task = _linear(st, "task_head.0")  # rows: h, job, g, nodes
        self.w_task_h, self.w_task_job, self.w_task_g = w[:H], w[H:2 * H], w[2 * H:3 * H]
        self.w_nodes = np.ascontiguousarray(np.concatenate([w_inp, w[3 * H:]], 1))  # nodes -> inp | task head
        self.task2 = _linear(st, "task_head.2")
        w, self.b_p = _linear(st, "proc_head.0")  # rows: h, p, pair, g
        self.w_p_h, self.w_p_p, self.w_p_pair, self.w_p_g = w[:H], w[H:2 * H], w[2 * H:-H], w[-H:]
        self.p2 = _linear(st, "proc_head.2")

    def _summaries(self, jobs: np.ndarray, glob: np.ndarray, h: np.ndarray, pmean: np.ndarray,
                   by_job: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w, b = self.job
        job = np.tanh(np.concatenate([jobs, by_job @ h], 1) @ w + b)
        hmean = h.mean(0) if h.shape[0] else np.zeros(self.hidden, np.float32)
        w, b = self.glob
        g = np.tanh(np.concatenate([glob, hmean, pmean]) @ w + b)
        return job, g

    def encode(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(h, p, job, g, nodes W)`` as :meth:`GraphEncoder.forward` for a batch of one (``g`` of
        shape (H,); ``nodes W``: the node features' product for the task head).  O(layers (n + e) H^2)."""
        n, H = obs.nodes.shape[0], self.hidden
        src, dst = obs.edges[0], obs.edges[1]
        neighbours = _neighbour_means(src, dst, n)
        by_job = _job_means(obs.task_job, obs.jobs.shape[0])
        jobs = obs.jobs.astype(np.float32, copy=False)
        glob = obs.globals.astype(np.float32, copy=False)
        nw = obs.nodes.astype(np.float32, copy=False) @ self.w_nodes
        h = np.tanh(nw[:, :H] + self.b_inp)
        w, b = self.proc0
        p = np.tanh(obs.procs.astype(np.float32, copy=False) @ w + b)
        w, b = self.proc2
        p = np.tanh(p @ w + b)
        pmean = p.mean(0) if p.shape[0] else np.zeros(H, np.float32)
        tj = obs.task_job
        for w_h, w_fb, w_job, w_g, b in self.layers:
            job, g = self._summaries(jobs, glob, h, pmean, by_job)
            hw, fb = h @ w_h, h @ w_fb  # fb (n, 2H) read as (2n, H): forward and backward rows interleaved
            pre = hw + np.asarray(neighbours @ fb.reshape(2 * n, H), dtype=np.float32) + (job @ w_job)[tj]
            h = np.tanh(pre + (g @ w_g + b)) + h
        job, g = self._summaries(jobs, glob, h, pmean, by_job)
        return h, p, job, g, nw[:, H:]

    def act(self, obs: Observation) -> tuple[int, int]:
        """The greedy ``(observation row, processor)`` of ``ActorCritic.forward(collate([obs]),
        greedy=True)``.  O(layers (n + e) H^2 + (k + m) H^2) for k ready tasks."""
        h, p, job, g, nw = self.encode(obs)
        ready = np.flatnonzero(obs.task_mask)
        if ready.size:
            hid = np.tanh(h[ready] @ self.w_task_h + (job @ self.w_task_job)[obs.task_job[ready]] + nw[ready]
                          + (g @ self.w_task_g + self.b_task))
            w, b = self.task2
            t = int(ready[_greedy((hid @ w + b)[:, 0])])
        else:  # nothing ready: torch's argmax over all-masked rows is row 0
            t = 0
        pair = obs.pairs[t].astype(np.float32, copy=False)
        hid = np.tanh(p @ self.w_p_p + pair @ self.w_p_pair + (h[t] @ self.w_p_h + g @ self.w_p_g + self.b_p))
        w, b = self.p2
        pl = (hid @ w + b)[:, 0]
        return t, _greedy(np.where(obs.proc_mask[t], pl, NEG))


def _greedy(logits: np.ndarray) -> int:
    """First index of the largest log-softmax value, computed as torch's ``segment_log_softmax``
    (float32: the same rounding, so the same ties).  O(len)."""
    mx = logits.max()
    s = np.exp(logits - mx).sum(dtype=np.float32)
    logp = logits - mx - np.log(max(s, np.float32(1e-30)))
    return int(np.argmax(logp))


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """BLAS held to one thread inside the block (threadpoolctl; the previous limits restored after).
    About 40 us per entry, so an agent enters it once per decision point, not per placement."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield


_CONTROLLER = None
