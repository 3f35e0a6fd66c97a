"""The learned priority function for cluster logs and its trainer (issue #41)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simsched.errors import SimschedError
from simsched.schedulers.batch_learned import LearnedPriority, read_model
from simsched.schedulers.batch_priority import FCFSPriority, PriorityBatch, SJFPriority
from simsched.simulator.batch import simulate_batch
from simsched.workloads.importers.swf import make_trace

ROOT = Path(__file__).resolve().parents[1]


def random_trace(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    return make_trace(np.sort(rng.integers(0, 4000, n)), rng.integers(1, 500, n), rng.integers(1, 9, n))


def starts(policy, tr, m: int = 8) -> list[float]:
    return simulate_batch(tr, m, policy).start.tolist()


@pytest.mark.parametrize("seed", [0, 1])
def test_theta_along_requested_time_is_sjf_and_against_the_wait_is_fcfs(seed: int) -> None:
    tr = random_trace(seed)  # requested = run >= 1: log10(max(r, 1)) orders as r
    assert starts(LearnedPriority(theta=(1.0, 0.0, 0.0)), tr) == starts(SJFPriority(backfill=True), tr)
    # -log10(w + 1) puts the longest wait first: submit order
    assert starts(LearnedPriority(theta=(0.0, 0.0, -1.0)), tr) == starts(FCFSPriority(backfill=True), tr)


def write(tmp_path: Path, **doc) -> Path:
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"theta": [1, 0, 0], "fallback": {"rule": "f1", "backfill": True}, "use": "learned",
                             **doc}))
    return p


def test_a_model_that_did_not_earn_its_place_is_its_fallback_rule(tmp_path: Path) -> None:
    tr = random_trace(2)
    model = LearnedPriority(checkpoint=str(write(tmp_path, theta=[0, 5, 0], use="fallback")))
    assert starts(model, tr) == starts(PriorityBatch("f1", backfill=True), tr)
    assert "fallback rule f1" in model.explain()


@pytest.mark.parametrize(("doc", "field"), [({"theta": [1, 0]}, "theta"), ({"theta": [1, 0, float("nan")]}, "theta"),
                                            ({"fallback": {"rule": "edf", "backfill": True}}, "fallback"),
                                            ({"use": "maybe"}, "use")])
def test_a_bad_model_names_its_field(tmp_path: Path, doc: dict, field: str) -> None:
    with pytest.raises(SimschedError) as info:
        read_model(write(tmp_path, **doc))
    assert info.value.field == field


def test_train_then_run_the_learned_priority(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from simsched.cli.main import app

    sc = tmp_path / "w.yaml"
    sc.write_text(f"name: w\nseed: 3\nrepetitions: 2\nplatform:\n  processors:\n    - {{name: node, count: 256}}\n"
                  f"workload:\n  stream:\n    swf: {ROOT / 'scenarios' / 'data' / 'traces' / 'lublin_256.swf'}\n"
                  f"    estimates: perfect\n    windows: {{jobs: 64}}\nschedulers: [f1]\n")
    model = tmp_path / "m.json"
    args = ["train", "batch-priority", str(sc), "--out", str(model), "--train-windows", "2", "--select-windows", "2",
            "--iterations", "1", "--population", "2"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = read_model(model)
    assert doc["use"] in ("learned", "fallback") and set(doc["train"]["mean_log_bsld"]) == {
        "fcfs+backfill", "sjf+backfill", "wfp3+backfill", "uni+backfill", "f1+backfill"}
    again = tmp_path / "m2.json"
    assert CliRunner().invoke(app, [*args[:4], str(again), *args[5:]]).exit_code == 0
    assert json.loads(again.read_text())["theta"] == doc["theta"]  # deterministic for one seed
    res = CliRunner().invoke(app, ["run", str(sc), "-s", f"learned-priority(checkpoint={model})", "-s", "f1"])
    assert res.exit_code == 0 and "learned-priority" in res.output, res.output
