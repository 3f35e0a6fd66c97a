"""The answer of a capacity question as data: plain, JSON-ready dicts, and how to read them.

Three kinds, told apart by ``kind``:

* ``"capacity"`` (:func:`capacity_answer`): per variant the fewest capacity (``None``: not reached
  below ``max``) and every capacity tried, each with its confidence (days met, Wilson and
  Clopper–Pearson intervals, per metric the mean with t and bootstrap intervals);
* ``"capacity-over"`` (:func:`over_answer`): one ``"capacity"`` answer per value of a scenario field;
* ``"mix"`` (:func:`simsched.capacity.mix.find_mix`): every mix of processor types tried, the
  cheapest passing one and the front of service against cost.

The tables, sentences and plots made of them are on the report floor (:mod:`simsched.report.capacity`);
``--json`` writes them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simsched.capacity.objective import Objective


def capacity_answer(model: Any, objective: Objective, seeds: Sequence[int], on_days: float, high: int,
                    entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``"capacity"`` answer: the question (objective, its clauses, the model's unit and display
    scales of the objective's metrics, the days, seeds and what they hold, ``on_days``, ``max``) and
    one entry per variant (``variant``, ``capacity``, ``levels``, ``simulations``, ``wall_s``)."""
    return {"kind": "capacity", "objective": objective.text, "clauses": objective.as_data(),
            "unit": model.unit, "display": {m: list(v) for m, v in getattr(model, "display", {}).items()
                                             if m in objective.metrics},
            "days": len(seeds), "seeds": [seeds[0], seeds[-1]],
            "days_note": model.describe_days(seeds) if hasattr(model, "describe_days") else None, "on_days": on_days,
            "max": high, "variants": entries}


def over_answer(field: str, values: Sequence[Any], cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``"capacity-over"`` answer: ``cells`` are ``{"value", "result"}``, each result a
    ``"capacity"`` answer."""
    return {"kind": "capacity-over", "field": field, "values": list(values), "cells": cells}


def level_of(entry: Mapping[str, Any], capacity: int | None) -> dict[str, Any] | None:
    """The evaluated level of ``capacity`` in one variant entry of a ``"capacity"`` answer."""
    return next((lv for lv in entry["levels"] if lv["capacity"] == capacity), None)


def shown_level(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The level that stands for a variant: its answer's, or (not reachable) the largest tried."""
    n = entry["capacity"]
    found = level_of(entry, n) if n is not None else max(entry["levels"], key=lambda x: x["capacity"])
    assert found is not None
    return found


def one_fewer(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The level one below a variant's answer (which failed), if it was tried; None without an answer."""
    n = entry["capacity"]
    return level_of(entry, n - 1) if n is not None else None


def display_of(result: Mapping[str, Any], metric: str) -> tuple[float, str]:
    """``(divide by, unit suffix)`` to show ``metric`` (seconds of autotuning jobs in hours)."""
    scale, unit = result.get("display", {}).get(metric, (1.0, ""))
    return float(scale), f" {unit}" if unit else ""
