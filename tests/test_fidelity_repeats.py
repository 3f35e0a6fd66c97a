"""The run-to-run spread (simsched.fidelity.repeats): which runs are repeats, the repeats' prediction
computed by hand, the per-installation table, and its place in `simsched fidelity`."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.fidelity.repeats import group_deviations, repeat_key, repeat_predictions, spread_groups

REAL = Path(__file__).parent / "data" / "wfinstances"
runner = CliRunner()


def test_repeats_share_installation_name_stem_and_graph_size() -> None:
    a = repeat_key("makeflow/blast/blast-chameleon-large-003.json", "mf@w1", 103, 300)
    assert a == repeat_key("makeflow/blast/blast-chameleon-large-001.json", "mf@w1", 103, 300)
    assert a != repeat_key("makeflow/blast/blast-chameleon-large-001.json", "mf@w2", 103, 300)  # installation
    assert a != repeat_key("makeflow/blast/blast-chameleon-large-001.json", "mf@w1", 104, 300)  # graph
    assert a != repeat_key("makeflow/blast/blast-chameleon-small-001.json", "mf@w1", 103, 300)  # workflow
    assert a != repeat_key("other/blast-chameleon-large-001.json", "mf@w1", 103, 300)  # folder
    assert repeat_key("pegasus/helloworld-chain.json", "p@u", 5, 4) is None  # no run number: no repeats


def test_the_repeats_prediction_by_hand() -> None:
    """Three repeats with recorded 100, 110, 130 and today's model 60, 62, 64 (excess 40, 48, 66): run 0
    is predicted 60 + median(48, 66) = 117, run 1 62 + median(40, 66) = 115, run 2 64 + 44 = 108.  A run
    alone, one without a record and one with no key get NaN."""
    keys = [("i", "w", 3, 2)] * 3 + [("i", "v", 3, 2), ("i", "u", 3, 2), ("i", "u", 3, 2), None]
    recorded = [100.0, 110.0, 130.0, 50.0, 70.0, None, 90.0]
    today = [60.0, 62.0, 64.0, 20.0, 30.0, 31.0, 40.0]
    p = repeat_predictions(keys, recorded, today)
    np.testing.assert_allclose(p[:3], [117.0, 115.0, 108.0])
    assert all(math.isnan(x) for x in p[3:])


def test_spread_groups_hold_held_out_runs_with_repeats_only() -> None:
    installations = ["a", "a", "a", "b", "b"]
    held = [True, True, False, True, True]
    recorded = [100.0, 200.0, 100.0, 50.0, 50.0]
    predicted = np.array([110.0, 150.0, 90.0, math.nan, math.nan])
    model = np.array([105.0, 220.0, 100.0, 40.0, 60.0])
    (g,) = spread_groups(installations, held, recorded, predicted, model)
    assert (g.installation, g.runs) == ("a", 2)
    assert math.isclose(g.repeats_median, (0.10 + 0.25) / 2) and math.isclose(g.repeats_mean, 0.175)
    assert math.isclose(g.model_median, (0.05 + 0.10) / 2)


def test_group_deviations_by_hand() -> None:
    """Recorded 90, 100, 130 in one group (median 100): 10%, 0%, 30%; a run alone, one without a record,
    one with a record of 0 and one without a key get NaN; the group of two without them: 5 and 15 around
    10 (50%)."""
    keys = [("i", "w", 3, 2)] * 3 + [("i", "v", 3, 2), ("i", "u", 3, 2), ("i", "u", 3, 2), ("i", "u", 3, 2),
                                      ("i", "u", 3, 2), None]
    values = [90.0, 100.0, 130.0, 50.0, None, 0.0, 5.0, 15.0, 40.0]
    d = group_deviations(keys, values)
    np.testing.assert_allclose(d[:3], [0.1, 0.0, 0.3])
    assert all(math.isnan(x) for x in d[3:6]) and math.isnan(d[8])
    np.testing.assert_allclose(d[6:8], [0.5, 0.5])
    (g,) = spread_groups(["i"] * 3, [True, True, False], values[:3], np.array([100.0, 100.0, 100.0]),
                         np.array([90.0, 100.0, 130.0]), d[:3], np.array([0.01, 0.02, 0.5]))
    assert math.isclose(g.makespan_spread, 0.05) and math.isclose(g.input_spread, 0.015)


def test_fidelity_reports_the_spread_of_repeated_runs(tmp_path: Path) -> None:
    """The three shipped runs, each under three run numbers: every held-out run has two repeats with the
    same record, so the repeats predict it exactly (0.0%)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for f in sorted(REAL.glob("*.json")):
        for k in ("001", "002", "003"):
            shutil.copy(f, folder / f.name.replace("-001", f"-{k}"))
    out = tmp_path / "f.json"
    done = runner.invoke(app, ["fidelity", str(folder), "--json", str(out)])
    assert done.exit_code == 0, done.output
    assert "run-to-run spread" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["spread"] and all(g["repeats"]["median"] == 0.0 for g in doc["spread"])
    assert all(g["makespan_spread"] == 0.0 and g["input_spread"] == 0.0 for g in doc["spread"])  # identical copies
    assert max(len(line) for line in done.stdout.splitlines()) <= 100
    assert sum(g["runs"] for g in doc["spread"]) == sum(e["part"] == "held-out" for e in doc["executions"])


# ------------------------------------------------------------------------------------------ intervals
def test_the_conformal_radius_by_hand() -> None:
    """Four errors at 80%: the ceil(5 x 0.8) = 4th smallest; three errors: ceil(3.2) = 4 > 3, infinite."""
    from simsched.fidelity.intervals import conformal_radius

    assert conformal_radius([0.4, 0.1, 0.3, 0.2], 0.8) == 0.4
    assert conformal_radius([0.4, 0.1, 0.3, 0.2], 0.5) == 0.3  # ceil(2.5) = 3rd
    assert math.isinf(conformal_radius([0.1, 0.2, 0.3], 0.8))
    assert math.isinf(conformal_radius([], 0.8))


def test_interval_groups_cover_the_held_out_runs_within_the_radius() -> None:
    """Installation a: training errors |log 1.1| = 0.095, |log 0.9| = 0.105, |log 1.2| = 0.182,
    |log 1.05| = 0.049 (radius at 50%: the ceil(2.5) = 3rd smallest, |log 0.9|); its held-out runs off by
    5% (covered) and 30% (not)."""
    from simsched.fidelity.intervals import interval_groups

    inst = ["a"] * 6 + ["b"]
    train = [True, True, True, True, False, False, False]
    recorded = [100.0] * 7
    simulated = [110.0, 90.0, 120.0, 105.0, 105.0, 130.0, 100.0]
    a, b = interval_groups(inst, train, recorded, simulated, coverage=0.5)
    assert (a.installation, a.train_runs, a.held_out, a.covered) == ("a", 4, 2, 1)
    assert math.isclose(a.radius, -math.log(0.9))
    assert b.train_runs == 0 and math.isinf(b.radius)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=9, max_size=60), st.floats(0.5, 0.95))
def test_split_conformal_covers_exchangeable_errors(logs: list[float], coverage: float) -> None:
    """Leave-one-out over any sample: each point judged by the radius of the other n - 1 (their
    ceil(n coverage)-th smallest) is covered whenever its rank is at most ceil(n coverage), so at least
    that many points are covered: the conformal guarantee, deterministic in its leave-one-out form."""
    from simsched.fidelity.intervals import conformal_radius

    e = np.abs(np.array(logs))
    n = len(e)
    radii = [conformal_radius(np.delete(e, i), coverage) for i in range(n)]
    if all(math.isfinite(r) for r in radii):
        covered = sum(e[i] <= radii[i] for i in range(n))
        assert covered >= math.ceil(n * coverage)
