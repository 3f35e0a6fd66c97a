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
