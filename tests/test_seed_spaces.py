"""Seed spaces: disjoint by construction, recorded in every results row, refused for training."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.run.seedspace import MAX_DAYS, RANGES, SPACES, WIDTH, space_of, space_seeds, training_refusal


@settings(max_examples=200, deadline=None)
@given(base=st.integers(0, 2**63 - 1), space=st.sampled_from(SPACES), days=st.integers(1, 50))
def test_days_stay_inside_their_space(base: int, space: str, days: int) -> None:
    seeds = space_seeds(base, space, days)
    lo, hi = RANGES[space]
    assert len(seeds) == days and seeds == list(range(seeds[0], seeds[0] + days))
    assert lo <= seeds[0] and seeds[-1] < hi
    assert {space_of(s) for s in seeds} == {space}
    assert space_seeds(base, space, days) == seeds  # derived, not drawn


def test_the_spaces_are_disjoint_and_above_scenario_seeds() -> None:
    bounds = sorted(RANGES.values())
    assert bounds[0][0] == WIDTH
    assert all(a[1] <= b[0] for a, b in zip(bounds, bounds[1:]))
    assert space_of(0) == space_of(20000) == space_of(WIDTH - 1) == "scenario"
    assert space_of(bounds[-1][1]) == "other"
    # the largest run of days still fits: the start is at most WIDTH - MAX_DAYS above the low end
    seeds = space_seeds(7, "evaluate", MAX_DAYS)
    assert seeds[-1] < RANGES["evaluate"][1]


@pytest.mark.parametrize("days", [0, MAX_DAYS + 1])
def test_refuses_impossible_day_counts(days: int) -> None:
    with pytest.raises(SimschedError):
        space_seeds(1, "train", days)
    with pytest.raises(SimschedError):
        space_seeds(1, "test", 3)


def test_training_refuses_evaluation_and_fresh_days() -> None:
    assert training_refusal(None) is None
    assert training_refusal(5) is None
    assert training_refusal(space_seeds(3, "train", 1)[0]) is None
    assert training_refusal(space_seeds(3, "select", 1)[0]) is None
    assert "evaluate" in training_refusal(space_seeds(3, "evaluate", 1)[0])
    assert "fresh" in training_refusal(space_seeds(3, "fresh", 1)[0])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simsched.cli.main", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_fresh_run_prints_its_seed_and_records_the_space(tmp_path) -> None:
    out = tmp_path / "r.json"
    r = _cli("run", "scenarios/streams/capacity_stream.yaml", "-s", "mct", "-r", "2", "--fresh", "--json", str(out))
    assert r.returncode == 0, r.stderr
    seed = int(r.stdout.split("fresh days from seed ")[1].split()[0])
    rows = json.loads(out.read_text())["results"]
    assert {row["seed_space"] for row in rows} == {"fresh"}
    assert [row["seed"] for row in rows] == space_seeds(seed, "fresh", 2)
    again = tmp_path / "again.json"
    r = _cli("run", "scenarios/streams/capacity_stream.yaml", "-s", "mct", "-r", "2", "--seed-space", "fresh",
             "--seed", str(seed), "--json", str(again))
    assert r.returncode == 0, r.stderr
    rows2 = json.loads(again.read_text())["results"]
    assert [row["jct_mean"] for row in rows2] == [row["jct_mean"] for row in rows]


def test_plain_runs_record_the_scenario_space(tmp_path) -> None:
    out = tmp_path / "r.json"
    r = _cli("run", "scenarios/topcuoglu2002.yaml", "-s", "heft", "-s", "cpop", "--json", str(out))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["results"]
    assert {row["seed_space"] for row in rows} == {"scenario"}
    assert {row["scheduler"]: row["makespan"] for row in rows} == {"heft": 80.0, "cpop": 86.0}


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--seed-space", "test"], ["--fresh", "--seed", "3"],
                                  ["--fresh", "--seed-space", "train"], ["--seed-space", "train", "-r", "2000000"]])
def test_bad_seed_space_options_exit_2_with_one_line(args, tmp_path) -> None:
    out = tmp_path / "r.json"
    r = _cli("run", "scenarios/streams/capacity_stream.yaml", "--json", str(out), *args)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("text,field", [("seed: 4400000000000\n", "seed"),
                                        ("fixed_seed: 3300000000000\n", "fixed_seed"),
                                        ("eval: {seed_offset: 3300000000000}\n", "eval.seed_offset")])
def test_train_refuses_the_evaluation_space(text: str, field: str, tmp_path) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text(text)
    r = _cli("train", "rl", str(cfg))
    assert r.returncode == 2
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and f"{cfg}:1: {field}:" in line and "seed space" in line
