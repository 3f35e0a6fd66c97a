"""The ``rl`` network's greedy forward compiled in one call, behind :class:`~simsched.learned.rl.fastnet.NumpyActor`.

Imported only when numba is installed (extra ``simsched[fast]``); numba caches the machine code next to
this file, so only the first run on a machine pays the compilation (a few seconds).  Without numba the
actor keeps its numpy path (the same actions; see :mod:`simsched.learned.rl.fastnet`).

One :func:`act` per placement does what the numpy path does in about a hundred numpy calls: the first
round's per-row products of the rows whose node features changed (kept in place in the caller's
buffers), the processor embedding, the job and global summaries' round-invariant parts, every
message-passing round (a dense row product, the CSR propagation over predecessors and successors,
the job and global means), the task head on the ready rows, the processor head for the chosen task and
both greedy log-softmax choices.  Every product is a plain loop with a fixed summation order (``k``
ascending, the output row vectorised across its columns, no ``fastmath``), so a row's result depends
on that row's inputs alone: a row computed because its features changed equals the same row computed
with all others (the caches are exact by construction) and equal rows give equal logits (ties stay
ties, and ``argmax`` takes the first, as torch's).  Logits differ from torch's only by the order of
float32 additions and the last-bit rounding of ``tanh``/``exp``/``log`` (measured in
``tests/test_rl_fastnet.py`` and the decision-CPU section of ``docs/rl.md``).

Cost per placement O(c F H + layers (n H^2 + (n + e) H + J H^2) + k H^2 + m H^2) for c changed rows, n
observed tasks, e edges, J jobs, k ready tasks, m processors: the numpy path's arithmetic without its
per-call overhead.  Architecture: Decima (Mao et al., SIGCOMM 2019) / READYS (Grinsztajn et al., 2021).
"""

from __future__ import annotations

import numba
import numpy as np

from simsched.readonly import inputs_read_only

NEG = np.float32(-1e9)
TINY = np.float32(1e-30)


@numba.njit(cache=True, error_model="numpy")
def _tanh(x):  # pragma: no cover - compiled
    """``tanh`` of a float32, rounded from a float64 evaluation: ``(1 - e) / (1 + e)`` with ``e =
    exp(-2 |x|)`` as ``exp(y / 32) ** 32`` (Taylor to degree 12 on [-0.6, 0], relative error below
    1e-11), the odd series below ``|x| = 1e-3`` where ``1 - e`` cancels, 1 from ``|x| = 9.5`` (where
    float32's tanh is 1).  Pure arithmetic, so a loop of it vectorises (libm's ``tanhf`` does not,
    and cost 48 ns an element here); the correctly rounded float32 tanh at all but about 1e-7 of
    inputs, 1 ulp off there (numpy's float32 tanh is 1 ulp off at 21%, torch's at 0.05%).  Finite
    inputs (observations are cleaned of NaN and inf)."""
    a = abs(np.float64(x))
    a = a if a < 9.5 else 9.5
    y = a * (-2.0 / 32.0)
    e = 1.0 + y * (1.0 + y * (1.0 / 2 + y * (1.0 / 6 + y * (1.0 / 24 + y * (1.0 / 120 + y * (1.0 / 720 + y * (
        1.0 / 5040 + y * (1.0 / 40320 + y * (1.0 / 362880 + y * (1.0 / 3628800 + y * (1.0 / 39916800 + y * (
            1.0 / 479001600))))))))))))
    e = e * e
    e = e * e
    e = e * e
    e = e * e
    e = e * e
    t = (1.0 - e) / (1.0 + e)
    s = a * a
    t = t if a >= 1e-3 else a * (1.0 - s * (1.0 / 3 - s * (2.0 / 15)))
    return np.float32(np.copysign(t, x))


@numba.njit(cache=True, error_model="numpy")
def _row(a, w, out):  # pragma: no cover - compiled
    """``out[:] = a @ w`` for a vector ``a`` (k ascending, columns vectorised)."""
    out[:] = 0
    for k in range(a.shape[0]):
        ak = a[k]
        for j in range(w.shape[1]):
            out[j] += ak * w[k, j]


@numba.njit(cache=True, error_model="numpy")
def _rows(a, w, out):  # pragma: no cover - compiled
    """``out = a @ w`` row by row (each row as :func:`_row`)."""
    for i in range(a.shape[0]):
        _row(a[i], w, out[i])


@numba.njit(cache=True, error_model="numpy")
def first_round(nodes, last, valid, w_nodes, b_inp, w_first, nw, h0, x0):  # pragma: no cover - compiled
    """``nw = nodes @ w_nodes``, ``h0 = tanh(nw[:, :H] + b_inp)``, ``x0 = h0 @ w_first`` in place for the
    rows whose features differ from ``last`` (all rows when not ``valid`` or when more than half
    changed: the numpy path's rule), then ``last[:] = nodes``.  O(n F + c (F + H) H)."""
    n, f = nodes.shape
    H = b_inp.shape[0]
    changed = np.empty(n, dtype=np.bool_)
    count = 0
    for i in range(n):
        diff = not valid
        if valid:
            for c in range(f):
                if nodes[i, c] != last[i, c]:
                    diff = True
                    break
        changed[i] = diff
        count += diff
    if count * 2 > n:
        changed[:] = True
    for i in range(n):
        if changed[i]:
            _row(nodes[i], w_nodes, nw[i])
            for j in range(H):
                h0[i, j] = _tanh(nw[i, j] + b_inp[j])
            _row(h0[i], w_first, x0[i])
            for c in range(f):
                last[i, c] = nodes[i, c]


@numba.njit(cache=True, error_model="numpy")
def _summaries(h, task_job, n_jobs, w_sum_job, w_sum_glob, const, u_job, u_glob, mean):  # pragma: no cover
    """``u_job = tanh(segment_mean(h, task_job) W + const[:J, :H])``, ``u_glob = tanh(mean(h) W +
    const[J, H:])`` (empty means are zero, as torch's).  O(n H + J H^2)."""
    n, H = h.shape
    J = n_jobs
    sums = np.zeros((J + 1, H), dtype=np.float32)
    cnt = np.zeros(J + 1, dtype=np.int64)
    for i in range(n):
        j = task_job[i]
        cnt[j] += 1
        for c in range(H):
            sums[j, c] += h[i, c]
            sums[J, c] += h[i, c]
    cnt[J] = n
    for j in range(J + 1):
        d = np.float32(max(cnt[j], 1))
        for c in range(H):
            mean[c] = sums[j, c] / d
        if j < J:
            _row(mean, w_sum_job, u_job[j])
            for c in range(H):
                u_job[j, c] = _tanh(u_job[j, c] + const[j, c])
        else:
            _row(mean, w_sum_glob, u_glob)
            for c in range(H):
                u_glob[c] = _tanh(u_glob[c] + const[J, H + c])


@numba.njit(cache=True, error_model="numpy")
def encode(h0, x0, indptr, indices, vals, task_job, n_jobs, procs, jobs, glob,
           proc0_w, proc0_b, proc2_w, proc2_b, w_job_f, b_job, w_glob_f, w_glob_p, b_glob,
           w_hfb, w_lj, w_lg, b_l, w_sum_job, w_sum_glob):  # pragma: no cover - compiled
    """``(h, p, job, g)`` of :meth:`GraphEncoder.forward` for one observation from the first round's
    ``h0`` and ``x0 = h0 W_hfb[0]`` (see the module docstring).  O(layers (n H^2 + (n + e) H + J H^2) +
    m H^2)."""
    n, H = h0.shape
    J = n_jobs
    m = procs.shape[0]
    L = w_hfb.shape[0]
    p1 = np.empty((m, H), dtype=np.float32)
    p = np.empty((m, H), dtype=np.float32)
    pmean = np.zeros(H, dtype=np.float32)
    for q in range(m):
        _row(procs[q], proc0_w, p1[q])
        for c in range(H):
            p1[q, c] = _tanh(p1[q, c] + proc0_b[c])
        _row(p1[q], proc2_w, p[q])
        for c in range(H):
            p[q, c] = _tanh(p[q, c] + proc2_b[c])
            pmean[c] += p[q, c]
    if m > 0:
        dm = np.float32(m)
        for c in range(H):
            pmean[c] = pmean[c] / dm
    # the summaries' parts no round changes: jobs' in const[:J, :H], the global one in const[J, H:]
    const = np.zeros((J + 1, 2 * H), dtype=np.float32)
    tmp = np.empty(H, dtype=np.float32)
    for j in range(J):
        _row(jobs[j], w_job_f, tmp)
        for c in range(H):
            const[j, c] = tmp[c] + b_job[c]
    _row(glob, w_glob_f, tmp)
    gp = np.empty(H, dtype=np.float32)
    _row(pmean, w_glob_p, gp)
    for c in range(H):
        const[J, H + c] = tmp[c] + gp[c] + b_glob[c]
    h = h0.copy()
    x = np.empty((n, 3 * H), dtype=np.float32)
    pre = np.empty(H, dtype=np.float32)
    u_job = np.empty((J, H), dtype=np.float32)
    u_glob = np.empty(H, dtype=np.float32)
    v_job = np.empty((J, H), dtype=np.float32)
    v_glob = np.empty(H, dtype=np.float32)
    for layer in range(L):
        _summaries(h, task_job, J, w_sum_job, w_sum_glob, const, u_job, u_glob, tmp)
        for j in range(J):
            _row(u_job[j], w_lj[layer], v_job[j])
        _row(u_glob, w_lg[layer], v_glob)
        for c in range(H):
            v_glob[c] += b_l[layer, c]
        src = x0  # the first round's product, kept per row by first_round
        if layer > 0:
            _rows(h, w_hfb[layer], x)
            src = x
        # row i: its own term x[i, :H] (the CSR's diagonal), predecessors' x[j, H:2H], successors' x[k, 2H:]
        for i in range(n):
            pre[:] = 0
            for e in range(indptr[i], indptr[i + 1]):
                col = indices[e]
                r, part = col // 3, (col % 3) * H
                v = vals[e]
                for c in range(H):
                    pre[c] += v * src[r, part + c]
            jt = task_job[i]
            for c in range(H):
                h[i, c] = _tanh(pre[c] + (v_job[jt, c] + v_glob[c])) + h[i, c]
    _summaries(h, task_job, J, w_sum_job, w_sum_glob, const, u_job, u_glob, tmp)
    return h, p, u_job, u_glob


@numba.njit(cache=True, error_model="numpy")
def greedy(logits):  # pragma: no cover - compiled
    """First index of the largest ``logits - max - log(sum exp(logits - max))`` (float32), as the
    numpy path's ``_greedy`` and torch's ``segment_log_softmax`` then ``argmax``.  O(len)."""
    mx = logits[0]
    for i in range(1, logits.shape[0]):
        if logits[i] > mx:
            mx = logits[i]
    s = np.float32(0.0)
    for i in range(logits.shape[0]):
        s += np.exp(logits[i] - mx)
    ls = np.log(max(s, TINY))
    best, best_v = 0, (logits[0] - mx) - ls
    for i in range(1, logits.shape[0]):
        v = (logits[i] - mx) - ls
        if v > best_v:
            best, best_v = i, v
    return best


@numba.njit(cache=True, error_model="numpy")
def heads(h, p, u_job, u_glob, nw, task_job, task_mask, proc_mask, pairs,
          w_task_h, w_task_job, w_task_g, b_task, task2_w, task2_b,
          w_p_h, w_p_p, w_p_pair, w_p_g, b_p, p2_w, p2_b):  # pragma: no cover - compiled
    """The greedy ``(row, processor, task logits, processor logits)``: the task head over the ready
    rows (``nw[:, H:]`` holds the node features' share of its first layer; logits in row order), then
    the processor head for the chosen row, masked processors at ``-1e9``; no ready row: row 0, as
    torch's argmax over all-masked rows.  O(k H^2 + m H^2)."""
    n, H = h.shape
    J = u_job.shape[0]
    m = p.shape[0]
    k = 0
    for i in range(n):
        k += task_mask[i]
    t = 0
    logits = np.empty(k, dtype=np.float32)
    if k > 0:
        jw = np.empty((J, H), dtype=np.float32)
        _rows(u_job, w_task_job, jw)
        gw = np.empty(H, dtype=np.float32)
        _row(u_glob, w_task_g, gw)
        for c in range(H):
            gw[c] = gw[c] + b_task[c]
        ready = np.empty(k, dtype=np.int64)
        hid = np.empty(H, dtype=np.float32)
        out = np.empty(1, dtype=np.float32)
        r = 0
        for i in range(n):
            if task_mask[i]:
                _row(h[i], w_task_h, hid)
                jt = task_job[i]
                for c in range(H):
                    hid[c] = _tanh(hid[c] + jw[jt, c] + nw[i, H + c] + gw[c])
                _row(hid, task2_w, out)
                ready[r] = i
                logits[r] = out[0] + task2_b[0]
                r += 1
        t = ready[greedy(logits)]
    base = np.empty(H, dtype=np.float32)
    _row(h[t], w_p_h, base)
    gp = np.empty(H, dtype=np.float32)
    _row(u_glob, w_p_g, gp)
    for c in range(H):
        base[c] = base[c] + gp[c] + b_p[c]
    a = np.empty(H, dtype=np.float32)
    b = np.empty(H, dtype=np.float32)
    out = np.empty(1, dtype=np.float32)
    pl = np.empty(m, dtype=np.float32)
    for q in range(m):
        _row(p[q], w_p_p, a)
        _row(pairs[t, q], w_p_pair, b)
        for c in range(H):
            a[c] = _tanh(a[c] + b[c] + base[c])
        _row(a, p2_w, out)
        pl[q] = out[0] + p2_b[0] if proc_mask[t, q] else NEG
    return t, greedy(pl), logits, pl


@numba.njit(cache=True, error_model="numpy")
def _clip(x, top):  # pragma: no cover - compiled
    """``np.minimum(np.maximum(x, 0.0), top)`` bit for bit (NaN stays NaN, -0.0 gives +0.0, as numpy's
    maximum returns its second argument on a tie)."""
    if x != x:
        return x
    if x <= 0.0:
        return 0.0
    if x >= top:
        return top
    return x


@numba.njit(cache=True, error_model="numpy")
def _clean(x, top):  # pragma: no cover - compiled
    """``np.nan_to_num(x, nan=0, posinf=top, neginf=0)`` of one float32."""
    if x != x:
        return np.float32(0.0)
    if x == np.inf:
        return np.float32(top)
    if x == -np.inf:
        return np.float32(0.0)
    return x


@numba.njit(cache=True, error_model="numpy")
def observe_fill(base, finish, processor, rows, ready_tasks, ready_rows, open_src, open_dst, indeg, arrival,
                 arrival_feature, now, s, available, idle, speed, W, ct, task_job, cost, job_work, job_arrival,
                 eligible, top):  # pragma: no cover - compiled
    """The per-decision arrays of :func:`simsched.learned.rl.features.observe` (``nodes, procs,
    completion, pairs, jobs, ready, proc_mask``), value for value: the same float64 operations in the
    same order (the weighted counts summed in row order, as ``np.bincount``), cast to float32 where
    numpy assigns into float32, non-finite values cleaned as its ``nan_to_num``.  ``rows``: the task
    of each observed row; ``arrival_feature``: fill the arrival column (all tasks observed).  O(n F +
    e + k m + J)."""
    n, f = base.shape
    m = available.shape[0]
    J = job_work.shape[0]
    nodes = base.copy()
    ready = np.zeros(n, dtype=np.bool_)
    for r in range(ready_rows.shape[0]):
        ready[ready_rows[r]] = True
    done = np.empty(n, dtype=np.bool_)
    procs = np.zeros((m, 4), dtype=np.float32)
    busy_w = np.zeros(m, dtype=np.float64)
    done_work = np.zeros(J, dtype=np.float64)
    for i in range(n):
        t = rows[i]
        d = not np.isnan(finish[t])
        a = processor[t] >= 0
        done[i] = d
        nodes[i, 0] = d
        nodes[i, 1] = a and not d
        nodes[i, 2] = ready[i]
        nodes[i, 3] = not (d or a or ready[i])
        if a and not d:
            q = processor[t]
            busy_w[q] += W[t, q]
        done_work[task_job[i]] += d * cost[i]
        if arrival_feature:
            nodes[i, 10] = _clip((arrival[i] - now) / s, top)
    if open_src.shape[0]:
        open_preds = np.zeros(n, dtype=np.float64)
        for e in range(open_src.shape[0]):
            open_preds[open_dst[e]] += np.isnan(finish[open_src[e]])
        for i in range(n):
            nodes[i, 8] = open_preds[i] / max(indeg[i], 1)
    for q in range(m):
        procs[q, 0] = _clip((available[q] - now) / s, top)
        procs[q, 1] = idle[q]
        procs[q, 2] = speed[q]
        procs[q, 3] = busy_w[q] / s
    completion = np.full((n, m), np.inf)
    pairs = np.zeros((n, m, 4), dtype=np.float32)
    proc_mask = np.zeros((n, m), dtype=np.bool_)
    for r in range(ready_tasks.shape[0]):
        t, i = ready_tasks[r], ready_rows[r]
        best = ct[r, 0]
        for q in range(1, m):
            best = min(best, ct[r, q])
        for q in range(m):
            c = ct[r, q]
            completion[i, q] = c
            proc_mask[i, q] = eligible[t, q]
            if np.isfinite(c):
                pairs[i, q, 0] = _clip((c - now) / s, top)
                pairs[i, q, 1] = _clip(W[t, q] / s, top)
                pairs[i, q, 2] = _clip((c - best) / s, top)
                pairs[i, q, 3] = c <= best
    jobs = np.zeros((J, 4), dtype=np.float32)
    for j in range(J):
        jobs[j, 0] = done_work[j] / max(job_work[j], 1e-12)
        jobs[j, 1] = _clip((job_work[j] - done_work[j]) / s, top)
        arrived = job_arrival[j] <= now
        jobs[j, 2] = _clip((now - job_arrival[j]) / s, top) if arrived else 0.0
        jobs[j, 3] = arrived
    for a in (nodes.ravel(), procs.ravel(), pairs.ravel(), jobs.ravel()):
        for x in range(a.shape[0]):
            a[x] = _clean(a[x], top)
    return nodes, procs, completion, pairs, jobs, ready, proc_mask, done


@numba.njit(cache=True, error_model="numpy")
def open_rows(jobs, finish, job_arrival, arrival, now, last):  # pragma: no cover - compiled
    """``(open_jobs, rows, every, same)`` for :func:`simsched.learned.rl.features._rows_of`: the jobs
    that have arrived and have an unfinished task, the tasks of those jobs that have arrived (``rows``,
    ascending), whether that is every task, and whether ``rows`` equals ``last``.  O(N + J) for N
    tasks."""
    n_jobs = job_arrival.shape[0]
    open_jobs = np.zeros(n_jobs, dtype=np.bool_)
    for t in range(jobs.shape[0]):
        if np.isnan(finish[t]):
            open_jobs[jobs[t]] = True
    for j in range(n_jobs):
        open_jobs[j] = open_jobs[j] and job_arrival[j] <= now
    rows = np.empty(jobs.shape[0], dtype=np.int64)
    n = 0
    for t in range(jobs.shape[0]):
        if open_jobs[jobs[t]] and arrival[t] <= now:
            rows[n] = t
            n += 1
    every = n == jobs.shape[0]
    for j in range(n_jobs):
        every = every and open_jobs[j]
    same = n == last.shape[0]
    if same:
        for i in range(n):
            if rows[i] != last[i]:
                same = False
                break
    return open_jobs, rows[:n], every, same


# The entry points that write none of their arguments take them read-only: one compiled version each,
# whatever writability the caller's arrays have (simsched.readonly); first_round fills h0 and x0.
encode = inputs_read_only(encode)
heads = inputs_read_only(heads)
observe_fill = inputs_read_only(observe_fill)
open_rows = inputs_read_only(open_rows)
