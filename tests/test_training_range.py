"""The safety line of learned schedulers: a warning outside the checkpoint's training range and the
checkpoint's id in the results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
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


def test_range_names_what_lies_outside() -> None:
    rng = TrainingRange("abc123", (10, 100), (2, 8), ("random", "layered"), (0.1, 5.0))
    assert rng.outside(_problem(50, 4), "random") == []
    bad = rng.outside(_problem(300, 12), "workflow:montage")
    assert bad == ["300 tasks", "12 processors", "family workflow:montage"]
    line = warning_line("deepsched", rng, _problem(300, 4), "random")
    assert line is not None and "\n" not in line
    assert "abc123" in line and "10-100 tasks" in line and "300 tasks" in line
    assert warning_line("deepsched", rng, _problem(50, 4), None) is None
    unknown = TrainingRange.from_dict("x", {"tasks": "nonsense"})
    assert unknown.outside(_problem(5000, 100), "fft") == []


def test_run_warns_once_per_learned_scheduler_and_records_checkpoint(tmp_path: Path) -> None:
    from simsched.learned.deepsched.checkpoint import shipped_checkpoint

    scenario = tmp_path / "big.yaml"
    scenario.write_text("name: big\nseed: 1\nplatform:\n  processors: [{name: p, count: 40}]\n"
                        "workload: {generator: random, tasks: 30}\nschedulers: [heft, deepsched, rl]\n")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(scenario), "--json", str(out)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2, result.output
    assert "deepsched" in warnings[0] and "40 processors" in warnings[0] and "2-16 processors" in warnings[0]
    assert warnings[1].startswith("warning: rl ") and "40 processors" in warnings[1]
    rows = {r["scheduler"]: r for r in json.loads(out.read_text())["results"]}
    assert "checkpoint" not in rows["heft"]
    assert rows["deepsched"]["checkpoint"] == checkpoint_id(shipped_checkpoint())
    assert len(rows["rl"]["checkpoint"]) == 12
