"""The ``platform.power``, ``platform.prices`` and ``platform.carbon`` sections as one
:class:`~simsched.simulator.power.EnergySetup` (docs/energy.md)::

    platform:
      processors: [{name: cpu, type: cpu, count: 4}, {name: gpu, type: gpu, count: 2, speed: 4}]
      power:
        types:
          cpu: {idle: 20, busy: 95, powered_off: 2}
          gpu:
            pstates: [{speed: 1.0, busy: 300, idle: 50}, {speed: 0.6, busy: 140, idle: 40}]
            switch_latency: 0.01
            switch_energy: 2
        processors: {gpu1: {idle: 60, busy: 320}}   # one processor overrides its type
        link_energy: 0.5                            # joules per unit of data moved
        time_unit_s: 1.0                            # seconds per simulated time unit
      prices:
        kwh: 0.25
        types: {gpu: {hourly: 2.5, billing: hour}, cpu: {purchase: 4000, lifetime_hours: 26280}}
      carbon: {trace: grid.csv, interpolation: linear, types: {gpu: other_site.csv}}

Every processor needs a power entry (its name's or its type's); prices and carbon need ``power``.
An intensity trace is a CSV with header ``time,intensity`` (gCO2/kWh), times starting at 0 and
strictly increasing, every cell a finite number >= 0; each problem is reported with file, field and line.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario.schema import PlatformSpec
from simsched.simulator.platform import Platform
from simsched.simulator.power import EnergySetup, IntensityTrace, PowerModel, Price

if TYPE_CHECKING:
    from simsched.scenario.locate import Problems


def parse_energy(spec: PlatformSpec, platform: Platform | None, base: Path, problems: Problems) -> EnergySetup | None:
    """The setup of ``spec``'s energy sections (None without ``power``); problems are recorded, located."""
    if spec.power is None:
        for key in ("prices", "carbon"):
            if getattr(spec, key) is not None:
                problems.add(("platform", key), f"{key} need a power model: add platform.power (docs/energy.md)")
        return None
    if platform is None:
        return None
    types = sorted(set(platform.type_names))
    names = set(platform.names)
    pw = spec.power
    for t in pw.types:
        if t not in types:
            problems.add(("platform", "power", "types", t), f"no processor has type {t!r}; the platform's types: "
                                                             f"{', '.join(types)}")
    slots = _core_slots_by_host(platform)
    for n in pw.processors:
        if n not in names and n not in slots:
            problems.add(("platform", "power", "processors", n), f"no processor named {n!r}")
    # a host of cores named here: each of its slots (one core) draws what the entry says
    by_name = {}
    for n, s in pw.processors.items():
        for slot in ([n] if n in names else slots[n]):
            by_name[slot] = s
    missing = sorted({p.type for p in platform.processors if p.name not in by_name and p.type not in pw.types})
    if missing:
        problems.add(("platform", "power", "types"), f"no power entry for processor type {missing[0]!r}: every "
                                                     f"processor needs one (its type's or its own)")
    model = PowerModel({t: s.build() for t, s in pw.types.items()},
                       {n: s.build() for n, s in by_name.items()}, pw.link_energy, pw.time_unit_s)
    prices, kwh = None, 0.0
    if spec.prices is not None:
        for t in spec.prices.types:
            if t not in types:
                problems.add(("platform", "prices", "types", t), f"no processor has type {t!r}")
        prices = {t: Price(p.hourly, p.billing, p.purchase, p.lifetime_hours or 0.0)
                  for t, p in spec.prices.types.items()}
        kwh = spec.prices.kwh
    carbon, by_type = None, {}
    c = spec.carbon
    if c is not None:
        for t in c.types:
            if t not in types:
                problems.add(("platform", "carbon", "types", t), f"no processor has type {t!r}")
        try:
            carbon = (IntensityTrace(np.zeros(1), np.array([c.intensity])) if c.intensity is not None
                      else read_intensity(_resolve(c.trace, base), c.interpolation))
        except SimschedError as exc:
            problems.add_error(("platform", "carbon", "trace"), exc)
        for t, f in c.types.items():
            try:
                by_type[t] = read_intensity(_resolve(f, base), c.interpolation)
            except SimschedError as exc:
                problems.add_error(("platform", "carbon", "types", t), exc)
    return EnergySetup(model, prices, kwh, carbon, by_type)


def _core_slots_by_host(platform: Platform) -> dict[str, list[str]]:
    """The core slots named by each host of cores and by each processor entry with cores (``{"node":
    ["node/c0", ...]}``: ``node/c<i>`` belongs to ``node``, and to its host when ``host`` is given);
    names without core slots are absent.  O(m)."""
    out: dict[str, list[str]] = {}
    for p in platform.processors:
        if p.core is not None:
            entry = p.name.rsplit("/c", 1)[0]
            for key in dict.fromkeys((entry, p.host)):
                out.setdefault(key, []).append(p.name)
    return out


def _resolve(name: str, base: Path) -> Path:
    p = Path(name)
    return p if p.is_absolute() else base / p


def read_intensity(path: Path, interpolation: str = "step") -> IntensityTrace:
    """An intensity trace from a CSV with header ``time,intensity``: times from 0, strictly
    increasing, no empty cell (a gap), intensities finite and >= 0.  Errors name the file, the column
    and the line.  O(rows); the file is size-capped by :func:`simsched.limits.read_input`."""
    # the one capped CSV reader of input tables: a byte-order mark, bytes that are not UTF-8, a NUL, a cell
    # past max_csv_field (an uncaught csv.Error before), a malformed quote and a cut row are located refusals, and
    # a missing file, a directory, a FIFO or a device each say what they are
    _, records = limits.read_csv_records(path, required=("time", "intensity"), what="an intensity trace "
                                         "(gCO2/kWh)", extra_ok=True)
    times, values = [], []
    for line, rec in records:
        row = []
        for col in ("time", "intensity"):
            if rec[col] == "":
                raise SimschedError("empty cell: a trace may not have gaps", file=path, line=line, field=col)
            try:
                x = float(rec[col])
            except ValueError:
                raise SimschedError(f"{rec[col]!r} is not a number", file=path, line=line, field=col) from None
            if not (math.isfinite(x) and 0 <= x <= limits.MAX_VALUE):
                raise SimschedError(f"must be a finite number >= 0, got {rec[col]}", file=path, line=line, field=col)
            row.append(x)
        if not times and row[0] != 0:
            raise SimschedError(f"the first time must be 0 (the trace must cover the whole run), got {row[0]:g}",
                                file=path, line=line, field="time")
        if times and row[0] <= times[-1]:
            raise SimschedError(f"times must increase: {row[0]:g} comes after {times[-1]:g}", file=path, line=line,
                                field="time")
        times.append(row[0])
        values.append(row[1])
    if not times:
        raise SimschedError("the trace has no rows", file=path, line=1)
    return IntensityTrace(np.array(times), np.array(values), interpolation)
