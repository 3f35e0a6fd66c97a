"""Calibration with a prior (a pull towards the start point that fades with the training runs) and the
learning curve of calibration (``simsched calibrate-curve``)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest
from helpers import wfformat_chain as chain
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.fidelity import calibrate, read_corpus
from simsched.fidelity.calibrate import shrunk
from simsched.fidelity.curve import learning_curve, summary

runner = CliRunner()
FIXED = {name: (0.0, 0.0) for name in ("submit", "dispatch_interval", "cycle", "post", "startup")}
ONLY_PRE = {"runtime_factor": (1.0, 1.0), "slots": (4, 4), "dispatch_per_queued": (1e-6, 1e-6),
            "bandwidth": (1e10, 1e10), **FIXED, "pre": (0.0, 20.0)}


def test_shrunk_by_hand() -> None:
    u, origin = np.array([1.0, 0.0]), np.zeros(2)
    assert shrunk(0.1, u, origin, 1.0, 2) == pytest.approx(0.1 + 1.0 / 2 * 0.5)
    assert shrunk(0.1, u, origin, 0.0, 2) == 0.1
    assert shrunk(0.1, np.zeros(0), np.zeros(0), 5.0, 1) == 0.1  # nothing free: nothing to pull


def _chains(folder: Path, n: int, makespan: float = 45.0) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        chain(folder / f"c-chameleon-{i:03d}.json", [10.0, 10.0, 10.0], makespan)
    return folder


def test_the_prior_pulls_the_fit_towards_the_start_and_fades_with_runs(tmp_path: Path) -> None:
    # three 10 s tasks recorded at 45 s: 5 s of pre-execution each fits exactly; Pegasus's documented
    # start is 13.5 s.  With prior 10 and two runs the minimum of |log((30 + 3 pre) / 45)| + 10 / 2 *
    # ((pre - 13.5) / 20)^2 lies near 11.7 s; with 80 runs the pull is forty times weaker, and weaker
    # than the error's slope (3 / 45 per second) at the exact fit, which it then keeps.
    few = read_corpus([_chains(tmp_path / "few", 4)])
    free = calibrate(few, budget_s=10.0, seed=1, bounds=ONLY_PRE, prior=0.0)[0]
    pulled = calibrate(few, budget_s=10.0, seed=1, bounds=ONLY_PRE, prior=10.0)[0]
    assert free.parameters.pre == pytest.approx(5.0, abs=0.05)
    assert 11.0 < pulled.parameters.pre < 12.5
    assert pulled.train_error == pytest.approx(abs(np.log((30 + 3 * pulled.parameters.pre) / 45.0)))
    many = read_corpus([_chains(tmp_path / "many", 80)])
    faded = calibrate(many, budget_s=10.0, seed=1, bounds=ONLY_PRE, prior=10.0)[0]
    assert faded.parameters.pre == pytest.approx(5.0, abs=0.05)


def test_the_learning_curve_fits_each_prior_on_the_same_draws(tmp_path: Path) -> None:
    corpus = read_corpus([_chains(tmp_path / "c", 8)])
    points = learning_curve(corpus, sizes=(1, 2), draws=2, priors=(0.0, 3.0), budget_s=0.3, score_runs=3, seed=4)
    assert len(points) == 2 * 2 * 2
    assert all(len(p.errors) == 3 for p in points)
    # every run is the same chain: any fit scores the same error on every scored run
    assert all(len(set(np.round(p.errors, 12))) == 1 for p in points)
    rows = summary(points)
    assert [(k, prior) for k, prior, *_ in rows] == [(1, 0.0), (1, 3.0), (2, 0.0), (2, 3.0)]
    first = [abs(e) for p in points if p.k == 1 and p.prior == 0.0 for e in p.errors]
    assert rows[0][2] == 2 and rows[0][3] == pytest.approx(statistics.median(first))
    with pytest.raises(SimschedError, match="no installation has more than 8 training runs"):
        learning_curve(corpus, sizes=(8,), budget_s=0.3)


def test_calibrate_curve_command(tmp_path: Path) -> None:
    folder = _chains(tmp_path / "c", 6)
    out = tmp_path / "curve.json"
    done = runner.invoke(app, ["calibrate-curve", str(folder), "--sizes", "2", "--draws", "1", "--priors", "0,1",
                               "--budget", "0.3", "--json", str(out)])
    assert done.exit_code == 0, done.output
    assert max(len(line) for line in done.stdout.splitlines()) <= 100
    doc = json.loads(out.read_text())
    assert len(doc["fits"]) == 2 and [r["prior"] for r in doc["summary"]] == [0.0, 1.0]
    for args, message in ((["--priors", "0,-1"], "--priors: priors must be finite numbers >= 0"),
                          (["--sizes", "a"], "--sizes: must be whole numbers separated by commas"),
                          (["--budget", "0"], "--budget: must be a number of CPU seconds > 0")):
        bad = tmp_path / "bad.json"
        result = runner.invoke(app, ["calibrate-curve", str(folder), "--json", str(bad), *args])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], lines
        assert not bad.exists()
