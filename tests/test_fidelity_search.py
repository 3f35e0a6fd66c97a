"""The searches of a calibration (:mod:`simsched.fidelity.search`): CMA-ES (the default) and differential
evolution, each followed by Nelder-Mead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import replace_top_key
from helpers import wfformat_chain as chain

from simsched.errors import SimschedError
from simsched.fidelity import calibrate, read_corpus, read_profile, write_profile
from simsched.fidelity.search import SEARCH, Spent, cma_search, refine

# three 10 s tasks recorded at 45 s: 5 s of pre-execution plus post-processing per task fits exactly
FIXED = {name: (0.0, 0.0) for name in ("submit", "dispatch_interval", "cycle", "startup")}
PRE_AND_POST = {"runtime_factor": (1.0, 1.0), "slots": (4, 4), "dispatch_per_queued": (1e-6, 1e-6),
                "bandwidth": (1e10, 1e10), **FIXED, "pre": (0.0, 20.0), "post": (0.0, 20.0)}


def _bowl(counter: list[int], best: dict, box: np.ndarray, budget: int = 3_000):
    target = box[:, 0] + np.array([0.2, 0.7, 0.9]) * (box[:, 1] - box[:, 0])

    def f(x: np.ndarray) -> float:
        if counter[0] >= budget:
            raise Spent
        counter[0] += 1
        value = float(np.sum(np.abs(x - target) / (box[:, 1] - box[:, 0])))  # kinked at its minimum
        if value < best["value"]:
            best.update(value=value, x=np.array(x))
        return value
    return f


def test_cma_then_nelder_mead_finds_a_kinked_minimum_and_repeats_itself() -> None:
    box = np.array([[0.0, 10.0], [-3.0, 1.0], [1e6, 1e10]])  # ranges of very different widths
    runs = []
    for _ in range(2):
        counter, best = [0], {"value": np.inf, "x": box[:, 0].copy()}
        f = _bowl(counter, best, box)
        f(best["x"])
        cma_search(f, best, box, seed=3)
        assert refine(f, best, box) == "converged"
        runs.append((counter[0], best["x"].tolist(), best["value"]))
    assert runs[0] == runs[1]  # deterministic for its seed
    assert runs[0][2] < 1e-3


def test_the_budget_stops_cma_with_the_best_point_so_far() -> None:
    box = np.array([[0.0, 1.0]] * 3)
    counter, best = [0], {"value": np.inf, "x": np.full(3, 0.5)}
    f = _bowl(counter, best, box, budget=25)
    with pytest.raises(Spent):
        cma_search(f, best, box, seed=0)
    assert counter[0] == 25 and best["value"] < np.inf


def _chains(folder: Path, n: int) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        chain(folder / f"c-chameleon-{i:03d}.json", [10.0, 10.0, 10.0], 45.0)
    return folder


@pytest.mark.parametrize("search", ["cma", "de"])
def test_each_search_fits_a_hand_computed_overhead(tmp_path: Path, search: str) -> None:
    corpus = read_corpus([_chains(tmp_path / "c", 4)])
    [fit] = calibrate(corpus, budget_s=3.0, seed=2, bounds=PRE_AND_POST, search=search)
    p = fit.parameters
    assert fit.train_error < 2e-3
    assert 3 * (p.pre + p.post) == pytest.approx(15.0, abs=0.1)  # 30 s of runtime + 3 (pre + post) = 45 s


@pytest.mark.parametrize("key, value, bad, message", [
    ("search", "de", "bayes", "must be one of cma, de"),
    ("prior", 0.5, "-1", "must be >= 0"),
    ("evaluations", 30, "0", "must be a whole number >= 1"),
])
def test_a_profile_records_what_it_was_calibrated_with_and_refuses_a_bad_value(
        tmp_path: Path, key: str, value: object, bad: str, message: str) -> None:
    assert SEARCH == "cma"  # the default
    corpus = read_corpus([_chains(tmp_path / "c", 2)])
    path = write_profile(tmp_path / "p.yaml", calibrate(corpus, budget_s=0.5, **{key: value}), corpus, budget_s=0.5,
                         **{key: value})
    assert f"{key}: {value}" in path.read_text()
    read_profile(path)
    line = replace_top_key(path, key, bad)
    with pytest.raises(SimschedError, match=message) as exc:
        read_profile(path)
    assert exc.value.line == line and exc.value.field == key
    with pytest.raises(SimschedError, match=f"--{key}"):
        calibrate(corpus, budget_s=0.5, **{key: bad if key == "search" else float(bad)})


def test_a_budget_of_simulations_gives_the_same_profile_whatever_the_cpu(tmp_path: Path) -> None:
    # chains of two sizes, so that an application refinement runs too; the CPU budget, a ceiling far
    # above what 40 simulations of these runs take, no longer decides where the searches stop
    folder = _chains(tmp_path / "c", 6)
    for i in range(6):
        chain(folder / f"d-chameleon-{i:03d}.json", [20.0] * 2, 60.0)
    corpus = read_corpus([folder], split_runs=False)
    fits = [calibrate(corpus, budget_s=budget, seed=3, evaluations=40) for budget in (60.0, 1e3)]
    assert [f.parameters for f in fits[0]] == [f.parameters for f in fits[1]]
    assert [f.evaluations for f in fits[0]] == [f.evaluations for f in fits[1]]
    assert [f.application for f in fits[0]] == [None, "c", "d"]
    assert [f.evaluations for f in fits[0]] == [40, 20, 20]  # each stopped by its count, not converged
    assert all(f.stopped == "budget" for f in fits[0])
    path = write_profile(tmp_path / "p.yaml", fits[0], corpus, budget_s=60.0, evaluations=40)
    # and the CPU budget is still a ceiling: a count too large for it stops where the CPU runs out
    [capped] = calibrate(corpus, budget_s=0.05, seed=3, evaluations=10**9, per_application=False)
    assert capped.stopped == "budget" and capped.evaluations < 10**9
    text = path.read_text()
    assert "evaluations: 40" in text and "budget_s" not in text and read_profile(path).entries


def _linear_chains(folder: Path) -> Path:
    """Chains whose recorded makespans are exactly 60 s of start-up plus 1.5 x their critical path."""
    folder.mkdir(exist_ok=True)
    for i, runtimes in enumerate([[10.0], [10.0, 30.0], [5.0, 5.0, 40.0], [100.0, 20.0]]):
        chain(folder / f"c-chameleon-{i:03d}.json", runtimes, 60.0 + 1.5 * sum(runtimes))
    return folder


def test_the_bottleneck_regression_reads_a_linear_corpus_exactly(tmp_path: Path) -> None:
    from simsched.fidelity.bottleneck import regression_start
    from simsched.fidelity.model import Parameters, simulate, task_io

    train = list(read_corpus([_linear_chains(tmp_path / "c")]).executions)
    guess = regression_start(train, [task_io(e.run) for e in train], Parameters(slots=4, cycle=0.0))
    assert guess is not None and guess.bandwidth is None and guess.slots == 4
    assert guess.startup == pytest.approx(60.0, abs=1e-6) and guess.runtime_factor == pytest.approx(1.5, rel=1e-9)
    assert guess.submit + guess.pre + guess.post + guess.dispatch_interval == pytest.approx(0.0, abs=1e-6)
    for e in train:  # the simulator agrees where the model is that sum: a chain on one machine
        assert simulate(e.graph, e.run, guess).makespan == pytest.approx(e.run.makespan, rel=1e-9)


def test_a_calibration_keeps_the_regression_point_only_when_it_is_better(tmp_path: Path) -> None:
    from simsched.fidelity.calibrate import bounds_for, calibrate_installation
    from simsched.fidelity.model import Parameters

    train = list(read_corpus([_linear_chains(tmp_path / "c")]).executions)
    free = {"startup": (0.0, 600.0), "runtime_factor": (0.5, 2.0)}
    bounds = bounds_for(train, {**PRE_AND_POST, "pre": (0.0, 0.0), "post": (0.0, 0.0), **free})
    fit = calibrate_installation("c", train, budget_s=30.0, seed=0, bounds=bounds, start=Parameters(slots=4),
                                 global_share=0.0)
    assert fit.start_error > 0.3 and fit.train_error < 1e-6  # Nelder-Mead from the regression's exact point
    assert fit.parameters.startup == pytest.approx(60.0, abs=1e-3)
    exact = Parameters(slots=4, startup=60.0, runtime_factor=1.5)  # a start already exact stays exact
    again = calibrate_installation("c", train, budget_s=30.0, seed=0, bounds=bounds, start=exact, global_share=0.0)
    assert again.start_error < 1e-12 and again.train_error == again.start_error


def test_a_profile_records_whether_the_regression_started_it_and_refuses_anything_but_a_boolean(
        tmp_path: Path) -> None:
    corpus = read_corpus([_chains(tmp_path / "c", 2)])
    path = write_profile(tmp_path / "p.yaml", calibrate(corpus, budget_s=0.5, regression=False), corpus,
                         budget_s=0.5, regression=False)
    assert "regression_start: false" in path.read_text()
    read_profile(path)
    line = replace_top_key(path, "regression_start", "maybe")
    with pytest.raises(SimschedError, match="must be true or false") as exc:
        read_profile(path)
    assert exc.value.line == line and exc.value.field == "regression_start"
