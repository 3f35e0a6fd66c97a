"""Policies for autotuning jobs sharing servers, and Ansor's gradient task scheduler.

The policies implement :class:`~simsched.simulator.autotune_engine.AutotunePolicy`: at each decision
point the engine asks ``select(view)`` for one :class:`~simsched.simulator.autotune_engine.Grant`
at a time.  Baselines and the thesis idea of issue 6 ("load-aware scheduling of autotuning jobs"):
the scheduler knows which stage uses which resource (build and update load the host CPU, measure
needs a device exclusively) and which resources are free, and interleaves stages of different jobs
without ever co-locating conflicting ones.

They are registered in :mod:`simsched.schedulers.registry` with kind ``autotune`` (so ``simsched
list`` and ``check`` see them); the autotuning runner creates them from there.  Task schedulers (which task of a job
gets the next round of trials) are in :data:`TASK_SCHEDULERS`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simsched.simulator.autotune_engine import EngineView, Grant, HostState, Request
from simsched.workloads.autotuning import LatencyCurves, round_robin

# ------------------------------------------------------------------ helpers


def _free_device(view: EngineView, req: Request, h: int) -> int | None:
    devs = view.hosts[h].free_devices(view.jobs[req.job].target)
    return devs[0].index if devs else None


def _grant(view: EngineView, req: Request, h: int) -> Grant | None:
    """``req`` granted on host ``h``: a measurement on a free device of its job's target (None while
    there is none), any other stage on the host's cores.  O(devices of h)."""
    if req.kind != "measure":
        return Grant(req, h)
    d = _free_device(view, req, h)
    return None if d is None else Grant(req, h, d)


def _admits(view: EngineView, req: Request, h: int, max_jobs: int | None) -> bool:
    host = view.hosts[h]
    if max_jobs is None:
        n = sum(1 for d in host.devices if d.type == view.jobs[req.job].target)
        max_jobs = 2 * n
    return host.jobs < max_jobs


Drain = Callable[[EngineView, HostState], bool]
"""``drain(view, host)``: stop starting CPU stages on ``host`` so that its measurements can start."""


def _fill_drain(view: EngineView, host: HostState) -> bool:
    """Hold new CPU work once the waiting measurements can fill every free device of the host."""
    waiting = [r for r in view.pending if r.kind == "measure" and view.jobs[r.job].host == host.index]
    if not waiting:
        return False
    types = {view.jobs[r.job].target for r in waiting}
    free = sum(len(host.free_devices(t)) for t in types)
    return 0 < free <= len(waiting)


def _conflict_free(view: EngineView, key: Callable[[EngineView, Request], tuple], max_jobs: int | None,
                   drain: Drain = _fill_drain) -> Grant | None:
    """Grant one pending request without co-locating conflicting stages, best ``key`` first.

    Rules per host: a CPU stage (build, update) starts only while no measurement runs on the host,
    ``drain`` does not hold the host for its waiting measurements, and its cores fit in the free
    cores (or the CPU is idle); a measurement starts only on a free device of its type while no
    CPU-heavy stage runs on the host.  CPU stages are considered first, so CPU work of several jobs
    is batched and their measurements then run side by side on the host's devices.
    O(p^2) for p pending requests.
    """
    pend = sorted(view.pending, key=lambda r: key(view, r))
    for req in pend:
        if req.kind == "measure":
            continue
        job = view.jobs[req.job]
        if job.host is not None:
            hosts = [job.host]
        else:
            hosts = sorted((h for h in view.eligible_hosts(req) if _admits(view, req, h, max_jobs)),
                           key=lambda h: (view.hosts[h].jobs, view.hosts[h].demand, h))
        for h in hosts:
            host = view.hosts[h]
            if host.measuring or (host.heavy and view.demand(req, h) > host.free_cores) or drain(view, host):
                continue
            return Grant(req, h)
    for req in pend:
        if req.kind != "measure":
            continue
        h = view.jobs[req.job].host
        grant = None if view.hosts[h].heavy else _grant(view, req, h)
        if grant is not None:
            return grant
    return None


# ------------------------------------------------------------------ policies


class Sequential:
    """One job at a time per server, stages back to back (devices idle during CPU stages).

    Jobs start in submission order on the first server with no job.  Never distorts: a job's own
    stages never overlap.  O(p) per decision for p pending requests.  Source: the baseline of
    issue 6 (how TVM/Ansor jobs are usually run: one after another).
    """

    name = "sequential"
    one_server_per_job = False

    def select(self, view: EngineView) -> Grant | None:
        for req in view.pending:
            job = view.jobs[req.job]
            if job.host is None:
                free = [h for h in view.eligible_hosts(req) if view.hosts[h].jobs == 0]
                if not free:
                    continue
                h = free[0]
            else:
                h = job.host
            grant = _grant(view, req, h)
            if grant is not None:
                return grant
        return None


class Dedicated(Sequential):
    """One server per job — the cost baseline: no waiting, no interference, most device-hours.

    The engine gives every job a copy of the scenario's first server.  O(p) per decision.
    Source: issue 6's cost baseline.
    """

    name = "dedicated"
    one_server_per_job = True

    def select(self, view: EngineView) -> Grant | None:
        for req in view.pending:
            grant = _grant(view, req, req.job)  # server j is job j's own
            if grant is not None:
                return grant
        return None


class Uncontrolled:
    """All jobs run freely side by side: every stage starts as soon as it is requested.

    A job goes to the server with the fewest jobs and measures on its *home* device (the one with the
    fewest jobs homed there), even while another job measures on it or the host CPU is busy — so
    CPU stages slow each other down and measurements get distorted.  O(p + hosts) per decision.
    Source: issue 6's "run freely" baseline.
    """

    name = "uncontrolled"
    one_server_per_job = False
    conflict_free = False  # co-locates by design: the contract's conflict-free property does not apply

    def select(self, view: EngineView) -> Grant | None:
        if not view.pending:
            return None
        req = view.pending[0]
        job = view.jobs[req.job]
        if job.host is None:
            h = min(view.eligible_hosts(req), key=lambda i: (view.hosts[i].jobs, i))
            devs = [d for d in view.hosts[h].devices if d.type == job.target]
            home = min(devs, key=lambda d: (d.homed, d.index))
            home.homed += 1
            job.home_device = home.index
        else:
            h = job.host
        return Grant(req, h, job.home_device if req.kind == "measure" else None)


class LoadAware:
    """The load-aware scheduler: interleave stages of different jobs, never co-locating conflicts.

    Knows that build and update load the host CPU and measure needs a device exclusively, and which
    cores and devices are free.  A measurement starts only on a free device while no CPU-heavy stage
    runs on its host; CPU stages run side by side while their cores fit and no measurement runs
    there.  CPU work of several jobs is batched until the waiting measurements can fill the host's
    free devices; then no new CPU stage starts, the CPU drains and the measurements run side by side.
    Requests are served oldest first; a new job goes to the server with the fewest jobs, at most
    ``max_jobs_per_host`` (default: 2 per device of its type).  Zero distorted measurements by
    construction.  O(p^2) per decision for p pending requests (p <= jobs).  Source: the "load-aware
    scheduling of autotuning jobs" thesis idea as described in issue 6.
    """

    name = "load-aware"
    one_server_per_job = False

    def __init__(self, max_jobs_per_host: int | None = None) -> None:
        self.max_jobs_per_host = max_jobs_per_host

    def _key(self, view: EngineView, req: Request) -> tuple:
        return (req.seq,)

    def select(self, view: EngineView) -> Grant | None:
        return _conflict_free(view, self._key, self.max_jobs_per_host)


class Predictive(LoadAware):
    """Load-aware plus stage-duration estimates: shortest stage first, keep the devices busy.

    Same conflict rules as :class:`LoadAware` (zero distortion), but among waiting CPU stages builds
    go first (each feeds a device measurement next), then updates, each shortest-estimated first;
    measurements shortest first.  O(p^2) per decision.  Source: the future-work direction of the
    load-aware thesis as described in issue 6 (use duration estimates).
    """

    name = "predictive"

    def _key(self, view: EngineView, req: Request) -> tuple:
        rank = {"measure": 0, "build": 1, "update": 2}[req.kind]
        return (rank, view.estimate(req), req.seq)




# ------------------------------------------------------------------ task scheduling within a job


class GradientTaskScheduler:
    """Ansor's gradient task scheduler: give the next round to the task whose tuning most reduces
    the model's latency.

    Objective ``f = sum_i w_i g_i(t_i)`` (weighted best latencies).  After one warm-up round per task
    (round-robin), each round goes to ``argmin_i w_i * (alpha * backward_i + (1 - alpha) *
    min(-g_i / t_i, beta * C_i / max_{k in N(i)} V_k - g_i))`` where ``backward_i`` is the latency
    drop per trial over the last ``window`` rounds of task i, ``C_i`` its FLOPs, ``V_k = C_k / g_k``
    the throughput reached by similar tasks N(i) (same op); with probability ``eps`` a random task
    (epsilon-greedy).  Defaults ``alpha=0.2, beta=2, window=3, eps=0.05`` as in the paper/TVM.
    O(R k) for R rounds, k tasks.  Source: Zheng et al., "Ansor: Generating High-Performance Tensor
    Programs for Deep Learning", OSDI 2020, Section 6 (task scheduler).
    """

    name = "gradient"

    def __init__(self, alpha: float = 0.2, beta: float = 2.0, window: int = 3, eps: float = 0.05) -> None:
        self.alpha, self.beta, self.window, self.eps = alpha, beta, window, eps

    def __call__(self, curves: LatencyCurves, n_rounds: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        k = len(curves.base)
        ops = np.array(curves.ops, dtype=object)
        same_op = ops[:, None] == ops[None, :]
        trials = np.zeros(k)
        out = np.empty(n_rounds, dtype=np.int64)
        dt = self.window * batch_size
        for r in range(n_rounds):
            if r < k:
                i = r
            elif rng.random() < self.eps:
                i = int(rng.integers(k))
            else:
                g = curves.latency(trials)
                back = (g - curves.latency(np.maximum(trials - dt, 0.0))) / dt
                speed = curves.flops / g
                best_similar = np.where(same_op, speed[None, :], 0.0).max(axis=1)
                optimistic = np.minimum(-g / trials, self.beta * curves.flops / best_similar - g)
                i = int(np.argmin(curves.weight * (self.alpha * back + (1 - self.alpha) * optimistic)))
            out[r] = i
            trials[i] += batch_size
        return out


TASK_SCHEDULERS: dict[str, Callable] = {
    "round-robin": lambda: round_robin,
    "gradient": GradientTaskScheduler,
}
"""Task schedulers by name: each value builds an :data:`~simsched.workloads.autotuning.Allocator`."""
