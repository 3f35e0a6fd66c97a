"""Sizes with products (issue 40, row 4): a ``capacity.mix`` grid is every combination of its ranges,
so ranges of huge counts are a product no machine can list — refused before any mix is built (one
located line, exit 2; :func:`simsched.limits.check_product`), never a MemoryError or minutes of silence."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)

from simsched import limits
from simsched.capacity.models.mix import MAX_MIXES

MIX = {
    "name": "mix", "seed": 3,
    "platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 2},
                                {"name": "gpu", "type": "gpu", "speed": 4.0, "count": 1}]},
    "workload": {"generator": "random", "tasks": 20},
    "schedulers": ["heft"],
    "capacity": {"objective": "makespan <= 60", "mix": {"cpu": [1, 2], "gpu": [0, 1]}, "days": 2},
}


@pytest.mark.parametrize(("mix", "says"), [
    ({"cpu": [0, 100_000], "gpu": [0, 100_000]}, "10,000,200,001 mixes"),
    ({"cpu": [1, 10**18], "gpu": [1, 2]}, "about 2e+18 mixes"),
    ({"cpu": [0, 10**18], "gpu": [0, 10**18]}, "about 1e+36 mixes"),
    ({"cpu": [1, 21], "gpu": [0, 19]}, "420 mixes"),
])
def test_a_mix_grid_of_huge_counts_is_refused_before_any_mix_is_listed(tmp_path: Path, mix: dict, says: str) -> None:
    scen = tmp_path / "mix.yaml"
    scen.write_text(yaml.safe_dump({**MIX, "capacity": {**MIX["capacity"], "mix": mix}}))
    line = refused(["capacity", str(scen)], inputs=(scen,), says=says, seconds=60)
    assert f"{scen}:" in line and "capacity.mix" in line and f"at most {MAX_MIXES} mixes" in line


def test_check_product_is_exact_and_never_lists_the_combinations() -> None:
    with pytest.raises(limits.LimitError, match="about 1e\\+300 combos is more than the limit of 999; fewer"):
        limits.check_product([10] * 300, 999, what="combos", hint="fewer")  # 10^300: counted, not listed
    with pytest.raises(limits.LimitError, match="1,000 combos"):
        limits.check_product([10, 10, 10], 999, what="combos", hint="fewer")
    assert limits.check_product([3, 4, 5], 60, what="combos", hint="fewer") == 60
    assert limits.check_product([], 1, what="combos", hint="fewer") == 1
