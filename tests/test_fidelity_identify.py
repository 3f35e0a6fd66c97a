"""What a calibration's training runs cannot pin down (simsched.fidelity.identify): hand-computed cases,
properties on random runs, and the table ``simsched calibrate`` prints."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from helpers import wfformat_chain as chain
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.fidelity.ask import calibrate_corpus, fidelity_of
from simsched.fidelity.calibrate import DEFAULT_BOUNDS, Bound
from simsched.fidelity.identify import UNPINNED, at_edge, confounded, directions, together, unexercised_share
from simsched.fidelity.model import Parameters
from simsched.fidelity.profile import write_profile

runner = CliRunner()
STARTUP, CRITICAL, LEVELS, TASKS, BYTES = range(5)


def _runs(tasks: list[float], levels: list[float], critical: list[float], moved: list[float]) -> np.ndarray:
    return np.column_stack([np.ones(len(tasks)), critical, levels, tasks, moved]).astype(np.float64)


def test_a_graph_of_the_same_depth_in_every_run_cannot_tell_overheads_from_start_up() -> None:
    # three levels in every run: levels / makespan is 3 x (1 / makespan), the start-up's column
    q = _runs([40, 100, 300, 120, 60, 500], [3] * 6, [10, 900, 1800, 50, 400, 700], [5e6, 4e9, 6e9, 1e8, 7e9, 2e8])
    exercised, weak, absent = confounded(q / np.array([900.0, 3900, 6300, 1200, 1800, 5000])[:, None])
    assert (exercised, weak, absent) == (4, (STARTUP, LEVELS), ())


def test_tasks_and_bytes_that_grow_together_are_one_mechanism_to_the_runs() -> None:
    tasks = [104, 1004, 104, 1004, 300, 700]
    q = _runs(tasks, [2, 2, 3, 3, 4, 5], [300, 320, 700, 650, 100, 1000], [3.3e8 * t for t in tasks])
    exercised, weak, absent = confounded(q / np.array([800.0, 5000, 900, 4600, 2000, 4000])[:, None])
    assert (exercised, weak, absent) == (4, (TASKS, BYTES), ())


def test_what_barely_varies_is_said_in_the_runs_own_terms() -> None:
    tasks = [104, 1004, 104, 1004, 300, 700]
    q = _runs(tasks, [3] * 6, [300, 320, 700, 650, 100, 1000], [3.3e8 * t * (1.1 if t == 300 else 1.0) for t in tasks])
    assert together(q, (STARTUP, LEVELS, TASKS, BYTES)) == ("levels 1.00x", "bytes per task 1.10x")
    assert together(q, (CRITICAL, TASKS)) == ()  # the critical path per task varies 30-fold
    q[2, BYTES] = 0.0  # a run without bytes tells tasks from bytes
    assert together(q, (TASKS, BYTES)) == ()


def test_a_quantity_no_run_has_is_absent_not_confounded() -> None:
    q = _runs([10, 50, 20, 80, 35], [2, 6, 3, 4, 9], [100, 200, 900, 50, 400], [0] * 5)
    exercised, weak, absent = confounded(q / np.array([300.0, 700, 1300, 500, 900])[:, None])
    assert (exercised, weak, absent) == (4, (), (BYTES,))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_what_the_runs_pin_down_is_a_property_of_their_proportions(runs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    q = _runs(*(rng.uniform(1, 1000, runs).tolist() for _ in range(4)))
    makespan = rng.uniform(100, 10000, runs)
    exercised, weak, absent = confounded(q / makespan[:, None])
    assert 1 <= exercised <= min(runs, 5) and absent == ()
    assert len(weak) >= 5 - runs  # fewer runs than mechanisms: some always trade off
    scaled = q * np.array([1.0, 3.0, 0.5, 7.0, 1e6])  # units of a quantity, the runs' scale, their order
    order = rng.permutation(runs)
    assert confounded(scaled[order] / makespan[order, None]) == (exercised, weak, absent)


def test_a_run_that_varies_what_the_training_runs_moved_together_is_unpinned() -> None:
    # trained on runs whose bytes grow with their tasks (330 MB each); the runs to come read ten times more
    # per task (another mix: the split of time between dispatcher and storage decides them), or the same
    tasks = [104, 1004, 104, 1004, 300, 700]
    makespan = np.array([800.0, 5000, 900, 4600, 2000, 4000])
    q = _runs(tasks, [2, 2, 3, 3, 4, 5], [300, 320, 700, 650, 100, 1000], [3.3e8 * t for t in tasks])
    scale, vt, exercised = directions(q / makespan[:, None])
    assert exercised == 4
    alike = _runs([500], [3], [400], [3.3e8 * 500])[0] / 3000.0
    heavier = _runs([500], [3], [400], [3.3e9 * 500])[0] / 30000.0
    assert unexercised_share(alike, scale, vt, exercised) < 1e-9
    assert unexercised_share(heavier, scale, vt, exercised) > UNPINNED
    # a quantity no training run had: bytes where none recorded any
    none = _runs(tasks, [2, 2, 3, 3, 4, 5], [300, 320, 700, 650, 100, 1000], [0.0] * 6) / makespan[:, None]
    assert unexercised_share(heavier, *directions(none)) > UNPINNED
    assert unexercised_share(none[0], *directions(none)) < 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_the_unexercised_share_is_a_fraction_of_the_run_and_nil_for_a_training_run_fully_pinned(
        runs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mix = _runs(*(rng.uniform(1, 1000, runs).tolist() for _ in range(4))) / rng.uniform(100, 10000, runs)[:, None]
    scale, vt, exercised = directions(mix)
    x = _runs(*([v] for v in rng.uniform(1, 1000, 4).tolist()))[0] / 500.0
    share = unexercised_share(x, scale, vt, exercised)
    assert 0.0 <= share <= 1.0 + 1e-12
    assert unexercised_share(x * 7.0, scale, vt, exercised) == pytest.approx(share, abs=1e-12)
    if exercised == mix.shape[1]:
        assert share < 1e-9


def test_a_parameter_is_at_the_edge_only_where_the_edge_is_no_natural_none() -> None:
    bounds = {"slots": Bound(1, 48, integer=True), **DEFAULT_BOUNDS, "pre": Bound(5.0, 5.0)}
    params = Parameters(slots=1, runtime_factor=2.0, submit=0.0, pre=5.0, startup=599.0, bandwidth=1.02e6)
    assert at_edge(params, bounds) == ("runtime_factor=2 (highest)", "startup=599 (highest)",
                                       "bandwidth=1.02e+06 (lowest)")
    inside = replace(params, runtime_factor=1.0, startup=500.0, bandwidth=None)  # None: no storage bottleneck
    assert at_edge(inside, bounds) == ()


def _chains(folder: Path, lengths: list[int], per_task: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, n in enumerate(lengths):
        chain(folder / f"chain{n}-{i:03d}.json", [10.0] * n, n * (10.0 + per_task))
    return folder


FIXED = ("runtime_factor=1,1", "submit=0,0", "dispatch_interval=0,0", "dispatch_per_queued=0,0", "cycle=0,0",
         "post=0,0", "startup=0,0", "pre=0,20")


def test_a_calibration_on_chains_says_what_chains_cannot_tell_apart(tmp_path: Path) -> None:
    # chains of 10 s tasks: critical path, levels and tasks all grow as n, no file moves a byte, and a
    # recorded 35 s per task asks for 25 s of pre-execution where the box allows 20
    folder = _chains(tmp_path / "runs", [2, 3, 4, 6], 25.0)
    done = calibrate_corpus([folder], budget_s=3.0, seed=1, bounds=FIXED, split_runs=False)
    [d] = done.diagnoses
    assert (d.runs, d.exercised, d.mechanisms) == (4, 2, 5)
    assert d.confounded == ("runtimes", "overheads", "dispatcher") and d.absent == ("storage",)
    assert d.at_edge == ("pre=20 (highest)",)
    assert d.together == ("levels per second of critical path 1.00x", "tasks per second of critical path 1.00x",
                          "tasks per level 1.00x")
    shown = runner.invoke(app, ["calibrate", str(folder), "-o", str(tmp_path / "p.yaml"), "--budget", "2",
                                "--no-split", *(a for b in FIXED for a in ("--bound", b))])
    assert shown.exit_code == 0, shown.output
    assert "cannot pin down" in shown.stdout and "2 of 5" in shown.stdout and "never" in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 100


def test_fidelity_flags_the_runs_to_come_whose_mix_the_training_runs_did_not_pin_down(tmp_path: Path) -> None:
    past = _chains(tmp_path / "past", [2, 3, 2, 3], 5.0)
    done = calibrate_corpus([past], budget_s=2.0, seed=1, bounds=FIXED, split_runs=False)
    profile = tmp_path / "p.yaml"
    write_profile(profile, done.calibrations, done.corpus, budget_s=2.0)
    later = tmp_path / "later"
    later.mkdir()
    chain(later / "chain6-000.json", [10.0] * 6, 6 * 15.0)  # longer, the same mix: pinned
    chain(later / "long4-000.json", [40.0] * 4, 4 * 45.0)  # 40 s tasks: runtimes against overheads, unpinned
    rows = {r.name: r for r in fidelity_of([later], profile=profile).rows}
    assert rows["chain6-000.json"].unexercised < 1e-6 < UNPINNED <= rows["long4-000.json"].unexercised
    shown = runner.invoke(app, ["fidelity", str(later), "--profile", str(profile)])
    assert shown.exit_code == 0, shown.output
    assert "pinned down" in shown.stdout and "in its 80%" in shown.stdout
    # four training runs give a finite interval; the runs to come are predicted exactly, so each is inside
    [unpinned] = [line for line in shown.stdout.splitlines() if line.startswith("│ unpinned")]
    assert [c.strip() for c in unpinned.split("│")[2:5]] == ["1", "0.0% / 0.0%", "1 / 1"]
