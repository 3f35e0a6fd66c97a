"""Capacity with energy and money: objectives over energy_kwh / cost_usd / carbon_kg, and the cheapest
mix of processor types (simsched.capacity.mix) with its front."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from simsched.capacity import mix_question, pareto_front
from simsched.cli.main import app
from simsched.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[1]


def _small(tmp_path: Path, capacity: dict) -> Path:
    data = yaml.safe_load((ROOT / "scenarios/energy/gpu_mix.yaml").read_text())
    data["workload"]["stream"]["count"] = 6
    data["capacity"] = capacity
    f = tmp_path / "mix.yaml"
    f.write_text(yaml.safe_dump(data))
    return f


def test_mix_answer_is_the_cheapest_passing_and_the_front_is_not_dominated(tmp_path: Path) -> None:
    f = _small(tmp_path, {"objective": "jct_p95 <= 200", "mix": {"cpu": [1, 2], "gpu": [0, 1]}, "days": 3})
    result = mix_question(load_yaml(f)).answer()
    assert result["kind"] == "mix" and len(result["points"]) == 4
    labels = [p["label"] for p in result["points"]]
    assert labels == ["1 cpu + 0 gpu", "1 cpu + 1 gpu", "2 cpu + 0 gpu", "2 cpu + 1 gpu"]
    cost = [p["metrics"]["cost_usd"]["mean"] for p in result["points"]]
    passing = [i for i, p in enumerate(result["points"]) if p["passes"]]
    assert result["answer"] == (min(passing, key=lambda i: cost[i]) if passing else None)
    serv = [p["metrics"]["jct_p95"]["mean"] for p in result["points"]]
    for i in result["front"]:
        assert not any(serv[j] < serv[i] and cost[j] < cost[i] for j in range(len(cost)))
    # a mix without GPUs drops the type everywhere (its power and price entries would not validate)
    assert result["points"][0]["metrics"]["cost_usd"]["mean"] < result["points"][1]["metrics"]["cost_usd"]["mean"]


def test_pareto_front_small() -> None:
    x = np.array([1.0, 2.0, 3.0, 2.5, np.nan])
    y = np.array([5.0, 3.0, 1.0, 4.0, 0.0])
    assert pareto_front(x, y).tolist() == [0, 1, 2]


def test_energy_objective_in_a_capacity_search(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "scenarios/energy/gpu_mix.yaml").read_text())
    data["workload"]["stream"]["count"] = 6
    data.pop("capacity")
    f = tmp_path / "cap.yaml"
    f.write_text(yaml.safe_dump(data))
    out = tmp_path / "cap.json"
    result = CliRunner().invoke(app, ["capacity", str(f), "--objective", "jct_p95 <= 400 and energy_kwh <= 1",
                                      "--resource", "cpu",
                                      "--days", "3", "--max", "8", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [c["metric"] for c in doc["clauses"]] == ["jct_p95", "energy_kwh"]
    assert doc["variants"][0]["capacity"] is not None


def test_mix_bad_range_is_located(tmp_path: Path) -> None:
    f = _small(tmp_path, {"objective": "jct_p95 <= 200", "mix": {"cpu": [3, 1]}})
    result = CliRunner().invoke(app, ["capacity", str(f)])
    assert result.exit_code == 2 and "capacity.mix" in result.output and "Traceback" not in result.output
    f = _small(tmp_path, {"objective": "jct_p95 <= 200", "mix": {"tpu": [1, 2]}})
    result = CliRunner().invoke(app, ["capacity", str(f)])
    assert result.exit_code == 2 and "'tpu'" in result.output


def test_mix_cli_table_and_plot(tmp_path: Path) -> None:
    f = _small(tmp_path, {"objective": "jct_p95 <= 200", "mix": {"cpu": [1, 2], "gpu": [1, 1]}, "days": 2})
    png = tmp_path / "front.png"
    result = CliRunner().invoke(app, ["capacity", str(f), "--plot", str(png)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "cheapest mix by cost_usd" in result.output and png.stat().st_size > 1000


def test_energy_table_pairs_by_day() -> None:
    from simsched.study.energy_table import energy_table, format_rows

    rows = [{"scheduler": s, "seed": d, "energy_j": 3.6e6 * (2.0 if s == "b" else 1.0) * (d + 1), "carbon_g": 10.0,
             "makespan": 5.0, "peak_w": 100.0, "cost_usd": 1.0} for s in ("a", "b") for d in range(3)]
    table = energy_table({"results": rows})
    e = {r["scheduler"]: r for r in table if r["metric"] == "energy kWh"}
    assert e["a"]["mean"] == pytest.approx(2.0) and e["b"]["mean"] == pytest.approx(4.0)
    assert e["b"]["ratio"] == pytest.approx(2.0) and e["b"]["days"] == 3
    assert "x2.000" in format_rows(table)
