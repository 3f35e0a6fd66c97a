"""A sweep's results cannot change an answer silently (issue 40, sweep CSVs): every row carries the code
version that ran it and a digest of its identity and metrics (simsched/run/rowcheck.py).

``summarize``, ``plot``, ``report`` and ``sweep --resume`` refuse a row edited after it was written or a
run twice (exit 2, one line naming file, line and column); a resume recomputes the rows another code
version computed, and says how many; results written before rows carried a digest are read with one
warning line (and recomputed on resume).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.run import rowcheck
from simsched.run.executors import PoolExecutor
from simsched.run.provenance import code_version
from simsched.run.store import load_rows
from simsched.run.tables import columns_of, read_table, write_table
from simsched.study.spec import load_study
from simsched.study.sweep import run_sweep

STUDY = "name: digested\nscenario:\n  platform: {processors: [{name: p, count: 3}]}\n  workload: {generator: random, " \
        "tasks: 6}\n  schedulers: [heft, cpop]\nseeds: [3, 4]\n"


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    (tmp_path / "study.yaml").write_text(STUDY)
    out = tmp_path / "r.csv"
    run_sweep(load_study(tmp_path / "study.yaml"), out, PoolExecutor(1))
    return out


def _table(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(), newline="")))


def _write(path: Path, rows: list[list[str]]) -> None:
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator="\n").writerows(rows)
    path.write_text(text.getvalue())


def _readers(sweep: Path) -> list[list[str]]:
    out = sweep.parent
    return [["summarize", str(sweep), "--json", str(out / "s.json")], ["report", str(sweep), "-o", str(out / "s.html")],
            ["plot", str(sweep), "--x", "seed", "--y", "makespan", "-o", str(out / "s.png")]]


def test_every_row_carries_its_version_and_a_digest_that_verifies(sweep: Path) -> None:
    rows = read_table(sweep)
    assert {r["version"] for r in rows} == {code_version()}
    assert all(r["digest"] == rowcheck.row_digest(r) for r in rows)
    assert len(load_rows(sweep)) == 4


def test_an_edited_metric_is_refused_by_every_reader(sweep: Path) -> None:
    rows = _table(sweep)
    k = rows[0].index("makespan")
    rows[2][k] = repr(float(rows[2][k]) / 2)  # looks better
    _write(sweep, rows)
    for args in _readers(sweep):
        line = refused(args, inputs=(sweep,), says="does not verify")
        assert f"{sweep}:3: digest:" in line, line


def test_an_edited_identity_is_refused(sweep: Path) -> None:
    rows = _table(sweep)
    rows[1][rows[0].index("seed")] = "7"
    _write(sweep, rows)
    line = refused(["summarize", str(sweep)], inputs=(sweep,), says="does not verify")
    assert f"{sweep}:2: digest:" in line


def test_a_duplicated_row_is_refused_naming_both_lines(sweep: Path) -> None:
    rows = _table(sweep)
    _write(sweep, [*rows, rows[1]])
    for args in _readers(sweep):
        line = refused(args, inputs=(sweep,), says="repeats the run")
        assert f"{sweep}:6: task_id:" in line and f"{sweep}:2" in line, line


def test_a_run_in_two_files_with_other_metrics_is_refused(sweep: Path) -> None:
    rows = read_table(sweep)
    other = dict(rows[0], makespan=rows[0]["makespan"] + 1.0)
    rowcheck.stamp(other)  # honest-looking, but the same run of the same version measured otherwise
    parts = sweep.with_name(sweep.name + ".parts")
    parts.mkdir()
    write_table(parts / "part-x-000001.csv", [other], columns_of([other]))
    with pytest.raises(SimschedError, match="with other metrics") as exc:
        load_rows(sweep)
    assert exc.value.field == "digest" and exc.value.line == 2


def test_results_of_an_earlier_simsched_are_read_with_a_warning(sweep: Path) -> None:
    rows = _table(sweep)
    keep = [k for k, c in enumerate(rows[0]) if c not in ("version", "digest")]
    _write(sweep, [[r[k] for k in keep] for r in rows])
    result = CliRunner().invoke(app, ["summarize", str(sweep)])
    assert result.exit_code == 0, result.output
    warned = [s for s in result.stderr.splitlines() if s.startswith("warning: ")]
    flat = " ".join(result.stderr.split())  # a warning wraps at the width, its continuation lines indented
    assert len(warned) == 1 and "4 rows written by an earlier simsched carry no digest" in flat, result.stderr


def test_resume_recomputes_rows_of_another_version_and_says_how_many(sweep: Path) -> None:
    rows = read_table(sweep)
    for r in rows[:3]:
        rowcheck.stamp(r, "0.0.1+000000000000")
    write_table(sweep, rows, columns_of(rows))
    result = CliRunner().invoke(app, ["sweep", str(sweep.parent / "study.yaml"), "-o", str(sweep), "--resume",
                                      "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "3 stored runs were computed by another simsched version" in " ".join(result.stderr.split())
    assert "3 runs in" in result.output and "1 already done" in result.output
    again = read_table(sweep)
    assert len(again) == 4 and {r["version"] for r in again} == {code_version()}


def test_resume_recomputes_rows_without_a_digest(sweep: Path) -> None:
    rows = _table(sweep)
    keep = [k for k, c in enumerate(rows[0]) if c not in ("version", "digest")]
    _write(sweep, [[r[k] for k in keep] for r in rows])
    result = CliRunner().invoke(app, ["sweep", str(sweep.parent / "study.yaml"), "-o", str(sweep), "--resume",
                                      "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "4 stored runs were computed by another simsched version or carried no digest" in \
        " ".join(result.stderr.split())
    assert all(r["digest"] == rowcheck.row_digest(r) for r in read_table(sweep))


def test_resume_refuses_an_edited_row(sweep: Path) -> None:
    rows = _table(sweep)
    k = rows[0].index("makespan")
    rows[3][k] = "1.0"
    _write(sweep, rows)
    line = refused(["sweep", str(sweep.parent / "study.yaml"), "-o", str(sweep), "--resume", "--workers", "1"],
                   inputs=(sweep,), says="does not verify")
    assert f"{sweep}:4: digest:" in line
