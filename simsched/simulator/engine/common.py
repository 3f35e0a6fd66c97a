"""What the engine's drivers share: the decision-point priority, a paused garbage collector,
per-task durations with noise factors."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from simsched.simulator.noise import check_factors
from simsched.simulator.problem import Problem

DECISION_PRIORITY = 2
"""SimPy priority of decision points: after every ordinary event (priority 1) at the same time, so
all that happens at one instant is batched into one decision."""


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def durations(problem: Problem, base: np.ndarray, factors: np.ndarray | None) -> np.ndarray:
    return base if factors is None else base * check_factors(factors, problem.n_tasks)

