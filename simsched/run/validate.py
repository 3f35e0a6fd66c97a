"""What ``simsched validate`` says about a scenario that loaded: one ``ok: ...`` line naming what it holds,
and for a job stream the offered load of its first day.

The scenario has been loaded with every constructor's own checks (``load_scenario(path, construct=True)``);
here its problem is built too (a graph with a cycle, a task no processor may run, a world that never ends
are refused, located in the file), exactly as ``simsched run`` would build it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simsched.run.streams import OfferedLoad, offered_load_of
from simsched.scenario import Scenario, build_problem
from simsched.scenario.execution import describe_execution


@dataclass(frozen=True)
class Validated:
    """``line``: the ``ok: PATH: scenario NAME: ...`` line; ``load``: a job stream's offered load on the
    scenario's seed (None for any other scenario)."""

    line: str
    load: OfferedLoad | None = None


def validate_scenario(loaded: Scenario, path: str | Path) -> Validated:
    """The ``ok`` line of ``loaded`` (read from ``path``, as the user named it): an autotuning section, a
    cluster log's jobs, or a task graph's size, processors, schedulers, seed, repetitions and noise; a job
    stream's day is drawn once, for its problem and its offered load.  O(building the problem)."""
    from simsched.run.batch import is_batch, refuse_host_memory

    head = f"ok: {path}: scenario {loaded.name!r}: "
    if not loaded.has_task_graph:
        policies = loaded.autotuning.policies if loaded.autotuning is not None else None
        return Validated(head + "autotuning section"
                         + (f" (policies: {', '.join(map(str, policies))})" if isinstance(policies, list) else ""))
    if is_batch(loaded):
        refuse_host_memory(loaded)
        return Validated(head + f"{loaded.workload.describe()} on {loaded.platform.size_text()}; "
                                f"policies: {', '.join(loaded.scheduler_labels)}")
    stream = None
    if loaded.workload.form == "stream":  # draw the day once: for the problem and for the offered load
        from simsched.run.streams import stream_of

        stream = stream_of(loaded, loaded.seed)
    problem = build_problem(loaded, graph=None if stream is None else stream.graph)
    kinds: dict[str, int] = {}
    for p in problem.platform.processors:
        kinds[p.type] = kinds.get(p.type, 0) + 1
    noise = loaded.noise
    line = (head + f"{problem.n_tasks} tasks, {problem.graph.n_edges} edges "
            f"({loaded.workload.describe()}) on {problem.platform.size_text()} "
            f"({', '.join(f'{k} {t}' for t, k in kinds.items())}); "
            f"schedulers: {', '.join(loaded.scheduler_labels)}; seed {loaded.seed}, "
            f"{loaded.repetitions} repetition{'s' if loaded.repetitions > 1 else ''}; "
            f"noise: {'none' if noise.deterministic else f'{noise.model} (sigma {noise.sigma:g})'}"
            + describe_execution(loaded.overheads, loaded.storage)
            + ("; autotuning section present" if loaded.autotuning is not None else ""))
    return Validated(line, offered_load_of(loaded, loaded.seed, stream, problem))
