"""What every capacity model shares: its plain-data source (to rebuild it in a worker process) and
the metrics of a day read off a run row."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def model_source(kind: str, doc: Any, **extra: Any) -> dict[str, Any]:
    """What rebuilds a capacity model in another process (plain data, picklable and JSON-able; see
    :func:`simsched.capacity.models.rebuild_model`): its ``kind``, the scenario data without its
    ``capacity:`` section (which changes no simulation, so a results store serves any objective),
    the absolute path of the file (relative workload paths resolve against it) and ``extra``."""
    data = {k: v for k, v in doc.data.items() if k != "capacity"} if isinstance(doc.data, dict) else doc.data
    file = str(Path(doc.file).resolve()) if getattr(doc, "file", None) is not None else None
    return {"kind": kind, "data": data, "file": file, **extra}


def with_energy_units(metrics: dict[str, float]) -> dict[str, float]:
    """``metrics`` with ``energy_kwh`` (from ``energy_j``) and ``carbon_kg`` (from ``carbon_g``) added
    where those are present (a scenario with a power model): the units objectives are written in,
    e.g. ``jct_p95 <= 300 and energy_kwh <= 500 and cost_usd <= 1200``."""
    if "energy_j" in metrics:
        metrics["energy_kwh"] = metrics["energy_j"] / 3.6e6
    if "carbon_g" in metrics:
        metrics["carbon_kg"] = metrics["carbon_g"] / 1000.0
    return metrics


def row_metrics(row: Mapping[str, Any]) -> dict[str, float]:
    """A day's metrics from the row of one :func:`~simsched.run.runner.run_scenario` repetition: its
    numeric fields but the seed, as floats, in the units objectives are written in
    (:func:`with_energy_units`).  O(fields)."""
    return with_energy_units({k: float(v) for k, v in row.items()
                              if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "seed"})


def entries_matching(processors: Any, name: str | None) -> list[int]:
    """Indices of the processor entries (raw scenario data) whose ``type`` (default ``cpu``) or
    ``name`` is ``name``; every entry for ``None``.  O(entries)."""
    return [i for i, p in enumerate(processors) if isinstance(p, dict)
            and (name is None or name in (p.get("type", "cpu"), p.get("name")))]
