"""Days of a cluster-log scenario (or a stream of rigid DAG tasks), sized by the machine's processors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simsched.run.batch import batch_jobs, replay
from simsched.scenario import Scenario


class BatchCapacityModel:
    """Days of a cluster-log scenario (or of a stream of rigid DAG tasks) for
    :mod:`simsched.capacity.search`: the jobs replayed under one batch policy on ``capacity``
    processors.  A log's replay is deterministic (the seed changes nothing), so one day answers; a
    stream, or a failure timeline, draws another day per seed.  A machine narrower than the widest
    job cannot run it (every metric ``inf``: the day fails).  Metrics: the numeric fields of a batch results row."""

    def __init__(self, scenario: Scenario, source: dict[str, Any] | None = None) -> None:
        """``source``: what rebuilds the model in a worker
        (:func:`~simsched.capacity.models.base.model_source`); a rebuilt model needs none."""
        self.base = scenario
        if source is not None:
            self.source = source
        self.variants = list(scenario.scheduler_labels)
        self.unit = "processors"
        self.widest = int(batch_jobs(scenario, scenario.seed)[0].procs.max())
        self.metrics = sorted(self(self.variants[0], scenario.platform.n_processors, scenario.seed))

    def describe_days(self, seeds: Sequence[int]) -> str | None:
        if self.base.workload.form != "batch" or self.base.disruptions is not None:
            return None  # a stream of DAG jobs, or failures: each seed draws another day
        return "a cluster log replays the same jobs on every day: one day is enough (--days 1)"

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        spec = next(s for s in self.base.schedulers if s.label == variant)
        if capacity < self.widest:
            return {k: float("inf") for k in getattr(self, "metrics", ["bsld_mean"])}
        m = replay(self.base, spec, processors=capacity, seed=seed).metrics()
        return {k: float(v) for k, v in m.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
