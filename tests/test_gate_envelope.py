"""``rl-gate``'s envelope (issue 41): the world known from its first job judged against the training worlds;
outside, srjf-eft from the first decision, said in one warning and the results row."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from simsched.errors import SimschedError
from simsched.learned.rl.envelope import PRIOR_FEATURES, Envelope, check_envelope, prior_world
from simsched.learned.rl.gate import GatedBinding, load_gate, save_gate, shipped_path
from simsched.run.streams import simulate_stream, stream_of
from simsched.scenario import load_scenario
from simsched.schedulers.jobaware import ShortestJobEFT
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

BAR = Path(__file__).resolve().parents[1] / "scenarios" / "streams" / "rl_dynamic.yaml"


def _chain_problem(speeds: list[float], costs: list[float]) -> Problem:
    """One job: a chain of len(costs) tasks with these mean costs on processors of these speeds."""
    n = len(costs)
    g = TaskGraph([f"t{i}" for i in range(n)], [(i, i + 1) for i in range(n - 1)], [0.0] * (n - 1),
                  work=np.array(costs, dtype=float))
    procs = [Processor(f"p{i}", type="cpu" if s == 1.0 else "gpu", speed=s) for i, s in enumerate(speeds)]
    return Problem(g, Platform.uniform(procs, bandwidth=1.0, latency=0.0))


def test_prior_world_by_hand():
    # 6 CPUs (speed 1) and 2 GPUs (speed 4); one chain job of 4 tasks of cost 8 (on a speed-1 processor)
    p = _chain_problem([1.0] * 6 + [4.0] * 2, [8.0] * 4)
    mean_task = float(p.mean_cost.mean())
    rank = np.array([4, 3, 2, 1], dtype=float) * mean_task  # a chain: upward rank = the work left
    x = prior_world(p, np.zeros(4, dtype=np.int64), rank, failure_rate=0.001)
    assert x[0] == pytest.approx(3.0)                       # log2 8 processors
    assert x[1] == 2.0                                      # two (type, speed) classes
    assert x[2] == pytest.approx(0.25)                      # 2 of 8 within 80% of the fastest
    assert x[3] == pytest.approx(2.0)                       # log2 (4 / 1)
    assert x[4] == pytest.approx(math.log1p(100 * 0.001 * mean_task))
    assert x[5] == 0.0                                      # no down share declared
    assert x[6] == pytest.approx(2.0)                       # log2 4 tasks
    assert x[7] == pytest.approx(0.0)                       # a chain keeps one processor busy: width 1


def _box_envelope(lo, hi) -> Envelope:
    k = len(PRIOR_FEATURES)
    return Envelope(lo, hi, mean=np.zeros(k), scale=np.ones(k), precision=np.eye(k), threshold=1e9)


def test_envelope_names_the_feature_out_of_range_and_passes_inside():
    k = len(PRIOR_FEATURES)
    env = _box_envelope(np.zeros(k), np.ones(k))
    assert env.outside(np.full(k, 0.5)) is None
    x = np.full(k, 0.5)
    x[3] = 2.0
    why = env.outside(x)
    assert why is not None and why.startswith("log2 speed ratio 2 lies outside") and "0 to 1" in why


def test_a_huge_job_among_small_ones_is_outside_though_the_mean_is_inside():
    k = len(PRIOR_FEATURES)
    env = _box_envelope(np.zeros(k), np.full(k, 6.0))  # jobs of 1 to 64 tasks
    x = np.full(k, 3.0)  # the day's mean: inside
    jobs = np.array([[2.0, 0.5], [2.5, 0.5], [7.0, 1.0], [2.0, 0.2]])  # the third job has 128 tasks
    assert env.outside(x) is None
    assert env.outside(x, jobs) == "job 3's log2 tasks per job 7 lies outside the training worlds' 0 to 6"
    assert env.outside(x, jobs[[0, 1, 3]]) is None


def test_envelope_distance_threshold_is_set_on_held_out_rows():
    rng = np.random.default_rng(0)
    k = len(PRIOR_FEATURES)
    a = rng.normal(size=(400, 1))
    train = np.hstack([a + 0.05 * rng.normal(size=(400, 1)) for _ in range(k)])  # every feature ~ the same
    held = np.hstack([a[:200] + 0.05 * rng.normal(size=(200, 1)) for _ in range(k)])
    env = Envelope.fit(train, held, quantile=1.0)
    assert max(env.distance(held)) <= env.threshold + 1e-12
    inside_box = np.zeros(k)
    inside_box[0], inside_box[1] = 1.5, -1.5  # each within its range, together far off the training diagonal
    why = env.outside(inside_box)
    assert why is not None and "Mahalanobis" in why
    assert env.outside(np.full(k, 0.3)) is None


def test_a_malformed_envelope_names_its_field(tmp_path):
    data = load_gate(shipped_path())
    env = dict(data["envelope"])
    env["threshold"] = -1
    path = tmp_path / "bad.json"
    save_gate(path, np.asarray(data["weights"]), np.asarray(data["range"]["lo"]), np.asarray(data["range"]["hi"]),
              data["config"], {}, data["model"], env)
    with pytest.raises(SimschedError, match="envelope.threshold"):
        load_gate(path)
    assert "envelope.features" in check_envelope({**data["envelope"], "features": ["x"]})


def _gate_with_box(tmp_path: Path, hi_speed_ratio: float) -> Path:
    """The shipped gate with a hand-made envelope: every feature free but the log2 speed ratio, at most
    ``hi_speed_ratio``."""
    data = load_gate(shipped_path())
    k = len(PRIOR_FEATURES)
    lo, hi = np.full(k, -100.0), np.full(k, 100.0)
    hi[3] = hi_speed_ratio
    path = tmp_path / f"box-{hi_speed_ratio}.json"
    save_gate(path, np.asarray(data["weights"]), np.asarray(data["range"]["lo"]), np.asarray(data["range"]["hi"]),
              data["config"], {}, data["model"], _box_envelope(lo, hi).to_dict())
    return path


def _scenario(tmp_path: Path, gpu_speed: float, checkpoint: Path) -> Path:
    """``rl_dynamic`` (the world the gate waits in) with its GPUs ``gpu_speed`` times as fast as its CPUs,
    running ``srjf-eft`` and the gate of ``checkpoint``."""
    data = yaml.safe_load(BAR.read_text())
    data["platform"]["processors"][1]["speed"] = gpu_speed
    for job in data["workload"]["stream"]["jobs"]:
        for key in ("wfcommons", "dax"):
            if key in job:
                job[key] = str((BAR.parent / job[key]).resolve())
    data["repetitions"], data["schedulers"] = 1, ["srjf-eft", {"name": "rl-gate", "checkpoint": str(checkpoint)}]
    path = tmp_path / f"world-{gpu_speed}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_inside_the_envelope_the_gate_acts_outside_it_is_srjf_eft_from_the_first_job(tmp_path):
    ck = _gate_with_box(tmp_path, hi_speed_ratio=2.0)  # speed ratio up to 4
    inside = load_scenario(_scenario(tmp_path, 3.0, ck))
    gate = GatedBinding(checkpoint=str(ck))
    simulate_stream(inside, "rl-gate", 11, stream_of(inside, 11), gate)
    assert gate.fallback_reason is None and gate.late_decisions > 0  # it decided to wait somewhere
    outside = load_scenario(_scenario(tmp_path, 8.0, ck))  # log2 8 = 3 > 2
    gate = GatedBinding(checkpoint=str(ck))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = simulate_stream(outside, "rl-gate", 11, stream_of(outside, 11), gate)
    b = simulate_stream(outside, "srjf-eft", 11, stream_of(outside, 11), ShortestJobEFT())
    assert gate.late_decisions == 0  # the predictor was never asked
    assert np.array_equal(a.schedule.processor, b.schedule.processor)
    assert np.array_equal(a.schedule.finish, b.schedule.finish)
    assert gate.fallback_reason.startswith("srjf-eft from job 1: log2 speed ratio 3 lies outside")
    said = [str(w.message) for w in caught if "falls back to srjf-eft" in str(w.message)]
    assert len(said) == 1 and "from job 1 of the day" in said[0] and "log2 speed ratio" in said[0]


def test_declared_failures_by_hand():
    from simsched.learned.rl.envelope import declared_failures
    from simsched.simulator.engine.disruptions import Disruptions

    # two processors: one failing every 100 and repaired in 25 (down 20% of the time), one never failing
    rate, down = declared_failures(Disruptions(failure_rate=np.array([0.01, 0.0]), repair_time=25.0), 2)
    assert rate == pytest.approx(0.005) and down == pytest.approx(0.1)
    assert declared_failures(None, 2) == (0.0, 0.0)


def test_the_declared_failure_rate_is_judged_from_the_first_job(tmp_path):
    data = load_gate(shipped_path())
    k = len(PRIOR_FEATURES)
    lo, hi = np.full(k, -100.0), np.full(k, 100.0)
    hi[4] = 0.5  # a gate trained on worlds with few failures
    ck = tmp_path / "few-failures.json"
    save_gate(ck, np.asarray(data["weights"]), np.asarray(data["range"]["lo"]), np.asarray(data["range"]["hi"]),
              data["config"], {}, data["model"], _box_envelope(lo, hi).to_dict())
    sc = load_scenario(_scenario(tmp_path, 3.0, ck))  # rl_dynamic's failures: GPUs MTBF 1500, CPUs 3000
    gate = GatedBinding(checkpoint=str(ck))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulate_stream(sc, "rl-gate", 11, stream_of(sc, 11), gate)
    assert gate.fallback_reason is not None and "from job 1: declared failure rate" in gate.fallback_reason
    g2 = GatedBinding(checkpoint=str(ck))
    g2.use_failures(None)  # the same world declaring no failures is inside
    g2.reset(Problem(stream_of(sc, 11).graph, sc.platform, sc.affinity), np.random.default_rng(0))
    assert g2.fallback_reason is None


def test_the_results_row_names_the_rule_and_why(tmp_path):
    ck = _gate_with_box(tmp_path, hi_speed_ratio=2.0)
    path = _scenario(tmp_path, 8.0, ck)
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", str(path), "-r", "1",
                        "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {row["scheduler"]: row for row in json.loads((tmp_path / "r.json").read_text())["results"]}
    gate = next(row for name, row in rows.items() if name.startswith("rl-gate"))
    assert gate["fallback"].startswith("srjf-eft from job 1: log2 speed ratio 3")
    assert "fallback" not in rows["srjf-eft"]
    assert gate["jct_mean"] == rows["srjf-eft"]["jct_mean"]


def test_the_shipped_envelope_keeps_the_bar_and_refuses_a_wider_platform():
    from simsched.learned.rl.worlds.wide import OFF_TRAINING

    wide = OFF_TRAINING["16 processors, speed ratio 8, heavy tail"]()
    gate = GatedBinding()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gate.use_failures(None)
        gate.reset(Problem(stream_of(wide, 5).graph, wide.platform, wide.affinity), np.random.default_rng(0))
    assert gate.fallback_reason.startswith("srjf-eft from job ")
    bar = load_scenario(BAR)
    for seed in (1, 2, 3):
        gate = GatedBinding()
        simulate_stream(bar, "rl-gate", seed, stream_of(bar, seed), gate)
        assert gate.fallback_reason is None
