"""A cluster log as a scenario's workload: ``workload.stream`` naming ``swf``, ``sacct`` or ``gpu_trace``, read once
into rigid jobs (:class:`BatchTraceConfig`) that ``simsched run`` replays under the batch policies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from simsched.errors import SimschedError
from simsched.scenario.stream_section import BatchTraceSection, WindowsSection
from simsched.workloads.importers.swf import RigidTrace
from simsched.workloads.taskgraph import TaskGraph

if TYPE_CHECKING:
    from simsched.scenario.locate import Loc, Problems
    from simsched.scenario.workload import WorkloadSpec


LOG_FORMATS = ("swf", "sacct", "gpu_trace")
"""The keys of ``workload.stream`` that name a cluster log of rigid jobs, one per format."""


@dataclass
class BatchTraceConfig:
    """A validated cluster-log section: the rigid jobs, read once, whether jobs are killed at
    their requested time, and what a processor failure does to the job running there."""

    trace: RigidTrace
    kill: bool = False
    on_failure: str = "requeue"
    windows: WindowsSection | None = None
    """Each day a window of consecutive jobs (RLScheduler's protocol), or ``None``: the whole log."""
    estimates: str = "recorded"
    """``perfect``: policies that observe requested times may read run times where the log has none."""

    def missing_requested(self) -> str | None:
        """``"N of M jobs of FILE"`` when jobs of the log have no requested time and the scenario did not accept
        run times in their place (``estimates: perfect``); None otherwise.  O(1)."""
        k = self.trace.perfect_estimates
        return (None if not k or self.estimates == "perfect"
                else f"{k:,} of {self.trace.n:,} jobs of {Path(self.trace.source).name}")

    def describe(self) -> str:
        w = self.windows
        return (f"cluster log of {self.trace.n} rigid jobs ({Path(self.trace.source).name})"
                + (", killed at their requested time" if self.kill else "")
                + (f"; windows of {w.jobs:,} consecutive jobs from an empty machine" if w is not None else ""))


def parse_batch_trace(raw: Any, m: int, base: Path, problems: Problems) -> WorkloadSpec | None:
    """Validate a ``workload.stream`` section naming ``swf``, ``sacct`` or ``gpu_trace`` into a
    :class:`~simsched.scenario.WorkloadSpec` of form ``batch`` (``options["batch"]``: a
    :class:`BatchTraceConfig`); the file is read now, its errors located at its own line (or at the
    field naming it).  Dropped jobs are one warning line with their counts.  O(lines)."""
    from simsched.scenario.workload import WorkloadSpec
    from simsched.workloads.importers.gpu_trace import read_gpu_trace
    from simsched.workloads.importers.sacct import read_sacct
    from simsched.workloads.importers.swf import read_swf

    top: Loc = ("workload", "stream")
    try:
        section = BatchTraceSection.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(top, exc, BatchTraceSection)
        return None
    key = next(k for k in LOG_FORMATS if getattr(section, k) is not None)
    name = str(getattr(section, key))
    path = Path(name) if Path(name).is_absolute() else base / name
    try:
        if key == "swf":
            trace = read_swf(path, limit=section.limit, window=section.window, scale=float(section.scale),
                             max_procs=m, too_wide=section.too_wide, procs_from=section.procs_from,
                             keep=section.keep)
        elif key == "sacct":
            trace = read_sacct(path, limit=section.limit, window=section.window, scale=float(section.scale),
                               max_procs=m, too_wide=section.too_wide, procs_from=section.procs_from,
                               keep=section.keep, resource=section.resource or "cpus")
        else:
            trace = read_gpu_trace(path, limit=section.limit, scale=float(section.scale), max_procs=m,
                                   too_wide=section.too_wide)
    except SimschedError as exc:
        problems.add_error((*top, key), exc)
        return None

    if section.windows is not None:
        from simsched.workloads.log_windows import start_range

        try:
            start_range(trace.n, section.windows.jobs, section.windows.within)
        except SimschedError as exc:
            problems.add_error((*top, "windows", "jobs"), exc)
            return None

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:
        raise SimschedError("a cluster log (swf, sacct, gpu_trace) is a stream of rigid jobs, not a task graph: "
                            "`simsched run` replays it under batch policies")

    config = BatchTraceConfig(trace, section.kill, section.on_failure, section.windows, section.estimates)
    return WorkloadSpec("batch", {"batch": config, "path": str(path)}, build, top)

