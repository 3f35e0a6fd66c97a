"""Runs in dynamic worlds: job streams, processor failures and stragglers, on the SimPy engine only.

A scenario is *dynamic* (:attr:`~simsched.scenario.Scenario.is_dynamic`) when its workload is a
``stream`` or it has ``failures``/``stragglers``.  Every scheduler then runs on the online engine
(:func:`~simsched.simulator.engine.run_online`), which models arrivals, failures and stragglers:

* an online policy sees only what has arrived (its decision points are the engine's);
* a static planner (HEFT, CPOP, GA, ...) plans **each job alone when it arrives** — before time 0
  here, which is the same thing since a job's plan uses only its own graph — and the plan is
  followed: each task goes to its planned processor once it is ready and the job's tasks planned
  before it there are placed; jobs share processors first come, first served
  (:class:`PlanFollower`).  A task a failure hands back is placed again on its earliest-finish
  processor (the plan is broken there).  A plan's P-states are replayed; a task graph that is not a
  stream is planned whole before time 0 (arrivals included) and its inputs sent as producers finish,
  so failures that cannot matter change nothing; what a dynamic world cannot keep (a handed-back
  task's P-state, task copies) is said in :attr:`StreamRun.notes`.

Repetition ``r`` is a different day: seed ``seed + r`` draws the stream (arrivals and jobs), the
duration noise and the failure/straggler timelines, and every scheduler of that repetition meets
the same draws (three independent children of ``SeedSequence(seed + r)``: scheduler, noise, world).
The fast evaluator is never used here; it refuses disruptions (see
:func:`~simsched.simulator.evaluate.evaluate_plan`).

:func:`simulate_stream` is the one-scheduler, one-seed function (what a capacity search needs);
:func:`simsched.run.runner.run_scenario` calls it for every scheduler and repetition of ``simsched run``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.run.execution import execution_kwargs
from simsched.scenario import Scenario, SchedulerChoice, build_problem
from simsched.simulator.arrived import arrival_order
from simsched.simulator.engine import OnlineStats, run_online
from simsched.simulator.jobmetrics import StreamMetrics, stream_metrics
from simsched.simulator.policy import DecisionView
from simsched.simulator.power import EnergyAccount, power_profile
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule
from simsched.workloads.jobs import JobStream
from simsched.workloads.taskgraph import TaskGraph


def world_streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """``(scheduler_rng, noise_rng, world_rng)`` of one repetition: the first two are exactly
    :func:`~simsched.run.runner.repetition_streams`'s, the third drives failures and stragglers."""
    sched_ss, noise_ss, world_ss = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(sched_ss), np.random.default_rng(noise_ss), np.random.default_rng(world_ss)


def job_subgraph(problem: Problem, tasks: np.ndarray) -> TaskGraph:
    """The tasks ``tasks`` (ascending) of ``problem`` and the edges among them, as a graph with
    their execution times on the platform as explicit costs (so a planner sees the same ``W``) and
    arrival 0.  O(tasks x processors + edges)."""
    g = problem.graph
    tasks = np.asarray(tasks, dtype=np.int64)
    local = np.full(g.n_tasks, -1, dtype=np.int64)
    local[tasks] = np.arange(tasks.size)
    inside = (local[g.edge_src] >= 0) & (local[g.edge_dst] >= 0)
    edges = np.stack([local[g.edge_src[inside]], local[g.edge_dst[inside]]], axis=1)
    return TaskGraph([g.names[t] for t in tasks.tolist()], edges, g.edge_data[inside], work=g.work[tasks],
                     kind=[g.kind_of(t) for t in tasks.tolist()], memory=g.memory[tasks], cores=g.cores[tasks],
                     priority=g.priority[tasks], cost=problem.cost_rows(tasks),
                     procs=np.stack([g.procs_min[tasks], g.procs_max[tasks]], axis=1), serial=g.serial[tasks],
                     downey=g.downey[tasks], same_host=g.same_host[tasks])


class PlanFollower:
    """A static planner run job by job in a dynamic world (see the module docstring).

    Each job is planned alone (its sub-problem: the job's tasks with their costs on this platform)
    once all its tasks have arrived — the planner sees the engine's arrived-only view like any
    online policy (:mod:`simsched.simulator.arrived`); ``decide`` places each ready task on its
    planned processor once every task of its job planned before it there is placed, and a task
    handed back by a failure on its earliest-finish processor.  Planning time counts as scheduler
    time (:attr:`planning_s` holds the planning done in ``reset``, for the jobs there at time 0;
    later planning happens inside ``decide`` and is counted with it).  ``jobs``: the job of each
    task in the engine's visible numbering (:func:`~simsched.simulator.arrived.arrival_order`;
    the task index for every stream simsched builds).  O(k log k) per decision for k waiting tasks,
    plus the planner's own cost per job.

    Two promises of a static plan are kept online:

    * **P-states.**  A plan that chose a P-state per task offline (``plan.info["pstate"]``: ``ecs``,
      ``heft-slack``) has each task run at it: ``decide`` names it, ``(task, processor, k)``, and the
      engine stretches the task and accounts its energy at that P-state.  A task a failure hands back
      runs again at the nominal P-state on its earliest-finish processor (its plan is broken there);
      :attr:`off_pstate` counts them, and the run says so (:attr:`StreamRun.notes`).

    A plan's task copies (duplication, ``heft-dup``) are not run: the online engine runs each task once.
    :attr:`dropped_copies` counts them, and the run says so.
    * **Arrivals of one task graph.**  With ``whole`` (a task-graph workload, not a stream: the one job
      is known before time 0, as the static run knows it), the whole problem, arrival times included,
      is planned in ``reset``, so a task that arrives at 0 does not wait for one that arrives later
      unless the plan says so; ``order`` is the engine's visible numbering of its tasks
      (:func:`~simsched.simulator.arrived.arrival_order`, None for the identity).  The plan's processors
      are then known before time 0, and :attr:`planned_processor` (full numbering) tells the engine so:
      each input is sent to a task's planned processor as its producer finishes, as in the closed plan
      replay, not when the task is assigned (the engine's rule for decisions made online)."""

    def __init__(self, planner: Any, jobs: np.ndarray, whole: Problem | None = None,
                 order: np.ndarray | None = None) -> None:
        self.planner, self.jobs = planner, np.asarray(jobs, dtype=np.int64)
        self.whole, self.order = whole, order
        self.name = getattr(planner, "name", type(planner).__name__)
        self.planning_s = 0.0
        n_jobs = int(self.jobs.max()) + 1 if self.jobs.size else 0
        self.job_size = np.bincount(self.jobs, minlength=n_jobs)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        n = self.jobs.size
        self.rng = rng
        self.proc = np.full(n, -1, dtype=np.int64)
        self.pstate = np.zeros(n, dtype=np.int64)  # the plan's P-state of each task (0: nominal)
        self.slot = np.zeros(n, dtype=np.int64)  # position in its job's sequence on its processor
        self.next: dict[tuple[int, int], int] = {}
        self.planned = np.zeros(self.job_size.size, dtype=bool)
        self.seen = 0
        self.placed = np.zeros(n, dtype=bool)
        self.waiting: set[int] = set()
        self.gangs: dict[int, list[tuple[int, int]]] = {}  # multi-processor task -> (member, slot there)
        self.off_pstate = 0  # tasks handed back by a failure whose planned P-state was not the nominal one
        self.dropped_copies = 0  # task copies (duplication) of the plans, which the online engine cannot run
        t0 = time.perf_counter()
        self.planned_processor: list[int] | None = None
        if self.whole is not None and self.job_size.size == 1:  # one task graph, arrivals known before time 0
            visible = np.arange(n) if self.order is None else np.argsort(self.order).astype(np.int64)
            self._adopt(visible, self.planner.plan(self.whole, self.rng))
            self.planned[0] = True
            # the engine sends each input to its planned processor as its producer finishes (full numbering)
            self.planned_processor = self.proc[visible].tolist()
        self._plan_arrived(problem)
        self.planning_s = time.perf_counter() - t0

    def _plan_arrived(self, problem: Problem) -> None:
        """Plan every job whose tasks have all arrived (the visible problem's first tasks), in job
        order.  O(arrived) plus the planner's cost per new job."""
        k = problem.n_tasks
        self.seen = k
        complete = (np.bincount(self.jobs[:k], minlength=self.job_size.size) == self.job_size) & ~self.planned
        for j in np.flatnonzero(complete).tolist():
            tasks = np.flatnonzero(self.jobs[:k] == j)
            sub = Problem(job_subgraph(problem, tasks), problem.platform)
            self._adopt(tasks, self.planner.plan(sub, self.rng))
            self.planned[j] = True

    def _adopt(self, tasks: np.ndarray, plan: Plan) -> None:
        """Follow ``plan``, whose task ``i`` is visible task ``tasks[i]``: its processors, its order on
        each and its P-states.  O(k log k) for the plan's k tasks."""
        self.proc[tasks] = plan.processor
        if plan.copies is not None:  # each task runs once here: its copies are left out (and said so)
            self.dropped_copies += int(plan.copies.task.size)
        if plan.info.get("pstate") is not None:
            self.pstate[tasks] = np.asarray(plan.info["pstate"], dtype=np.int64)
        if plan.gang is not None:  # a multi-processor task waits for its turn on every member
            self._gang_slots(tasks, plan)
        else:
            seq = np.lexsort((np.arange(tasks.size), plan.order, plan.processor))
            first = np.searchsorted(plan.processor[seq], plan.processor[seq], side="left")
            self.slot[tasks[seq]] = np.arange(tasks.size) - first

    def _gang_slots(self, tasks: np.ndarray, plan: Plan) -> None:
        """Positions of a job's tasks in each processor's planned sequence, for a plan with a gang:
        the lead's in ``slot``, every member's of a multi-processor task in ``gangs``.  O(N log N),
        N = processors summed over the job's tasks."""
        gang = plan.gang
        owner, procs = gang.owner(), gang.members
        seq = np.lexsort((owner, plan.order[owner], procs))
        pos = np.empty(owner.size, dtype=np.int64)
        pos[seq] = np.arange(owner.size) - np.searchsorted(procs[seq], procs[seq], side="left")
        self.slot[tasks] = pos[gang.ptr[:-1]]
        for i in np.flatnonzero(gang.k > 1).tolist():
            lo, hi = int(gang.ptr[i]), int(gang.ptr[i + 1])
            self.gangs[int(tasks[i])] = list(zip(procs[lo:hi].tolist(), pos[lo:hi].tolist()))

    def decide(self, view: DecisionView) -> list[tuple[int, int]]:
        if view.problem.n_tasks != self.seen:
            self._plan_arrived(view.problem)
        out: list[tuple[int, int]] = []
        fresh = [int(t) for t in view.ready if not self.placed[t]]
        for t in (int(t) for t in view.ready if self.placed[t]):  # handed back by a failure
            if t in self.gangs:
                from simsched.schedulers.gang_eft import gang_choice

                choice = gang_choice(view.problem, t, view.data_ready_row(t), view.available)
                out.append((t, tuple(choice[2].tolist()) if choice is not None else 0))
                continue
            self.off_pstate += bool(self.pstate[t])  # rerun at the nominal P-state: off the plan
            out.append((t, int(np.argmin(view.completion_times(np.array([t]))[0]))))
        self.waiting.update(fresh)
        progress = True
        while progress:
            progress = False
            for t in sorted(self.waiting, key=lambda v: (self.jobs[v], self.slot[v])):
                if not self.planned[self.jobs[t]]:  # some of its job's tasks have not arrived
                    continue
                if t in self.gangs:
                    job = int(self.jobs[t])
                    turns = self.gangs[t]
                    if all(self.next.get((job, q), 0) == k for q, k in turns):
                        out.append((t, tuple(q for q, _ in turns)))
                        for q, k in turns:
                            self.next[(job, q)] = k + 1
                        self.placed[t] = True
                        self.waiting.discard(t)
                        progress = True
                    continue
                key = (int(self.jobs[t]), int(self.proc[t]))
                if self.slot[t] == self.next.get(key, 0):
                    k = int(self.pstate[t])
                    out.append((t, int(self.proc[t]), k) if k else (t, int(self.proc[t])))
                    self.next[key] = self.next.get(key, 0) + 1
                    self.placed[t] = True
                    self.waiting.discard(t)
                    progress = True
        return out


def stream_of(scenario: Scenario, seed: int) -> JobStream:
    """The scenario's job stream for ``seed``; a non-stream workload is one job arriving at 0."""
    if scenario.workload is not None and scenario.workload.form == "stream":
        from simsched.scenario.stream import build_stream

        return build_stream(scenario, seed)
    graph = build_problem(scenario, seed).graph
    jobs = np.zeros(graph.n_tasks, dtype=np.int64)
    return JobStream(graph, jobs, np.array([float(graph.arrival.min()) if graph.n_tasks else 0.0]))


class Days:
    """The days of one scenario drawn so far (:func:`stream_of` per seed), each drawn once and shared by
    every consumer of one ``simsched run``: the offered-load line, the problem, the training-range probe
    and the runs of every scheduler (a day's stream is deterministic in its seed, so sharing it changes
    no result; drawing a 1,000-job day was most of such a run's CPU).  The consumers only read a
    stream.  Holds every day asked for until dropped (a run keeps its repetitions' days anyway)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._drawn: dict[int, JobStream] = {}

    def stream(self, seed: int) -> JobStream:
        """Day ``seed``'s stream, drawn at the first ask.  O(1) after the first."""
        if seed not in self._drawn:
            self._drawn[seed] = stream_of(self.scenario, seed)
        return self._drawn[seed]

    def graph(self, seed: int) -> TaskGraph | None:
        """Day ``seed``'s graph when the workload is a job stream (for
        :func:`~simsched.scenario.build_problem`'s ``graph``), else None (a task graph is built there)."""
        wl = self.scenario.workload
        return self.stream(seed).graph if wl is not None and wl.form == "stream" else None


@dataclass
class StreamRun:
    """One scheduler on one day (seed) of a dynamic scenario: the stream it ran, the problem, the
    simulated schedule, engine counters, per-job metrics and the scheduler's own time."""

    stream: JobStream
    problem: Problem
    schedule: Schedule
    stats: OnlineStats
    metrics: StreamMetrics
    scheduler_time_s: float
    energy: dict[str, float] = field(default_factory=dict)
    """``energy_j`` (and ``carbon_g``/``cost_usd``) when the scenario has a power model (:func:`energy_fields`)."""
    account: EnergyAccount | None = None
    """What the energy fields come from (time in each state, the power as steps), with a power model."""
    time_unit_s: float = 1.0
    notes: list[str] = field(default_factory=list)
    """One line per way this run did not keep its scheduler's promise (a static plan's P-states left by
    tasks a failure handed back); the results row's ``warning`` field and a ``warning:`` line carry it."""

    def power(self) -> dict[str, Any] | None:
        """The run's power over time (:func:`~simsched.simulator.power.power_profile`), or None without a
        power model: made on demand, since only a report's first run of each scheduler draws it."""
        if self.account is None:
            return None
        return power_profile(self.account, self.problem.platform, self.time_unit_s)


def simulate_stream(scenario: Scenario, spec: SchedulerChoice | str, seed: int,
                    stream: JobStream | None = None, scheduler: Any = None) -> StreamRun:
    """Run one scheduler (a :class:`SchedulerChoice` or a registered name) on day ``seed`` of a
    dynamic (or any task-graph) scenario on the SimPy engine; return per-job records and summary
    metrics (:func:`~simsched.simulator.jobmetrics.stream_metrics`).  Deterministic in ``seed``;
    every scheduler meets the same stream, noise and failures for one seed.  Pass ``stream`` to
    reuse a drawn stream across schedulers, ``scheduler`` to run an instance already constructed
    (a fresh one is made otherwise).  Cost: one engine run, O((n + e) log n) plus the
    policy's."""
    from simsched.schedulers import registry

    if scheduler is None:
        scheduler = registry.create(spec) if isinstance(spec, str) else spec.create()
    if stream is None:
        stream = stream_of(scenario, seed)
    problem = Problem(stream.graph, scenario.platform, scenario.affinity)
    scheduler_rng, noise_rng, world_rng = world_streams(seed)
    noisy = not scenario.noise.deterministic
    factors = scenario.noise.factors(problem.n_tasks, noise_rng) if noisy else None
    tables = scenario.energy.power.tables(problem.platform) if scenario.energy is not None else None
    # an energy-aware planner or policy reads the power model and the carbon trace (it never writes energy)
    if hasattr(scheduler, "use_power"):
        scheduler.use_power(tables)
    if hasattr(scheduler, "use_carbon"):
        scheduler.use_carbon(scenario.energy.carbon if scenario.energy is not None else None)
    follower = None
    if registry.kind(type(scheduler)) == "static":
        order = arrival_order(problem)  # the engine's visible numbering of the tasks
        graph_form = scenario.workload is None or scenario.workload.form not in ("stream", "batch")
        scheduler = follower = PlanFollower(scheduler, stream.jobs if order is None else stream.jobs[order],
                                            problem if graph_form else None, order)
    if hasattr(scheduler, "use_failures"):  # a policy that judges its world hears the failures the scenario declares
        scheduler.use_failures(scenario.disruptions)
    # the engine runs a task at the P-state its policy names, stretched by the platform's speed factors
    slowdown = tables.speed[:, :1] / tables.speed if tables is not None else None
    schedule, stats = run_online(problem, scheduler, factors, scheduler_rng, scenario.disruptions, world_rng,
                                 slowdown, **execution_kwargs(scenario, problem))
    lost = stats.log.lost_work(problem.n_tasks) if stats.log is not None else None
    metrics = stream_metrics(schedule, problem, stream.jobs, stream.job_arrival, job_deadline=stream.job_deadline,
                             job_priority=stream.job_priority, job_names=stream.job_names, lost_work=lost,
                             done=stats.done)
    elapsed = stats.policy_time_s + (follower.planning_s if follower is not None else 0.0)
    off = off_intervals_of(scheduler, problem, schedule)
    energy, acc, unit = {}, None, 1.0
    if scenario.energy is not None:
        energy, acc = energy_fields(scenario.energy, problem, schedule, stats, stream, metrics, stats.pstate, off)
        unit = scenario.energy.power.time_unit_s
    notes, label = [], getattr(spec, "label", spec)
    if follower is not None and follower.off_pstate:
        notes.append(f"{label}: {follower.off_pstate} task(s) rerun after failures at full speed, not at the "
                     f"plan's P-states")
    if follower is not None and follower.dropped_copies:
        notes.append(f"{label}: {follower.dropped_copies} task copies of its plan left out: in a dynamic world "
                     f"each task runs once")
    return StreamRun(stream, problem, schedule, stats, metrics, float(elapsed), energy, acc, unit, notes)


def off_intervals_of(scheduler: Any, problem: Problem, schedule: Schedule) -> np.ndarray | None:
    """The ``(processor, off since, back on)`` intervals a policy that switches processors off
    (``power-off``: its ``off_intervals`` hook) reports for ``schedule``, up to its last finish; None for
    any other scheduler.  The same for a task graph as for a stream, so its energy counts them in both
    worlds.  O(k + m)."""
    if not hasattr(scheduler, "off_intervals"):
        return None
    return scheduler.off_intervals(float(schedule.finish.max()) if schedule.finish.size else 0.0, schedule,
                                   arrival_order(problem))


def energy_fields(energy: Any, problem: Problem, schedule: Schedule, stats: OnlineStats, stream: JobStream,
                  metrics: StreamMetrics, pstate: np.ndarray | None = None,
                  off: np.ndarray | None = None) -> tuple[dict[str, float], EnergyAccount]:
    """``energy_j`` (and ``carbon_g``/``cost_usd``) of one stream run, killed attempts and down
    intervals included (:meth:`~simsched.simulator.power.EnergySetup.measure`), and each job record's
    ``energy_j``: the busy energy of its tasks' attempts; ``off``: the intervals a power-off policy
    switched processors off; with the :class:`~simsched.simulator.power.EnergyAccount` they come from.
    O(k log k) for k attempts."""
    fields, acc = energy.measure(problem, schedule, pstate, stats.log, off)
    per_job = np.bincount(stream.jobs, weights=acc.task_energy_j, minlength=stream.n_jobs)
    for rec, e in zip(metrics.records, per_job.tolist()):
        rec["energy_j"] = e
    return fields, acc


@dataclass(frozen=True)
class OfferedLoad:
    """The offered load of one day of a job stream (:func:`offered_load_of`): ``least``, the least load
    any scheduler can keep the busiest processor type at (work split over types at the fluid optimum),
    ``by_type`` that split's load per type, ``mean`` the documented ``offered_load`` (mean costs over
    all processors), the measured arrival ``rate`` (jobs per time unit), the ``jobs`` and the ``seed``."""

    least: float
    by_type: dict[str, float]
    mean: float
    rate: float
    jobs: int
    seed: int

    def line(self) -> str:
        """``offered load 0.77 (cpu 0.77, gpu 0.77) at 0.0199 jobs per time unit ...``: what ``validate``
        and ``run`` print."""
        types = ", ".join(f"{t} {v:.2f}" for t, v in self.by_type.items())
        return (f"offered load {self.least:.2f} ({types}) at {self.rate:.4g} jobs per time unit "
                f"({self.jobs} jobs, seed {self.seed}): the least busy any scheduler can keep the busiest "
                f"processor type; mean-cost load {self.mean:.2f}")

    def warning(self) -> str | None:
        """The warning line above 1, else None."""
        if not self.least > 1:
            return None
        return (f"offered load {self.least:.2f} > 1: jobs arrive faster than the processors can run them "
                f"whatever the scheduler, so queues grow without bound while jobs arrive at this rate; for a "
                f"load L, scale the arrival rate by L / {self.least:.2f} (docs/streams.md, "
                f"\"Choosing an arrival rate\")")


def offered_load_of(scenario: Scenario, seed: int, stream: JobStream | None = None,
                    problem: Problem | None = None) -> OfferedLoad | None:
    """The offered load of day ``seed`` of a job-stream scenario
    (:func:`~simsched.simulator.jobmetrics.offered_load_by_type`); None for any other scenario, or a
    stream of one job or of simultaneous arrivals (no rate).  Draws the day's stream unless the caller
    gives it (``stream``, from :func:`stream_of` for that seed) with, optionally, its ``problem``
    (from :func:`~simsched.scenario.build_problem`, which has checked that the world ends): O(n m) by
    blocks."""
    from simsched.simulator.jobmetrics import offered_load, offered_load_by_type

    if scenario.workload is None or scenario.workload.form != "stream":
        return None
    from simsched.scenario.build import check_world_ends

    if stream is None:
        stream = stream_of(scenario, seed)
    if problem is None:
        try:
            problem = Problem(stream.graph, scenario.platform, scenario.affinity)
        except SimschedError as exc:  # e.g. a task wider than any processor type: at the stream's line
            raise scenario.locate(exc, ("workload", "stream")) from None
        check_world_ends(scenario, problem)  # an endless world is refused before its load is printed
    by_type = offered_load_by_type(problem, stream.job_arrival)
    if not by_type:
        return None
    least = by_type.pop("all")
    arrival = stream.job_arrival
    rate = (len(arrival) - 1) / float(arrival.max() - arrival.min())
    return OfferedLoad(least, by_type, offered_load(problem, arrival), rate, len(arrival), seed)


def largest_job_problem(problem: Problem, stream: JobStream) -> Problem:
    """The sub-problem of the stream's largest job (what a learned scheduler's training range is
    checked against: it decides job by job).  O(tasks x processors + edges)."""
    sizes = np.bincount(stream.jobs, minlength=stream.n_jobs)
    largest = np.flatnonzero(stream.jobs == int(np.argmax(sizes)))
    return Problem(job_subgraph(problem, largest), problem.platform)


def require_static_world(scenario: Scenario, what: str) -> None:
    """:class:`SimschedError` when ``scenario`` is dynamic: ``what`` (a tool built on the fast
    evaluator or on one fixed graph) cannot model job streams, failures or stragglers."""
    if scenario.is_dynamic:
        kinds = [k for k, on in (("a job stream", scenario.workload is not None and scenario.workload.form == "stream"),
                                 ("failures or stragglers", scenario.disruptions is not None)) if on]
        raise SimschedError(f"{what} cannot model {' and '.join(kinds)}; `simsched run` simulates them on the "
                            f"SimPy engine", file=scenario.file)
