"""Every registered scheduler x {no failures, failures that happen after all the work is done}: where the
failures cannot matter, the schedule and the energy are the same (issue #43, "nothing changes silently").

A ``failures:`` section moves a task-graph scenario from the static path (a plan executed, an online policy
run) to the dynamic one (the online engine with a disruption timeline, a static planner followed by
:class:`~simsched.run.streams.PlanFollower`).  A down interval that begins after the last task ended cannot
change anything: the same processors, start and finish times, and the same joules (static DVFS plans keep
their P-states, ``ecs`` its power model, ``power-off`` its off intervals, tasks their arrivals).  Batch
policies are held to the same on a cluster log (start and end of every job).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simsched.schedulers import registry  # noqa: E402

PARAMS: dict[str, dict[str, Any]] = {
    "power-cap": {"cap": 250},  # the default cap (1 W) cannot run any processor of this platform
    "power-off": {"timeout": 0.5},  # short enough that processors go off inside these small graphs
    "ga": registry.check_params("ga"),
    "search": registry.check_params("search"),
    "learned-priority": {"theta": [1.0, -0.5, 0.25]},  # a model given inline instead of a model file
}
"""Parameters a scheduler needs to run these small cases meaningfully (others run with their defaults)."""

EXTRAS = {"learned": "torch", "exact": "ortools"}
"""The module each optional extra needs: a scheduler whose extra is missing cannot run the case."""

GRAPH = [s.name for s in registry.SPECS.values() if s.kind in registry.TASK_GRAPH_KINDS]
BATCH = [s.name for s in registry.SPECS.values() if s.kind == "batch"]


PLATFORM = {"processors": [{"name": "c", "type": "cpu", "speed": 1.0, "count": 2},
                           {"name": "g", "type": "gpu", "speed": 2.0}],
            "network": {"bandwidth": 5.0, "latency": 0.1},
            "power": {"types": {"cpu": {"pstates": [{"speed": 1.0, "busy": 100, "idle": 10},
                                                     {"speed": 0.5, "busy": 30, "idle": 5}],
                                        "powered_off": 1, "off_delay": 0.2, "on_delay": 0.3,
                                        "off_energy": 4, "on_energy": 6},
                                "gpu": {"pstates": [{"speed": 1.0, "busy": 200, "idle": 20},
                                                     {"speed": 0.5, "busy": 60, "idle": 10}],
                                        "powered_off": 2}}}}


def _skip_reason(name: str) -> str | None:
    """Why ``name`` cannot run the case here (an optional extra it needs is not installed), else None."""
    for extra in registry.SPECS[name].extras:
        module = EXTRAS.get(extra)
        if module is not None and importlib.util.find_spec(module) is None:
            return f"{name} needs the optional extra {extra!r} ({module} is not installed)"
    return None


@st.composite
def graphs(draw: Any) -> tuple[list[dict], list[dict], int]:
    """A small task graph (1-6 tasks, some arriving late, edges forward only) and a seed."""
    n = draw(st.integers(1, 6))
    tasks = []
    for i in range(n):
        task: dict[str, Any] = {"name": f"t{i}", "work": draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, 5.0]))}
        arrival = draw(st.sampled_from([0.0, 0.0, 1.0, 2.5]))
        if arrival:
            task["arrival"] = arrival
        tasks.append(task)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(6, len(pairs)))) if pairs else []
    edges = [{"from": f"t{i}", "to": f"t{j}", "data": draw(st.sampled_from([0.0, 1.0, 4.0]))} for i, j in chosen]
    return tasks, edges, draw(st.integers(0, 50))


def _run(doc: dict[str, Any], directory: Path, down: str | None) -> dict[str, Any]:
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    doc = dict(doc)
    if down is not None:
        (directory / "down.csv").write_text(down)
        doc["failures"] = {"trace": "down.csv"}
    path = directory / ("failures.yaml" if down is not None else "plain.yaml")
    path.write_text(yaml.safe_dump(doc))
    return run_scenario(load_scenario(path)).rows[0]


def _records(row: dict[str, Any]) -> list[tuple]:
    return [(r["task"], r["processor"], r.get("processors"), r["start"], r["finish"], r.get("copy", False))
            for r in row["schedule"]]


@pytest.mark.parametrize("name", GRAPH)
def test_failures_after_the_work_change_nothing(name: str) -> None:
    reason = _skip_reason(name)
    if reason is not None:
        pytest.skip(reason)
    entry: Any = {"name": name, **PARAMS[name]} if name in PARAMS else name

    @settings(max_examples=6 if name in ("ga", "search", "optimal", "deepsched", "rl-world") else 15,
              deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(graphs(), st.sampled_from(["c0", "c1", "g"]))
    def check(case: tuple[list[dict], list[dict], int], processor: str) -> None:
        tasks, edges, seed = case
        doc = {"name": "after-the-work", "seed": seed, "platform": PLATFORM,
               "workload": {"tasks": tasks, "edges": edges}, "schedulers": [entry]}
        with tempfile.TemporaryDirectory() as tmp:
            plain = _run(doc, Path(tmp), None)
            end = max(r["finish"] for r in plain["schedule"])
            # down long after the last task ended (and after any power-off wake-up could matter)
            failed = _run(doc, Path(tmp), f"processor,start,end\n{processor},{10 * end + 100},{10 * end + 150}\n")
        if any(r.get("copy") for r in plain["schedule"]):  # heft-dup's copies cannot run online: said so
            assert "task copies of its plan left out" in failed["warning"]
            return
        assert _records(failed) == _records(plain)
        assert failed["makespan"] == plain["makespan"]
        assert failed["energy_j"] == pytest.approx(plain["energy_j"], rel=1e-12, abs=1e-9)
        assert failed.get("warning") == plain.get("warning")  # failures that cannot matter add nothing to say

    check()


def _swf(jobs: list[tuple[float, float, int]]) -> str:
    """An SWF log: (submit, run time, processors) per job; requested time = run time."""
    return "".join(f"{i + 1} {s:g} -1 {r:g} {p} -1 -1 {p} {r:g} -1 1 -1 -1 -1 0 -1 -1 -1\n"
                   for i, (s, r, p) in enumerate(jobs))


@pytest.mark.parametrize("name", BATCH)
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(jobs=st.lists(st.tuples(st.sampled_from([0.0, 1.0, 5.0, 20.0]), st.sampled_from([1.0, 3.0, 10.0]),
                               st.integers(1, 4)), min_size=1, max_size=8),
       processor=st.integers(0, 3))
def test_failures_after_the_work_change_no_batch_run(name: str, jobs: list[tuple[float, float, int]],
                                                      processor: int) -> None:
    """A batch policy on a cluster log: every job starts and ends as without failures."""
    from simsched.run.batch import replay
    from simsched.scenario import load_scenario

    jobs = sorted(jobs)
    doc: dict[str, Any] = {"name": "batch-after-the-work", "seed": 0,
                           "platform": {"processors": [{"name": "node", "type": "cpu", "count": 4}]},
                           "workload": {"stream": {"swf": "log.swf", "on_failure": "requeue"}},
                           "schedulers": [{"name": name, **PARAMS[name]} if name in PARAMS else name]}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "log.swf").write_text(_swf(jobs))
        (d / "plain.yaml").write_text(yaml.safe_dump(doc))
        scenario = load_scenario(d / "plain.yaml")
        plain = replay(scenario, scenario.schedulers[0])
        end = float(plain.end.max())
        (d / "down.csv").write_text(f"processor,start,end\nnode{processor},{10 * end + 100},{10 * end + 150}\n")
        (d / "failed.yaml").write_text(yaml.safe_dump({**doc, "failures": {"trace": "down.csv"}}))
        scenario = load_scenario(d / "failed.yaml")
        failed = replay(scenario, scenario.schedulers[0])
    assert failed.start.tolist() == plain.start.tolist()
    assert failed.end.tolist() == plain.end.tolist()
    assert failed.killed.tolist() == plain.killed.tolist()


def test_autotuning_scenarios_refuse_failures(tmp_path: Path) -> None:
    """Autotuning policies cannot run the case: the autotuning engine models no failures, so an autotuning
    scenario with a failures (or stragglers) section is refused at that section (exit 2, one located line,
    nothing written) instead of running as if it were not there."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    root = Path(__file__).resolve().parents[1] / "scenarios" / "autotuning"
    text = (root / "two_jobs_one_server.yaml").read_text().replace(": data/", f": {root / 'data'}/")
    for section in ("failures: {mtbf: 1000, mttr: 10}", "stragglers: {rate: 0.01, duration: 1, slowdown: 2}"):
        scenario = tmp_path / "s.yaml"
        scenario.write_text(text + section + "\n")
        out = tmp_path / "r.json"
        result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(out)])
        key = section.split(":")[0]
        assert result.exit_code == 2 and not out.exists(), result.output
        line = len(text.splitlines()) + 1
        assert f"s.yaml:{line}: {key}: an autotuning scenario takes no {key}" in " ".join(result.output.split())
