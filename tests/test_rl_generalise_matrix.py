"""The generalisation matrix (simsched generalise): cells built from the scenario's YAML, paired
ratios against the best rule, the command's table, JSON and HTML, bad input refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.learned.generalise_matrix import CELLS, cell_data, matrix, summary
from simsched.run.seedspace import space_seeds

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "streams" / "capacity_stream.yaml"

BASE = {"workload": {"stream": {"jobs": [{"generator": "random", "tasks": [5, 10]}, {"dax": "x/epigenomics_50.dax"}],
                                "arrivals": {"rates": [[0, 0.01], [100, 0.03]]}, "count": 6}},
        "platform": {"processors": [{"name": "c", "speed": 1.0, "count": 4}, {"name": "g", "speed": 3.0, "count": 3}]},
        "failures": {"mtbf": 100, "mttr": 5}}


def test_cells_change_exactly_their_world() -> None:
    load, _ = cell_data(BASE, "load +30%")
    assert load["workload"]["stream"]["arrivals"]["rates"] == [[0.0, 0.01 * 1.3], [100 / 1.3, 0.03 * 1.3]]
    assert cell_data(BASE, "2x jobs")[0]["workload"]["stream"]["count"] == 12
    more, fewer = cell_data(BASE, "more fast processors")[0], cell_data(BASE, "fewer fast processors")[0]
    assert [p["count"] for p in more["platform"]["processors"]] == [4, 5]
    assert [p["count"] for p in fewer["platform"]["processors"]] == [4, 1]
    assert cell_data(BASE, "speed ratio x2")[0]["platform"]["processors"][1]["speed"] == 6.0
    off = cell_data(BASE, "failures on/off")[0]
    assert "failures" not in off and "stragglers" not in off
    no_fail = {k: v for k, v in BASE.items() if k != "failures"}
    assert cell_data(no_fail, "failures on/off")[0]["failures"]["mtbf"] > 0
    jobs = str(cell_data(BASE, "unseen job families")[0]["workload"]["stream"]["jobs"])
    assert "montage_60.json" in jobs and "epigenomics" not in jobs  # the mix's own workflow is not unseen
    assert BASE["workload"]["stream"]["count"] == 6  # the input is not modified
    assert cell_data({"workload": {"generator": "random"}}, "2x jobs")[0] is None
    assert cell_data({**BASE, "platform": {"processors": [{"name": "g", "count": 1}]}}, "fewer fast processors")[0] \
        is None


@pytest.mark.slow
def test_a_tiny_matrix_is_paired_and_consistent() -> None:
    days = space_seeds(1, "evaluate", 2)
    rows = matrix(SCENARIO, "mct", days, ("fresh days", "load -30%"), rules=("srjf-eft", "fair-eft"))
    assert [r["cell"] for r in rows] == ["fresh days", "load -30%"]
    for r in rows:
        per = r["per_day"]
        assert set(per) == {"mct", "srjf-eft", "fair-eft"} and all(len(v) == 2 for v in per.values())
        best = min(("srjf-eft", "fair-eft"), key=lambda k: (sum(per[k].values()), k))
        assert r["best_rule"] == best
        ratios = [per["mct"][d] / per[best][d] for d in per[best]]
        assert r["ratio"] == pytest.approx(math.exp(sum(map(math.log, ratios)) / 2))
        assert r["low"] <= r["ratio"] <= r["high"]
        assert r["verdict"] == ("worse" if r["low"] > 1 else "better" if r["high"] < 1 else "tie")
    s = summary(rows)
    assert s["cells"] == 2 and s["better"] + s["tie"] + s["worse"] == 2


def test_the_command_writes_table_json_and_html(tmp_path) -> None:
    out, page = tmp_path / "m.json", tmp_path / "m.html"
    r = CliRunner().invoke(app, ["generalise", str(SCENARIO), "-s", "mct", "--days", "2", "--cell", "2x jobs",
                                 "--json", str(out), "--html", str(page)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["seed_space"] == "evaluate" and [row["cell"] for row in doc["rows"]] == ["2x jobs"]
    assert "2x jobs" in r.output and "ratio" in r.output
    assert "2x jobs" in page.read_text() and "simsched-matrix" in page.read_text()


@pytest.mark.parametrize("args", [["-s", "mct", "--cell", "moon"], ["-s", "mct", "--days", "1"],
                                  ["-s", "nope"], ["-s", "fair-eft:alpha=99"], ["-s", "mct", "--seed", "-1"]])
def test_bad_input_exits_2_with_one_line(args, tmp_path) -> None:
    out = tmp_path / "m.json"
    r = CliRunner().invoke(app, ["generalise", str(SCENARIO), *args, "--json", str(out)])
    assert r.exit_code == 2, r.output
    assert not out.exists()


def test_a_scenario_without_a_stream_is_refused(tmp_path) -> None:
    r = CliRunner().invoke(app, ["generalise", str(ROOT / "scenarios" / "topcuoglu2002.yaml"), "-s", "mct"])
    assert r.exit_code == 2 and "stream scenario" in r.output


def test_every_cell_has_a_name() -> None:
    assert len(set(CELLS)) == len(CELLS) == 9
