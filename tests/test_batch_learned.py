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
                                            ({"use": "maybe"}, "use"),
                                            ({"features": ["log_requested", "nope"], "theta": [1, 0]}, "features"),
                                            ({"features": ["log_requested", "fits"], "theta": [1, 0, 0]}, "theta"),
                                            ({"hold": {"long": 2, "keep": 1.5}}, "hold"),
                                            ({"backfill_order": "random"}, "backfill_order"),
                                            ({"range": {"lo": [0, 0], "hi": [1, 1]}}, "range")])
def test_a_bad_model_names_its_field(tmp_path: Path, doc: dict, field: str) -> None:
    with pytest.raises(SimschedError) as info:
        read_model(write(tmp_path, **doc))
    assert info.value.field == field


def window_scenario(tmp_path: Path) -> Path:
    """Windows of 64 jobs of the shipped Lublin-1 slice (perfect estimates), two per run."""
    sc = tmp_path / "w.yaml"
    sc.write_text(f"name: w\nseed: 3\nrepetitions: 2\nplatform:\n  processors:\n    - {{name: node, count: 256}}\n"
                  f"workload:\n  stream:\n    swf: {ROOT / 'scenarios' / 'data' / 'traces' / 'lublin_256.swf'}\n"
                  f"    estimates: perfect\n    windows: {{jobs: 64}}\nschedulers: [f1]\n")
    return sc


def test_train_then_run_the_learned_priority(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from simsched.cli.main import app

    sc = window_scenario(tmp_path)
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
    # every feature and the hold-back fitted; (5 rules + 1 x 2 candidates + the range pass) x 2 + 2 x 2 replays
    assert len(doc["features"]) == len(doc["theta"]) == 8 and set(doc["hold"]) == {"long", "keep"}
    assert doc["backfill_order"] == "score" and doc["budget"]["replays"] == 20
    res = CliRunner().invoke(app, ["run", str(sc), "-s", f"learned-priority(checkpoint={model})", "-s", "f1"])
    assert res.exit_code == 0 and "learned-priority" in res.output, res.output


def tiny_queue():
    # 4 processors; job 0 holds all of them until 100; jobs 1-3 arrive together at 1 and queue behind it
    # job: (submit, run = requested, processors)
    return make_trace(np.array([0, 1, 1, 1]), np.array([100, 1000, 10, 100]), np.array([4, 1, 2, 4]))


def test_job_features_by_hand() -> None:
    from simsched.schedulers.batch_features import FEATURES, job_features

    tr = tiny_queue()
    x = job_features(np.array([1, 2, 3]), tr, now=101.0, free=2, names=FEATURES)
    # waits 100 each; r 1000, 10, 100; n 1, 2, 4 with 2 free
    assert x[:, 0].tolist() == pytest.approx([3.0, 1.0, 2.0])  # log10 r
    assert x[:, 1].tolist() == pytest.approx([0.0, 1.0, 2.0])  # log2 n
    assert x[:, 2].tolist() == pytest.approx(np.log10([101, 101, 101]))  # log10(w + 1)
    assert x[:, 3].tolist() == [1.0, 1.0, 0.0]  # fits in 2 free processors
    assert x[:, 4].tolist() == pytest.approx(np.log10([1.1, 11.0, 2.0]))  # (w + r) / max(r, 10)
    assert x[:, 5].tolist() == [1.0, 0.0, 0.5]  # rank by requested time among the three
    assert x[:, 6].tolist() == pytest.approx([-1.0, 0.0, 1.0])  # log2(n / free)
    assert x[:, 7].tolist() == pytest.approx([0.0, 1 / 8, 4 / 8])  # log10 r x log2 n / 8


def test_the_learned_order_on_a_tiny_queue_by_hand() -> None:
    tr = tiny_queue()
    # at 1 nothing fits (0 free): the first job of the order becomes the head and is kept until it starts.
    # By processors (theta on log2 n): job 1 (1 processor) is the head; at 100 it starts, then job 2
    # (2 processors); job 3 (4) is the next head and waits for job 1's end at 1,100
    assert starts(LearnedPriority(theta=(0.0, 1.0, 0.0)), tr, 4) == [0, 100, 100, 1100]
    # by requested time: job 2 (10 s) is the head and starts at 100; job 3 (100 s) is the next head, its
    # shadow time 110 (job 2's end); job 1 (1,000 s) would end after it, so it waits until job 3 ends at 210
    assert starts(LearnedPriority(theta=(1.0, 0.0, 0.0)), tr, 4) == [0, 210, 100, 110]
    # the same order from named features: requested-time rank instead of the time itself
    assert starts(LearnedPriority(theta=(1.0,), features=("requested_rank",)), tr, 4) == [0, 210, 100, 110]


def test_the_hold_back_keeps_room_for_short_jobs_by_hand() -> None:
    # 4 processors; two 1,000 s jobs of 2 processors at 0, a 5 s job of 2 processors at 1
    tr = make_trace(np.array([0, 0, 1]), np.array([1000, 1000, 5]), np.array([2, 2, 2]))
    plain = LearnedPriority(theta=(1.0, 0.0, 0.0))
    assert starts(plain, tr, 4) == [0, 0, 1000]  # the short job waits for a long one
    # jobs over 10^2 s start only if 50% (2) of the processors stay free, unless the machine is idle:
    # job 0 starts on the idle machine, job 1 is held, job 2 starts at once, job 1 when job 0 ends
    held = LearnedPriority(theta=(1.0, 0.0, 0.0), hold=(2.0, 0.5))
    assert starts(held, tr, 4) == [0, 1000, 1]
    assert "holding back jobs longer than 100 s unless 50%" in held.explain()


def test_outside_the_training_range_the_fallback_decides_even_with_hold(tmp_path: Path) -> None:
    tr = make_trace(np.array([0, 0, 1]), np.array([1000, 1000, 5]), np.array([2, 2, 2]))
    box = {"lo": [0.0, 0.0, 0.0, 0.0], "hi": [1.0, 9.0, 9.0, 1.0]}  # requested times up to ~12.6 s only
    p = write(tmp_path, features=["log_requested", "log_procs", "log_wait", "fits"], theta=[1, 0, 0, 0],
              hold={"long": 2.0, "keep": 0.5}, backfill_order="score", range=box)
    model = LearnedPriority(checkpoint=str(p))
    assert starts(model, tr, 4) == starts(PriorityBatch("f1", backfill=True), tr, 4) == [0, 0, 1000]
    # at 0 the two 1,000 s jobs lie outside the box: F1 decides and starts both (no hold-back); later
    # decision points see only the 5 s job, inside the box
    assert model.decided_by()["f1(backfill=true)"] == 1 and model.decided_by()["learned"] >= 1
    inside = LearnedPriority(checkpoint=str(write(tmp_path, features=["log_requested", "log_procs", "log_wait", "fits"],
                                                  theta=[1, 0, 0, 0], hold={"long": 2.0, "keep": 0.5})))
    assert starts(inside, tr, 4) == [0, 1000, 1] and inside.decided_by()["f1(backfill=true)"] == 0


def test_bad_input_to_the_trainer_and_the_policy_stops_with_exit_2(tmp_path: Path) -> None:
    from helpers import refused

    sc = window_scenario(tmp_path)
    out = tmp_path / "m.json"
    refused(["train", "batch-priority", str(sc), "-o", str(out), "--features", "log_requested,area"],
            inputs=(sc,), absent=(out,), says="--features")
    refused(["train", "batch-priority", str(sc), "-o", str(out), "--backfill-order", "random"],
            inputs=(sc,), absent=(out,), says="--backfill-order")
    bad = write(tmp_path, features=["log_requested", "fits"], theta=[1, 0, 0])
    refused(["run", str(sc), "-s", f"learned-priority(checkpoint={bad})"], inputs=(sc, bad), says="theta")
