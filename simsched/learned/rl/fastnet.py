"""The ``rl`` policy network's greedy forward pass outside torch, for decisions at run time.

With numba installed (extra ``simsched[fast]``) :class:`NumpyActor` decides in one compiled call per
placement (:mod:`simsched.learned.rl.fastnet_kernel`, the same actions; :meth:`NumpyActor.logits` and
:func:`torch_logits` compare its logits with torch's); without it, through the numpy calls below.

:class:`NumpyActor` holds the weights of a trained :class:`~simsched.learned.rl.nets.ActorCritic`
as float32 arrays and computes exactly the layers of ``ActorCritic.forward(..., greedy=True)`` for
one :class:`~simsched.learned.rl.features.Observation`: the GNN encoder (message passing over the
arrived DAG in both directions, job and global summaries after every round), the task head over
the ready tasks, then the processor head for the chosen task only; no value head, no batch
bookkeeping.  Same float32 arithmetic, same masking (``-1e9``), same log-softmax and the same
first-index tie rule as torch, so it picks the same actions (``tests/test_rl_fastnet.py`` compares
every placement of whole days).

A round is one dense product ``h @ [W_h | W_f | W_b]`` and one sparse product (:func:`_propagation`:
the task's own term and the means over predecessors and successors), the job and global means one
small dense product (:func:`_means`); no per-task Python loop.  Exact caches, checked at every call:
the index structure while the observed rows are the same (:class:`_Structure`; they change when a
job arrives or finishes) and the first round's per-row products of rows whose node features did not
change (:meth:`NumpyActor._first`).  BLAS is
held to one thread while the agent decides (:func:`single_threaded_blas`, threadpoolctl): matrices
here are a few hundred rows by at most 192 columns, where a thread per core costs several times the
CPU of one (measured on the 2-core test machine: 185 us vs 758 us for one 200 x 320 x 64 product).

Cost per placement O(layers x (n + e) x hidden^2) for n observed tasks and e edges, as torch's, with
about a tenth of its fixed per-call overhead.  Architecture: Decima (Mao et al., SIGCOMM 2019) /
READYS (Grinsztajn et al., 2021), see :mod:`simsched.learned.rl.nets`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
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


def _propagation(src: np.ndarray, dst: np.ndarray, n: int):  # -> scipy.sparse.csr_matrix
    """The (n, 3n) sparse matrix ``A`` with ``(A @ X)[i] = X[3 i] + mean_j X[3 j + 1] + mean_k X[3 k + 2]``
    over the predecessors ``j`` and successors ``k`` of ``i`` (empty means are zero).  With ``X = h @
    [W_h | W_f | W_b]`` seen as (3n, H) (rows interleaved, no copy), one dense and one sparse product
    give a round's ``h W_h + segment_mean(h[src], dst) W_f + segment_mean(h[dst], src) W_b`` (torch's
    means before the product; here after it, the same function).  O(n + e log e) to build, once per
    set of observed rows."""
    from scipy.sparse import csr_matrix

    indeg = np.bincount(dst, minlength=n)
    outdeg = np.bincount(src, minlength=n)
    self_ = np.arange(n)
    row = np.concatenate([self_, dst, src])
    col = np.concatenate([3 * self_, 3 * src + 1, 3 * dst + 2])
    val = np.concatenate([np.ones(n), 1.0 / indeg[dst], 1.0 / outdeg[src]]).astype(np.float32)
    order = np.argsort(row, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(1 + indeg + outdeg, out=indptr[1:])
    return csr_matrix((val[order], col[order], indptr), shape=(n, 3 * n))


def _means(task_job: np.ndarray, n_jobs: int) -> np.ndarray:
    """(J + 1, n) float32 ``M``: ``(M @ h)[:J]`` each job's mean task row (zero for a job with none),
    torch's ``segment_mean(h, task_job, J)``, and ``(M @ h)[J]`` the mean of all rows (zero when
    there are none).  O(J n): a stream has a handful of open jobs."""
    n = task_job.size
    m = np.zeros((n_jobs + 1, n), dtype=np.float32)
    m[task_job, np.arange(n)] = 1.0
    m[n_jobs] = 1.0
    return m / np.maximum(m.sum(1, keepdims=True), 1.0)


class _Structure:
    """The products' index structure of one set of observed rows (edges and jobs), kept while the
    next observation has the same (checked exactly, O(n + e)): rows change only when a job arrives
    or finishes, so most decisions reuse it."""

    __slots__ = ("edges", "task_job", "n_jobs", "prop", "means", "first", "csr", "buffers")

    def __init__(self, obs: Observation, compiled: bool = False) -> None:
        n = obs.nodes.shape[0]
        self.edges, self.task_job, self.n_jobs = obs.edges, obs.task_job, obs.jobs.shape[0]
        self.prop = _propagation(obs.edges[0], obs.edges[1], n)
        self.first: tuple[np.ndarray, ...] | None = None
        """``(nodes, nodes W, h0, h0 W_hfb)`` of the last observation, per row (see ``_first``)."""
        self.buffers: list | None = None
        """The compiled path's ``[last nodes, nodes W, h0, h0 W_hfb, valid]``, updated in place."""
        if compiled:  # the CSR arrays and row jobs as the kernel reads them; no dense mean matrix
            self.csr = (self.prop.indptr.astype(np.int64), self.prop.indices.astype(np.int64),
                        np.ascontiguousarray(self.prop.data, dtype=np.float32))
            self.task_job = np.ascontiguousarray(obs.task_job, dtype=np.int64)
            self.means = None
        else:
            self.csr = None
            self.means = _means(obs.task_job, self.n_jobs)

    def fits(self, obs: Observation) -> bool:
        return (self.n_jobs == obs.jobs.shape[0]
                and (self.edges is obs.edges or np.array_equal(self.edges, obs.edges))
                and (self.task_job is obs.task_job or np.array_equal(self.task_job, obs.task_job)))


class NumpyActor:
    """Greedy actions of a trained ``ActorCritic`` from its ``state_dict`` (see the module
    docstring).  ``act(obs) -> (row, processor)``.  Memory: the weights (about 100k floats).

    Every linear layer over a concatenation ``[a, b, ...] @ W`` is computed as ``a @ W_a + b @ W_b
    + ...`` with each product taken where it is smallest: a mean over neighbours after the product
    (``A (h W) = (A h) W``), a job's or the global summary once per job or once per graph before
    being broadcast to its tasks, the parts of the summaries that no round changes (job, global and
    processor features) once per observation, and the task head only on the ready tasks (masked
    rows get ``-1e9`` and so no probability in torch either).  A round is then one dense product
    ``h @ [W_h | W_f | W_b]``, one sparse product (:func:`_propagation`) and one small product for
    the job and global means.  The same function; float32 rounding differs from torch's only in the
    last bits (the tests compare every decision of whole days).  Input widths (node, processor,
    pair, job and global features) are read from the weights, so any checkpoint of this
    architecture loads."""

    def __init__(self, state: Mapping[str, Any], layers: int, compiled: bool | None = None) -> None:
        st = {k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)) for k, v in state.items()}
        w_inp, self.b_inp = _linear(st, "encoder.inp")
        H = self.b_inp.size
        self.hidden = H
        self.proc0, self.proc2 = _linear(st, "encoder.proc_inp.0"), _linear(st, "encoder.proc_inp.2")
        w, self.b_job = _linear(st, "encoder.job_inp")  # rows: job features, job mean
        self.w_job_f, self.w_job_h = w[:-H], np.ascontiguousarray(w[-H:])
        w, self.b_glob = _linear(st, "encoder.glob_inp")  # rows: global features, task mean, processor mean
        self.w_glob_f, self.w_glob_h, self.w_glob_p = w[:-2 * H], np.ascontiguousarray(w[-2 * H:-H]), w[-H:]
        self.layers = []
        for i in range(layers):
            w, b = _linear(st, f"encoder.layers.{i}")  # rows: h, fwd, bwd, job, g (H each)
            w_hfb = np.ascontiguousarray(np.concatenate([w[:H], w[H:2 * H], w[2 * H:3 * H]], 1))
            blk = np.zeros((2 * H, 2 * H), dtype=np.float32)  # [job | g] @ blk = [job W_job | g W_g]
            blk[:H, :H], blk[H:, H:] = w[3 * H:4 * H], w[4 * H:]
            self.layers.append((w_hfb, blk, b))
        self.w_first = self.layers[0][0] if self.layers else np.zeros((H, 0), dtype=np.float32)  # h0 -> x0
        self.w_sum = np.ascontiguousarray(np.concatenate([self.w_job_h, self.w_glob_h], 1))  # means -> job | g
        w, self.b_task = _linear(st, "task_head.0")  # rows: h, job, g, nodes
        self.w_task_h, self.w_task_job, self.w_task_g = w[:H], w[H:2 * H], w[2 * H:3 * H]
        self.w_nodes = np.ascontiguousarray(np.concatenate([w_inp, w[3 * H:]], 1))  # nodes -> inp | task head
        self.task2 = _linear(st, "task_head.2")
        w, self.b_p = _linear(st, "proc_head.0")  # rows: h, p, pair, g
        self.w_p_h, self.w_p_p, self.w_p_pair, self.w_p_g = w[:H], w[H:2 * H], w[2 * H:-H], w[-H:]
        self.p2 = _linear(st, "proc_head.2")
        self._local = threading.local()  # the cached structure, per thread (agents share an actor)
        self.compiled = compiled_available() if compiled is None else bool(compiled)
        """Decide in one compiled call per placement (:mod:`~simsched.learned.rl.fastnet_kernel`, needs
        numba; the default when it is installed), else through numpy calls: the same actions."""
        self._kernel = None
        if self.compiled:
            from simsched.learned.rl import fastnet_kernel  # fails here, not mid-run

            self._kernel = fastnet_kernel

            c = np.ascontiguousarray
            L = len(self.layers)
            self._enc_w = (*self.proc0, *self.proc2, c(self.w_job_f), self.b_job, c(self.w_glob_f), c(self.w_glob_p),
                           self.b_glob,
                           c(np.stack([w for w, _, _ in self.layers]) if L else np.zeros((0, H, 3 * H), np.float32)),
                           c(np.stack([blk[:H, :H] for _, blk, _ in self.layers]) if L
                             else np.zeros((0, H, H), np.float32)),
                           c(np.stack([blk[H:, H:] for _, blk, _ in self.layers]) if L
                             else np.zeros((0, H, H), np.float32)),
                           c(np.stack([b for _, _, b in self.layers]) if L else np.zeros((0, H), np.float32)),
                           c(self.w_sum[:, :H]), c(self.w_sum[:, H:]))
            self._first_w = (self.w_nodes, self.b_inp, c(self.w_first))
            self._head_w = (c(self.w_task_h), c(self.w_task_job), c(self.w_task_g), self.b_task, c(self.task2[0]),
                            self.task2[1], c(self.w_p_h), c(self.w_p_p), c(self.w_p_pair), c(self.w_p_g), self.b_p,
                            c(self.p2[0]), self.p2[1])

    def structure(self, obs: Observation) -> _Structure:
        """The cached :class:`_Structure` if it fits ``obs``, else a new one (then cached, per
        thread).  O(n + e) to check, O(n J + e log e) to build."""
        st = getattr(self._local, "structure", None)
        if st is None or not st.fits(obs):
            st = self._local.structure = _Structure(obs, self.compiled)
        return st

    def _compiled_encode(self, obs: Observation) -> tuple:
        """:meth:`encode` in compiled code, ``(h, p, job, g, nodes W, structure)``: the first round's
        changed rows updated in the structure's buffers, then every round in one call."""
        k = self._kernel
        H = self.hidden
        st = self.structure(obs)
        nodes = np.ascontiguousarray(obs.nodes, dtype=np.float32)
        buf = st.buffers
        if buf is None or buf[0].shape != nodes.shape:
            n = nodes.shape[0]
            buf = st.buffers = [np.empty_like(nodes), np.empty((n, self.w_nodes.shape[1]), np.float32),
                                np.empty((n, H), np.float32), np.empty((n, self._first_w[2].shape[1]), np.float32),
                                False]
        last, nw, h0, x0, valid = buf
        k.first_round(nodes, last, valid, *self._first_w, nw, h0, x0)
        buf[4] = True
        f32 = np.float32
        h, p, job, g = k.encode(h0, x0, *st.csr, st.task_job, st.n_jobs, np.ascontiguousarray(obs.procs, dtype=f32),
                                np.ascontiguousarray(obs.jobs, dtype=f32), np.ascontiguousarray(obs.globals, dtype=f32),
                                *self._enc_w)
        return h, p, job, g, nw, st

    def encode(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(h, p, job, g, nodes W)`` as :meth:`GraphEncoder.forward` for a batch of one (``g`` of
        shape (H,); ``nodes W``: the node features' product for the task head).  O(layers (n + e) H^2)."""
        if self.compiled:
            h, p, job, g, nw, _ = self._compiled_encode(obs)
            return h, p, job, g, nw[:, self.hidden:]
        n, H = obs.nodes.shape[0], self.hidden
        st = self.structure(obs)
        J, tj = st.n_jobs, st.task_job
        nw, h, x0 = self._first(st, obs.nodes.astype(np.float32, copy=False))
        w, b = self.proc0
        p = np.tanh(obs.procs.astype(np.float32, copy=False) @ w + b)
        w, b = self.proc2
        p = np.tanh(p @ w + b)
        pmean = p.sum(0) / p.shape[0] if p.shape[0] else np.zeros(H, np.float32)  # as p.mean(0)
        # the summaries' parts that no round changes, as (J + 1, 2H): jobs' in [:J, :H], global in [J, H:]
        const = np.zeros((J + 1, 2 * H), dtype=np.float32)
        const[:J, :H] = obs.jobs.astype(np.float32, copy=False) @ self.w_job_f + self.b_job
        const[J, H:] = obs.globals.astype(np.float32, copy=False) @ self.w_glob_f + pmean @ self.w_glob_p + self.b_glob
        means, prop, w_sum = st.means, st.prop, self.w_sum
        for i, (w_hfb, blk, b) in enumerate(self.layers):
            # job and global summaries in one (J + 1, 2H) block: rows [:J] hold tanh(job), row J tanh(g)
            # in their halves; the other halves (bounded junk) meet zeros in blk, adding exact zeros
            u = np.tanh(means @ h @ w_sum + const)
            v = u @ blk
            x = x0 if i == 0 else h @ w_hfb  # (n, 3H) read as (3n, H): own, forward, backward rows interleaved
            pre = np.asarray(prop @ x.reshape(3 * n, H), dtype=np.float32)
            pre += (v[:J, :H] + (v[J, H:] + b))[tj]
            h = np.tanh(pre, out=pre) + h
        u = np.tanh(means @ h @ w_sum + const)
        job, g = u[:J, :H], u[J, H:]
        return h, p, job, g, nw[:, H:]

    def _compiled_heads(self, obs: Observation) -> tuple:
        """``(row, processor, task logits of the ready rows, processor logits of the row)`` in compiled
        code (:func:`~simsched.learned.rl.fastnet_kernel.heads`)."""
        h, p, job, g, nw, st = self._compiled_encode(obs)
        c = np.ascontiguousarray
        return self._kernel.heads(h, p, job, g, nw, st.task_job, c(obs.task_mask), c(obs.proc_mask),
                                  c(obs.pairs, dtype=np.float32), *self._head_w)

    def logits(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, int]:
        """``(task logits of the ready rows in row order, processor logits of the greedy row (-1e9 where
        masked), that row)`` of the compiled path, for comparing with torch's (the bench and tests).
        O(as :meth:`act`)."""
        if not self.compiled:
            raise ValueError("logits: the compiled path only (numba not installed or compiled=False)")
        t, _, tl, pl = self._compiled_heads(obs)
        return tl, pl, int(t)

    def _first(self, st: _Structure, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(nodes W, h0, h0 W_hfb)``: the node features' products, the input embedding
        ``tanh(nodes W_inp + b)`` and the first round's product.  Each is a function of one row's
        node features alone, so rows whose features equal those of the last observation with the
        same structure keep their values and only the changed rows are computed (a decision changes
        a few: the tasks that finished, became ready or were placed).  O(n F + c (F + H) H) for c
        changed rows (all rows the first time)."""
        H = self.hidden
        last = st.first  # read once: the tuple is replaced whole, never changed in place
        if last is not None and last[0].shape == nodes.shape:
            rows = np.flatnonzero((nodes != last[0]).any(axis=1))
            if rows.size * 2 <= nodes.shape[0]:
                nw, h0, x0 = last[1].copy(), last[2].copy(), last[3].copy()
                if rows.size:
                    nw_c = nodes[rows] @ self.w_nodes
                    h_c = np.tanh(nw_c[:, :H] + self.b_inp)
                    nw[rows], h0[rows], x0[rows] = nw_c, h_c, h_c @ self.w_first
                st.first = (nodes.copy(), nw, h0, x0)
                return nw, h0, x0
        nw = nodes @ self.w_nodes
        h0 = np.tanh(nw[:, :H] + self.b_inp)
        x0 = h0 @ self.w_first
        st.first = (nodes.copy(), nw, h0, x0)
        return nw, h0, x0

    def act(self, obs: Observation) -> tuple[int, int]:
        """The greedy ``(observation row, processor)`` of ``ActorCritic.forward(collate([obs]),
        greedy=True)``.  O(layers (n + e) H^2 + (k + m) H^2) for k ready tasks."""
        if self.compiled and obs.nodes.shape[0]:
            t, q, _, _ = self._compiled_heads(obs)
            return int(t), int(q)
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
    """BLAS held to one thread inside the block, the previous limits restored after.  The BLAS
    libraries are found once (threadpoolctl); entering reads and sets their thread counts directly
    (a few us) rather than through ``threadpool_limits`` (about 100 us on the loaded test machine,
    5% of a decision), so an agent enters it once per decision point."""
    libs = _blas_libraries()
    before = [lib.get_num_threads() for lib in libs]
    for lib, n in zip(libs, before):
        if n != 1:
            lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, n in zip(libs, before):
            if n != 1:
                lib.set_num_threads(n)


@functools.lru_cache(maxsize=1)
def compiled_available() -> bool:
    """True when numba is installed (extra ``simsched[fast]``), so the actor decides in compiled code;
    else one warning line per process says the numpy path is used and how to install numba.  O(1)."""
    import importlib.util

    if importlib.util.find_spec("numba") is not None:
        return True
    import warnings

    from simsched.extras import install_hint

    warnings.warn(f"rl decides through numpy calls, several times the CPU per decision of its compiled path "
                  f"(numba not installed; `{install_hint('fast')}` installs it)", stacklevel=2)
    return False


@functools.lru_cache(maxsize=1)
def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of the BLAS libraries loaded with numpy and scipy.  Found once."""
    import scipy.linalg  # noqa: F401 - loaded first (scipy's own BLAS; numba's import loads it too), so it is found
    import scipy.sparse  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


def torch_logits(net: Any, obs: Observation, row: int) -> tuple[np.ndarray, np.ndarray]:
    """The torch network's ``(task logits of the ready rows in row order, processor logits of row
    ``row``, -1e9 where masked)`` for one observation: the layers of ``ActorCritic.forward`` before
    their log-softmax, for comparing with :meth:`NumpyActor.logits`.  Imports torch.  O(as forward)."""
    import torch

    from simsched.learned.rl.nets import NEG as TORCH_NEG
    from simsched.learned.rl.nets import collate

    with torch.no_grad():
        b = collate([obs])
        h, p, job, g = net.encoder(b)
        tl = net.task_head(torch.cat([h, job[b.task_job], g[b.node_graph], b.nodes], 1)).squeeze(1)
        m = p.shape[0]
        pair = torch.from_numpy(np.asarray(obs.pairs[row], dtype=np.float32))
        pl = net.proc_head(torch.cat([h[row].expand(m, -1), p, pair, g.expand(m, -1)], 1)).squeeze(1)
        pl = torch.where(torch.from_numpy(np.asarray(obs.proc_mask[row])), pl, torch.full_like(pl, TORCH_NEG))
    return tl.numpy()[np.asarray(obs.task_mask, dtype=bool)], pl.numpy()


def agreement(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float, bool, bool]:
    """``(largest |difference|, gap between the best two of ``theirs`` (inf with one entry), exact
    tie at the top, safe)`` of two logit vectors over the same entries (masked ones at -1e9 equal in
    both).  ``safe``: the first-index argmax cannot differ by rounding (gap > 2 x difference) or both
    tie exactly where they agree on the first index.  O(len)."""
    if ours.size == 0:
        return 0.0, np.inf, False, True
    diff = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    top = np.sort(theirs.astype(np.float64))[::-1]
    gap = float(top[0] - top[1]) if top.size > 1 else np.inf
    tie = gap == 0.0
    safe = gap > 2 * diff or (tie and int(np.argmax(ours)) == int(np.argmax(theirs)))
    return diff, gap, tie, safe
