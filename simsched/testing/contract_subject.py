"""The scheduler under test in the task-graph contract: fresh instances on demand, a plan executed or a
policy run in the SimPy engine, and a guard that checks every assignment a policy makes before the
engine sees it.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np

from simsched.errors import PlanError, SimschedError
from simsched.schedulers import registry
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule
from simsched.testing.contract_search import ContractViolation, violation


class Guard:
    """Wraps an online policy; checks every assignment before the engine sees it."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", None) or type(policy).__name__

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.problem = problem
        self.policy.reset(problem, rng)

    def decide(self, view: Any) -> Any:
        out = self.policy.decide(view)
        if out is None:
            return out
        out = list(out)
        prob = view.problem  # the arrived tasks only: assignments are in its numbering
        names, n, m = prob.graph.names, prob.n_tasks, prob.n_processors
        ready = set(view.ready.tolist())
        seen: set[int] = set()
        for item in out:
            try:
                if len(item) == 3:  # a triple also names a P-state (DVFS; the engine checks it)
                    t, p, pstate = item
                    int(pstate)
                else:
                    t, p = item
                members = tuple(int(q) for q in p) if isinstance(p, (tuple, list, np.ndarray)) else (int(p),)
                t, p = int(t), members[0]
            except (TypeError, ValueError, IndexError):
                raise violation("assignment", f"decide() returned {item!r}; an assignment is a (task, processor) "
                                              f"pair of integers, (task, processors) for a gang, or a (task, "
                                              f"processor, P-state) triple") from None
            label = repr(names[t]) if 0 <= t < n else f"index {t}"
            if t in seen:
                raise violation("assignment", f"at time {view.now:g} decide() assigned task {label} twice")
            if t not in ready:
                raise violation("assignment", f"at time {view.now:g} decide() assigned task {label}, which is not "
                                              f"ready (ready: {', '.join(names[i] for i in sorted(ready))})")
            if not 0 <= p < m:
                raise violation("assignment", f"decide() assigned task {label} to processor index {p}, which "
                                              f"does not exist")
            if not all(0 <= q < m for q in members):
                raise violation("assignment", f"decide() assigned task {label} to processor indices "
                                              f"{list(members)}, some of which do not exist")
            bad = [q for q in members if not prob.eligible[t, q]]
            if bad:
                raise violation("eligibility", f"decide() assigned task {label} to {prob.platform.names[bad[0]]!r}, "
                                               f"which may not run it")
            g = prob.graph
            if not g.procs_min[t] <= len(set(members)) == len(members) <= g.procs_max[t]:
                raise violation("gang", f"decide() assigned task {label} to {len(members)} processors "
                                        f"{list(members)}; it needs {g.procs_min[t]} to {g.procs_max[t]} distinct ones")
            seen.add(t)
        return out


class Subject:
    """The scheduler under test: fresh instances on demand, and how to run one on a problem."""

    def __init__(self, scheduler: Any, params: dict[str, Any]) -> None:
        self.hints: dict[str, int] = {}
        if isinstance(scheduler, str):
            cls = registry.load_class(scheduler)
            self.label, self.origin = scheduler, registry.origin(scheduler)
            self.prototype = registry.create(scheduler, **params)
            self.hints = registry.check_hints(scheduler, cls)
        elif inspect.isclass(scheduler):
            registry.check_interface(scheduler, f"class {scheduler.__qualname__}")
            self.label, self.origin = scheduler.__qualname__, f"class {scheduler.__module__}.{scheduler.__qualname__}"
            try:
                self.prototype = scheduler(**params)
            except Exception as exc:
                raise SimschedError(f"{self.label}: its constructor raised {type(exc).__name__}: {exc}") from None
            self.hints = registry.check_hints(getattr(self.prototype, "name", None), scheduler)
        else:
            registry.check_interface(type(scheduler), f"object {scheduler!r}")
            if params:
                raise SimschedError("parameters can only be given with a scheduler name or class")
            self.label = getattr(scheduler, "name", None) or type(scheduler).__qualname__
            self.origin, self.prototype = "instance", scheduler
            self.hints = registry.check_hints(self.label, type(scheduler))
        self.kind = registry.kind(type(self.prototype))

    def fresh(self) -> Any:
        """A new instance of the scheduler (a deep copy of the prototype)."""
        return copy.deepcopy(self.prototype)

    def plan(self, problem: Problem, seed: int) -> Plan:
        """A fresh planner's plan of ``problem``; a violation when it returns no :class:`Plan`."""
        plan = self.fresh().plan(problem, np.random.default_rng(seed))
        if not isinstance(plan, Plan):
            raise violation("interface", f"plan() returned {type(plan).__name__}, not a simsched Plan")
        return plan

    def execute(self, problem: Problem, plan: Plan) -> Schedule:
        """``plan`` executed in the SimPy engine; a violation when it cannot be."""
        from simsched.simulator.engine import execute_plan

        try:
            return execute_plan(problem, plan)
        except PlanError as exc:
            raise violation("not-executable", f"the plan cannot be executed: {exc}") from None

    def run_online(self, problem: Problem, seed: int, guard: bool = True) -> Schedule:
        """A fresh policy run on ``problem`` (each assignment checked by :class:`Guard` when ``guard``)."""
        from simsched.simulator.engine import run_online

        policy = Guard(self.fresh()) if guard else self.fresh()
        try:
            schedule, _ = run_online(problem, policy, None, np.random.default_rng(seed))
        except ContractViolation:
            raise
        except SimschedError as exc:
            if not guard:
                raise
            raise violation("stall" if "stalled" in str(exc) else "engine-rejected", str(exc)) from None
        return schedule

    def schedule(self, problem: Problem, seed: int) -> tuple[Schedule, Plan | None]:
        """What happened in the simulator (and the plan, for a planner)."""
        if self.kind == "static":
            plan = self.plan(problem, seed)
            return self.execute(problem, plan), plan
        return self.run_online(problem, seed), None
