"""The power model: what each processor draws in each state (:class:`ProcessorPower`, its
:class:`PState` levels), per processor type or name (:class:`PowerModel`), and resolved for one
platform as arrays (:class:`PowerTables`).  The semantics are in :mod:`simsched.simulator.power`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from simsched.errors import SimschedError

if TYPE_CHECKING:
    from simsched.simulator.platform import Platform


@dataclass(frozen=True)
class PState:
    """One P-state (DVFS level): ``speed`` factor (a task takes ``1 / speed`` times its nominal time),
    watts when busy and when idle in it."""

    speed: float
    busy_w: float
    idle_w: float

    def __post_init__(self) -> None:
        for name in ("speed", "busy_w", "idle_w"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimschedError(f"{name} must be a finite number >= 0, got {v!r}")
        if not self.speed > 0:
            raise SimschedError(f"a P-state's speed must be > 0, got {self.speed:g}")
        if self.busy_w < self.idle_w:
            raise SimschedError(f"busy power {self.busy_w:g} W is below idle power {self.idle_w:g} W")


@dataclass(frozen=True)
class ProcessorPower:
    """What one processor draws (module docstring).  ``pstates[0]`` is the nominal P-state."""

    pstates: tuple[PState, ...]
    off_w: float = 0.0
    failed_w: float | None = None
    switch_latency: float = 0.0
    switch_energy_j: float = 0.0
    on_delay: float = 0.0
    on_energy_j: float = 0.0
    off_delay: float = 0.0
    off_energy_j: float = 0.0

    def __post_init__(self) -> None:
        if not self.pstates:
            raise SimschedError("a processor's power needs at least one P-state")
        for name in ("off_w", "switch_latency", "switch_energy_j", "on_delay", "on_energy_j", "off_delay",
                     "off_energy_j"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimschedError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.failed_w is None:
            object.__setattr__(self, "failed_w", self.off_w)
        elif not (math.isfinite(self.failed_w) and self.failed_w >= 0):
            raise SimschedError(f"failed_w must be a finite number >= 0, got {self.failed_w!r}")

    @classmethod
    def simple(cls, idle_w: float, busy_w: float, off_w: float = 0.0, **kw: float) -> ProcessorPower:
        """One P-state of speed 1."""
        return cls((PState(1.0, busy_w, idle_w),), off_w, **kw)


@dataclass(frozen=True)
class PowerModel:
    """Power per processor type, overridden per processor name; ``link_j_per_unit`` joules per unit of
    data moved between two processors; ``time_unit_s`` seconds per simulated time unit."""

    by_type: Mapping[str, ProcessorPower]
    by_name: Mapping[str, ProcessorPower] = field(default_factory=dict)
    link_j_per_unit: float = 0.0
    time_unit_s: float = 1.0

    def of(self, name: str, ptype: str) -> ProcessorPower:
        entry = self.by_name.get(name) or self.by_type.get(ptype)
        if entry is None:
            raise SimschedError(f"processor {name!r} (type {ptype!r}) has no power entry")
        return entry

    def tables(self, platform: Platform) -> PowerTables:
        """The model resolved for ``platform``'s processors (raises when one has no entry).  O(m K)."""
        return PowerTables.build([self.of(p.name, p.type) for p in platform.processors], self.link_j_per_unit,
                                 self.time_unit_s)


@dataclass(frozen=True)
class PowerTables:
    """The model as arrays over the ``m`` processors of one platform: ``speed``, ``busy_w``, ``idle_w``
    are (m, K) with K the largest number of P-states (missing P-states padded with NaN); the rest (m,)."""

    speed: np.ndarray
    busy_w: np.ndarray
    idle_w: np.ndarray
    n_pstates: np.ndarray
    off_w: np.ndarray
    failed_w: np.ndarray
    switch_latency: np.ndarray
    switch_energy_j: np.ndarray
    on_delay: np.ndarray
    on_energy_j: np.ndarray
    off_delay: np.ndarray
    off_energy_j: np.ndarray
    link_j_per_unit: float = 0.0
    time_unit_s: float = 1.0

    @classmethod
    def build(cls, entries: Sequence[ProcessorPower], link_j_per_unit: float = 0.0,
              time_unit_s: float = 1.0) -> PowerTables:
        m, k = len(entries), max((len(e.pstates) for e in entries), default=1)
        speed, busy, idle = (np.full((m, k), np.nan) for _ in range(3))
        for p, e in enumerate(entries):
            for j, s in enumerate(e.pstates):
                speed[p, j], busy[p, j], idle[p, j] = s.speed, s.busy_w, s.idle_w
        col = {name: np.array([float(getattr(e, name)) for e in entries]) for name in
               ("off_w", "failed_w", "switch_latency", "switch_energy_j", "on_delay", "on_energy_j", "off_delay",
                "off_energy_j")}
        return cls(speed, busy, idle, np.array([len(e.pstates) for e in entries], dtype=np.int64),
                   link_j_per_unit=float(link_j_per_unit), time_unit_s=float(time_unit_s), **col)

    @property
    def m(self) -> int:
        return self.speed.shape[0]

    def slowdown(self, processor: np.ndarray, pstate: np.ndarray) -> np.ndarray:
        """(n,) duration factor ``speed_0 / speed_k`` of each task's P-state ``k`` on its processor (the
        cost model's times are those at the nominal P-state 0); raises when a P-state does not exist
        there.  O(n)."""
        processor, pstate = np.asarray(processor, dtype=np.int64), np.asarray(pstate, dtype=np.int64)
        if pstate.size and ((pstate < 0) | (pstate >= self.n_pstates[processor])).any():
            raise SimschedError("a task is given a P-state its processor does not have")
        return self.speed[processor, 0] / self.speed[processor, pstate]
