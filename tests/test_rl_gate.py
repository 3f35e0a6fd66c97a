"""``rl-gate``: the learned choice between queueing on a busy processor and waiting, trained across
worlds.  Its two extremes are the two rules (float for float), its world description sees arrived work
only and stays finite on degenerate worlds, its checkpoint is checked field by field, its guard falls
back to ``srjf-eft`` exactly, and the training worlds come from the train space without the held-out
job families."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from simsched.errors import SimschedError
from simsched.learned.rl.features import WORLD_FEATURES, world_description
from simsched.learned.rl.gate import N_WEIGHTS, GatedBinding, load_gate, save_gate
from simsched.learned.rl.worlds import ALWAYS_QUEUE, HELD_OUT, NEVER_QUEUE, draw_world, world_days
from simsched.run.seedspace import space_of
from simsched.run.streams import simulate_stream, stream_of
from simsched.scenario import load_scenario
from simsched.schedulers.jobaware import ShortestJobEFT
from simsched.simulator.problem import Problem

SCENARIO = """\
name: gate-stream
seed: 7
repetitions: 2
platform:
  processors:
    - {name: cpu, type: cpu, speed: 1.0, count: 3}
    - {name: gpu, type: gpu, speed: 3.0, count: 1}
  network: {bandwidth: 5.0, latency: 0.1}
workload:
  stream:
    jobs:
      - {weight: 1, generator: random, tasks: [4, 12], ccr: 0.3, heterogeneity: 0.5}
    arrivals: {poisson: 0.02}
    count: 10
noise: {model: lognormal, sigma: 0.3}
failures: {mtbf: 400, mttr: 20}
schedulers: [srjf-eft, {name: rl-gate}]
"""


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text(SCENARIO)
    return path


def _run(sc, seed, scheduler):
    return simulate_stream(sc, "x", seed, stream_of(sc, seed), scheduler)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_gates_extremes_are_the_two_rules_float_for_float(scenario, seed):
    sc = load_scenario(scenario)
    pairs = ((ALWAYS_QUEUE, ShortestJobEFT()), (NEVER_QUEUE, ShortestJobEFT(late_binding=True)))
    for weights, rule in pairs:
        a, b = _run(sc, seed, GatedBinding(weights=list(weights))), _run(sc, seed, rule)
        assert np.array_equal(a.schedule.processor, b.schedule.processor)
        assert np.array_equal(a.schedule.finish, b.schedule.finish)


def test_a_middle_gate_decides_differently_from_both_rules(scenario):
    sc = load_scenario(scenario)
    mid = [_run(sc, s, GatedBinding(weights=[0.0] * N_WEIGHTS)).schedule.processor for s in (1, 2, 3)]
    q = [_run(sc, s, ShortestJobEFT()).schedule.processor for s in (1, 2, 3)]
    late = [_run(sc, s, ShortestJobEFT(late_binding=True)).schedule.processor for s in (1, 2, 3)]
    assert any(not np.array_equal(a, b) for a, b in zip(mid, q))
    assert any(not np.array_equal(a, b) for a, b in zip(mid, late))


@pytest.mark.parametrize("work", [0.0, 5.0])
def test_world_description_on_degenerate_worlds_is_finite(work):
    """One processor, one job, zero or equal costs, no edges: finite, with the obvious values."""
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph.from_named([{"name": "a", "work": work}, {"name": "b", "work": work}], [("a", "b", 0.0)])
    prob = Problem(g, Platform.uniform([Processor("p")]))
    w = world_description(prob, np.zeros(2, dtype=np.int64), np.array([0.0]), np.zeros(2), failures=3, elapsed=0.0)
    assert w.shape == (len(WORLD_FEATURES),) and np.isfinite(w).all()
    assert w[1] == 0.0 and w[2] == 0.0 and w[4] == 0.0 and w[6] == 0.0 and w[8] == 0.0
    assert w[5] == 1.0  # log2 of two tasks per job


def test_world_description_sees_speed_ratio_and_failures():
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph.from_named([{"name": "a", "work": 4.0}, {"name": "b", "work": 4.0}])
    prob = Problem(g, Platform.uniform([Processor("p"), Processor("q"), Processor("r", speed=4.0)]))
    jobs = np.array([0, 1])
    w = world_description(prob, jobs, np.array([0.0, 1.0]), np.zeros(2), failures=2, elapsed=10.0)
    assert w[4] == pytest.approx(2.0)  # log2(4)
    assert w[3] == pytest.approx(1 / 3)  # one of three processors is fast
    assert w[8] > 0.0


def test_load_feature_estimates_the_drawn_load():
    """The training worlds set their arrival rate for a drawn offered load; the world description's
    estimate (arrived jobs only, the full day here) lands near it on Poisson days."""
    from simsched.learned.rl.worlds import world_scenario
    from simsched.workloads.jobs import job_ids

    errs = []
    for seed in range(40, 52):
        data = draw_world(seed)
        if data["_burst"]:
            continue
        sc, st = world_scenario(seed)
        prob = Problem(st.graph, sc.platform, sc.affinity)
        w = world_description(prob, job_ids(st.graph), st.job_arrival, np.zeros(prob.n_tasks))
        errs.append(w[0] / data["_load"])
    assert len(errs) >= 3
    assert 0.5 < float(np.median(errs)) < 2.0


def test_training_worlds_come_from_the_train_space_and_hold_families_out():
    days = world_days("train", 0, 2)
    assert all(space_of(s) == "train" for *_, s in days)
    assert all(space_of(s) == "select" for *_, s in world_days("select", 0, 1))
    assert draw_world(123) == draw_world(123) and draw_world(123) != draw_world(124)
    text = json.dumps([draw_world(s)["workload"] for s in range(300)])
    for held in HELD_OUT:
        assert held not in text
    assert "montage" in text and "gaussian_elimination" in text


def _write(path: Path, **change) -> Path:
    k = len(WORLD_FEATURES)
    save_gate(path, np.zeros(N_WEIGHTS), np.zeros(k), np.ones(k), {})
    doc = json.loads(path.read_text())
    doc.update(change)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("change, field", [
    ({"kind": "rl"}, "kind"),
    ({"weights": [0.0] * 3}, "weights"),
    ({"weights": [True] * N_WEIGHTS}, "weights"),
    ({"weights": [float("nan")] * N_WEIGHTS}, "weights"),
    ({"world_features": ["x"]}, "world_features"),
    ({"range": {"lo": [0.0]}}, "range"),
    ({"range": {"lo": [float("inf")] * len(WORLD_FEATURES), "hi": [1.0] * len(WORLD_FEATURES)}}, "range"),
])
def test_a_bad_checkpoint_names_its_field(tmp_path, change, field):
    path = _write(tmp_path / "g.json", **change)
    with pytest.raises(SimschedError, match=f"field '{field}'"):
        load_gate(path)


def test_a_missing_or_garbled_checkpoint_is_one_line_exit_2(tmp_path, scenario):
    assert load_gate(_write(tmp_path / "ok.json"))["kind"] == "rl-gate"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(SimschedError, match="not a readable"):
        load_gate(tmp_path / "bad.json")
    with pytest.raises(SimschedError, match="no rl-gate checkpoint"):
        GatedBinding(checkpoint=str(tmp_path / "none.json"))
    for bad in ([1.0, 2.0], [True] * N_WEIGHTS, [float("inf")] * N_WEIGHTS, "0" * N_WEIGHTS):
        with pytest.raises(SimschedError, match="weights"):
            GatedBinding(weights=bad)
    with pytest.raises(SimschedError, match="guard"):
        GatedBinding(weights=[0.0] * N_WEIGHTS, guard=1)
    text = scenario.read_text().replace("{name: rl-gate}", "{name: rl-gate, checkpoint: bad.json}")
    (tmp_path / "bad_ck.yaml").write_text(text)
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", "bad_ck.yaml", "-r", "1"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]  # stdout: the day's offered-load line
    assert len(lines) == 1 and "bad_ck.yaml:17" in lines[0] and "bad.json" in lines[0]


def test_the_guard_falls_back_to_srjf_eft_exactly_with_one_warning(tmp_path, scenario):
    k = len(WORLD_FEATURES)
    path = tmp_path / "narrow.json"
    save_gate(path, np.zeros(N_WEIGHTS), np.full(k, 100.0), np.full(k, 100.0), {})  # a range nothing lies in
    sc = load_scenario(scenario)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = _run(sc, 3, GatedBinding(checkpoint=str(path)))
    b = _run(sc, 3, ShortestJobEFT())
    assert np.array_equal(a.schedule.processor, b.schedule.processor)
    assert np.array_equal(a.schedule.finish, b.schedule.finish)
    said = [str(w.message) for w in caught if "falls back to srjf-eft" in str(w.message)]
    assert len(said) == 1
    # the same gate without its guard decides for itself
    c = _run(sc, 3, GatedBinding(checkpoint=str(path), guard=False))
    assert not np.array_equal(c.schedule.processor, b.schedule.processor)


def test_the_shipped_gate_runs_from_a_scenario(scenario, tmp_path):
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", str(scenario), "-r", "1",
                        "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert {row["scheduler"] for row in rows} >= {"srjf-eft", "rl-gate"}


@pytest.mark.slow
def test_training_writes_a_loadable_gate_from_train_and_select_days(tmp_path):
    from simsched.learned.rl.worlds import train

    hist = train(tmp_path / "o", iterations=1, population=2, days=1, select_days=1, progress=None)
    ck = load_gate(tmp_path / "o" / "rl_gate.json")
    assert hist["chosen"] in hist["selection"] and hist["config"]["space"] == "train"
    assert set(hist["selection"]) >= {"always queue (srjf-eft)", "never queue (late binding)"}
    lo, hi = np.array(ck["range"]["lo"]), np.array(ck["range"]["hi"])
    assert (lo <= hi).all()
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["rl_gate.json", "train_history.json"]


@pytest.mark.parametrize("args", [["--iterations", "0"], ["--budget-min", "nan"], ["--budget-min", "-1"],
                                  ["--population", "1"]])
def test_bad_training_options_are_one_line_exit_2(tmp_path, args):
    r = subprocess.run([sys.executable, "-m", "simsched.learned.rl.worlds", "train", "-o", str(tmp_path / "o"),
                        *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert len((r.stdout + r.stderr).strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
