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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario import Scenario, SchedulerChoice, build_problem
from simsched.simulator.bounds import lower_bound
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
    warnings: list[str] = field(default_factory=list)
    """One line per static planner whose own predicted times the simulator does not reproduce, and per
    learned scheduler run outside its checkpoint's training range."""

    def rows_of(self, label: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["scheduler"] == label]


def repetition_streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """``(scheduler_rng, noise_rng)`` for one repetition's seed: independent, reproducible."""
    sched_ss, noise_ss = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(sched_ss), np.random.default_rng(noise_ss)


def _select(scenario: Scenario, names: Sequence[str] | None) -> list[SchedulerChoice]:
    """The scenario's schedulers, or those named (a name may be a label in the scenario or any
    registered scheduler, run with its default parameters)."""
    if not names:
        return list(scenario.schedulers)
    from simsched.schedulers import registry

    by_label = {s.label: s for s in scenario.schedulers}
    by_name = {s.name: s for s in scenario.schedulers}
    chosen = []
    for name in names:
        spec = by_label.get(name) or by_name.get(name)
        if spec is None:
            try:  # unknown names, other kinds and plug-ins that cannot load raise here; nothing is constructed
                registry.check_kind(name)
                cls = registry.load_class(name)
            except SimschedError as exc:
                raise exc.located(field="--scheduler") from None
            spec = SchedulerChoice(name, {}, name, cls, ("--scheduler",))
        if spec not in chosen:
            chosen.append(spec)
    return chosen


def prediction_mismatch(problem: Problem, plan: Plan) -> str | None:
    """The first task whose planned start or finish the simulator (without noise) does not
    reproduce, as ``"task 't3': planned start 10 but simulated 12"``; None when they agree or the plan
    has no times.  O(n log n + e) through the fast evaluator (equal to the engine's times)."""
    from simsched.simulator.evaluate import evaluate_plan

    if plan.start is None and plan.finish is None:
        return None
    simulated = evaluate_plan(problem, plan)
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
             scheduler: Any = None) -> tuple[Schedule, float]:
    """Run one scheduler once in the simulator; returns the schedule and the scheduler's own wall
    time (planning time of a static planner, time inside ``decide`` of an online policy).
    ``scheduler``: the instance to run (default: a fresh one from ``spec``).  With ``warn``, a static
    planner whose predicted times the simulator does not reproduce is reported (one line naming the
    first such task)."""
    from simsched.schedulers import registry
    from simsched.simulator.engine import execute_plan, run_online

    if scheduler is None:
        scheduler = spec.create()
    if registry.kind(type(scheduler)) == "static":
        t0 = time.perf_counter()
        plan = scheduler.plan(problem, scheduler_rng)
        elapsed = time.perf_counter() - t0
        mismatch = prediction_mismatch(problem, plan) if warn is not None else None
        if mismatch is not None:
            warn(f"{spec.label}: its plan's predicted times differ from the simulated ones ({mismatch}); "
                 f"the simulated times count, and `simsched check` tests the planner")
        return execute_plan(problem, plan, factors), elapsed
    schedule, stats = run_online(problem, scheduler, factors, scheduler_rng)
    return schedule, float(stats.policy_time_s)


def learned_check(scenario: Scenario, problem: Problem, spec: SchedulerChoice, warnings: list[str],
                  scheduler: Any) -> str | None:
    """For a learned scheduler (``scheduler`` exposes the hooks ``range_warning`` and ``checkpoint_id``,
    see :class:`simsched.learned.training_range.RangeChecked`; reached by ``getattr``, no import): its
    checkpoint id, and a warning line appended to ``warnings`` when ``problem`` lies outside the
    checkpoint's training range."""
    hook = getattr(scheduler, "range_warning", None)
    if hook is None:
        return None
    wl = scenario.workload
    line = hook(problem, spec.label, (dict(wl.options), wl.form) if wl else None)
    if line:
        warnings.append(line)
    return scheduler.checkpoint_id


def _construct(scenario: Scenario, spec: SchedulerChoice) -> Any:
    """A fresh instance of ``spec``; a constructor's refusal is located at the scheduler's entry."""
    try:
        return spec.create()
    except SimschedError as exc:
        if spec.loc and spec.loc[0] == "--scheduler":
            raise exc.located(field="--scheduler") from None
        raise scenario.locate(exc, spec.loc) from None


def result_row(problem: Problem, label: str, seed: int, schedule: Schedule, scheduler_time_s: float,
               bound: float) -> dict[str, Any]:
    """One row of the results document for ``schedule``."""
    metrics = schedule.metrics(problem)
    row: dict[str, Any] = {"scheduler": label, "seed": int(seed)}
    row.update({k: v for k, v in metrics.as_dict().items() if k != "utilization_per_processor"})
    row["lower_bound"] = bound
    row["gap_to_lower_bound"] = metrics.makespan / bound - 1.0 if bound > 0 else float("nan")
    row["scheduler_time_s"] = float(scheduler_time_s)
    row["schedule"] = schedule.to_records(problem)
    return row


def run_scenario(scenario: Scenario, *, schedulers: Sequence[str] | None = None, seed: int | None = None,
                 repetitions: int | None = None, progress: Progress | None = None) -> RunReport:
    """Run the chosen schedulers (default: the scenario's) for ``repetitions`` repetitions (default:
    the scenario's) from ``seed`` (default: the scenario's); see the module docstring for the
    guarantees.  User errors raise :class:`SimschedError`; an invalid simulated schedule raises
    :class:`SimulatorBug`."""
    base = scenario.seed if seed is None else int(seed)
    reps = scenario.repetitions if repetitions is None else int(repetitions)
    if base < 0:
        raise SimschedError(f"the seed must be >= 0, got {base}", field="--seed")
    if reps < 1:
        raise SimschedError(f"repetitions must be >= 1, got {reps}", field="--repetitions")
    specs = _select(scenario, schedulers)
    limits.check_runs(len(specs) * reps, field="repetitions" if repetitions is None else "--repetitions")
    problem = build_problem(scenario, base)
    bound = lower_bound(problem)
    noisy = not scenario.noise.deterministic
    report = RunReport(scenario, problem, base, reps, [s.label for s in specs], bound)
    total, done = len(specs) * reps, 0
    first = [_construct(scenario, spec) for spec in specs]  # a constructor's refusal stops the run before any work
    for spec, instance in zip(specs, first):
        checkpoint = learned_check(scenario, problem, spec, report.warnings, instance)
        for r in range(reps):
            seed_r = base + r
            if progress is not None:
                progress(done, total, f"{spec.label} (repetition {r + 1}/{reps})")
            scheduler_rng, noise_rng = repetition_streams(seed_r)
            factors = scenario.noise.factors(problem.n_tasks, noise_rng) if noisy else None
            scheduler = instance if r == 0 else _construct(scenario, spec)  # once per repetition
            schedule, elapsed = run_once(problem, spec, factors, scheduler_rng,
                                         report.warnings.append if r == 0 else None, scheduler)
            errors = validate_schedule(schedule, problem, check_durations=not noisy)
            if errors:
                raise SimulatorBug(f"{spec.label}: the simulated schedule is invalid (a simulator bug): "
                                   + "; ".join(errors[:5]))
            report.rows.append(result_row(problem, spec.label, seed_r, schedule, elapsed, bound))
            if checkpoint is not None:
                report.rows[-1]["checkpoint"] = checkpoint
            if r == 0:
                report.schedules[spec.label] = schedule
            done += 1
    if progress is not None:
        progress(total, total, "done")
    return report


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
