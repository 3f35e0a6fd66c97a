"""Run a scenario: every scheduler it names, every repetition, measured by the SimPy engine.

This is the one place that connects :mod:`simsched.schedulers` (through the registry) with the
simulator.  Guarantees:

* the task graph is built once, from the scenario seed: every scheduler and repetition sees the
  same input;
* repetition ``r`` uses seed ``seed + r``; from it :class:`numpy.random.SeedSequence` spawns two
  independent streams, one for the scheduler (planner or policy) and one for the duration noise,
  so every scheduler faces the same noise draws in repetition ``r`` whatever it decides;
* results always come from the simulator (:func:`~simsched.simulator.engine.execute_plan` for a
  static plan, :func:`~simsched.simulator.engine.run_online` for an online policy), never from a
  planner's own predicted times, and every schedule is validated; an invalid one is a simulator bug
  and raises :class:`SimulatorBug` (not a user error);
* the same scenario and seed give the same rows, apart from ``scheduler_time_s``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simsched import limits
from simsched.errors import SchedulerDeclined, SimschedError
from simsched.outputs import one_line
from simsched.run.execution import execution_kwargs
from simsched.run.gangcheck import GangNeed, check_gang_support, first_gang_need
from simsched.run.seedspace import space_of
from simsched.run.streams import Days, off_intervals_of
from simsched.scenario import Scenario, SchedulerChoice, build_problem
from simsched.simulator.bounds import lower_bound
from simsched.simulator.power import power_profile
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, validate_schedule

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: called before each run (``done`` runs finished so far) and once
at the end with ``done == total``."""


class SimulatorBug(RuntimeError):
    """The simulator produced a schedule that breaks an invariant: a bug, not a user error."""


@dataclass
class RunReport:
    """Everything one ``simsched run`` measured: ``rows`` (one dict per scheduler and repetition,
    the results-document format of DESIGN.md plus extra metrics) and the problem they ran on."""

    scenario: Scenario
    problem: Problem
    seed: int
    repetitions: int
    schedulers: list[str]
    lower_bound: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    schedules: dict[str, Schedule] = field(default_factory=dict)
    """First repetition's schedule of each scheduler (for Gantt charts)."""
    declined: dict[str, str] = field(default_factory=dict)
    """Schedulers that declined the problem (label -> their reason); they have no rows and are not in
    ``schedulers``, and the other schedulers' results stand."""
    job_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Dynamic scenarios: first repetition's per-job records of each scheduler (for the job timeline)."""
    warnings: list[str] = field(default_factory=list)
    """One line per static planner whose own predicted times the simulator does not reproduce, and per
    learned scheduler run outside its checkpoint's training range."""
    notices: dict[str, list[str]] = field(default_factory=dict)
    """Per scheduler label, the lines that say its runs did not keep what it promises (a learned
    scheduler outside its checkpoint's training range, a static plan's P-states left where failures
    handed tasks back): each line also in :attr:`warnings` (printed once) and in the rows' ``warning``."""

    def notice(self, label: str, line: str) -> None:
        """Record ``line`` for ``label`` (once) in :attr:`notices` and :attr:`warnings`."""
        if line not in self.notices.setdefault(label, []):
            self.notices[label].append(line)
            self.warnings.append(line)

    def rows_of(self, label: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["scheduler"] == label]


def repetition_streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """``(scheduler_rng, noise_rng)`` for one repetition's seed: independent, reproducible."""
    sched_ss, noise_ss = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(sched_ss), np.random.default_rng(noise_ss)


def _select(scenario: Scenario, names: Sequence[str] | None,
            kinds: tuple[str, ...] | None = None) -> list[SchedulerChoice]:
    """The scenario's schedulers, or those named, each by one rule:

    1. a scenario entry whose label is the text (``rl(checkpoint=rl_dynamic)``, ``fcfs``), also when
       the text spells it with other spacing or parameter order (both parsed by
       :func:`~simsched.scenario.parse_label` and labelled again);
    2. a bare name that names exactly one scenario entry: that entry; several: refused (one located
       line listing their labels), never one of them silently;
    3. otherwise a registered scheduler of the declared ``kinds`` (default: the task-graph kinds),
       with the parameters the text gives (``fair-eft(alpha=-1)``, checked as a scenario entry's) or
       its defaults.

    Errors are :class:`SimschedError` located at ``--scheduler``.  O(names x entries)."""
    if not names:
        return list(scenario.schedulers)
    by_label = {s.label: s for s in scenario.schedulers}
    chosen = []
    for text in names:
        try:
            spec = by_label.get(text) or _choose(scenario, text, by_label, kinds)
        except SimschedError as exc:
            raise exc.located(field="--scheduler") from None
        if spec not in chosen:
            chosen.append(spec)
    return chosen


def _choose(scenario: Scenario, text: str, by_label: dict[str, SchedulerChoice],
            kinds: tuple[str, ...] | None) -> SchedulerChoice:
    """Rules 1-3 of :func:`_select` for one ``-s`` text that is not an exact label."""
    from simsched.scenario import parse_label, scheduler_label
    from simsched.schedulers import registry

    name, params = parse_label(text)
    if not params:
        same = [s for s in scenario.schedulers if s.name == name]
        if len(same) > 1:
            raise SimschedError(f"scheduler {name!r} names {len(same)} entries of the scenario "
                                f"({', '.join(s.label for s in same)}): give one of these labels, quoted, to -s")
        if same:
            return same[0]
    # unknown names, other kinds, bad parameters and plug-ins that cannot load raise here; nothing is constructed
    registry.check_kind(name, kinds or registry.TASK_GRAPH_KINDS)
    cls = registry.load_class(name)
    checked = registry.checked_params(name, cls, params, kinds=kinds or registry.TASK_GRAPH_KINDS)
    label = scheduler_label(name, checked)
    if label in by_label:
        return by_label[label]
    why = registry.unmet_needs(name, power=scenario.energy is not None)
    if why is not None and scenario.platform is not None:
        raise SimschedError(f"{why}: add platform.power to {scenario.file or 'the scenario'} or choose "
                            f"another scheduler")
    wl = scenario.workload
    if (why := registry.unmet_requested(name, wl.options["batch"].missing_requested()
                                        if wl is not None and wl.form == "batch" else None)) is not None:
        raise SimschedError(why)
    return SchedulerChoice(name, checked, label, cls, ("--scheduler",))


def prediction_mismatch(problem: Problem, plan: Plan, durations: np.ndarray | None = None) -> str | None:
    """The first task whose planned start or finish the simulator (without noise) does not
    reproduce, as ``"task 't3': planned start 10 but simulated 12"``; None when they agree or the plan
    has no times.  ``durations``: each task's time on its planned processor when not the cost model's
    (a plan with P-states).  O(n log n + e) through the fast evaluator (equal to the engine's times)."""
    from simsched.simulator.evaluate import evaluate_plan

    if plan.start is None and plan.finish is None:
        return None
    simulated = evaluate_plan(problem, plan, durations)
    tol = 1e-6 * max(1.0, float(np.abs(simulated.finish).max()))
    first: tuple[int, str, float, float] | None = None
    for what in ("start", "finish"):
        planned, sim = getattr(plan, what), getattr(simulated, what)
        if planned is None:
            continue
        bad = np.flatnonzero(~(np.abs(planned - sim) <= tol))
        if bad.size and (first is None or bad[0] < first[0]):
            first = (int(bad[0]), what, float(planned[bad[0]]), float(sim[bad[0]]))
    if first is None:
        return None
    i, what, planned_t, sim_t = first
    return f"task {problem.graph.names[i]!r}: planned {what} {planned_t:g} but simulated {sim_t:g}"


def run_once(problem: Problem, spec: SchedulerChoice, factors: np.ndarray | None,
             scheduler_rng: np.random.Generator, warn: Callable[[str], None] | None = None,
             scheduler: Any = None, info: dict[str, Any] | None = None,
             power: Any = None, model: dict[str, Any] | None = None) -> tuple[Schedule, float]:
    """Run one scheduler once in the simulator; returns the schedule and the scheduler's own wall
    time (planning time of a static planner, time inside ``decide`` of an online policy).
    ``scheduler``: the instance to run (default: a fresh one from ``spec``).  With ``warn``, a static
    planner whose predicted times the simulator does not reproduce is reported (one line naming the
    first such task).  With ``info``, a static plan's ``info`` is copied into it (the exact
    scheduler's proof status and bound).  A scheduler that declines the problem raises
    :class:`~simsched.errors.SchedulerDeclined`.  ``model``: the engine's ``overheads``/``storage``/``io``
    (:func:`~simsched.run.execution.execution_kwargs`); a static plan then runs through the online
    engine (:func:`~simsched.simulator.engine.replay.replay_plan`), and ``info["done"]`` gets each task's
    done time when there are overheads (the workflow's end is their max)."""
    from simsched.schedulers import registry
    from simsched.simulator.engine import execute_plan, run_online
    from simsched.simulator.engine.replay import replay_plan

    if scheduler is None:
        scheduler = spec.create()
    if hasattr(scheduler, "use_power"):
        scheduler.use_power(power)
    if registry.kind(type(scheduler)) == "static":
        t0 = time.perf_counter()
        plan = scheduler.plan(problem, scheduler_rng)
        elapsed = time.perf_counter() - t0
        if info is not None:
            info.update(plan.info)
        durations = None
        if plan.info.get("pstate") is not None and power is not None:
            slow = power.slowdown(plan.processor, plan.info["pstate"])
            durations = problem.cost_pairs(np.arange(problem.n_tasks), plan.processor) * slow
            factors = slow if factors is None else factors * slow
        if model or problem.host_memory_binds:  # overheads, storage, host memory: the planner's times cannot
            # include them; the online engine runs the plan
            schedule, stats = replay_plan(problem, plan, factors, **(model or {}))
            if info is not None and stats.done is not None:
                info["done"] = stats.done
            return schedule, elapsed
        mismatch = prediction_mismatch(problem, plan, durations) if warn is not None else None
        if mismatch is not None:
            warn(f"{spec.label}: its plan's predicted times differ from the simulated ones ({mismatch}); "
                 f"the simulated times count, and `simsched check` tests the planner")
        return execute_plan(problem, plan, factors), elapsed
    slowdown = power.speed[:, :1] / power.speed if power is not None else None  # P-states an online policy may name
    schedule, stats = run_online(problem, scheduler, factors, scheduler_rng, pstate_slowdown=slowdown, **(model or {}))
    if info is not None and stats.pstate is not None and stats.pstate.any():
        info["pstate"] = stats.pstate  # what the engine ran, for the energy accounting
    if info is not None and stats.done is not None:
        info["done"] = stats.done
    return schedule, float(stats.policy_time_s)


def range_line(scheduler: Any, problem: Problem, label: str, workload: tuple[dict, str] | None = None,
               stream: bool = False) -> str | None:
    """A learned scheduler's range warning for ``problem`` (its ``range_warning`` hook, reached by
    ``getattr``), told whether ``problem`` is one job of a stream where the hook takes ``stream``
    (a plugin's older hook without it is called as before); ``None`` without a hook.  O(hook)."""
    import inspect

    hook = getattr(scheduler, "range_warning", None)
    if hook is None:
        return None
    try:
        takes_stream = "stream" in inspect.signature(hook).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin or C callable
        takes_stream = False
    return hook(problem, label, workload, stream=stream) if takes_stream else hook(problem, label, workload)


def learned_check(scenario: Scenario, problem: Problem, spec: SchedulerChoice, warnings: list[str],
                  scheduler: Any) -> str | None:
    """For a learned scheduler (``scheduler`` exposes the hooks ``range_warning`` and ``checkpoint_id``,
    see :class:`simsched.learned.training_range.RangeChecked`; reached by ``getattr``, no import): its
    checkpoint id, and a warning line appended to ``warnings`` when ``problem`` lies outside the
    checkpoint's training range (for a job stream, pass its largest job's problem: the family is then
    its jobs' source's)."""
    if getattr(scheduler, "range_warning", None) is None:
        return None
    wl = scenario.workload
    stream = wl is not None and wl.form == "stream"
    if stream:  # a stream is judged by its jobs' family (one source)
        sources = wl.options["stream"].sources
        wl = sources[0].spec if len(sources) == 1 else wl
    line = range_line(scheduler, problem, spec.label, (dict(wl.options), wl.form) if wl else None, stream)
    if line:
        warnings.append(line)
    return scheduler.checkpoint_id


class ScheduleRecords(Sequence[dict[str, Any]]):
    """The per-task records of a schedule (``{"task", "processor", "start", "finish"}``, then one per
    copy with ``"copy": true``), made on demand from the schedule's arrays instead of held as dicts:
    a row of a 1M-task run costs its arrays, not a million dicts.  Reads like a list of dicts (and
    equals one); :meth:`json_chunks` writes them as JSON text in O(n) without building them."""

    __slots__ = ("_names", "_procs", "_schedule")

    def __init__(self, problem: Problem, schedule: Schedule) -> None:
        self._names, self._procs, self._schedule = problem.graph.names, problem.platform.names, schedule

    def __len__(self) -> int:
        c = self._schedule.copies
        return self._schedule.processor.size + (len(c) if c is not None else 0)

    def _record(self, i: int) -> dict[str, Any]:
        s, n = self._schedule, self._schedule.processor.size
        if i < n:
            rec = {"task": self._names[i], "processor": self._procs[int(s.processor[i])],
                   "start": float(s.start[i]), "finish": float(s.finish[i])}
            if s.gang is not None and s.gang.ptr[i + 1] - s.gang.ptr[i] > 1:  # a multi-processor task
                rec["processors"] = [self._procs[q] for q in s.gang.of(i).tolist()]
            return rec
        c, k = s.copies, i - n
        return {"task": self._names[int(c.task[k])], "processor": self._procs[int(c.processor[k])],
                "start": float(c.start[k]), "finish": float(c.finish[k]), "copy": True}

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self)))]
        i = index + len(self) if index < 0 else index
        if not 0 <= i < len(self):
            raise IndexError("schedule record index out of range")
        return self._record(i)

    def __iter__(self):
        return (self._record(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def json_chunks(self, chunk: int = 2_048):
        """The records as a JSON array, in pieces of at most ``chunk`` records (non-finite times as
        ``null``, floats as Python's shortest repr, like :func:`json.dumps`).  O(n) time; O(chunk)
        memory (a piece's strings, ~0.6 KB a record: 65,536 records a piece held ~70 MB at once)."""
        import json

        def num(values: np.ndarray) -> list[str]:
            return [repr(v) if math.isfinite(v) else "null" for v in values.tolist()]

        s = self._schedule
        if s.gang is not None:  # records with a "processors" list: written one by one
            yield "["
            for lo in range(0, len(self), chunk):
                yield "".join(f'{"" if lo == 0 and j == 0 else ","}\n  {json.dumps(r)}'
                              for j, r in enumerate(self[lo:lo + chunk]))
            yield "]"
            return
        procs = [json.dumps(p) for p in self._procs]
        parts = [(np.arange(s.processor.size), s.processor, s.start, s.finish, "")]
        if s.copies is not None:
            c = s.copies
            parts.append((c.task, c.processor, c.start, c.finish, ', "copy": true'))
        first = True
        yield "["
        for task, proc, start, finish, extra in parts:
            for lo in range(0, len(task), chunk):
                hi = lo + chunk
                names = [json.dumps(self._names[t]) for t in task[lo:hi].tolist()]
                lines = [f'{"" if first and j == 0 else ","}\n  {{"task": {a}, "processor": {procs[b]}, '
                         f'"start": {c}, "finish": {d}{extra}}}'
                         for j, (a, b, c, d) in enumerate(zip(names, proc[lo:hi].tolist(), num(start[lo:hi]),
                                                              num(finish[lo:hi])))]
                first = first and not lines
                yield "".join(lines)
        yield "]"


def _construct(scenario: Scenario, spec: SchedulerChoice) -> Any:
    """A fresh instance of ``spec``; a constructor's refusal is located at the scheduler's entry."""
    try:
        return spec.create()
    except SimschedError as exc:
        if spec.loc and spec.loc[0] == "--scheduler":
            raise exc.located(field="--scheduler") from None
        raise scenario.locate(exc, spec.where(exc)) from None


def result_row(problem: Problem, label: str, seed: int, schedule: Schedule, scheduler_time_s: float,
               bound: float, info: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row of the results document for ``schedule``.  A plan ``info`` with a proof status (the
    exact scheduler's ``optimal``, or ``search``'s ``proven_by_bound``) adds ``proven_optimal`` and
    ``makespan_bound`` (the solver's bound on the planned makespan, never below ``bound``).  An ``info``
    with ``done`` (each task's done time under workflow-system overheads) ends the run at their max."""
    done = info.get("done") if info else None
    metrics = schedule.metrics(problem, end=None if done is None or not done.size else float(done.max()))
    row: dict[str, Any] = {"scheduler": label, "seed": int(seed), "seed_space": space_of(seed)}
    row.update({k: v for k, v in metrics.as_dict().items() if k != "utilization_per_processor"})
    row["lower_bound"] = bound
    row["gap_to_lower_bound"] = metrics.makespan / bound - 1.0 if bound > 0 else float("nan")
    row["scheduler_time_s"] = float(scheduler_time_s)
    if info and "optimal" in info:
        row["proven_optimal"] = bool(info["optimal"])
        row["makespan_bound"] = max(float(info.get("bound", bound)), bound)
    elif info and "proven_by_bound" in info:  # `search`: proven when it reached its lower bound
        row["proven_optimal"] = bool(info["proven_by_bound"])
        row["makespan_bound"] = max(float(info.get("lower_bound", bound)), bound)
    row["schedule"] = ScheduleRecords(problem, schedule)
    return row


def run_scenario(scenario: Scenario, *, schedulers: Sequence[str] | None = None, seed: int | None = None,
                 repetitions: int | None = None, progress: Progress | None = None,
                 days: Days | None = None) -> RunReport:
    """Run the chosen schedulers (default: the scenario's) for ``repetitions`` repetitions (default:
    the scenario's) from ``seed`` (default: the scenario's); see the module docstring for the
    guarantees.  ``days``: the scenario's days already drawn (:class:`~simsched.run.streams.Days`, e.g.
    for the offered-load line): a job stream's day is drawn once for the problem, the probe and every
    run.  User errors raise :class:`SimschedError`; an invalid simulated schedule raises
    :class:`SimulatorBug`."""
    base = scenario.seed if seed is None else int(seed)
    reps = scenario.repetitions if repetitions is None else int(repetitions)
    if base < 0:
        raise SimschedError(f"the seed must be >= 0, got {base}", field="--seed")
    if reps < 1:
        raise SimschedError(f"repetitions must be >= 1, got {reps}", field="--repetitions")
    specs = _select(scenario, schedulers)
    limits.check_runs(len(specs) * reps, field="repetitions" if repetitions is None else "--repetitions")
    days = Days(scenario) if days is None else days
    problem = build_problem(scenario, base, graph=days.graph(base) if scenario.is_dynamic else None)
    bound = lower_bound(problem)
    noisy = not scenario.noise.deterministic
    power = scenario.energy.power.tables(problem.platform) if scenario.energy is not None else None
    report = RunReport(scenario, problem, base, reps, [s.label for s in specs], bound)
    model = execution_kwargs(scenario, problem)
    if scenario.is_dynamic:  # job streams, failures, stragglers: the online engine, one day per repetition
        _run_dynamic(scenario, specs, base, reps, report, progress, days)
        return report
    def gangs() -> GangNeed | None:
        return first_gang_need(scenario, [(problem.graph, None)])

    for spec, r, seed_r, scheduler, checkpoint in _repetitions(scenario, specs, problem, base, reps, report, progress,
                                                               gangs):
        scheduler_rng, noise_rng = repetition_streams(seed_r)
        factors = scenario.noise.factors(problem.n_tasks, noise_rng) if noisy else None
        info: dict[str, Any] = {}
        try:
            schedule, elapsed = run_once(problem, spec, factors, scheduler_rng,
                                         report.warnings.append if r == 0 else None, scheduler, info, power, model)
        except SchedulerDeclined as exc:  # same problem every repetition: declined for all of them
            report.declined[spec.label] = str(exc)
            report.schedulers.remove(spec.label)
            report.rows = [row for row in report.rows if row["scheduler"] != spec.label]
            report.schedules.pop(spec.label, None)
            continue
        _check_simulated(spec.label, schedule, problem, exact=not noisy and info.get("pstate") is None and not model,
                         transfers="storage" not in model)
        report.rows.append(result_row(problem, spec.label, seed_r, schedule, elapsed, bound, info))
        if scenario.energy is not None:
            off = off_intervals_of(scheduler, problem, schedule)  # power-off's intervals, as in a stream
            fields, acc = scenario.energy.measure(problem, schedule, info.get("pstate"), off=off)
            report.rows[-1].update(fields)
            if r == 0:  # the report's power-over-time plot: first run of each scheduler
                report.rows[-1]["power"] = power_profile(acc, problem.platform,
                                                         scenario.energy.power.time_unit_s)
        if checkpoint is not None:
            report.rows[-1]["checkpoint"] = checkpoint
        _warning_field(report.rows[-1], report.notices.get(spec.label, []))
        if r == 0:
            report.schedules[spec.label] = schedule
    if not report.schedulers:
        raise SchedulerDeclined("every scheduler declined this problem: "
                                + "; ".join(f"{k}: {v}" for k, v in report.declined.items()))
    return report


def _repetitions(scenario: Scenario, specs: Sequence[SchedulerChoice], probe: Problem, base: int, reps: int,
                 report: RunReport, progress: Progress | None,
                 gang_need: Callable[[], GangNeed | None]) -> Iterator[tuple[SchedulerChoice, int, int, Any,
                                                                             str | None]]:
    """The runs of a scenario, scheduler by scheduler: ``(spec, r, seed, scheduler, checkpoint id)``, the
    one loop both drivers share.  Every scheduler's first instance is constructed before any run (a
    constructor's refusal stops the run before any work), a scheduler that cannot place the workload's
    gang tasks (``gang_need()``, asked only when some scheduler lacks gang support) is refused before
    any run (:mod:`simsched.run.gangcheck`), that instance serves the training-range
    check (against ``probe``) and repetition 0, and each later repetition gets a fresh one: one
    construction per repetition.  A scheduler the consumer records in ``report.declined`` gets no
    further repetitions.  ``progress(done, total, label)`` before each run and once at the end."""
    total, done = len(specs) * reps, 0
    first = [_construct(scenario, spec) for spec in specs]
    if not all(getattr(instance, "multiprocessor_tasks", False) for instance in first):
        need = gang_need()
        for spec, instance in zip(specs, first):
            check_gang_support(scenario, need, spec, instance)
    for spec, instance in zip(specs, first):
        lines: list[str] = []
        checkpoint = learned_check(scenario, probe, spec, lines, instance)
        for line in lines:
            report.notice(spec.label, line)
        for r in range(reps):
            if spec.label in report.declined:
                done += reps - r
                break
            if progress is not None:
                progress(done, total, f"{spec.label} (repetition {r + 1}/{reps})")
            yield spec, r, base + r, instance if r == 0 else _construct(scenario, spec), checkpoint
            done += 1
    if progress is not None:
        progress(total, total, "done")


def _warning_field(row: dict[str, Any], lines: Sequence[str]) -> None:
    """Set the results row's ``warning`` (its lines joined by `` | ``, a line of several lines, such as
    a range warning with its particulars, made one by :func:`~simsched.outputs.one_line`) when there
    are lines; a row without any has no such field (rows of runs that keep their promises are unchanged)."""
    if lines:
        row["warning"] = " | ".join(one_line(line) for line in lines)


def _check_simulated(label: str, schedule: Schedule, problem: Problem, *, exact: bool, transfers: bool = True) -> None:
    """:class:`SimulatorBug` when the simulated schedule breaks an invariant (precedence, overlap,
    eligibility, and durations when ``exact``; network delays on edges unless data moved through
    storage, ``transfers`` False): a simulator bug, never a user error."""
    errors = validate_schedule(schedule, problem, check_durations=exact, transfers=transfers)
    if errors:
        raise SimulatorBug(f"{label}: the simulated schedule is invalid (a simulator bug): " + "; ".join(errors[:5]))


def _run_dynamic(scenario: Scenario, specs: Sequence[SchedulerChoice], base: int, reps: int, report: RunReport,
                 progress: Progress | None, days: Days) -> None:
    """Fill ``report`` (whose ``problem`` is day ``base``'s) through :mod:`simsched.run.streams`
    with one row per scheduler and repetition: the usual schedule metrics, the stream summary
    (:func:`~simsched.simulator.jobmetrics.stream_metrics`), ``failures``/``restarts``, ``engine``
    (which stream engine ran: ``simpy`` or ``compiled``, ``OnlineStats.engine``) and the
    per-job records under ``jobs``.  Simulated schedules are validated (precedence, no overlap,
    eligibility); an invalid one raises :class:`SimulatorBug`."""
    from simsched.run.streams import largest_job_problem, simulate_stream

    exact = scenario.noise.deterministic and scenario.disruptions is None and scenario.overheads is None \
        and scenario.storage is None
    probe = largest_job_problem(report.problem, days.stream(base))  # one job, for range checks
    noted: set[str] = set()  # schedulers whose runs' notes were printed
    def gangs() -> GangNeed | None:
        return first_gang_need(scenario, _days(days, base, reps))

    for spec, r, seed_r, scheduler, checkpoint in _repetitions(scenario, specs, probe, base, reps, report, progress,
                                                               gangs):
        try:
            run = simulate_stream(scenario, spec, seed_r, days.stream(seed_r), scheduler)
        except SimschedError as exc:  # the engine's refusals of failures/stragglers, located in the scenario
            if exc.field in ("failures", "stragglers") and exc.file is None:
                raise scenario.locate(exc, (exc.field,)) from None
            raise
        slowed = run.stats.pstate is not None and bool(run.stats.pstate.any())  # P-states stretch durations
        _check_simulated(spec.label, run.schedule, run.problem, exact=exact and not slowed,
                         transfers=scenario.storage is None)
        bound = report.lower_bound if r == 0 else lower_bound(run.problem)
        row = result_row(run.problem, spec.label, seed_r, run.schedule, run.scheduler_time_s, bound,
                         {"done": run.stats.done} if run.stats.done is not None else None)
        row.update(run.metrics.summary)
        row["failures"] = run.stats.failures
        row["restarts"] = run.stats.restarts
        row["slowed_tasks"] = run.stats.slowed_tasks
        row["engine"] = run.stats.engine  # which stream engine ran: "simpy" (the ground truth) or "compiled"
        row["jobs"] = run.metrics.records
        row.update(run.energy)
        if checkpoint is not None:
            row["checkpoint"] = checkpoint
        if run.notes and spec.label not in noted:  # printed for the first run that has them
            noted.add(spec.label)
            report.warnings.extend(run.notes)
        _warning_field(row, report.notices.get(spec.label, []) + run.notes)
        if getattr(scheduler, "fallback_reason", None):  # a learned policy that handed its decisions to a rule
            row["fallback"] = str(scheduler.fallback_reason)
        report.rows.append(row)
        if r == 0:
            report.schedules[spec.label] = run.schedule
            report.job_records[spec.label] = run.metrics.records
            power = run.power()
            if power is not None:
                row["power"] = power


def _days(days: Days, base: int, reps: int) -> Iterator[tuple[Any, Any]]:
    """Each repetition's graph with its job stream (None for a task graph): what the gang check reads."""
    stream_form = days.scenario.workload is not None and days.scenario.workload.form == "stream"
    for r in range(reps):
        s = days.stream(base + r)
        yield s.graph, s if stream_form else None
        if not stream_form:  # one graph, the same every repetition
            return


def summarize(report: RunReport, keys: Sequence[str] = ("makespan", "avg_turnaround", "avg_waiting",
                                                         "utilization", "scheduler_time_s")
              ) -> list[dict[str, Any]]:
    """Per scheduler (in run order): ``{"scheduler": label, key: (mean, std), ...}`` over the
    repetitions (population std; 0 for one repetition)."""
    out = []
    for label in report.schedulers:
        rows = report.rows_of(label)
        entry: dict[str, Any] = {"scheduler": label}
        for key in keys:
            values = np.array([r[key] for r in rows], dtype=np.float64)
            entry[key] = (float(values.mean()), float(values.std()))
        out.append(entry)
    return out
