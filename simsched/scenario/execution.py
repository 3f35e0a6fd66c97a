"""The parts of the model of execution a platform may name beyond processors and network:
workflow-system ``overheads`` and a ``storage`` service (both off when absent; docs/execution-model.md).

:func:`parse_execution` turns the validated ``platform.overheads``/``platform.storage`` sections into the
engine's :class:`~simsched.simulator.engine.Overheads` and :class:`~simsched.simulator.engine.Storage`
(with the bytes per unit of edge data the I/O plan is built with); :func:`describe_execution` is the
phrase ``simsched validate`` prints for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simsched.errors import SimschedError
from simsched.scenario.locate import Problems
from simsched.scenario.schema import PlatformSpec
from simsched.simulator.engine.overheads import FIELDS, Overheads
from simsched.simulator.engine.storage import Storage

DEFAULT_DATA_UNIT = 1e6
"""Bytes per unit of edge data when neither ``platform.storage.data_unit`` nor the workload importer's
``data_unit`` option says: the WfFormat and DAX importers' default (megabytes)."""


@dataclass(frozen=True)
class StorageSetup:
    """``platform.storage`` read: the service, and ``data_unit`` bytes per unit of the workload's edge
    data (each edge becomes a file of ``edge_data x data_unit`` bytes)."""

    storage: Storage
    data_unit: float


def parse_execution(spec: PlatformSpec, workload_options: Mapping[str, Any] | None,
                    problems: Problems) -> tuple[Overheads | None, StorageSetup | None]:
    """The overheads (None when absent or all zero: today's model) and the storage setup (None when
    absent) of a validated platform section; a refusal is recorded in ``problems`` at its field.
    ``workload_options``: the workload section's checked options, whose ``data_unit`` (an importer's)
    is the storage's default bytes per unit of edge data.  O(1)."""
    overheads = storage = None
    if spec.overheads is not None:
        try:
            built = spec.overheads.build()
            overheads = built if built.active else None
        except SimschedError as exc:
            problems.add_error(("platform", "overheads"), exc)
    if spec.storage is not None:
        s = spec.storage
        unit = s.data_unit
        if unit is None:
            given = (workload_options or {}).get("data_unit")
            unit = float(given) if isinstance(given, (int, float)) and not isinstance(given, bool) and given > 0 \
                else DEFAULT_DATA_UNIT
        try:
            storage = StorageSetup(Storage(s.bandwidth, s.latency), unit)
        except SimschedError as exc:
            problems.add_error(("platform", "storage"), exc)
    return overheads, storage


def describe_execution(overheads: Overheads | None, storage: StorageSetup | None) -> str:
    """``"; overheads: submit 13.5 s, ...; storage: 1e+08 B/s, latency 0 s, edge data x 1e+06 B"`` for
    what is set, or ``""``.  O(1)."""
    out = ""
    if overheads is not None:
        given = [f"{name.replace('_', ' ')} {getattr(overheads, name):g} s" for name in FIELDS
                 if getattr(overheads, name)]
        out += f"; overheads: {', '.join(given)}"
    if storage is not None:
        out += (f"; storage: {storage.storage.bandwidth:g} B/s shared, latency {storage.storage.latency:g} s, "
                f"edge data x {storage.data_unit:g} B")
    return out
