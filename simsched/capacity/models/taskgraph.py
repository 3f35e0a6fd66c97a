"""Days of a task-graph or job-stream scenario, sized by the count of one processor entry."""

from __future__ import annotations

import copy
from typing import Any

from simsched.capacity.models.base import entries_matching, model_source, row_metrics
from simsched.errors import SimschedError
from simsched.run.runner import run_scenario
from simsched.scenario import parse_scenario
from simsched.yamlio import YamlDocument


class TaskGraphModel:
    """Days of a task-graph (or stream) scenario: the processor entry that matches ``resource`` (its
    ``type``, or its ``name``) gets ``count = capacity``; every other entry stays.  A day is
    :func:`~simsched.run.runner.run_scenario` with one scheduler, the day's seed and one repetition;
    its metrics are the numeric fields of the run row (learned once, from one run of the scenario as
    written).  The scenario is re-validated per capacity (cached), so a cost matrix drawn per
    processor follows the count."""

    def __init__(self, doc: Any, resource: str | None, *, field_prefix: str = "capacity",
                 from_option: bool = False) -> None:
        """``resource`` names the entry to size (its type or name; None: the only entry).  Errors
        blame ``--resource`` when ``from_option`` (the command line named it), else
        ``<field_prefix>.resource`` at its line (or the processor list's, when the file names none)."""
        self.doc = doc
        data = doc.data
        procs = (data.get("platform") or {}).get("processors") or []
        matches = entries_matching(procs, resource)
        blame = "--resource" if from_option else f"{field_prefix}.resource"
        line = None if from_option else (doc.line_of((field_prefix, "resource"))
                                         or doc.line_of(("platform", "processors")))
        if resource is None and len(matches) != 1:
            raise SimschedError("the platform has several processor entries: name the one to size "
                                "(--resource TYPE or NAME)", field=blame, file=doc.file,
                                line=doc.line_of(("platform", "processors")))
        if not matches:
            known = sorted({str(p.get(k)) for p in procs if isinstance(p, dict) for k in ("type", "name") if p.get(k)})
            raise SimschedError(f"no processor entry of type or name {resource!r}; known: {', '.join(known)}",
                                field=blame, file=doc.file, line=line)
        if len(matches) > 1:
            raise SimschedError(f"{len(matches)} processor entries match {resource!r}: name one entry instead",
                                field=blame, file=doc.file, line=line)
        self.index = matches[0]
        entry = procs[self.index]
        self.resource = str(entry.get("type", "cpu") if resource is None else resource)
        self.unit = f"processors ({self.resource})"
        self.display: dict[str, tuple[float, str]] = {}
        self._scenarios: dict[int, Any] = {}
        base = parse_scenario(doc)
        if not base.has_task_graph:
            raise SimschedError("this scenario has no platform and workload to size", file=doc.file)
        self.base = base
        self.variants = list(base.scheduler_labels)
        self._metrics: list[str] | None = None
        self.source = model_source("task-graph", doc, resource=resource)

    @property
    def metrics(self) -> list[str]:
        """The metric names a day reports, learned from one run of the scenario as written (on first
        use: a worker process that rebuilds the model never needs them)."""
        if self._metrics is None:
            self._metrics = sorted(k for k, v in self(self.variants[0], self._base_count(), self.base.seed).items())
        return self._metrics

    def _base_count(self) -> int:
        return int(self.doc.data["platform"]["processors"][self.index].get("count") or 1)

    def scenario(self, capacity: int) -> Any:
        """The scenario with ``capacity`` processors in the sized entry (validated once per capacity)."""
        if capacity not in self._scenarios:
            if capacity < 1:
                raise SimschedError(f"a processor entry needs count >= 1, got {capacity}", field="capacity")
            data = copy.deepcopy(self.doc.data)
            data["platform"]["processors"][self.index]["count"] = int(capacity)
            self._scenarios[capacity] = parse_scenario(YamlDocument(data, self.doc.lines, self.doc.file))
        return self._scenarios[capacity]

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        report = run_scenario(self.scenario(capacity), schedulers=[variant], seed=seed, repetitions=1)
        return row_metrics(report.rows[0])
