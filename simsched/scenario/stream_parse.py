"""A ``workload.stream`` section validated into a :class:`~simsched.scenario.WorkloadSpec` of form
``stream`` (its :class:`~simsched.scenario.stream.StreamConfig`) or, for a cluster log, ``batch``: each
job source parsed as a workload form of its own (located under ``workload.stream.jobs[i]``), the
arrival process and size checked, and the stream's size refused before any arrival is drawn when it
exceeds the limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario.cluster_log import LOG_FORMATS, parse_batch_trace
from simsched.scenario.schema import SpeedupSpec
from simsched.scenario.stream import JobSource, StreamConfig, expected_jobs
from simsched.scenario.stream_section import StreamSection
from simsched.scenario.stream_traces import read_arrival_trace
from simsched.workloads.jobs import piecewise_arrivals
from simsched.workloads.taskgraph import TaskGraph

if TYPE_CHECKING:
    from simsched.scenario.locate import Loc, Problems
    from simsched.scenario.workload import WorkloadSpec


def parse_stream(workload: Mapping[str, Any], m: int, base: Path, problems: Problems) -> WorkloadSpec | None:
    """Validate a ``workload`` section holding ``stream`` into a :class:`~simsched.scenario.WorkloadSpec`
    of form ``stream`` whose ``options["stream"]`` is the :class:`StreamConfig`."""
    from simsched.scenario.workload import WorkloadSpec

    if len(workload) > 1:
        problems.add(("workload",), f"a stream workload has only the 'stream' key (its jobs go under "
                                    f"stream.jobs); also given: {', '.join(k for k in workload if k != 'stream')}")
        return None
    raw = workload["stream"]
    top: Loc = ("workload", "stream")
    if isinstance(raw, dict) and any(k in raw for k in LOG_FORMATS):  # a cluster log of rigid jobs
        return parse_batch_trace(raw, m, base, problems)
    try:
        section = StreamSection.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(top, exc, StreamSection)
        return None
    entries = section.jobs if isinstance(section.jobs, list) else [section.jobs]
    if not entries:
        problems.add((*top, "jobs"), "a stream needs at least one job source")
        return None
    sources = []
    for i, entry in enumerate(entries):
        loc = (*top, "jobs", i) if isinstance(section.jobs, list) else (*top, "jobs")
        src = _parse_source(entry, loc, m, base, problems)
        if src is not None:
            sources.append(src)
    if len(sources) != len(entries):
        return None
    arr = section.arrivals
    cfg = StreamConfig(sources, count=section.count, horizon=section.horizon,
                       slack=section.deadline.slack if section.deadline else None)
    if section.procs is not None:
        lo, hi = section.procs
        if not lo <= hi <= m:
            problems.add((*top, "procs"), f"procs is [lo, hi] with 1 <= lo <= hi <= the platform's {m} processors, "
                                          f"got {list(section.procs)}")
            return None
        if section.deadline is not None:
            problems.add((*top, "deadline"), "a stream of rigid tasks (procs) has no deadlines")
            return None
        cfg.procs = (int(lo), int(hi))
    if arr.trace is None:
        if (section.count is None) == (section.horizon is None):
            problems.add(top, "give the stream's size: count (jobs) or horizon (time), one of the two")
            return None
        if arr.poisson is not None:
            cfg.poisson = float(arr.poisson)
        else:
            cfg.rates = [(float(t), float(r)) for t, r in arr.rates or []]
            try:
                piecewise_arrivals(cfg.rates, np.random.default_rng(0), count=1)
            except SimschedError as exc:
                problems.add_error((*top, "arrivals", "rates"), exc)
                return None
        if not _size_ok(section, cfg, m, top, problems):
            return None
    else:
        if section.count is not None or section.horizon is not None:
            problems.add((*top, "count" if section.count is not None else "horizon"),
                         "a traced stream has one job per trace line; drop count/horizon")
            return None
        path = Path(arr.trace) if Path(arr.trace).is_absolute() else base / arr.trace
        try:
            cfg.trace = read_arrival_trace(path, sources, m)
        except SimschedError as exc:
            problems.add_error((*top, "arrivals", "trace"), exc)
            return None

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:  # platform-free view: see build_stream
        raise SimschedError("a stream workload is built with its platform (scenario.stream.build_stream)")

    return WorkloadSpec("stream", {"stream": cfg}, build, top)


class _Prefixed:
    """A problem collector that reports a sub-workload's ``("workload", ...)`` locations under
    ``prefix`` (so a bad job entry is located at ``workload.stream.jobs[i]...``)."""

    def __init__(self, inner: Problems, prefix: Loc) -> None:
        self.inner, self.prefix = inner, prefix
        self.doc = inner.doc

    @property
    def items(self) -> list[SimschedError]:
        return self.inner.items

    def _map(self, loc: Loc) -> Loc:
        return self.prefix + tuple(loc[1:]) if loc and loc[0] == "workload" else tuple(loc)

    def add(self, loc: Loc, message: str) -> None:
        self.inner.add(self._map(loc), message)

    def add_error(self, loc: Loc, error: SimschedError) -> None:
        self.inner.add_error(self._map(loc), error)

    def add_validation(self, prefix: Loc, exc: ValidationError, model: Any = None) -> None:
        self.inner.add_validation(self._map(prefix), exc, model)


_SOURCE_KEYS = ("weight", "priority", "name", "procs", "serial", "speedup", "same_host")


def _parse_source(raw: Any, loc: Loc, m: int, base: Path, problems: Problems) -> JobSource | None:
    from simsched.scenario.workload import _parse_workload

    if not isinstance(raw, dict):
        problems.add(loc, f"a job source is a workload form (generator: ..., wfcommons: FILE, ...), got {raw!r}")
        return None
    if "stream" in raw:
        problems.add((*loc, "stream"), "a stream's jobs cannot themselves be streams")
        return None
    form = {k: v for k, v in raw.items() if k not in _SOURCE_KEYS}
    extras: dict[str, Any] = {}
    for key, kind in (("weight", f"a number > 0 and <= {limits.MAX_VALUE:g}"),
                      ("priority", f"a finite number of magnitude <= {limits.MAX_VALUE:g}")):
        if key in raw:
            v = raw[key]
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and limits.finite_value(v) and (
                key != "weight" or v > 0)
            if not ok:
                problems.add((*loc, key), f"{key} must be {kind} (got {v!r})")
                return None
            extras[key] = float(v)
    demand = _source_demand(raw, loc, m, problems)
    if demand is None:
        return None
    tasks = None
    if "generator" in form and isinstance(form.get("tasks"), list):
        rng_ = form["tasks"]
        if (len(rng_) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in rng_)
                or not 1 <= rng_[0] <= rng_[1]):
            problems.add((*loc, "tasks"), f"a task-count range is [lo, hi] with 1 <= lo <= hi (got {rng_!r})")
            return None
        tasks = (int(rng_[0]), int(rng_[1]))
        form["tasks"] = tasks[1]  # checked at its largest size
    before = len(problems.items)
    spec = _parse_workload(form, m, base, _Prefixed(problems, loc))  # type: ignore[arg-type]
    if spec is None or len(problems.items) > before:
        return None
    name = str(raw.get("name") or (spec.options["generator"] if spec.form == "generator"
                                   else Path(str(spec.options.get("path", spec.form))).name))
    named = (*loc, spec.form) if spec.form in raw else tuple(loc)  # the field naming its file, if any
    return JobSource(spec, extras.get("weight", 1.0), extras.get("priority", 0.0), name, tasks, *demand, loc=named)


def _source_demand(raw: Mapping[str, Any], loc: Loc, m: int, problems: Problems
                   ) -> tuple[tuple[int, int] | None, float | None, tuple[float, float] | None, bool | None] | None:
    """A job source's ``procs`` (k, or [lo, hi] with 1 <= lo <= hi <= m), ``serial`` (in [0, 1]),
    Downey's ``(A, sigma)`` from ``speedup`` (as a task's, :class:`~simsched.scenario.schema.SpeedupSpec`)
    and ``same_host``, or None with the problem recorded at its field.  O(1)."""
    procs, serial = raw.get("procs"), raw.get("serial")

    def whole(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= m

    if procs is not None:
        pair = [procs, procs] if not isinstance(procs, list) else procs
        if len(pair) != 2 or not all(whole(x) for x in pair) or pair[0] > pair[1]:
            problems.add((*loc, "procs"), f"procs is k or [k_min, k_max] with 1 <= k_min <= k_max <= the "
                                          f"platform's {m} processors (got {procs!r})")
            return None
        procs = (int(pair[0]), int(pair[1]))
    if serial is not None:
        if not (isinstance(serial, (int, float)) and not isinstance(serial, bool) and 0 <= serial <= 1):
            problems.add((*loc, "serial"), f"serial is a fraction in [0, 1] (got {serial!r})")
            return None
        serial = float(serial)
    downey = None
    if raw.get("speedup") is not None:
        try:
            spec = SpeedupSpec.model_validate(raw["speedup"])
        except ValidationError as exc:
            problems.add_validation((*loc, "speedup"), exc, SpeedupSpec)
            return None
        if serial is not None or procs is None or procs[0] == procs[1]:
            problems.add((*loc, "speedup"), "a speedup model applies to moldable tasks: give procs: [k_min, k_max] "
                                            "with k_min < k_max, and no serial beside it")
            return None
        if spec.model == "downey":
            downey = (float(spec.A), float(spec.sigma))  # type: ignore[arg-type]
        else:
            serial = float(spec.serial or 0.0)
    same_host = raw.get("same_host")
    if same_host is not None and not isinstance(same_host, bool):
        problems.add((*loc, "same_host"), f"same_host is true or false (got {same_host!r})")
        return None
    return procs, serial, downey, same_host


def _size_ok(section: StreamSection, cfg: StreamConfig, m: int, top: Loc, problems: Problems) -> bool:
    """Refuse, before any arrival is drawn, a stream whose jobs (``count``, or ``horizon`` x rate)
    exceed ``max_jobs``, or whose jobs x largest generated job exceed ``max_tasks`` or the
    ``max_memory_mb`` of the (tasks x processors) matrices.  Located at ``count`` or ``horizon``.  O(sources)."""
    where = (*top, "count" if section.count is not None else "horizon")
    jobs = expected_jobs(cfg)
    largest = max((int(s.tasks[1]) if s.tasks is not None else int(s.spec.options.get("tasks", 1))
                   if s.spec.form == "generator" and isinstance(s.spec.options.get("tasks", 1), int) else 1)
                  for s in cfg.sources)
    try:
        limits.check_amount(jobs, "max_jobs", what="the jobs this stream sends (count, or horizon x rate)")
        limits.check_tasks(int(min(jobs * largest, 1e18)), field=".".join(map(str, where)))
        limits.check_matrix(int(min(jobs * largest, 1e18)), m, structured=True)
    except SimschedError as exc:
        exc.field = None
        problems.add_error(where, exc)
        return False
    return True

