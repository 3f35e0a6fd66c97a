"""A capacity search per value of one scenario field: ``simsched capacity S.yaml --over FIELD=V1,V2``.

"How many GPUs for each arrival rate?" is one :func:`simsched.run.capacity.answer` per value of the
field (``workload.stream.arrivals.poisson``, ``workload.tasks``, ``autotuning.arrivals.rate_per_hour``
...): the value is set in the raw scenario data with the study overrides
(:func:`simsched.study.overrides.apply_overrides`), the scenario and the question are validated
again, and the search runs over the same days (seeds) for every value (common random numbers).  Every
value is validated before the first search runs, so a bad value fails at once.  A full grid of
capacity x field with intervals per cell is a study (docs/capacity.md); this gives the fewest
capacity per value.  O(values x variants x days x log answer) simulations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from simsched.errors import SimschedError, shown
from simsched.study.overrides import apply_overrides, parse_path


def parse_over(text: str) -> tuple[str, list[Any]]:
    """``"workload.stream.arrivals.poisson=0.01,0.02"`` -> the field and its values, each read as
    YAML (numbers stay numbers).  :class:`SimschedError` (field ``--over``) for text without ``=``,
    a malformed path, no value, an empty value or a repeated one.  O(len(text))."""
    import yaml

    if not isinstance(text, str) or "=" not in text:
        raise SimschedError(f"expected FIELD=V1,V2,... (e.g. workload.stream.arrivals.poisson=0.01,0.02), "
                            f"got {text!r}", field="--over")
    name, _, raw = text.partition("=")
    name = name.strip()
    try:
        parse_path(name)
    except SimschedError as exc:
        raise SimschedError(exc.message, field="--over") from None
    parts = [p.strip() for p in raw.split(",")]
    if not raw.strip() or any(not p for p in parts):
        raise SimschedError(f"{name}: give one or more comma-separated values, none empty (got {raw!r})",
                            field="--over")
    values = []
    for p in parts:
        try:
            values.append(yaml.safe_load(p))
        except yaml.YAMLError:
            values.append(p)
    if len({repr(v) for v in values}) < len(values):
        raise SimschedError(f"{name}: a value is listed twice ({raw})", field="--over")
    return name, values


def answer_over(doc: Any, field: str, values: Sequence[Any], question: Callable[[Any], Any],
                progress: Any = None, runner: Any = None) -> dict[str, Any]:
    """For each value of ``field``: the capacity answer of the scenario ``doc`` (a
    :class:`~simsched.yamlio.YamlDocument`) with that value, ``question(doc)`` building the
    :class:`~simsched.run.capacity.CapacityQuestion` (the command line's options).  Every question
    is built (validated) before any search.  Returns ``{"kind": "capacity-over", "field", "values",
    "cells": [{"value", "result"}]}`` with each ``result`` as :func:`simsched.run.capacity.answer`'s, its
    days simulated by ``runner`` (a :class:`~simsched.run.capacity.DayRunner`; default: here)."""
    from simsched import limits
    from simsched.run.capacity import answer, simulations_bound
    from simsched.yamlio import YamlDocument

    limits.check_amount(len(values), "max_grid_points", what="the values of --over", where="--over")
    questions = []
    for value in values:
        try:
            data = apply_overrides(doc.data, {field: value})
            questions.append(question(YamlDocument(data, doc.lines, doc.file)))
        except SimschedError as exc:
            where = f"{exc.field}: " if exc.field and exc.field != field else ""
            raise SimschedError(f"{field}={shown(value)}: {where}{exc.message}", field="--over",
                                file=doc.file) from None
        if len(questions) == 1:  # the first value's search, times the values: refused before the others are built
            limits.check_amount(simulations_bound(questions[0]) * len(values), "max_runs",
                                what="the simulations of the --over searches (values x schedulers x days x "
                                     "2 log2(max) + 2)", where="--over")
    cells = []
    for value, q in zip(values, questions):
        def tagged(text: str, sims: int, done: bool, value: Any = value) -> None:
            if progress is not None:
                progress(f"{field}={value}: {text}", sims, done)
        cells.append({"value": value, "result": answer(q, tagged, runner)})
    return {"kind": "capacity-over", "field": field, "values": list(values), "cells": cells}
