"""Building what a scenario describes: its task graph (from the seed) and the
:class:`~simsched.simulator.problem.Problem` the schedulers see; graph errors located in the file.  And the
task graph of any workload source a command may be given (:func:`load_any_graph`)."""


from __future__ import annotations

from pathlib import Path

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario.cores import CoresError, on_cores
from simsched.scenario.load import Scenario, load_scenario
from simsched.scenario.locate import Loc, _closest
from simsched.simulator.problem import Problem, spread_over_platform
from simsched.workloads.taskgraph import TaskGraph


# --------------------------------------------------------------------------- building the problem
def _graph_error_loc(scenario: Scenario, message: str) -> Loc:
    """Best field for a graph error: the inline edge or task it names, else the workload."""
    from simsched.workloads.importers.records import error_position

    spec = scenario.workload
    if spec is None:
        return ("workload",)
    if not spec.written_inline:
        return spec.loc
    where = error_position(message, [t["name"] for t in spec.options["tasks"]],
                           [(a, b) for a, b, _ in spec.options["edges"]])
    return spec.loc if where is None else ("workload", *where)


def build_graph(scenario: Scenario, seed: int) -> TaskGraph:
    """The scenario's task graph; a generator draws from ``numpy.random.default_rng(seed)``.  Graph
    errors are located in the scenario file."""
    if scenario.workload is None or scenario.platform is None:
        raise SimschedError("this scenario has no platform and workload, only an autotuning section",
                            file=scenario.file)
    spec = scenario.workload
    if spec.form == "stream":
        from simsched.scenario.stream import build_stream

        return build_stream(scenario, seed).graph
    try:
        with limits.using(scenario.limits):
            graph = spec.build(scenario.platform.n_processors, np.random.default_rng(seed))
            if spec.form == "generator":
                # a built-in generator's fresh graph, held nowhere else: its matrix becomes the times in place
                graph = spread_over_platform(graph, scenario.platform, scenario.affinity, consume=True)
            return graph
    except SimschedError as exc:
        if spec.form == "generator" and exc.field in spec.options:  # a generator names its parameter
            loc, exc.field = ("workload", exc.field), None
            raise scenario.locate(exc, loc) from None
        raise scenario.locate(exc, _graph_error_loc(scenario, exc.message)) from None
    except (ValueError, OverflowError, MemoryError) as exc:  # numpy refusing a generator's parameters
        if spec.form != "generator":
            raise
        error = SimschedError(f"generator {spec.options['generator']!r} cannot use these parameters: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        raise scenario.locate(error, spec.loc) from None


def _check_platform_fields_used(scenario: Scenario, graph: TaskGraph) -> None:
    """Refuse a speed or affinity the cost model would ignore: an affinity for a task kind the
    workload does not have, or speeds/affinities beside explicit per-processor costs."""
    assert scenario.platform is not None and scenario.workload is not None
    kinds = set(graph.kind_names)
    for kind in scenario.affinity:
        if kind not in kinds:
            raise scenario.locate(SimschedError(
                f"no task of kind {kind!r} in the workload{_closest(kind, sorted(kinds))}; its kinds: "
                f"{', '.join(sorted(kinds))}"), ("platform", "affinity", kind))
    if graph.cost is None or scenario.workload.form in ("generator", "stream"):
        return
    where = "the inline tasks give" if scenario.workload.form == "inline" else "the workload file gives"
    if scenario.affinity:
        raise scenario.locate(SimschedError(
            f"{where} explicit per-processor costs, so the affinity would have no effect; give tasks "
            f"'work' instead of 'cost', or drop the affinity"), ("platform", "affinity"))
    speeds = scenario.platform.speed
    if (speeds != 1.0).any():
        proc = scenario.platform.processors[int(np.flatnonzero(speeds != 1.0)[0])]
        data = scenario.document.data if scenario.document is not None else {}
        entries = ((data.get("platform") or {}).get("processors") or []) if isinstance(data, dict) else []
        at = [j for j, e in enumerate(entries) if isinstance(e, dict) and e.get("speed", 1.0) != 1.0]
        raise scenario.locate(SimschedError(
            f"{where} explicit per-processor costs, so the speed {proc.speed:g} of processor {proc.name!r} would "
            f"have no effect; give tasks 'work' instead of 'cost', or drop the speed"),
            ("platform", "processors", at[0], "speed") if at else ("platform", "processors"))


def honour_cores(scenario: Scenario, graph: TaskGraph) -> TaskGraph:
    """``graph`` with its tasks of ``cores: k > 1`` as rigid gangs of ``k`` slots of one host
    (:mod:`simsched.scenario.cores`); a task needing more cores than any host has, or cores and procs
    both, is refused at its ``cores`` field (an inline task) or at the workload.  O(n + m)."""
    assert scenario.platform is not None
    try:
        return on_cores(graph, scenario.platform)
    except CoresError as exc:
        spec = scenario.workload
        loc = (("workload", "tasks", exc.task, "cores") if spec is not None and spec.written_inline
               else spec.loc if spec is not None else ("workload",))
        raise scenario.locate(exc, loc) from None


def build_problem(scenario: Scenario, seed: int | None = None, *, graph: TaskGraph | None = None) -> Problem:
    """The :class:`Problem` (graph on platform, with the cost model applied) for ``seed`` (default:
    the scenario's).  ``graph``: that seed's graph when the caller has drawn it already (a job
    stream's day, whose jobs the caller keeps), so that it is not drawn twice.  A cycle, a negative
    cost, an empty graph or a task no processor may run raise a :class:`SimschedError` naming the
    file, the field and the line."""
    if graph is None:
        graph = build_graph(scenario, scenario.seed if seed is None else seed)
    _check_platform_fields_used(scenario, graph)
    graph = honour_cores(scenario, graph)
    try:
        with limits.using(scenario.limits):
            limits.check_matrix(graph.n_tasks, scenario.platform.n_processors, structured=graph.cost is None)
        problem = Problem(graph, scenario.platform, scenario.affinity)
    except SimschedError as exc:
        raise scenario.locate(exc, _graph_error_loc(scenario, exc.message)) from None
    check_world_ends(scenario, problem)  # validate says what the run would refuse
    return problem


def check_world_ends(scenario: Scenario, problem: Problem) -> None:
    """Refuse, located at the scenario's ``failures``/``stragglers`` line, disruptions under which a run
    on ``problem`` would not end (:func:`~simsched.simulator.engine.disruptions.check_disruptions_end`).
    Nothing to check without disruptions.  O(n x m)."""
    if getattr(scenario, "disruptions", None) is None:
        return
    from simsched.simulator.engine.disruptions import check_disruptions_end

    try:
        check_disruptions_end(problem, scenario.disruptions)
    except SimschedError as exc:
        raise scenario.locate(exc, (exc.field,) if exc.field else ("failures",)) from None


# --------------------------------------------------------------------------- any workload source
def _is_scenario(path: Path) -> bool:
    """Whether the YAML file ``path`` is a scenario (it names a platform or schedulers) rather than a
    workload file of the ``yaml`` importer."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return False
    from simsched.yamlio import load_yaml

    data = load_yaml(path).data
    return isinstance(data, dict) and ("platform" in data or "schedulers" in data)


def load_any_graph(path: Path, form: str | None = None) -> tuple[TaskGraph, float | None]:
    """The task graph in a workload file (any importer form, ``form`` or from the extension), in a scenario
    (built exactly as ``simsched run`` builds it: its seed, its platform) or named by a model (``resnet18``,
    a name with no such file); and the scenario's mean bandwidth between processors (None otherwise, or
    when every link is infinitely fast).  O(reading and building the graph)."""
    from simsched.workloads.importers import load

    if form is None and not path.exists() and path.suffix == "":
        from simsched.workloads.dlmodels import ALIASES, MODELS

        if path.name.lower() in MODELS or path.name.lower() in ALIASES:
            return load(str(path), "model"), None
    if form is None and path.is_file() and _is_scenario(path):
        sc = load_scenario(path)
        if not sc.has_task_graph:
            raise SimschedError("the scenario has no task-graph workload", file=path)
        bw = sc.platform.bandwidth
        off = bw[~np.eye(bw.shape[0], dtype=bool)]
        off = off[np.isfinite(off)]
        return build_graph(sc, sc.seed), (float(off.mean()) if off.size else None)
    return load(path, form), None
