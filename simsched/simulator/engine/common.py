"""What the engine's drivers share: the decision-point priority, the event entry they push, a paused
garbage collector, per-task durations with noise factors, the uniform-link test, the check of a
model parameter."""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from simsched.errors import SimschedError, number_value, shown
from simsched.simulator.noise import check_factors
from simsched.simulator.problem import Problem

DECISION_PRIORITY = 2
"""SimPy priority of decision points: after every ordinary event (priority 1) at the same time, so
all that happens at one instant is batched into one decision."""


class Tick:
    """A triggered SimPy event reduced to what ``Environment.step`` reads (``callbacks``, ``_ok``,
    ``_value``): a driver pushes it on the event queue itself, ``(time, priority, eid, tick)``,
    exactly the entry ``Timeout``/``Environment.schedule`` would push (same time float, same eid
    sequence, so the same order), without their per-event bookkeeping.  O(1)."""

    __slots__ = ("callbacks", "_ok", "_value")

    def __init__(self, callback, value) -> None:
        self.callbacks = [callback]
        self._ok = True
        self._value = value


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


def uniform_link(latency: np.ndarray, inv_bandwidth: np.ndarray) -> tuple[float, float, float, float] | None:
    """``(diagonal latency, diagonal 1/bandwidth, link latency, link 1/bandwidth)`` when every
    diagonal entry of the (m, m) matrices is one value and every off-diagonal entry another (a
    uniform platform), else None.  Exact equality, so using the pair gives the same floats as the
    matrices.  O(m^2) once."""
    m = latency.shape[0]
    if m < 2:
        return None
    off = ~np.eye(m, dtype=bool)
    out = []
    for a in (latency, inv_bandwidth):
        d, o = a[0, 0], a[0, 1]
        if not ((np.diagonal(a) == d).all() and (a[off] == o).all()):
            return None
        out.append((float(d), float(o)))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def model_number(value: object, what: str, *, positive: bool = False) -> float:
    """``value`` as a float once checked to be a number (not a bool), finite and >= 0 (> 0 with
    ``positive``); :class:`SimschedError` naming ``what`` (e.g. ``"overheads: submit"``) otherwise.  O(1)."""
    x = number_value(value)  # NaN for a non-number, infinite for an integer beyond any float
    if math.isnan(x) and not isinstance(value, (float, np.floating)):
        raise SimschedError(f"{what} must be a number, got {shown(value)}")
    if not (math.isfinite(x) and (x > 0 if positive else x >= 0)):
        raise SimschedError(f"{what} must be finite and {'> 0' if positive else '>= 0'}, got {shown(value)}")
    return x
