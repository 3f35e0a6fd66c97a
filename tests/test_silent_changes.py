"""Nothing changes silently (issue #43): where a scenario's section would make a scheduler run otherwise
than it promises, the run keeps the promise or says so in one line and in the results row; mismatches
of scheduler and workload are refused before the run; ``explain`` names a policy's real kind.

The numbers are hand-computed on the golden case of docs/energy.md (two tasks a = 4 s and b = 2 s on two
processors with P-states speed 1: 100 W busy, 10 W idle; speed 0.5: 30 W busy, 5 W idle): HEFT 4 s and
620 J (a 4 x 100 + b 2 x 100 + p1 idle 2 x 10), ECS 8 s and 380 J (a at half speed 8 x 30 on p1, b at
half speed 4 x 30 on p0, p0 idle 4 x 5 at its last P-state).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import warning_paragraphs
from typer.testing import CliRunner

from simsched.cli.main import app

GOLDEN_PLATFORM = {"processors": [{"name": "p", "type": "cpu", "count": 2}],
                   "power": {"types": {"cpu": {"pstates": [{"speed": 1.0, "busy": 100, "idle": 10},
                                                            {"speed": 0.5, "busy": 30, "idle": 5}]}}}}
GOLDEN_TASKS = [{"name": "a", "cost": [4, 4]}, {"name": "b", "cost": [2, 2]}]


def _write(directory: Path, doc: dict[str, Any], down: str | None = None) -> Path:
    if down is not None:
        (directory / "down.csv").write_text("processor,start,end\n" + down)
        doc = {**doc, "failures": {"trace": "down.csv"}}
    path = directory / "s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _run(path: Path, *args: str) -> tuple[Any, dict[str, Any] | None]:
    out = path.parent / "r.json"
    out.unlink(missing_ok=True)
    result = CliRunner().invoke(app, ["run", str(path), "--json", str(out), *args])
    return result, json.loads(out.read_text()) if out.exists() else None


def _rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["scheduler"]: r for r in doc["results"]}


def _times(row: dict[str, Any]) -> list[tuple]:
    return [(s["task"], s["processor"], s["start"], s["finish"]) for s in row["schedule"]]


def test_ecs_keeps_its_p_states_and_power_model_under_failures_after_the_work(tmp_path: Path) -> None:
    doc = {"name": "golden", "platform": GOLDEN_PLATFORM, "workload": {"tasks": GOLDEN_TASKS},
           "schedulers": ["heft", "ecs"]}
    result, out = _run(_write(tmp_path, doc, "p0,100,110\n"))
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert (rows["heft"]["makespan"], rows["heft"]["energy_j"]) == (4.0, 620.0)
    assert (rows["ecs"]["makespan"], rows["ecs"]["energy_j"]) == (8.0, 380.0)  # not HEFT's 4 s, 620 J
    assert _times(rows["ecs"]) == [("a", "p1", 0.0, 8.0), ("b", "p0", 0.0, 4.0)]
    assert "warning" not in rows["ecs"]


def test_a_static_dvfs_plan_keeps_its_p_states_in_a_stream(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({"tasks": GOLDEN_TASKS}))
    doc = {"name": "one-job", "seed": 2, "platform": GOLDEN_PLATFORM,
           "workload": {"stream": {"jobs": {"inline": "job.yaml"}, "arrivals": {"poisson": 0.1}, "count": 1}},
           "schedulers": ["heft", "heft-slack", "ecs"]}
    result, out = _run(_write(tmp_path, doc))
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert [j["arrival"] for j in rows["ecs"]["jobs"]] == [0.0]  # the one job arrives at 0: the golden case
    assert (rows["heft"]["makespan"], rows["heft"]["energy_j"]) == (4.0, 620.0)
    assert (rows["ecs"]["makespan"], rows["ecs"]["energy_j"]) == (8.0, 380.0)
    assert _times(rows["ecs"]) == [("j0.a", "p1", 0.0, 8.0), ("j0.b", "p0", 0.0, 4.0)]
    # heft-slack: HEFT's plan with b (2 s of slack) slowed to 4 s at 30 W: a 4 x 100 + b 4 x 30, no idle left
    assert (rows["heft-slack"]["makespan"], rows["heft-slack"]["energy_j"]) == (4.0, 400.0 + 120.0)


def test_a_failure_that_hands_back_a_slowed_task_is_said_in_one_line_and_the_row(tmp_path: Path) -> None:
    doc = {"name": "golden", "platform": GOLDEN_PLATFORM, "workload": {"tasks": GOLDEN_TASKS},
           "schedulers": ["ecs"]}
    result, out = _run(_write(tmp_path, doc, "p1,1,2\n"))  # a runs on p1 at half speed from 0: killed at 1
    assert result.exit_code == 0, result.output
    row = _rows(out)["ecs"]
    assert row["failures"] == 1
    line = "ecs: 1 task(s) rerun after failures at full speed, not at the plan's P-states"
    assert row["warning"] == line
    shown = [x for x in result.output.splitlines() if x.startswith("warning: ecs:")]
    assert shown == [f"warning: {line}"] and len(shown[0]) <= 100


def test_a_task_graph_honours_arrivals_under_failures(tmp_path: Path) -> None:
    tasks = [{"name": "late", "cost": [3, 3], "arrival": 5}, {"name": "early", "cost": [2, 2], "arrival": 0}]
    doc = {"name": "arrivals", "platform": {"processors": [{"name": "p", "type": "cpu", "count": 2}]},
           "workload": {"tasks": tasks}, "schedulers": ["heft", "cpop", "mct"]}
    _, plain = _run(_write(tmp_path, doc))
    result, failed = _run(_write(tmp_path, doc, "p0,100,110\n"))
    assert result.exit_code == 0, result.output
    for label, row in _rows(failed).items():
        early = next(s for s in row["schedule"] if s["task"] == "early")
        assert (early["start"], early["finish"]) == (0.0, 2.0), label  # not 5, when the other task arrives
        assert _times(row) == _times(_rows(plain)[label]), label


def test_a_plan_followed_under_failures_sends_inputs_as_producers_finish(tmp_path: Path) -> None:
    """The closed plan replay sends an input when its producer finishes; so does a plan followed online on
    one task graph: 'c' (arriving at 1) after 'a' (0-0.5 on another processor, latency 0.1) starts at 1."""
    tasks = [{"name": "a", "cost": [0.5, 0.5, 0.25]}, {"name": "c", "cost": [0.5, 0.5, 0.25], "arrival": 1.0},
             {"name": "x", "cost": [0.5, 0.5, 0.25]}, {"name": "y", "cost": [0.5, 0.5, 0.25]}]
    doc = {"name": "sent", "platform": {"processors": [{"name": "c", "type": "cpu", "count": 2},
                                                       {"name": "g", "type": "gpu"}],
                                        "network": {"bandwidth": 5.0, "latency": 0.1}},
           "workload": {"tasks": tasks, "edges": [{"from": "a", "to": "c", "data": 0.0}]}, "schedulers": ["heft"]}
    _, plain = _run(_write(tmp_path, doc))
    _, failed = _run(_write(tmp_path, doc, "c0,100,110\n"))
    assert _times(_rows(failed)["heft"]) == _times(_rows(plain)["heft"])


def test_power_off_counts_its_off_intervals_on_a_task_graph(tmp_path: Path) -> None:
    """a (4 s) on p0 at 100 W; p1, idle from 0 with a timeout of 0, is off at 1 W until the end: 404 J,
    not 440 J (p1 idle at 10 W), with or without failures after the work."""
    doc = {"name": "off", "platform": {"processors": [{"name": "p", "type": "cpu", "count": 2}],
                                       "power": {"types": {"cpu": {"idle": 10, "busy": 100, "powered_off": 1}}}},
           "workload": {"tasks": [{"name": "a", "cost": [4, 4]}]}, "schedulers": [{"name": "power-off", "timeout": 0}]}
    for down in (None, "p1,50,60\n"):
        result, out = _run(_write(tmp_path, doc, down))
        assert result.exit_code == 0, result.output
        assert out["results"][0]["energy_j"] == 404.0


def test_task_copies_left_out_in_a_dynamic_world_are_said(tmp_path: Path) -> None:
    """heft-dup copies the entry task of a fork with heavy edges; under failures each task runs once, and
    the run says so (one line, the row's warning)."""
    tasks = [{"name": "s", "cost": [1, 1, 1]}] + [{"name": f"t{i}", "cost": [1, 1, 1]} for i in range(3)]
    edges = [{"from": "s", "to": f"t{i}", "data": 50.0} for i in range(3)]
    doc = {"name": "fork", "platform": {"processors": [{"name": "p", "type": "cpu", "count": 3}],
                                        "network": {"bandwidth": 5.0, "latency": 1.0}},
           "workload": {"tasks": tasks, "edges": edges}, "schedulers": ["heft-dup"]}
    _, plain = _run(_write(tmp_path, doc))
    copies = sum(1 for s in plain["results"][0]["schedule"] if s.get("copy"))
    assert copies == 2  # s copied onto the two other processors
    result, failed = _run(_write(tmp_path, doc, "p0,500,510\n"))
    assert result.exit_code == 0, result.output
    line = "heft-dup: 2 task copies of its plan left out: in a dynamic world each task runs once"
    assert failed["results"][0]["warning"] == line
    assert f"warning: {line}" in result.output.splitlines() and len(f"warning: {line}") <= 100


def test_gang_tasks_in_a_stream_are_refused_before_the_run(tmp_path: Path) -> None:
    """The gang source is the lighter one (its jobs are never the largest): mct is still refused before
    any run, at its scheduler entry, naming the workload field; nothing is written."""
    doc = {"name": "gangs", "platform": {"processors": [{"name": "gpu", "type": "gpu", "count": 4}]},
           "workload": {"stream": {"jobs": [{"generator": "random", "tasks": [6, 12], "weight": 5},
                                            {"generator": "random", "tasks": 2, "procs": [2, 2], "name": "wide"}],
                                   "arrivals": {"poisson": 0.01}, "count": 8}},
           "schedulers": ["heft", "mct"]}
    path = _write(tmp_path, doc)
    result, out = _run(path)
    assert result.exit_code == 2 and out is None
    text = " ".join(result.output.split())
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if x.strip() == "- mct")
    assert f"s.yaml:{line}: schedulers[1]: scheduler 'mct' places every task on one processor" in text
    assert "(workload.stream.jobs[1].procs) needs 2 at once" in text
    assert "Traceback" not in result.output
    result, out = _run(path, "-s", "srjf-eft")  # from the command line: located at --scheduler
    assert result.exit_code == 0 and out is not None, result.output
    result, out = _run(path, "-s", "ecs-online")
    assert result.exit_code == 2 and out is None and "--scheduler" in result.output


@pytest.mark.parametrize("name, kind", [("fcfs", "batch"), ("easy-backfill", "batch"), ("mct", "online"),
                                        ("heft", "static"), ("sequential", "autotune")])
def test_explain_names_the_real_kind(name: str, kind: str) -> None:
    result = CliRunner().invoke(app, ["explain", name])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{name} ({kind}):")


def test_a_checkpoint_outside_its_training_range_is_said_in_the_row(tmp_path: Path) -> None:
    """deepsched on 2 tasks (trained on 10 and more): the warning run prints, a short first line and its
    particulars indented below, is the row's ``warning`` as one line (each line within 100 columns);
    heft, which promises nothing about a range, has none."""
    pytest.importorskip("torch")
    doc = {"name": "tiny", "platform": {"processors": [{"name": "p", "type": "cpu", "count": 2}]},
           "workload": {"tasks": GOLDEN_TASKS}, "schedulers": ["deepsched", "heft"]}
    result, out = _run(_write(tmp_path, doc))
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert "warning" not in rows["heft"]
    warning = rows["deepsched"]["warning"]
    head = "deepsched may plan poorly: tasks outside its training range"
    assert warning.startswith(f"{head}; this inline instance has 2 tasks; checkpoint ") and "trained on 10-" in warning
    shown = result.output.splitlines()
    first = shown.index(f"warning: {head}")
    assert shown[first + 1] == "  this inline instance has 2 tasks" and shown[first + 2].startswith("  checkpoint ")
    assert all(len(line) <= 100 for line in shown)
    # the printed paragraph holds what the row holds: its three lines, the row's "; " between them
    assert warning_paragraphs(result.output) == ["warning: " + " ".join(warning.split("; ", 2))]
