"""pytest plugin for testing schedulers with simsched (registered through the ``pytest11`` entry
point, so it is active wherever simsched is installed; or load it with
``-p simsched.testing.pytest_plugin``).

Fixtures:

* ``simsched_problem`` — a small seeded problem (20 random tasks on 4 processors, 2 hosts);
* ``simsched_problem_factory`` — ``factory(tasks=20, processors=4, seed=0, ccr=1.0,
  heterogeneity=0.5, hosts=2)`` for other sizes;
* ``simsched_simulator`` — :class:`Simulator`: ``simulator.run(scheduler, problem, seed=0)`` plans
  (or drives an online policy) in the SimPy engine, validates the schedule and returns a
  :class:`Simulation` with the schedule and its metrics.

Marker ``@pytest.mark.simsched_baseline("baseline.json", tolerance=0.05, confidence=0.95)``: after
the test body passes, re-run the baseline's scenarios (path relative to the test file) and fail
the test, listing scheduler, metric, old and new value, when a metric regressed.  With
``--simsched-record-baseline`` the baseline is (re-)recorded instead, from the marker's
``scenarios=[...]`` or from the scenarios the existing baseline names.

Importing this module is cheap: simsched's simulator is loaded only when a fixture or the marker
is used.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

MARKER = "simsched_baseline"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("simsched")
    group.addoption("--simsched-record-baseline", action="store_true", default=False,
                    help="re-record the baselines of tests marked simsched_baseline instead of comparing")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(path, tolerance=0.05, confidence=0.95, scenarios=None): after the test, compare "
                   "a fresh run of the baseline's scenarios with it (simsched) and fail on a regression")


@dataclass
class Simulation:
    """One simulated run (already validated): the schedule, its metrics and the plan (static
    planners; None for online policies)."""

    schedule: Any
    metrics: Any
    plan: Any = None

    @property
    def makespan(self) -> float:
        return float(self.metrics.makespan)


class Simulator:
    """Runs a scheduler (name, import path, class or instance) on a problem in the SimPy engine."""

    def run(self, scheduler: Any, problem: Any, seed: int = 0, factors: Any = None) -> Simulation:
        """Plan and execute (static) or drive (online) ``scheduler`` with ``numpy`` seed ``seed`` and
        optional per-task duration ``factors``; ``AssertionError`` if the schedule is invalid."""
        import inspect

        import numpy as np

        from simsched.schedulers import registry
        from simsched.simulator.engine import execute_plan, run_online
        from simsched.simulator.schedule import validate_schedule

        if isinstance(scheduler, str):
            scheduler = registry.create(scheduler)
        elif inspect.isclass(scheduler):
            scheduler = scheduler()
        rng = np.random.default_rng(seed)
        plan = None
        if registry.kind(type(scheduler)) == "static":
            plan = scheduler.plan(problem, rng)
            schedule = execute_plan(problem, plan, factors)
        else:
            schedule, _ = run_online(problem, scheduler, factors, rng)
        errors = validate_schedule(schedule, problem, check_durations=factors is None)
        assert not errors, "invalid schedule: " + "; ".join(errors[:5])
        return Simulation(schedule, schedule.metrics(problem), plan)


def make_problem(tasks: int = 20, processors: int = 4, seed: int = 0, ccr: float = 1.0,
                 heterogeneity: float = 0.5, hosts: int = 2) -> Any:
    """A random layered DAG (Topcuoglu et al. 2002 parameters) with an explicit cost matrix on
    ``processors`` processors spread over ``hosts`` hosts (unit bandwidth, latency 0.1).  O(n m)."""
    import numpy as np

    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.generators import random_dag

    rng = np.random.default_rng(seed)
    graph = random_dag(tasks, ccr=ccr, heterogeneity=heterogeneity, processors=processors, rng=rng)
    procs = [Processor(f"p{i}", host=f"h{i % max(1, hosts)}") for i in range(processors)]
    return Problem(graph, Platform.uniform(procs, bandwidth=1.0, latency=0.1))


@pytest.fixture
def simsched_problem_factory() -> Callable[..., Any]:
    """``factory(tasks=20, processors=4, seed=0, ccr=1.0, heterogeneity=0.5, hosts=2)`` -> Problem."""
    return make_problem


@pytest.fixture
def simsched_problem() -> Any:
    """20 random tasks on 4 processors in 2 hosts (seed 0)."""
    return make_problem()


@pytest.fixture
def simsched_simulator() -> Simulator:
    """A :class:`Simulator`: ``simsched_simulator.run(scheduler, problem, seed=0)``."""
    return Simulator()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """After a marked test body passes, compare with its baseline.  A new-style wrapper: a failing test body
    re-raises at the ``yield`` (no baseline run), and a regression fails the test through ``pytest.fail``
    without pluggy's teardown warning that an old-style ``hookwrapper`` raising after its yield gives."""
    result = yield
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        _baseline_check(item, marker)
    return result


def _baseline_check(item: pytest.Item, marker: pytest.Mark) -> None:
    from simsched.errors import SimschedError
    from simsched.testing import baseline as bl

    if not marker.args:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER} needs the baseline path")
    here = Path(str(item.fspath)).parent
    path = here / str(marker.args[0])
    opts = marker.kwargs
    try:
        if item.config.getoption("--simsched-record-baseline"):
            scenarios = [here / s for s in opts.get("scenarios") or []]
            if not scenarios:
                doc = bl.load_baseline(path)
                scenarios = [path.resolve().parent / s["path"] for s in doc["scenarios"]]
            bl.write_baseline(bl.record_baseline(scenarios, path), path)
            return
        cmp = bl.compare_baseline(path, tolerance=float(opts.get("tolerance", 0.05)),
                                  confidence=float(opts.get("confidence", 0.95)))
    except SimschedError as exc:
        pytest.fail(f"simsched baseline {path}: {exc}", pytrace=False)
    if cmp.failed:
        pytest.fail(f"simsched baseline {path}: a scheduler got worse\n{cmp.format()}", pytrace=False)
