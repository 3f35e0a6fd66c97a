"""The contract of an autotuning policy (``simsched check load-aware``): properties every registered
``autotune`` policy meets, searched with hypothesis like the task-graph contract
(:mod:`simsched.testing.contract`).

Each example is a small random job set (1-4 jobs of 1-4 tuning tasks, 1-40 trials per task, GPU or
CPU targets, staggered arrivals) on 1-2 servers of 1-16 cores and 1-3 GPUs, simulated by
:func:`simsched.simulator.autotune_engine.simulate` (the ground truth).  Properties:

* ``complete`` — every job runs all its rounds as build, measure, update in order, on one server,
  never before it arrives, measuring exactly its trial budget;
* ``conflict-free`` — no two measurements share a device and no measurement overlaps CPU work on its
  host (skipped for a policy that declares ``conflict_free = False``, i.e. ``uncontrolled``);
* ``determinism`` — the same jobs give the same stages twice.

Cost ≈ properties x examples x one simulation (stages x policy cost), plus shrinking on a defect.
Source of the invariants: the load-aware scheduling of autotuning jobs (issue 6) and Ansor's
build/measure/update rounds (Zheng et al., OSDI 2020).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from simsched.schedulers import registry
from simsched.simulator.autotune_engine import AutotuneResult, ServerSpec, simulate
from simsched.testing.contract_search import ContractReport, search_property, violation
from simsched.testing.strategies import ProblemSpace
from simsched.workloads.autotuning import PRESETS, JobPlan, JobSpec, TuningTask, plan_job

AUTOTUNE_PROPERTIES: dict[str, str] = {
    "complete": "each job: all its rounds on one server, after it arrives",
    "conflict-free": "no shared device; no measuring beside CPU work",
    "determinism": "same jobs => same stages",
}
TOL = 1e-9
_TASKS = (TuningTask("c1", "conv", 2e8, (3, 64, 7)), TuningTask("c2", "conv", 1e8, (64, 64, 3), 2),
          TuningTask("c4", "conv", 5e7, (64, 128, 1)), TuningTask("fc", "dense", 1e6, (512, 1000)))


@dataclass(frozen=True)
class AutotuneCase:
    """One example: the planned jobs and the servers."""

    plans: tuple[JobPlan, ...]
    servers: tuple[ServerSpec, ...]

    def __str__(self) -> str:
        jobs = "; ".join(f"{p.spec.name}: {len(p.spec.tasks)} tasks x {p.spec.trials_per_task} trials, batch "
                         f"{p.spec.batch_size}, {p.spec.target}, arrives {p.spec.arrival:g} s" for p in self.plans)
        servers = "; ".join(f"{s.name}: {s.cores} cores, {len(s.devices)} gpu" for s in self.servers)
        return f"jobs: {jobs}\nservers: {servers}"


@st.composite
def autotune_cases(draw: Any, max_jobs: int = 4) -> AutotuneCase:
    """Small random job sets on one or two servers (see the module docstring)."""
    servers = tuple(ServerSpec(f"s{h}", draw(st.integers(1, 16)), ("gpu",) * draw(st.integers(1, 3)))
                    for h in range(draw(st.integers(1, 2))))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    plans = []
    for j in range(draw(st.integers(1, max_jobs))):
        target = draw(st.sampled_from(["gpu", "gpu", "cpu"]))
        tasks = _TASKS[: draw(st.integers(1, len(_TASKS)))]
        spec = JobSpec(f"j{j}", tasks, trials_per_task=draw(st.integers(1, 40)), batch_size=draw(st.integers(1, 16)),
                       target=target, arrival=draw(st.sampled_from([0.0, 0.0, 30.0, 200.0])), params=PRESETS[target])
        plans.append(plan_job(spec, rng))
    return AutotuneCase(tuple(plans), servers)


def _overlap(a: Any, b: Any) -> bool:
    return a.start < b.end - TOL and b.start < a.end - TOL


def _run(name: str, params: dict[str, Any], case: AutotuneCase) -> AutotuneResult:
    return simulate(list(case.plans), list(case.servers), registry.create(name, kinds=("autotune",), **params))


def _prop_complete(res: AutotuneResult, case: AutotuneCase) -> None:
    for j, plan in enumerate(case.plans):
        mine = sorted((s for s in res.stages if s.job == j), key=lambda s: (s.start, s.end))
        if [s.kind for s in mine] != ["build", "measure", "update"] * plan.n_rounds:
            raise violation("rounds", f"job {plan.spec.name}: stages {[s.kind for s in mine][:9]}... are not "
                                      f"{plan.n_rounds} rounds of build, measure, update")
        if any(a.end > b.start + TOL for a, b in zip(mine, mine[1:])):
            raise violation("order", f"job {plan.spec.name}: a stage starts before the previous one ends")
        if mine and mine[0].start < plan.spec.arrival - TOL:
            raise violation("arrival", f"job {plan.spec.name} starts at {mine[0].start:g} s, before it arrives "
                                       f"at {plan.spec.arrival:g} s")
        if len({s.host for s in mine}) > 1:
            raise violation("host", f"job {plan.spec.name} runs on several servers")
        if sum(s.configs for s in mine if s.kind == "measure") != plan.spec.total_trials:
            raise violation("trials", f"job {plan.spec.name} does not measure its {plan.spec.total_trials} trials")


def _prop_conflict_free(res: AutotuneResult) -> None:
    measures = [s for s in res.stages if s.kind == "measure"]
    cpu = [s for s in res.stages if s.kind != "measure"]
    for i, a in enumerate(measures):
        for b in measures[i + 1:]:
            if a.device == b.device and _overlap(a, b):
                raise violation("shared-device", f"two measurements share device {a.device} at {b.start:g} s")
        for b in cpu:
            if a.host == b.host and _overlap(a, b):
                raise violation("co-located", f"a measurement overlaps a {b.kind} on host {a.host} at "
                                              f"{max(a.start, b.start):g} s")


def check_autotune_policy(name: str, examples: int = 50, seed: int = 0, *, params: dict[str, Any] | None = None,
                          properties: list[str] | None = None) -> ContractReport:
    """Check the registered autotuning policy ``name`` against :data:`AUTOTUNE_PROPERTIES`; returns a
    :class:`~simsched.testing.contract_search.ContractReport` (``.passed``, ``.defects``, ``.format()``).
    A name that is not a registered ``autotune`` policy, a bad parameter or an unknown property
    raises :class:`~simsched.errors.SimschedError`.  Cost: see the module docstring."""
    from simsched.errors import SimschedError

    t0 = time.perf_counter()
    if examples < 1:
        raise SimschedError(f"examples must be >= 1, got {examples}")
    params = dict(params or {})
    prototype = registry.create(name, kinds=("autotune",), **params)
    unknown = set(properties or ()) - set(AUTOTUNE_PROPERTIES)
    if unknown:
        raise SimschedError(f"unknown contract properties {sorted(unknown)}; choose from {list(AUTOTUNE_PROPERTIES)}",
                             field="--property")
    hints = registry.check_hints(name, type(prototype))
    examples = max(1, min(examples, hints.get("examples", examples)))
    wanted = [p for p in AUTOTUNE_PROPERTIES if (properties is None or p in properties)
              and not (p == "conflict-free" and getattr(prototype, "conflict_free", True) is False)]
    space = ProblemSpace(min_tasks=1, max_tasks=4, min_processors=1, max_processors=2)
    report = ContractReport(name, "autotune", registry.origin(name), seed, space,
                            scope="up to 4 jobs on 2 servers")

    def complete(case: AutotuneCase, _seed: int) -> None:
        _prop_complete(_run(name, params, case), case)

    def conflict_free(case: AutotuneCase, _seed: int) -> None:
        _prop_conflict_free(_run(name, params, case))

    def determinism(case: AutotuneCase, _seed: int) -> None:
        a, b = _run(name, params, case), _run(name, params, case)
        key = [(s.job, s.rnd, s.kind, s.host, s.device, s.start, s.end) for s in a.stages]
        if key != [(s.job, s.rnd, s.kind, s.host, s.device, s.start, s.end) for s in b.stages]:
            raise violation("nondeterministic", "the same jobs gave different stages on a second run")

    checks = {"complete": complete, "conflict-free": conflict_free, "determinism": determinism}
    strategy = st.tuples(autotune_cases(), st.integers(0, 2**32 - 1))
    for prop in wanted:
        report.properties.append(search_property(prop, checks[prop], strategy, examples, seed,
                                                 description=AUTOTUNE_PROPERTIES[prop]))
    report.elapsed_s = time.perf_counter() - t0
    return report
