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
from simsched.learned.rl.gate import (
    ALWAYS_QUEUE,
    N_BASIS,
    N_WEIGHTS,
    NEVER_QUEUE,
    GatedBinding,
    basis,
    load_gate,
    save_gate,
)
from simsched.learned.rl.worlds import HELD_OUT, draw_world, world_days
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
    ({"weights": [float("nan")] * N_WEIGHTS}, "NaN"),  # refused by the JSON reader, with its line
    ({"world_features": ["x"]}, "world_features"),
    ({"range": {"lo": [0.0]}}, "range"),
    ({"range": {"lo": [float("inf")] * len(WORLD_FEATURES), "hi": [1.0] * len(WORLD_FEATURES)}}, "Infinity"),
])
def test_a_bad_checkpoint_names_its_field(tmp_path, change, field):
    path = _write(tmp_path / "g.json", **change)
    with pytest.raises(SimschedError, match=f"field '{field}'" if field.islower() else f"{field} is not a number"):
        load_gate(path)


def test_a_missing_or_garbled_checkpoint_is_one_line_exit_2(tmp_path, scenario):
    assert load_gate(_write(tmp_path / "ok.json"))["kind"] == "rl-gate"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(SimschedError, match="invalid JSON"):
        load_gate(tmp_path / "bad.json")
    with pytest.raises(SimschedError, match="does not exist.*rl-gate checkpoint"):
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


@pytest.mark.parametrize("args", [["cem", "--iterations", "0"], ["cem", "--budget-min", "nan"],
                                  ["cem", "--budget-min", "-1"], ["cem", "--population", "1"],
                                  ["train", "--drawn", "-1"], ["train", "--seed", "-1"],
                                  ["train", "--select-bar", "10001"],
                                  ["train", "--drawn", "0", "--bar-like", "0", "--bar", "1"],
                                  ["train", "--select-drawn", "0", "--select-bar-like", "0", "--select-bar", "0"]])
def test_bad_training_options_are_one_line_exit_2(tmp_path, args):
    r = subprocess.run([sys.executable, "-m", "simsched.learned.rl.worlds", args[0], "-o", str(tmp_path / "o"),
                        *args[1:]], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert len((r.stdout + r.stderr).strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- the predictor


def _model(coef0: float = 0.0, k: float = 0.0, margin: float = 0.0, **change) -> dict:
    kk = len(WORLD_FEATURES)
    coef = [coef0] + [0.0] * (N_BASIS - 1)
    cov = np.zeros((N_BASIS, N_BASIS)).tolist()
    return {"mean": [0.0] * kk, "scale": [1.0] * kk, "coef": coef, "cov": cov, "k": k, "margin": margin, **change}


def _predictor(path: Path, model: dict, lo: float = -1e9, hi: float = 1e9) -> Path:
    k = len(WORLD_FEATURES)
    save_gate(path, np.array(ALWAYS_QUEUE), np.full(k, lo), np.full(k, hi), {}, {}, model)
    return path


@pytest.mark.parametrize("seed", [1, 2])
def test_the_predictors_two_answers_are_the_two_rules_float_for_float(tmp_path, scenario, seed):
    """A predictor sure that waiting pays everywhere is late binding; one sure it never pays, or
    one whose caution (k sd) outweighs its prediction, is srjf-eft."""
    sc = load_scenario(scenario)
    wait = _predictor(tmp_path / "wait.json", _model(-1.0))
    queue = _predictor(tmp_path / "queue.json", _model(+1.0))
    unsure = _model(-0.1, k=2.0)
    unsure["cov"][0][0] = 0.01  # sd 0.1 everywhere: -0.1 + 2 x 0.1 > 0
    shy = _predictor(tmp_path / "shy.json", unsure)
    for path, rule in ((wait, ShortestJobEFT(late_binding=True)), (queue, ShortestJobEFT()), (shy, ShortestJobEFT())):
        gate = GatedBinding(checkpoint=str(path))
        a, b = _run(sc, seed, gate), _run(sc, seed, rule)
        assert np.array_equal(a.schedule.processor, b.schedule.processor)
        assert np.array_equal(a.schedule.finish, b.schedule.finish)
        assert (gate.late_decisions > 0) == (path == wait)


def test_the_predictor_decides_from_the_world_and_switches_within_a_day(tmp_path, scenario):
    """Late binding only while the offered load seen so far is known and high: the first decisions
    (load unknown) queue, later ones may wait; the schedule differs from both rules."""
    m = _model(0.5)
    m["coef"][2] = -1.0  # z of 'load known' (mean 0, scale 1): waits once the load is known
    path = _predictor(tmp_path / "g.json", m)
    sc = load_scenario(scenario)
    gate = GatedBinding(checkpoint=str(path))
    a = _run(sc, 1, gate)
    assert gate.late_decisions > 0
    q, late = _run(sc, 1, ShortestJobEFT()), _run(sc, 1, ShortestJobEFT(late_binding=True))
    assert not np.array_equal(a.schedule.finish, q.schedule.finish)
    assert not np.array_equal(a.schedule.finish, late.schedule.finish)


@pytest.mark.slow
def test_the_predictor_sees_no_future(tmp_path):
    """The contract's no-future property on small streams, the guard off so the predictor decides
    (its problems carry gang columns: those are placed by the rule, which once crashed the gate)."""
    from simsched.testing.contract import check_scheduler

    m = _model(0.5)
    m["coef"][1] = -1.0  # waits where the offered load so far is high
    m["coef"][4] = 0.3
    gate = GatedBinding(checkpoint=str(_predictor(tmp_path / "g.json", m)), guard=False)
    report = check_scheduler(gate, examples=4, properties=["no-future"])
    assert report.passed, report


@pytest.mark.parametrize("change, field", [
    ({"coef": [0.0] * 3}, "model.coef"),
    ({"coef": [float("nan")] * N_BASIS}, None),  # None: refused by the JSON reader (not a number JSON allows)
    ({"coef": [True] * N_BASIS}, "model.coef"),
    ({"cov": [[0.0] * N_BASIS] * 2}, "model.cov"),
    ({"cov": [[float("inf")] * N_BASIS] * N_BASIS}, None),
    ({"scale": [0.0] * len(WORLD_FEATURES)}, "model.mean'/'model.scale"),
    ({"mean": "x"}, "model.mean'/'model.scale"),
    ({"k": -1.0}, "model.k"),
    ({"k": float("nan")}, None),
    ({"margin": True}, "model.margin"),
    ({"margin": 1e9}, "model.margin"),
])
def test_a_bad_predictor_names_its_field(tmp_path, change, field):
    path = _predictor(tmp_path / "g.json", _model(**change))
    words = f"field '{field}'" if field else "line [0-9]+: .* not a number JSON allows"
    with pytest.raises(SimschedError, match=words):
        load_gate(path)


def test_an_asymmetric_covariance_or_a_non_mapping_model_is_refused(tmp_path):
    m = _model()
    m["cov"][0][1] = 1.0
    with pytest.raises(SimschedError, match="field 'model.cov'"):
        load_gate(_predictor(tmp_path / "a.json", m))
    with pytest.raises(SimschedError, match="field 'model'"):
        load_gate(_write(tmp_path / "b.json", model=[1, 2]))


def test_a_bad_predictor_in_a_scenario_is_one_line_exit_2(tmp_path, scenario):
    _predictor(tmp_path / "bad.json", _model(k=-3.0))
    text = scenario.read_text().replace("{name: rl-gate}", "{name: rl-gate, checkpoint: bad.json}")
    (tmp_path / "bad_ck.yaml").write_text(text)
    r = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", "bad_ck.yaml", "-r", "1"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "model.k" in lines[0] and "Traceback" not in r.stderr


def test_the_guard_falls_back_from_the_predictor_with_one_warning(tmp_path, scenario):
    path = _predictor(tmp_path / "g.json", _model(-1.0), lo=100.0, hi=100.0)  # always waits, inside nothing
    sc = load_scenario(scenario)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gate = GatedBinding(checkpoint=str(path))
        a = _run(sc, 2, gate)
    b = _run(sc, 2, ShortestJobEFT())
    assert np.array_equal(a.schedule.finish, b.schedule.finish) and gate.late_decisions == 0
    assert len([w for w in caught if "falls back to srjf-eft" in str(w.message)]) == 1


def test_fit_predictor_recovers_a_linear_truth_and_is_unsure_away_from_its_data():
    """Labels that are an exact linear function of two world features: the fit predicts them, its
    sd is small among the training rows and larger far outside them; clipping bounds the labels."""
    from simsched.learned.rl.worlds import LABEL_CLIP, POINTS, fit_predictor

    rng = np.random.default_rng(3)
    k, days = len(WORLD_FEATURES), 400
    x = rng.normal(0.0, 1.0, (days, len(POINTS), k))
    x[:, :, 2] = x[:, :1, 2]  # a feature constant within a day, the label's driver
    ratio = np.exp(0.2 * x[:, 0, 2])
    table = {"x": x, "queue": np.full(days, 100.0), "late": 100.0 * ratio}
    fields = fit_predictor(table, ridge=1e-6)
    gate = GatedBinding(weights=[0.0] * N_WEIGHTS)
    gate.model = {key: np.asarray(fields[key]) for key in ("mean", "scale", "coef", "cov")}
    mu, sd = gate.predict(x[0, 0])
    assert mu == pytest.approx(0.2 * x[0, 0, 2], abs=0.03)
    far = np.full(k, 30.0)
    assert gate.predict(far)[1] > 5 * sd
    assert basis(x[0], np.asarray(fields["mean"]), np.asarray(fields["scale"])).shape == (len(POINTS), N_BASIS)
    wild = {"x": x, "queue": np.full(days, 1.0), "late": np.where(np.arange(days) % 2, 1e6, 1e-6)}
    assert abs(fit_predictor(wild)["coef"][0]) <= LABEL_CLIP + 1e-9


@pytest.mark.slow
def test_training_the_predictor_is_deterministic_and_writes_a_loadable_gate(tmp_path):
    from simsched.learned.rl.worlds import train_predictor

    kw = dict(drawn=2, bar_like=1, bar=1, select_drawn=1, select_bar_like=0, select_bar=2, ks=(0.0,),
              progress=None)
    h1 = train_predictor(tmp_path / "a", **kw)
    h2 = train_predictor(tmp_path / "b", **kw, workers=2)  # the selection in two processes: the same
    a, b = (json.loads((tmp_path / d / "rl_gate.json").read_text()) for d in "ab")
    for doc in (a, b):
        doc["meta"].pop("cpu_s")  # the only field that may differ: the CPU time it took
    assert a == b and h1["selection"] == h2["selection"]
    assert set(h1["selection"]) == {"always queue (srjf-eft)", "never queue (late binding)", "predictor k=0 margin=0"}
    assert h1["config"]["space"] == "train" and load_gate(tmp_path / "a" / "rl_gate.json")["kind"] == "rl-gate"
    assert a["envelope"]["features"] and h1["envelope"]["train_rows"] > 0  # a retrained gate ships its envelope
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["days_select.npz", "days_train.npz",
                                                                   "rl_gate.json", "train_history.json"]
    with np.load(tmp_path / "a" / "days_train.npz") as z:
        assert all(space_of(int(s)) == "train" for s in z["seed"]) and set(z["source"]) == {"drawn", "bar-like", "bar"}
    h3 = train_predictor(tmp_path / "a", **kw)  # reuses the tables: the same result
    assert h3["selection"] == h1["selection"]
