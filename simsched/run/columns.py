"""The columns of a results row: what one run of a scenario measures, and the ids around it.

A row is one run (one scheduler, one seed, one repetition) of :func:`simsched.run.runner.run_scenario`
as a sweep (:mod:`simsched.study.work`) or a capacity search (:mod:`simsched.capacity.days`) saves it
in a results store (:mod:`simsched.run.store`, written by :mod:`simsched.run.tables`).
"""

from __future__ import annotations

GRAPH_METRICS = ("makespan", "avg_turnaround", "avg_waiting", "utilization", "slr", "speedup", "efficiency",
                 "lower_bound", "gap_to_lower_bound", "scheduler_time_s")
"""Metrics every run has (one task graph, or a job stream's whole day seen as one schedule)."""

STREAM_METRICS = ("jobs", "jct_mean", "jct_p50", "jct_p95", "jct_p99", "slowdown_mean", "slowdown_p95",
                  "waiting_mean", "waiting_p95", "deadline_miss_rate", "throughput", "lost_work",
                  "lost_work_fraction", "failures", "restarts", "offered_load")
"""Metrics of a run on a job stream, named as in the results JSON
(:func:`simsched.simulator.jobmetrics.stream_metrics`; docs/streams.md), in the rows of dynamic
scenarios only (a job stream, or failures/stragglers: the online engine's runs);
``deadline_miss_rate`` NaN when no job has a deadline; ``jobs`` the number of jobs of the day,
``failures``/``restarts`` the processor failures and task restarts.  Utilisation over all processors
is the ``utilization`` column."""

ENERGY_METRICS = ("energy_j", "peak_w", "carbon_g", "cost_usd")
"""Metrics of a run on a platform with a power model (docs/energy.md), named as in the results JSON:
energy in joules, the peak draw in watts, carbon in grams (with a carbon intensity) and money (with
prices); in the rows of such runs only."""

METRICS = GRAPH_METRICS + STREAM_METRICS + ENERGY_METRICS
"""Metric columns of a results row (floats; NaN for a failed run).  The row of a static task-graph
run has no stream metrics, and a results file of such runs no such columns; a run without a power
model has no energy metrics."""

HEAD = ("task_id", "point", "point_id")
MIDDLE = ("scheduler", "seed", "tasks")
TAIL = ("error", "checkpoint", "warning", "run_id", "run_s")
"""``checkpoint``: a learned scheduler's checkpoint id (12 hex digits of its SHA-256; empty for the
others); ``warning``: the run's warnings (e.g. an instance outside the checkpoint's training range)."""
FIXED = HEAD + MIDDLE + GRAPH_METRICS + TAIL
"""Columns every results store has; the study's override fields come between HEAD and MIDDLE, and
the :data:`STREAM_METRICS` (only in results with a job-stream run) and the :data:`ENERGY_METRICS` (only
in results with a run on a power model) between the metrics and TAIL."""

KNOWN = frozenset(FIXED) | frozenset(STREAM_METRICS) | frozenset(ENERGY_METRICS)
"""Every column that is not a study override field."""

DAY_RECORD = ("metrics", "version", "digest")
"""Columns a capacity search's store adds to each day (:mod:`simsched.capacity.daystore`): its metrics
as JSON, the code version and the row's digest.  Records of the day, not fields of a study point (its
``capacity`` is one)."""

VOLATILE = ("scheduler_time_s", "run_id", "run_s", "digest")
"""Columns that differ between two executions of the same run (wall times, which execution, and a sweep
row's digest, which covers the scheduler's wall time: :mod:`simsched.run.rowcheck`)."""
