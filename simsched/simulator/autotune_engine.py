"""SimPy model of autotuning jobs sharing servers: stages, interference, and the policy interface.

Servers (hosts) have CPU cores and devices (GPUs; every host also has an implicit ``cpu`` device on
which CPU-target jobs measure).  Each job (a :class:`~simsched.workloads.autotuning.JobPlan`) is a
SimPy process that loops build → measure → update per round.  Before each stage it files a
:class:`Request`; a policy decides when the request starts and where (:class:`AutotunePolicy`).

Resources are processor-sharing SimPy servers (:class:`SharedServer`):

* a host's CPU: the CPU-heavy stages (build, update) running on it all progress at rate
  ``1 / f`` with ``f = max(1 + cpu_slowdown * (k - 1), demand / cores)`` for ``k`` concurrent
  stages demanding ``demand`` cores in all — two concurrent updates take +64% by default
  (issue 6), two all-core builds take twice as long;
* a device: measurements share it by time slicing (``f = k``) — only the ``uncontrolled`` baseline
  ever lets that happen.

Interference is *visible*: a measurement is **distorted** when, at any moment while it runs, a
CPU-heavy stage runs on its host or another measurement runs on its device.  A job's tuned model
then gets ``distortion_penalty * (distorted trials / trials)`` added to its relative inference
latency (``penalty`` 0.10 = the model ends up 10% slower when every measurement was distorted).

The policy interface is deliberately small — the generic DAG engine's ``OnlinePolicy`` (ready tasks
onto processors) does not fit stage loops.  At every decision point (a request was filed, a stage
finished) the engine calls ``policy.select(view)`` repeatedly, applying each returned
:class:`Grant` at once (so the next call sees the new state), until it returns ``None``.

Deterministic: all randomness is sampled in the job plans; the engine and policies break ties by
index.  Cost: O(events x pending requests) policy work; ~6 SimPy events per stage.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

import numpy as np
import simpy

from simsched.errors import SimschedError
from simsched.workloads.autotuning import STAGES, JobPlan

CPU_STAGES = ("build", "update")
"""Stages that run on (and load) the host's CPU; ``measure`` runs on a device."""


@dataclass(frozen=True)
class ServerSpec:
    """A server: ``cores`` CPU cores and accelerator ``devices`` (their types, e.g. 4 x ``gpu``)."""

    name: str = "server"
    cores: int = 16
    devices: tuple[str, ...] = ("gpu",)

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise SimschedError(f"server {self.name!r}: cores must be >= 1, got {self.cores}")


@dataclass(frozen=True)
class Interference:
    """Interference model: ``cpu_slowdown`` is the extra time per additional concurrent CPU-heavy
    stage on a host (0.64: two updates side by side take 1.64x); ``distortion_penalty`` the relative
    inference-latency loss of a model whose measurements were all distorted."""

    cpu_slowdown: float = 0.64
    distortion_penalty: float = 0.10

    def __post_init__(self) -> None:
        if self.cpu_slowdown < 0 or self.distortion_penalty < 0:
            raise SimschedError("interference: cpu_slowdown and distortion_penalty must be >= 0")


class SharedServer:
    """A processor-sharing resource: every active job progresses at ``1 / factor``.

    ``factor = max(1, 1 + alpha * (k - 1), demand / capacity)`` for ``k`` active jobs of total
    ``demand``.  :meth:`submit` returns an event that fires when the job's ``work`` (seconds at
    factor 1) is done.  One pending timeout per change of the active set; stale ones are ignored.
    """

    __slots__ = ("env", "capacity", "alpha", "jobs", "demand", "factor", "_last", "_gen", "_ids")

    def __init__(self, env: simpy.Environment, capacity: float, alpha: float) -> None:
        self.env, self.capacity, self.alpha = env, float(capacity), float(alpha)
        self.jobs: dict[int, list] = {}
        self.demand = 0.0
        self.factor = 1.0
        self._last = 0.0
        self._gen = 0
        self._ids = 0

    def slowdown(self, k: int, demand: float) -> float:
        """The factor with ``k`` jobs demanding ``demand`` in all."""
        return max(1.0, 1.0 + self.alpha * (k - 1), demand / self.capacity) if k else 1.0

    def _advance(self) -> None:
        now = self.env.now
        if now > self._last and self.jobs:
            done = (now - self._last) / self.factor
            for j in self.jobs.values():
                j[0] -= done
        self._last = now

    def submit(self, work: float, demand: float) -> simpy.Event:
        self._advance()
        ev = self.env.event()
        self._ids += 1
        self.jobs[self._ids] = [float(work), float(demand), ev]
        self.demand += demand
        self._reschedule()
        return ev

    def _reschedule(self) -> None:
        self._gen += 1
        self.factor = self.slowdown(len(self.jobs), self.demand)
        if not self.jobs:
            return
        rem = min(j[0] for j in self.jobs.values())
        gen = self._gen
        self.env.timeout(max(rem, 0.0) * self.factor).callbacks.append(lambda _e: self._tick(gen))

    def _tick(self, gen: int) -> None:
        if gen != self._gen:
            return
        self._advance()
        rem = min(j[0] for j in self.jobs.values())
        for key in [k for k, j in self.jobs.items() if j[0] <= rem + 1e-9]:
            work, demand, ev = self.jobs.pop(key)
            self.demand -= demand
            ev.succeed()
        self._reschedule()


@dataclass(eq=False)
class DeviceState:
    """One device: its global ``index``, ``host``, ``type``; ``running`` measurements now."""

    index: int
    host: int
    type: str
    name: str
    server: SharedServer
    running: int = 0
    homed: int = 0
    busy_time: float = 0.0
    _busy_since: float = 0.0


@dataclass(eq=False)
class HostState:
    """One server's live state: CPU-heavy stages ``heavy`` (using ``demand`` cores), the
    measurements running on its devices, and the unfinished jobs bound to it."""

    index: int
    name: str
    cores: int
    cpu: SharedServer
    devices: list[DeviceState]
    heavy: int = 0
    demand: int = 0
    measuring: int = 0
    jobs: int = 0
    running: list[Stage] = field(default_factory=list)

    @property
    def free_cores(self) -> int:
        return self.cores - self.demand

    def free_devices(self, dtype: str) -> list[DeviceState]:
        return [d for d in self.devices if d.type == dtype and d.running == 0]

    def has(self, dtype: str) -> bool:
        return any(d.type == dtype for d in self.devices)


@dataclass(eq=False)
class JobState:
    """A job's progress: the host it is bound to (after its first stage), start, finish, and the
    distortions seen.  ``home_device`` (and :attr:`DeviceState.homed`) are slots a policy may set."""

    index: int
    plan: JobPlan
    host: int | None = None
    home_device: int | None = None
    started: float | None = None
    finished: float | None = None
    distorted_trials: int = 0
    distorted_measurements: int = 0

    @property
    def target(self) -> str:
        return self.plan.spec.target


@dataclass(eq=False)
class Request:
    """Job ``job`` asks to start stage ``kind`` of round ``rnd``; filed at ``time``."""

    job: int
    kind: str
    rnd: int
    time: float
    seq: int
    done: simpy.Event


@dataclass(eq=False)
class Stage:
    """A running or finished stage."""

    job: int
    rnd: int
    kind: str
    host: int
    device: int
    start: float
    work: float
    configs: int
    end: float = float("nan")
    distorted: bool = False


@dataclass(frozen=True)
class Grant:
    """Start ``request`` now on ``host``; ``device`` (global index) for a measurement, else None."""

    request: Request
    host: int
    device: int | None = None


class EngineView:
    """What a policy sees: the time, hosts, devices, jobs and the pending requests (oldest first).

    Read-only by contract; :meth:`estimate` gives a stage's nominal duration on a host.
    """

    def __init__(self, engine: AutotuneEngine) -> None:
        self._e = engine

    @property
    def now(self) -> float:
        return float(self._e.env.now)

    @property
    def hosts(self) -> list[HostState]:
        return self._e.hosts

    @property
    def devices(self) -> list[DeviceState]:
        return self._e.devices

    @property
    def jobs(self) -> list[JobState]:
        return self._e.jobs

    @property
    def pending(self) -> list[Request]:
        return self._e.pending

    def estimate(self, request: Request, host: int | None = None) -> float:
        """Nominal (uncontended) duration of ``request`` on ``host`` (default: the job's host)."""
        job = self._e.jobs[request.job]
        h = job.host if host is None else host
        cores = self._e.hosts[h if h is not None else 0].cores
        return job.plan.stage_work(request.kind, request.rnd, cores)

    def demand(self, request: Request, host: int) -> int:
        """Cores ``request`` keeps busy on ``host`` (0 for a measurement)."""
        return self._e.jobs[request.job].plan.stage_demand(request.kind, self._e.hosts[host].cores)

    def eligible_hosts(self, request: Request) -> list[int]:
        """Hosts that may run ``request``'s job: its host once bound, else those with its target."""
        job = self._e.jobs[request.job]
        if job.host is not None:
            return [job.host]
        return [h.index for h in self._e.hosts if h.has(job.target)]


@runtime_checkable
class AutotunePolicy(Protocol):
    """Decides when each job's next stage starts and where.

    ``select(view)`` returns one :class:`Grant` for a pending request, or ``None`` to wait for the
    next decision point.  A job is bound to the host of its first granted stage; a measurement must
    name a device of the job's target type on that host.  ``one_server_per_job`` asks the runner
    to give every job a server of its own (the ``dedicated`` baseline).
    """

    name: str
    one_server_per_job: bool

    def select(self, view: EngineView) -> Grant | None: ...


@dataclass
class JobResult:
    """One job's outcome (times in seconds)."""

    name: str
    arrival: float
    start: float
    finish: float
    trials: int
    distorted_trials: int
    distorted_measurements: int
    tuned_latency_s: float
    latency_penalty: float

    @property
    def completion(self) -> float:
        """Turnaround: submission to last stage."""
        return self.finish - self.arrival


@dataclass
class AutotuneResult:
    """Outcome of one simulation: per-job results, every stage, and the summary metrics."""

    policy: str
    jobs: list[JobResult]
    stages: list[Stage]
    hosts: list[str]
    devices: list[tuple[str, str]]
    makespan: float
    device_idle_fraction: float
    cpu_utilisation: float
    device_hours: float
    wall_s: float = 0.0
    gpu_busy_s: float = 0.0
    """GPU-seconds spent measuring (the busy time of every GPU)."""
    core_busy_s: float = 0.0
    """Core-seconds of useful CPU work (builds, measurements on CPUs, model updates)."""

    @property
    def distorted_measurements(self) -> int:
        return sum(j.distorted_measurements for j in self.jobs)

    @property
    def distorted_trials(self) -> int:
        return sum(j.distorted_trials for j in self.jobs)

    @property
    def mean_latency_penalty(self) -> float:
        return float(np.mean([j.latency_penalty for j in self.jobs])) if self.jobs else 0.0

    @property
    def mean_completion(self) -> float:
        return float(np.mean([j.completion for j in self.jobs])) if self.jobs else 0.0

    def fraction_within(self, seconds: float) -> float:
        """Fraction of jobs whose completion (turnaround) is at most ``seconds``."""
        return float(np.mean([j.completion <= seconds * (1 + 1e-12) for j in self.jobs])) if self.jobs else 1.0

    def summary(self) -> dict:
        """JSON-ready metrics (hours where named so)."""
        return {
            "policy": self.policy,
            "makespan_h": self.makespan / 3600,
            "mean_completion_h": self.mean_completion / 3600,
            "device_idle_fraction": self.device_idle_fraction,
            "cpu_utilisation": self.cpu_utilisation,
            "distorted_measurements": self.distorted_measurements,
            "distorted_trials": self.distorted_trials,
            "mean_latency_penalty": self.mean_latency_penalty,
            "device_hours": self.device_hours,
            "jobs": [{"name": j.name, "arrival_h": j.arrival / 3600, "completion_h": j.completion / 3600,
                      "trials": j.trials, "distorted_trials": j.distorted_trials,
                      "tuned_latency_ms": j.tuned_latency_s * 1e3, "latency_penalty": j.latency_penalty}
                     for j in self.jobs],
        }


class AutotuneEngine:
    """Runs job plans on servers under a policy.  Build once per simulation; call :meth:`run`."""

    def __init__(self, plans: Sequence[JobPlan], servers: Sequence[ServerSpec], policy: AutotunePolicy,
                 interference: Interference | None = None) -> None:
        if not servers:
            raise SimschedError("autotuning: no servers")
        self.policy = policy
        self.interference = interference or Interference()
        env = self.env = simpy.Environment()
        self.hosts: list[HostState] = []
        self.devices: list[DeviceState] = []
        for h, spec in enumerate(servers):
            devs = []
            for k, dtype in enumerate((*spec.devices, "cpu")):
                name = f"{spec.name}.cpu" if k == len(spec.devices) else f"{spec.name}.{dtype}{k}"
                dev = DeviceState(len(self.devices), h, dtype, name, SharedServer(env, 1.0, 0.0))
                devs.append(dev)
                self.devices.append(dev)
            self.hosts.append(HostState(h, spec.name, spec.cores,
                                        SharedServer(env, spec.cores, self.interference.cpu_slowdown), devs))
        self.jobs = [JobState(i, p) for i, p in enumerate(plans)]
        for js in self.jobs:
            if not any(h.has(js.target) for h in self.hosts):
                raise SimschedError(f"job {js.plan.spec.name!r}: no server has a {js.target!r} device")
        self.pending: list[Request] = []
        self.stages: list[Stage] = []
        self.view = EngineView(self)
        self._decision_due = False
        self._seq = 0
        self._useful_core_s = 0.0

    # ------------------------------------------------------------------ job processes
    def _job(self, js: JobState):
        env = self.env
        yield env.timeout(js.plan.spec.arrival)
        for rnd in range(js.plan.n_rounds):
            for kind in STAGES:
                self._seq += 1
                req = Request(js.index, kind, rnd, float(env.now), self._seq, env.event())
                self.pending.append(req)
                self._wake()
                yield req.done
        js.finished = float(env.now)
        self.hosts[js.host].jobs -= 1
        self._wake()

    def _wake(self) -> None:
        if not self._decision_due:
            self._decision_due = True
            self.env.timeout(0).callbacks.append(self._decide)

    def _decide(self, _event: simpy.Event) -> None:
        self._decision_due = False
        while self.pending:
            grant = self.policy.select(self.view)
            if grant is None:
                break
            self._start(grant)

    # ------------------------------------------------------------------ stages
    def _start(self, g: Grant) -> None:
        req, h = g.request, g.host
        try:
            self.pending.remove(req)
        except ValueError:
            raise RuntimeError(f"{self.policy.name}: granted a request that is not pending") from None
        js = self.jobs[req.job]
        host = self.hosts[h]
        if js.host is None:
            if not host.has(js.target):
                raise RuntimeError(f"{self.policy.name}: host {host.name} has no {js.target} device")
            js.host, js.started = h, float(self.env.now)
            host.jobs += 1
        elif js.host != h:
            raise RuntimeError(f"{self.policy.name}: job {req.job} is bound to host {js.host}, not {h}")
        plan = js.plan
        work = plan.stage_work(req.kind, req.rnd, host.cores)
        st = Stage(req.job, req.rnd, req.kind, h, -1, float(self.env.now), work, int(plan.configs[req.rnd]))
        if req.kind == "measure":
            if g.device is None or self.devices[g.device].host != h or self.devices[g.device].type != js.target:
                raise RuntimeError(f"{self.policy.name}: measurement needs a {js.target} device on host {h}")
            dev = self.devices[g.device]
            st.device = dev.index
            st.distorted = host.heavy > 0 or dev.running > 0
            if dev.running:
                for other in host.running:
                    if other.device == dev.index:
                        other.distorted = True
            else:
                dev._busy_since = self.env.now
            dev.running += 1
            host.measuring += 1
            done = dev.server.submit(work, 1.0)
        else:
            if g.device is not None:
                raise RuntimeError(f"{self.policy.name}: a {req.kind} stage takes no device")
            demand = plan.stage_demand(req.kind, host.cores)
            for other in host.running:
                if other.kind == "measure":
                    other.distorted = True
            host.heavy += 1
            host.demand += demand
            self._useful_core_s += demand * work
            done = host.cpu.submit(work, demand)
        host.running.append(st)
        self.stages.append(st)
        done.callbacks.append(lambda _e: self._finish(req, st))

    def _finish(self, req: Request, st: Stage) -> None:
        host = self.hosts[st.host]
        st.end = float(self.env.now)
        host.running.remove(st)
        js = self.jobs[req.job]
        if st.kind == "measure":
            dev = self.devices[st.device]
            dev.running -= 1
            host.measuring -= 1
            if dev.running == 0:
                dev.busy_time += self.env.now - dev._busy_since
            if st.distorted:
                js.distorted_measurements += 1
                js.distorted_trials += st.configs
        else:
            host.heavy -= 1
            host.demand -= js.plan.stage_demand(st.kind, host.cores)
        req.done.succeed()
        self._wake()

    # ------------------------------------------------------------------ run
    def run(self) -> AutotuneResult:
        for js in self.jobs:
            self.env.process(self._job(js))
        enabled = gc.isenabled()
        gc.disable()
        try:
            self.env.run()
        finally:
            if enabled:
                gc.enable()
        stuck = [js.plan.spec.name for js in self.jobs if js.finished is None]
        if stuck:
            raise RuntimeError(f"{self.policy.name}: jobs never finished (policy deadlock): {stuck[:5]}")
        return self._result()

    def _result(self) -> AutotuneResult:
        pen = self.interference.distortion_penalty
        jobs = []
        for js in self.jobs:
            spec = js.plan.spec
            frac = js.distorted_trials / spec.total_trials
            jobs.append(JobResult(spec.name, spec.arrival, float(js.started), float(js.finished), spec.total_trials,
                                  js.distorted_trials, js.distorted_measurements,
                                  js.plan.tuned_latency * (1 + pen * frac), pen * frac))
        t0 = min(j.arrival for j in jobs)
        makespan = max(j.finish for j in jobs) - t0
        targets = {js.target for js in self.jobs}
        used = [d for d in self.devices if d.type in targets]
        listed = [len([d for d in h.devices if d.type != "cpu"]) or 1 for h in self.hosts]
        if self.policy.one_server_per_job:
            span = [(js.host, js.finished - js.plan.spec.arrival) for js in self.jobs]
            dev_time = sum(s * sum(1 for d in used if d.host == h) for h, s in span)
            core_time = sum(self.hosts[h].cores * s for h, s in span)
            device_hours = sum(listed[h] * s for h, s in span) / 3600
        else:
            dev_time = len(used) * makespan
            core_time = sum(h.cores for h in self.hosts) * makespan
            device_hours = sum(listed) * makespan / 3600
        busy = sum(d.busy_time for d in used)
        return AutotuneResult(
            policy=self.policy.name, jobs=jobs, stages=self.stages,
            hosts=[h.name for h in self.hosts], devices=[(d.name, d.type) for d in self.devices],
            makespan=makespan,
            device_idle_fraction=1.0 - busy / dev_time if dev_time > 0 else 0.0,
            cpu_utilisation=self._useful_core_s / core_time if core_time > 0 else 0.0,
            device_hours=device_hours, gpu_busy_s=float(sum(d.busy_time for d in self.devices if d.type == "gpu")),
            core_busy_s=float(self._useful_core_s))


def simulate(plans: Sequence[JobPlan], servers: Sequence[ServerSpec], policy: AutotunePolicy,
             interference: Interference | None = None) -> AutotuneResult:
    """Run ``plans`` on ``servers`` under ``policy``; a ``one_server_per_job`` policy gets one copy of
    the first server per job instead.  O(stages x (log events + policy cost))."""
    import time

    if policy.one_server_per_job:
        base = servers[0]
        servers = [replace(base, name=f"{base.name}-{j}") for j in range(len(plans))]
    t = time.perf_counter()
    result = AutotuneEngine(plans, servers, policy, interference).run()
    result.wall_s = time.perf_counter() - t
    return result
