"""Seeds for seed spaces (issue 40, row 5): the days of a space derive from a *scenario* seed (below
2**40, :func:`simsched.run.seedspace.check_base`); ``--seed-space train --seed 2**63 - 1`` (above every
space), a seed of a space, or a scenario whose own ``seed`` is one of those, is refused with one line
naming ``--seed`` (or the scenario's ``seed`` field and line) before the scenario runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.run.seedspace import RANGES, WIDTH, check_base, space_seeds

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "scenarios" / "quickstart.yaml"


@pytest.mark.parametrize(("seed", "says"), [
    (2**63 - 1, "above every seed space"), (WIDTH, "train seed space"), (RANGES["evaluate"][0] + 7, "evaluate"),
    (RANGES["fresh"][1] - 1, "fresh"), (RANGES["fresh"][1], "above every seed space"), (-1, "negative"),
])
def test_a_base_that_is_not_a_scenario_seed_is_refused(seed: int, says: str) -> None:
    with pytest.raises(SimschedError, match=says) as caught:
        check_base(seed)
    assert caught.value.field == "--seed"


@pytest.mark.parametrize("seed", [0, 42, WIDTH - 1])
def test_scenario_seeds_derive_days_inside_the_space(seed: int) -> None:
    check_base(seed)
    lo, hi = RANGES["train"]
    assert all(lo <= s < hi for s in space_seeds(seed, "train", 3))


@pytest.mark.parametrize("seed", [2**63 - 1, WIDTH, RANGES["select"][0]])
@pytest.mark.parametrize("space", ["train", "evaluate", "fresh"])
def test_run_refuses_a_seed_space_base_out_of_range(seed: int, space: str) -> None:
    line = refused(["run", str(QUICK), "--seed-space", space, "--seed", str(seed), "-r", "1"], inputs=(QUICK,),
                   says="error: --seed: ")
    assert str(seed) in line and "scenario seed" in line


def test_a_scenario_seed_field_beyond_the_scenario_range_is_located(tmp_path: Path) -> None:
    scen = tmp_path / "q.yaml"
    scen.write_text(QUICK.read_text().replace("\nseed: 42\n", f"\nseed: {WIDTH + 1}\n"))
    line = refused(["run", str(scen), "--seed-space", "train", "-r", "1"], inputs=(scen,), says=": seed: ")
    assert line.startswith(f"error: {scen}:") and line.split(":")[2].strip().isdigit()


def test_generalise_refuses_a_base_out_of_range_before_it_reads_the_scenario(tmp_path: Path) -> None:
    missing = tmp_path / "never-read.yaml"  # the refusal comes first: the file does not even exist
    refused(["generalise", str(missing), "-s", "mct", "--seed", str(2**63 - 1)], says="error: --seed: ")


def test_a_plain_seed_keeps_its_meaning_without_a_space() -> None:
    """Without ``--seed-space`` a seed is the day itself, up to 2**63 - 1, as before."""
    r = CliRunner().invoke(app, ["run", str(QUICK), "--seed", str(2**63 - 1), "-r", "1", "-s", "heft"])
    assert r.exit_code == 0, r.output
