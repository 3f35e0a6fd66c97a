"""Stepping an online run one assignment at a time: the engine side of a gymnasium env."""

from __future__ import annotations

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.engine.common import gc_paused as _gc_paused
from simsched.simulator.engine.disruptions import Disruptions
from simsched.simulator.engine.loop import make_run
from simsched.simulator.engine.overheads import Overheads
from simsched.simulator.engine.stats import OnlineStats
from simsched.simulator.engine.storage import Storage, TaskIO
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule


class OnlineSession:
    """An online run advanced one assignment at a time: the engine side of a gymnasium env.

    ``reset()`` starts the run and returns the first :class:`DecisionView` (``None`` if there is
    nothing to decide).  A decision point is an instant with ready tasks and at least one idle
    processor.  ``assign(task, processor)`` applies one assignment (same rules and errors as
    :func:`run_online`); while ready tasks and an idle processor remain at the same instant it
    returns the next view at once, otherwise it runs the SimPy environment until the next decision
    point (paused by ``StopSimulation`` in the decision callback) and returns that view, or
    ``None`` when every task has finished.  The dynamics are exactly :func:`run_online`'s — one
    engine, two drivers (``overheads``, ``storage`` and ``io`` as there).  Cost per ``assign``: the
    events processed up to the next decision.
    """

    def __init__(self, problem: Problem, factors: np.ndarray | None = None,
                 disruptions: Disruptions | None = None,
                 disruption_rng: np.random.Generator | None = None, name: str = "agent", *,
                 overheads: Overheads | None = None, storage: Storage | None = None,
                 io: TaskIO | None = None) -> None:
        self.problem = problem
        self._run = make_run(problem, None, factors, np.random.default_rng(0), disruptions, disruption_rng,
                             overheads=overheads, storage=storage, io=io)
        self._run.policy_name = name
        self.view: DecisionView | None = None
        self._schedule: Schedule | None = None

    @property
    def now(self) -> float:
        return float(self._run.env.now)

    @property
    def done(self) -> bool:
        return self.view is None

    @property
    def stats(self) -> OnlineStats:
        return self._run.stats

    @property
    def finish(self) -> np.ndarray:
        """(n,) finish times so far (``nan`` for unfinished tasks); read-only view."""
        f = self._run.finish.view()
        f.setflags(write=False)
        return f

    def reset(self) -> DecisionView | None:
        self._run.begin()
        return self._advance()

    def assign(self, task: int, processor: int) -> DecisionView | None:
        if self.view is None:
            raise SimschedError("the online session has ended: every task has finished")
        run = self._run
        run.assign_visible(int(task), int(processor))
        if run.ready and run.idle.any():
            run.stats.decisions += 1
            self.view = run.view("ready")
            return self.view
        return self._advance()

    def _advance(self) -> DecisionView | None:
        with _gc_paused():
            self.view = self._run.env.run()
        if self.view is None:
            self._schedule = self._run.result()[0]  # raises if tasks did not run
        return self.view

    def schedule(self) -> Schedule:
        """The schedule of the finished run."""
        if self._schedule is None:
            raise SimschedError("the online session has not finished yet")
        return self._schedule
