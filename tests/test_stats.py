"""The ground statistics module: known values (textbook / scipy cross-checks) and degenerate inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from simsched.stats import (
    bootstrap_interval,
    clopper_pearson_interval,
    paired_difference,
    paired_ratio,
    significantly_best,
    t_interval,
    wilson_interval,
    win_tie_loss,
)


def test_t_interval_known_value() -> None:
    mean, half, n = t_interval([1, 2, 3, 4])
    # s = 1.2910, t(0.975, 3) = 3.1824 -> half = 3.1824 * 1.2910 / 2 = 2.0543
    assert (mean, n) == (2.5, 4) and half == pytest.approx(2.05426, abs=1e-5)


def test_t_interval_degenerate() -> None:
    assert math.isnan(t_interval([])[0]) and t_interval([])[2] == 0
    mean, half, n = t_interval([7.0, float("nan"), None])  # NaN and None are failed runs: ignored
    assert (mean, n) == (7.0, 1) and math.isnan(half)
    assert t_interval([3.0, 3.0, 3.0])[1] == 0.0
    with pytest.raises(ValueError):
        t_interval([1, 2], level=1.5)


def test_wilson_known_values() -> None:
    # Newcombe (1998) table I: 81/263 -> 0.2553-0.3662; 15/148 -> 0.0624-0.1605
    lo, hi = wilson_interval(81, 263)
    assert lo == pytest.approx(0.2553, abs=1e-4) and hi == pytest.approx(0.3662, abs=1e-4)
    lo, hi = wilson_interval(15, 148)
    assert lo == pytest.approx(0.0624, abs=1e-4) and hi == pytest.approx(0.1605, abs=1e-4)
    lo, hi = wilson_interval(20, 20)  # all days met: the lower bound is n / (n + z^2)
    assert hi == 1.0 and lo == pytest.approx(20 / (20 + 1.959964 ** 2), abs=1e-6)
    assert wilson_interval(0, 10)[0] == 0.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_clopper_pearson_known_values() -> None:
    # all successes: lower bound (alpha/2)^(1/n); none: upper 1 - (alpha/2)^(1/n)
    assert clopper_pearson_interval(20, 20)[0] == pytest.approx(0.025 ** (1 / 20))
    assert clopper_pearson_interval(0, 20)[1] == pytest.approx(1 - 0.025 ** (1 / 20))
    ref = sps.binomtest(5, 10).proportion_ci(0.95, method="exact")
    assert clopper_pearson_interval(5, 10) == pytest.approx((ref.low, ref.high))
    # exact is never narrower than Wilson here
    w, c = wilson_interval(5, 10), clopper_pearson_interval(5, 10)
    assert c[0] <= w[0] and c[1] >= w[1]


def test_paired_difference_is_the_t_interval_of_differences() -> None:
    a, b = [10.0, 12.0, 9.0, 11.0], [9.0, 10.5, 8.5, 10.0]
    p = paired_difference(a, b)
    ref = sps.ttest_rel(a, b).confidence_interval(0.95)
    assert p.estimate == pytest.approx(1.0) and (p.low, p.high) == pytest.approx((ref.low, ref.high))
    assert p.significant
    # unpaired intervals overlap although every seed favours b: that is why pairing matters
    assert not paired_difference(a, a).significant


def test_paired_by_seed_mapping_and_failed_runs() -> None:
    a = {1: 2.0, 2: 4.0, 3: float("nan"), 4: 8.0}
    b = {2: 2.0, 1: 1.0, 3: 1.0, 5: 3.0, 4: 4.0}
    r = paired_ratio(a, b)
    assert r.n == 3 and r.estimate == pytest.approx(2.0) and r.low == pytest.approx(2.0)
    assert r.significant and r.null == 1.0
    z = paired_ratio([0.0, 0.0], [0.0, 0.0])  # zero costs: ratio 1, no difference
    assert z.estimate == 1.0 and not z.significant
    assert paired_ratio([], []).n == 0
    with pytest.raises(ValueError):
        paired_difference([1.0], [1.0, 2.0])


def test_bootstrap_reproducible_and_covers() -> None:
    x = np.random.default_rng(1).normal(10.0, 2.0, 200)
    est, lo, hi = bootstrap_interval(x, seed=3)
    assert est == pytest.approx(x.mean()) and lo < est < hi
    assert (est, lo, hi) == bootstrap_interval(x, seed=3)
    tm, th, _ = t_interval(x)
    assert lo == pytest.approx(tm - th, abs=0.1) and hi == pytest.approx(tm + th, abs=0.1)
    med = bootstrap_interval(x, statistic=lambda a: np.median(a, axis=-1))
    assert med[0] == pytest.approx(np.median(x))
    one = bootstrap_interval([4.0])
    assert one[0] == 4.0 and math.isnan(one[1])


def test_win_tie_loss_and_significantly_best() -> None:
    per_seed = {"heft": {0: 10.0, 1: 20.0, 2: 30.0, 3: 40.0},
                "cpop": {0: 11.0, 1: 21.0, 2: 32.0, 3: 41.5},
                "same": {0: 10.0, 1: 20.0, 2: 30.0, 3: 40.0}}
    t = win_tie_loss(per_seed)
    assert (t[("heft", "cpop")]["win"], t[("heft", "cpop")]["loss"]) == (4, 0) and t[("heft", "cpop")]["better"]
    assert t[("heft", "same")]["tie"] == 4 and not t[("heft", "same")]["better"]
    assert t[("cpop", "heft")]["worse"]
    assert significantly_best(per_seed) is None  # heft ties "same": nobody is significantly best
    del per_seed["same"]
    assert significantly_best(per_seed) == "heft"
    assert significantly_best(per_seed, higher_is_better=True) == "cpop"
    assert significantly_best({"only": {0: 1.0}}) is None
    assert significantly_best({"a": {0: 1.0}, "b": {0: 2.0}}) is None  # one seed: no interval


# ----------------------------------------------------------------------------- paired comparisons in reports
def _rows(point: int, values: dict[str, list[float]]) -> list[dict]:
    return [{"point": point, "point_id": f"p{point}", "workload.ccr": point, "scheduler": name, "seed": s,
             "makespan": v, "slr": v / 10, "utilization": 0.5, "error": None}
            for name, vs in values.items() for s, v in enumerate(vs)]


# point 0: "a" is lower than "b" on every seed by a steady margin (significant although the unpaired
# intervals overlap widely); point 1: "a" has the lower mean but loses on two seeds (not significant)
SIGNIFICANT = {"a": [10.0, 20.0, 30.0, 40.0, 50.0], "b": [10.5, 21.0, 31.0, 40.9, 51.2]}
OVERLAP = {"a": [10.0, 20.0, 30.0, 40.0, 50.0], "b": [12.0, 19.0, 33.0, 39.0, 51.0]}


def test_paired_comparison_significant_and_not() -> None:
    from simsched.study.stats import mean_ci, paired_comparison

    sig = paired_comparison(_rows(0, SIGNIFICANT), "makespan")
    assert sig["reference"] == "a" and sig["best"] == "a" and sig["ratios"]["b"]["significant"]
    ma, ha, _ = mean_ci(SIGNIFICANT["a"])
    mb, hb, _ = mean_ci(SIGNIFICANT["b"])
    assert ma + ha > mb - hb  # unpaired intervals overlap: only pairing shows the difference
    ov = paired_comparison(_rows(1, OVERLAP), "makespan")
    assert ov["reference"] == "a" and ov["best"] is None
    assert (ov["matrix"][("a", "b")]["win"], ov["matrix"][("a", "b")]["loss"]) == (3, 2)
    hi = paired_comparison(_rows(0, SIGNIFICANT), "utilization")  # all equal: ties, nobody best
    assert hi["best"] is None and hi["matrix"][("a", "b")]["tie"] == 5
    failed = _rows(0, {"a": [1.0, 2.0], "b": [float("nan"), 3.0]})
    assert paired_comparison(failed, "makespan")["ratios"]["b"]["n"] == 1
    assert paired_comparison([], "makespan")["reference"] is None


def test_study_report_bolds_only_the_significantly_best() -> None:
    import re

    from simsched.report.study import study_report_html

    page = study_report_html(_rows(0, SIGNIFICANT) + _rows(1, OVERLAP), "r.csv", metrics=("makespan",))
    table = re.search(r'<table id="summary">(.*?)</table>', page, re.S).group(1)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]
    bold = [("class=\"best\"" in r, re.findall(r'<td class="name">([^<]*)</td>', r)) for r in rows]
    assert [b for b, _ in bold] == [True, False, False, False]  # point 0's "a" only
    assert "×1.000 (ref)" in table and "wins/ties/losses" in page
    assert len(re.findall(r'<table class="wtl">', page)) == 2


def test_run_report_has_paired_section_with_seeds() -> None:
    from simsched.report.html import paired_section

    html = paired_section(_rows(0, SIGNIFICANT))
    assert 'id="paired"' in html and 'class="best">×1.000 (ref)' in html and "5/0/0*" in html
    assert paired_section(_rows(0, {"a": [1.0], "b": [2.0]})) == ""  # one seed: nothing to pair


def test_run_table_and_summarize_are_paired(tmp_path) -> None:
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from simsched.cli.main import app
    from simsched.run.tables import columns_of, write_table

    root = Path(__file__).resolve().parents[1]
    runner = CliRunner()
    r = runner.invoke(app, ["run", str(root / "scenarios" / "quickstart.yaml"), "--repetitions", "3",
                            "-s", "heft", "-s", "random"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "vs ref" in r.output and " ref │" in r.output
    rows = _rows(0, SIGNIFICANT) + _rows(1, OVERLAP)
    for i, row in enumerate(rows):
        row.update(task_id=f"t{i}", tasks=10)
    csv = write_table(tmp_path / "r.csv", rows, columns_of(rows))
    r = runner.invoke(app, ["summarize", str(csv), "-m", "makespan", "--json", str(tmp_path / "s.json")],
                      env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "paired comparison (same seeds)" in r.output and "0/0/5*" in r.output and "2/0/3" in r.output
    paired = json.loads((tmp_path / "s.json").read_text())["paired"]
    assert [p["makespan"]["best"] for p in paired] == ["a", None]


def test_binomial_intervals_are_scipy_stats_floats_without_scipy_stats() -> None:
    """Wilson's z and Clopper–Pearson's beta quantiles come from the ufuncs scipy.stats evaluates (so a
    capacity answer's summary does not import scipy.stats): the very floats ``norm.ppf`` and ``beta.ppf`` give."""
    from simsched.stats import _beta_quantile, _normal_quantile

    for level in (0.5, 0.9, 0.95, 0.99):
        q = 0.5 + level / 2
        assert _normal_quantile(q) == float(sps.norm.ppf(q))
        for n in (1, 2, 7, 20, 73, 200):
            for k in range(n + 1):
                a = 1 - level
                if k:
                    assert _beta_quantile(a / 2, k, n - k + 1) == float(sps.beta.ppf(a / 2, k, n - k + 1))
                if k < n:
                    assert _beta_quantile(1 - a / 2, k + 1, n - k) == float(sps.beta.ppf(1 - a / 2, k + 1, n - k))
