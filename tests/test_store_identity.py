"""A capacity store cannot change an answer silently (issue 40, row 1).

Every day ``simsched capacity --results PATH`` saves carries the digest of the scenario's content (not its
path; with the files it reads), its seed, the code version that simulated it and a digest of all that
and its metrics (:mod:`simsched.capacity.daystore`).  ``--resume`` verifies every row before any day runs:
an edited, duplicated or identity-less row, a metrics cell holding text, null, a list or nesting too deep
is one located line and exit 2 (the store unchanged); a store of an earlier simsched is refused with how
to recompute it; days another code version simulated are simulated again with one line; and the resumed
answer is the answer of a search that was never interrupted.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.capacity import IN_PROCESS, find_capacity, parse_objective
from simsched.capacity.days import StoredDays
from simsched.capacity.daystore import TEXT, read_days, stored_row
from simsched.cli.main import app
from simsched.run.provenance import code_version
from simsched.run.store import ResultsStore
from simsched.run.tables import columns_of, write_table

STG = "3\n0 0 0\n1 15 1 0\n2 12 1 0\n3 11 2 1 2\n4 0 1 3\n"
"""A tiny Standard Task Graph (Kasahara's format): the file the scenario reads."""

SCENARIO = {
    "name": "identity", "seed": 0,
    "platform": {"processors": [{"name": "p", "type": "cpu", "count": 1}]},
    "workload": {"stg": "g.stg"},
    "noise": {"model": "lognormal", "sigma": 0.3},
    "schedulers": ["heft"],
    "capacity": {"objective": "makespan <= 25", "resource": "cpu", "days": 3},
}


def _scenario(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "g.stg").write_text(STG)
    scen = where / "s.yaml"
    scen.write_text(yaml.safe_dump(SCENARIO))
    return scen


def _capacity(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["capacity", *args, "--all-days"])
    return r.exit_code, r.stdout, " ".join(r.stderr.split())  # stderr's notes as one text: they wrap to the width


def _answer(path: Path) -> str:
    doc = json.loads(path.read_text())
    for entry in doc.get("variants", []):
        entry.pop("wall_s", None)
    return json.dumps(doc, sort_keys=True)


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    """A scenario and the store of its complete search."""
    scen = _scenario(tmp_path / "s")
    store = tmp_path / "days.csv"
    code, _, err = _capacity(str(scen), "--results", str(store))
    assert code == 0, err
    return scen, store


def _rows(store: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(store.read_text())))
    return rows[0], rows[1:]


def _write(store: Path, header: list[str], rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    store.write_text(out.getvalue())


def test_a_resumed_answer_equals_an_uninterrupted_one(tmp_path: Path, stored: tuple[Path, Path]) -> None:
    scen, store = stored
    fresh, resumed = tmp_path / "fresh.json", tmp_path / "resumed.json"
    assert _capacity(str(scen), "--json", str(fresh))[0] == 0
    header, rows = _rows(store)
    _write(store, header, rows[:2])  # a search cut short: two days saved
    code, _, err = _capacity(str(scen), "--results", str(store), "--resume", "--json", str(resumed))
    assert code == 0, err
    assert f"{len(rows) - 2} simulated, 2 reused" in err
    assert _answer(resumed) == _answer(fresh)
    assert len(_rows(store)[1]) == len(rows)


def _metric(header: list[str], row: list[str], value: object) -> None:
    cell = header.index("metrics")
    metrics = json.loads(row[cell])
    metrics["makespan"] = value
    row[cell] = json.dumps(metrics, sort_keys=True)


def _edit(case: str, header: list[str], rows: list[list[str]]) -> list[list[str]]:
    row = rows[0]
    col = header.index
    if case == "better":  # the metric and its column both made to look better: only the digest sees it
        _metric(header, row, 1.0)
        row[col("makespan")] = "1.0"
    elif case == "nan":
        _metric(header, row, math.nan)
        row[col("makespan")] = ""
    elif case == "column":  # the readable column only
        row[col("makespan")] = "1.0"
    elif case in ("text", "null", "list", "object"):
        _metric(header, row, {"text": "fast", "null": None, "list": [1.0], "object": {"a": 1}}[case])
    elif case == "deep":
        row[col("metrics")] = "[" * 60_000
    elif case == "deep-value":
        row[col("metrics")] = '{"makespan": ' + "[" * 5_000 + "]" * 5_000 + "}"
    elif case == "not-json":
        row[col("metrics")] = "makespan=3"
    elif case == "no-identity":
        row[col("version")] = ""
    elif case == "seed":
        row[col("seed")] = str(2**64)
    elif case == "duplicate":
        return [*rows, list(row)]
    return rows


@pytest.mark.parametrize(("case", "says"), [
    ("better", "does not verify"), ("nan", "not finite"), ("column", "makespan: "), ("text", "is text"),
    ("null", "is null"), ("list", "is a list"), ("object", "is an object"), ("deep", "deeper"),
    ("deep-value", "deeper"), ("not-json", "not JSON"), ("no-identity", "version: "), ("seed", "seed: "),
    ("duplicate", "repeats the day"),
])
def test_a_row_that_does_not_verify_is_refused_before_any_work(tmp_path: Path, stored: tuple[Path, Path],
                                                               case: str, says: str) -> None:
    scen, store = stored
    header, rows = _rows(store)
    _write(store, header, _edit(case, header, rows))
    out = tmp_path / "a.json"
    line = refused(["capacity", str(scen), "--results", str(store), "--resume", "--json", str(out)],
                   inputs=(store, scen), absent=(out,), says=says)
    assert line.startswith(f"error: {store}:"), line  # the file and the line of the row


def test_a_store_of_an_earlier_simsched_is_refused_with_how_to_recompute(stored: tuple[Path, Path]) -> None:
    scen, store = stored
    header, rows = _rows(store)
    keep = [i for i, c in enumerate(header) if c not in ("version", "digest")]
    _write(store, [header[i] for i in keep], [[r[i] for i in keep] for r in rows])
    line = refused(["capacity", str(scen), "--results", str(store), "--resume"], inputs=(store,),
                   says="earlier simsched")
    assert "delete" in line and "or choose another --results" in line


def test_days_of_another_code_version_are_simulated_again_with_one_line(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    scen = _scenario(tmp_path / "s")
    store, fresh, resumed = tmp_path / "days.csv", tmp_path / "fresh.json", tmp_path / "resumed.json"
    with monkeypatch.context() as m:
        m.setattr("simsched.capacity.days.code_version", lambda: "0.0.1+000000000000")
        assert _capacity(str(scen), "--results", str(store))[0] == 0
    n = len(_rows(store)[1])
    assert _capacity(str(scen), "--json", str(fresh))[0] == 0
    code, _, err = _capacity(str(scen), "--results", str(store), "--resume", "--json", str(resumed))
    assert code == 0, err
    assert f"{n} stored days were simulated by simsched 0.0.1+000000000000" in err and "simulated again" in err
    assert _answer(resumed) == _answer(fresh)
    header, rows = _rows(store)  # compacted: only this version's days are left
    assert {r[header.index("version")] for r in rows} == {code_version()} and len(rows) == n


def test_a_compaction_cut_short_is_read_once_but_two_versions_of_a_day_are_refused(stored: tuple[Path, Path]
                                                                                    ) -> None:
    scen, store = stored
    parts = store.with_name(store.name + ".parts")
    parts.mkdir()
    shutil.copy(store, parts / "part-x-000001.csv")  # killed between compaction and removing the parts
    assert _capacity(str(scen), "--results", str(store), "--resume")[0] == 0
    assert not parts.exists()
    parts.mkdir()
    header, rows = _rows(store)  # the same day with other metrics, digest and all (as a forger would write it)
    row = dict(zip(header, rows[0]))
    metrics = {k: v * 0.5 for k, v in json.loads(row["metrics"]).items()}
    other = stored_row(row["point_id"], row["scheduler"], int(row["capacity"]), int(row["seed"]), row["version"],
                       metrics, "x")
    write_table(parts / "part-x-000001.csv", [other], columns_of([other]))
    refused(["capacity", str(scen), "--results", str(store), "--resume"], inputs=(store,), says="with other metrics")


def test_the_scenario_is_its_content_not_its_path(tmp_path: Path, stored: tuple[Path, Path]) -> None:
    scen, store = stored
    moved = tmp_path / "elsewhere"
    shutil.copytree(scen.parent, moved)
    code, _, err = _capacity(str(moved / "s.yaml"), "--results", str(store), "--resume")
    assert code == 0 and " 0 simulated," in err, err
    (moved / "g.stg").write_text(STG.replace("1 15", "1 16"))  # the file it reads: other days
    refused(["capacity", str(moved / "s.yaml"), "--results", str(store), "--resume"], inputs=(store,),
            says="belong")


def test_a_parquet_store_is_verified_too(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    scen = _scenario(tmp_path / "s")
    store = tmp_path / "days.parquet"
    assert _capacity(str(scen), "--results", str(store))[0] == 0
    rows = pq.read_table(store).to_pylist()
    metrics = json.loads(rows[1]["metrics"])
    metrics["makespan"] = "fast"
    rows[1]["metrics"] = json.dumps(metrics)
    pq.write_table(pa.Table.from_pylist(rows), store)
    line = refused(["capacity", str(scen), "--results", str(store), "--resume"], inputs=(store,), says="is text")
    assert "(row 2)" in line


class Failing:
    """Days that cannot meet anything below capacity 3 (infinite makespan) and have no deadlines (NaN)."""

    unit = "processors"
    variants = ["a"]
    metrics = ["makespan"]
    source = {"kind": "test", "data": {"name": "failing"}}

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        return {"makespan": math.inf if capacity < 3 else 10.0 / capacity + seed, "deadline_miss_rate": math.nan}


def test_non_finite_metrics_come_back_only_as_computed(tmp_path: Path) -> None:
    """A day may measure ``inf`` (it cannot run) or NaN (no deadline): the store gives them back bit for bit,
    and the answer after a resume is the same; a NaN written by hand does not verify (above)."""
    objective = parse_objective("makespan <= 6")
    path = tmp_path / "days.csv"
    first = StoredDays(IN_PROCESS, path, resume=False, name="failing")
    try:
        expected = find_capacity(Failing(), objective, days=2, high=8, runner=first)
        first.finish()
    finally:
        first.close()
    contents = read_days(ResultsStore(path, checked=False, text=TEXT), code_version())
    values = [m["makespan"] for m in contents.days.values()]
    assert math.inf in values and all(math.isnan(m["deadline_miss_rate"]) for m in contents.days.values())
    again = StoredDays(IN_PROCESS, path, resume=True, name="failing")
    try:
        got = find_capacity(Failing(), objective, days=2, high=8, runner=again)
    finally:
        again.close()
    for answer in (got, expected):
        for entry in answer["variants"]:
            entry.pop("wall_s")
    assert again.ran == 0 and json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_a_mix_store_resumes_and_is_verified(tmp_path: Path) -> None:
    """A mix's capacity is its counts joined by ``+`` (``2+0``): read back as text, verified, reused."""
    scen = _scenario(tmp_path / "s")
    data = {**SCENARIO, "platform": {"processors": [{"name": "cpu", "type": "cpu", "count": 1},
                                                    {"name": "gpu", "type": "gpu", "speed": 2.0, "count": 1}],
                                     "power": {"types": {"cpu": {"idle": 5, "busy": 50},
                                                         "gpu": {"idle": 10, "busy": 90}}}},
            "capacity": {"objective": "makespan <= 60", "mix": {"cpu": [1, 2], "gpu": [0, 1]}, "days": 2}}
    scen.write_text(yaml.safe_dump(data))
    store, fresh, resumed = tmp_path / "days.csv", tmp_path / "fresh.json", tmp_path / "resumed.json"
    assert _capacity(str(scen), "--json", str(fresh))[0] == 0
    code, _, err = _capacity(str(scen), "--results", str(store))
    assert code == 0, err
    header, rows = _rows(store)
    assert "1+0" in {r[header.index("capacity")] for r in rows}
    code, _, err = _capacity(str(scen), "--results", str(store), "--resume", "--json", str(resumed))
    assert code == 0 and " 0 simulated," in err, err
    assert _answer(resumed) == _answer(fresh)
    rows[0][header.index("capacity")] = "1+1"  # another mix's day, under this day's ids: it does not verify
    _write(store, header, rows)
    refused(["capacity", str(scen), "--results", str(store), "--resume"], inputs=(store,), says="does not verify")
