"""The safety line of learned schedulers: a warning outside the checkpoint's training range and the
checkpoint's id in the results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import warning_paragraphs
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.learned.training_range import TrainingRange, checkpoint_id, warning_line
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag

pytest.importorskip("torch")


def _problem(n: int, m: int) -> Problem:
    graph = random_dag(n, ccr=1.0, rng=np.random.default_rng(0))
    return Problem(graph, Platform.uniform([Processor(f"p{i}") for i in range(m)], bandwidth=1.0, latency=0.0))


def test_range_names_what_lies_outside_and_never_a_family_label() -> None:
    rng = TrainingRange("abc123", (10, 100), (2, 8), ("random", "layered"), (0.1, 5.0))
    assert rng.outside(_problem(50, 4)) == []
    assert rng.outside(_problem(300, 12)) == ["300 tasks", "12 processors"]
    line = warning_line("deepsched", rng, _problem(300, 4), "random")
    assert line is not None
    # a short first line (who, what follows, which features), the values and the range below it
    assert line.splitlines() == ["deepsched may plan poorly: tasks outside its training range",
                                 "this random instance has 300 tasks",
                                 "checkpoint abc123 trained on 10-100 tasks; 2-8 processors; CCR 0.1-5; "
                                 "families random, layered"]
    for label in (None, "wfcommons", "dax", "workflow:montage"):  # a label alone never warns
        assert warning_line("deepsched", rng, _problem(50, 4), label) is None
    unknown = TrainingRange.from_dict("x", {"tasks": "nonsense", "structure": {"edges per task": "x"}})
    assert unknown.outside(_problem(5000, 100)) == [] and unknown.structure is None


def test_structure_statistics_and_their_range() -> None:
    from simsched.learned.training_range import STRUCTURE, structure_span, structure_stats
    from simsched.workloads.taskgraph import TaskGraph

    chain = TaskGraph([str(i) for i in range(4)], [(0, 1), (1, 2), (2, 3)])
    independent = TaskGraph([str(i) for i in range(4)])
    assert structure_stats(chain) == (0.75, 1.0, 0.25)
    assert structure_stats(independent) == (0.0, 0.25, 1.0)
    assert structure_stats(TaskGraph(["only"])) == (0.0, 1.0, 1.0)
    span = structure_span([chain, independent])
    assert list(span) == list(STRUCTURE) and span["edges per task"] == [0.0, 0.75]
    # trained on chains only: a wide independent graph of a size inside the range is out of shape
    chains = TrainingRange.from_dict("c", {"tasks": [2, 10], "structure": structure_span([chain])})
    assert chains.outside(Problem(chain, _problem(4, 2).platform)) == []
    bad = chains.outside(Problem(independent, _problem(4, 2).platform))
    assert bad == ["edges per task 0", "depth / tasks 0.25", "widest level / tasks 1"]
    dense = _problem(50, 4)  # ~2 edges per task, random levels
    assert TrainingRange.from_dict("d", {"structure": structure_span([dense.graph])}).outside(dense) == []


def test_imported_montage_trace_inside_the_trained_range_gives_no_warning(tmp_path: Path) -> None:
    scenario = tmp_path / "montage.yaml"
    data = Path(__file__).resolve().parents[1] / "scenarios" / "data" / "montage_60.json"
    scenario.write_text(f"name: m\nseed: 1\nplatform:\n  processors: [{{name: p, count: 8}}]\n"
                        f"  network: {{bandwidth: 100.0, latency: 0.01}}\n"
                        f"workload: {{wfcommons: {data}}}\nschedulers: [heft, deepsched]\n")
    result = CliRunner().invoke(app, ["run", str(scenario)])
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.output, result.output


def test_run_warns_once_per_learned_scheduler_and_records_checkpoint(tmp_path: Path) -> None:
    from simsched.learned.deepsched.checkpoint import shipped_checkpoint

    scenario = tmp_path / "big.yaml"
    scenario.write_text("name: big\nseed: 1\nplatform:\n  processors: [{name: p, count: 40}]\n"
                        "workload: {generator: random, tasks: 30}\nschedulers: [heft, deepsched, rl]\n")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 100
    warnings = warning_paragraphs(result.output)  # a first line and its indented particulars
    assert len(warnings) == 2, result.output
    assert "deepsched" in warnings[0] and "40 processors" in warnings[0] and "2-16 processors" in warnings[0]
    assert warnings[1].startswith("warning: rl falls back to srjf-eft: ") and "40 processors" in warnings[1]
    firsts = [line for line in lines if line.startswith("warning:")]
    assert firsts == ["warning: deepsched may plan poorly: processors outside its training range",
                      "warning: rl falls back to srjf-eft: CCR, processors outside its training range"], firsts
    rows = {r["scheduler"]: r for r in json.loads(out.read_text())["results"]}
    assert "checkpoint" not in rows["heft"]
    assert rows["deepsched"]["checkpoint"] == checkpoint_id(shipped_checkpoint())
    assert len(rows["rl"]["checkpoint"]) == 12


def test_sweep_rows_carry_checkpoint_id_and_range_warning() -> None:
    from simsched.learned.deepsched.checkpoint import shipped_checkpoint
    from simsched.run.columns import FIXED
    from simsched.study.work import run_chunk

    data = {"name": "s", "seed": 1, "platform": {"processors": [{"name": "p", "count": 40}]},
            "workload": {"generator": "random", "tasks": 30}, "schedulers": ["heft", "deepsched"]}
    chunk = {"point": 0, "point_id": "p0", "data": data, "file": None, "values": {},
             "runs": [("t0", "heft", 1), ("t1", "deepsched", 1)], "run_id": "r"}
    heft, deep = run_chunk(chunk)
    assert heft["error"] == "" and deep["error"] == "", (heft, deep)
    assert heft["checkpoint"] == "" and heft["warning"] == ""
    assert deep["checkpoint"] == checkpoint_id(shipped_checkpoint())
    assert "40 processors" in deep["warning"] and "2-16 processors" in deep["warning"]
    assert {"checkpoint", "warning"} <= set(FIXED)


def test_sweep_table_round_trips_checkpoint_column(tmp_path: Path) -> None:
    from simsched.run.columns import METRICS
    from simsched.run.tables import columns_of, read_table, write_table

    rows = [{"task_id": "t", "point": 0, "point_id": "p", "scheduler": "deepsched", "seed": 1, "tasks": 3,
             **dict.fromkeys(METRICS, 1.0), "error": "", "checkpoint": "0123456789ab", "warning": "",
             "run_id": "r", "run_s": 0.5}]
    path = tmp_path / "r.csv"
    write_table(path, rows, columns_of(rows))
    assert read_table(path)[0]["checkpoint"] == "0123456789ab"
