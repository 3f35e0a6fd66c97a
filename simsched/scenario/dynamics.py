"""The ``failures`` and ``stragglers`` sections of a scenario (:class:`~simsched.scenario.schema.FailuresSection`,
:class:`~simsched.scenario.schema.StragglersSection`) turned into one
:class:`~simsched.simulator.engine.Disruptions` for the engine: per-processor failure rates and repair
times, a trace of down intervals, straggler episodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from simsched.errors import SimschedError
from simsched.scenario.schema import FailuresSection, StragglersSection
from simsched.scenario.stream_traces import read_down_trace
from simsched.simulator.engine import Disruptions
from simsched.simulator.platform import Platform

if TYPE_CHECKING:
    from simsched.scenario.locate import Problems


def parse_dynamics(failures: Any, stragglers: Any, platform: Platform | None, base: Path,
                   problems: Problems) -> Disruptions | None:
    """The ``failures`` and ``stragglers`` sections as one :class:`Disruptions` (None when neither
    is given).  Per-processor MTBF/MTTR: the processor's own entry, else its type's, else the
    default; a processor with none never fails at random."""
    if failures is None and stragglers is None:
        return None
    fail = strag = None
    try:
        fail = FailuresSection.model_validate(failures) if failures is not None else None
    except ValidationError as exc:
        problems.add_validation(("failures",), exc, FailuresSection)
    try:
        strag = StragglersSection.model_validate(stragglers) if stragglers is not None else None
    except ValidationError as exc:
        problems.add_validation(("stragglers",), exc, StragglersSection)
    if platform is None or (failures is not None and fail is None) or (stragglers is not None and strag is None):
        return None
    if platform.core_slots:  # a failure or a slowdown episode strikes one processor: here one core of a host
        for key, section in (("failures", failures), ("stragglers", stragglers)):
            if section is not None:
                problems.add((key,), f"{key} strike one processor at a time, and on a host with cores "
                                     f"(platform.processors[].cores > 1) a processor is one core: a host's {key} are "
                                     f"not modelled; give the processors no cores, or drop {key}")
        return None
    m = platform.n_processors
    rate, mttr, trace = np.zeros(m), np.full(m, 1.0), ()
    if fail is not None:
        types = set(platform.type_names)
        names = platform.names
        for t in fail.types:
            if t not in types:
                problems.add(("failures", "types", t), f"no processor has type {t!r}; the platform's types: "
                                                       f"{', '.join(sorted(types))}")
        for n in fail.processors:
            if n not in names:
                problems.add(("failures", "processors", n), f"no processor named {n!r}")
        for p, proc in enumerate(platform.processors):
            entry = fail.processors.get(proc.name) or fail.types.get(proc.type)
            mtbf, repair = (entry.mtbf, entry.mttr) if entry is not None else (fail.mtbf, fail.mttr)
            if mtbf is not None:
                rate[p], mttr[p] = 1.0 / mtbf, repair
        if fail.trace is not None:
            path = Path(fail.trace) if Path(fail.trace).is_absolute() else base / fail.trace
            try:
                trace = read_down_trace(path, names)
            except SimschedError as exc:
                problems.add_error(("failures", "trace"), exc)
    kw: dict[str, Any] = {}
    if strag is not None:
        kw = {"slowdown_rate": strag.rate, "slowdown_duration": strag.duration, "slowdown": strag.slowdown}
    return Disruptions(failure_rate=rate, repair_time=mttr, down_trace=trace, **kw)

