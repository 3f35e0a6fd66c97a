"""Pure statistics used on every floor (ground floor: numpy and scipy only, no simsched imports).

* :func:`t_interval` — mean and half-width of Student's t confidence interval (independent values).
* :func:`paired_difference` / :func:`paired_ratio` — comparisons of two schedulers on the *same*
  seeds: the t interval of the per-seed differences ``a - b`` (paired t, e.g. Montgomery, *Design and
  Analysis of Experiments*, §2.5.3), and the geometric mean of the per-seed ratios ``a / b`` with the
  t interval of their logarithms, back-transformed (Limpert, Stahel & Abbt 2001, log-normal CIs).
* :func:`wilson_interval` — a binomial proportion (Wilson 1927, score interval);
  :func:`clopper_pearson_interval` — the exact (conservative) one (Clopper & Pearson 1934).
* :func:`bootstrap_interval` — percentile bootstrap of any statistic (Efron & Tibshirani 1993, ch. 13),
  seeded so it is reproducible.
* :func:`win_tie_loss` — per pair of schedulers, on how many common seeds one beats the other and
  whether the paired interval (of the ratio, or of the difference where a value is not positive)
  excludes no difference; :func:`significantly_best` — the scheduler whose paired
  interval against every other excludes zero in its favour (``None`` when there is no such one).

All functions ignore non-finite values (a failed run is NaN); an interval that cannot be computed
(fewer than two values) has a NaN half-width / bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
"""The default confidence level."""


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64).ravel()
    return x[np.isfinite(x)]


def _t_quantile(level: float, dof: int) -> float:
    """Student's t quantile at ``0.5 + level / 2`` for ``dof`` degrees of freedom: scipy.special's
    ``stdtrit``, the function ``scipy.stats.t.ppf`` evaluates (the same float), without importing
    scipy.stats (~70 MB and ~0.7 s of CPU where scipy.special takes ~26 MB and ~0.2 s)."""
    from scipy import special

    return float(special.stdtrit(dof, 0.5 + level / 2))


def _normal_quantile(q: float) -> float:
    """The standard normal quantile: scipy.special's ``ndtri``, the function ``scipy.stats.norm.ppf``
    evaluates (the same float), without importing scipy.stats (see :func:`_t_quantile`)."""
    from scipy import special

    return float(special.ndtri(q))


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The beta distribution's quantile: the ufunc ``scipy.stats.beta.ppf`` evaluates (scipy.special's
    ``_beta_ppf``; the same float) without importing scipy.stats, or ``scipy.stats.beta.ppf`` itself
    where scipy.special has no such ufunc."""
    from scipy.special import _ufuncs

    ppf = getattr(_ufuncs, "_beta_ppf", None)
    if ppf is None:  # pragma: no cover - another scipy
        from scipy import stats

        return float(stats.beta.ppf(q, a, b))
    return float(ppf(q, a, b))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"the confidence level must be in (0, 1), got {level}")


def t_interval(values: Sequence[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float, int]:
    """``(mean, half-width, n)`` of Student's t interval ``mean ± t(½+level/2, n-1)·s/√n`` over the
    finite ``values`` (sample std ``s``, ddof 1).  Half-width NaN for ``n < 2``; mean NaN for ``n = 0``.
    A constant sample has half-width 0.  O(n)."""
    _check_level(level)
    x = _finite(values)
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(x[0]), math.nan, 1
    return float(x.mean()), _t_quantile(level, n - 1) * float(x.std(ddof=1)) / math.sqrt(n), n


@dataclass(frozen=True)
class Paired:
    """A paired comparison of ``a`` against ``b`` over ``n`` common seeds: the estimate and its
    ``level`` interval ``[low, high]`` (NaN when ``n < 2``)."""

    estimate: float
    low: float
    high: float
    n: int

    @property
    def significant(self) -> bool:
        """Whether the interval excludes the no-difference value (0 for a difference, 1 for a ratio)."""
        return self.n >= 2 and math.isfinite(self.low) and (self.low > self.null or self.high < self.null)

    null: float = 0.0


def _pairs(a: Sequence[float] | Mapping, b: Sequence[float] | Mapping) -> tuple[np.ndarray, np.ndarray]:
    """The values of ``a`` and ``b`` on the same seeds: mappings are matched by key (seed), sequences
    by position; pairs with a non-finite side are dropped."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = [k for k in a if k in b]
        x = np.asarray([a[k] for k in keys], dtype=np.float64)
        y = np.asarray([b[k] for k in keys], dtype=np.float64)
    else:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if x.shape != y.shape:
            raise ValueError(f"paired values need the same length, got {x.size} and {y.size}")
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def paired_difference(a: Sequence[float] | Mapping, b: Sequence[float] | Mapping,
                      level: float = LEVEL) -> Paired:
    """Mean of ``a - b`` over common seeds with its paired t interval.  O(n)."""
    x, y = _pairs(a, b)
    mean, half, n = t_interval(x - y, level)
    return Paired(mean, mean - half, mean + half, n, 0.0)


def paired_ratio(a: Sequence[float] | Mapping, b: Sequence[float] | Mapping, level: float = LEVEL) -> Paired:
    """Geometric mean of ``a / b`` over common seeds where both are > 0, with the t interval of
    ``log(a / b)`` exponentiated.  Pairs where both are 0 count as ratio 1; pairs with one side 0
    are dropped (no finite ratio).  O(n)."""
    x, y = _pairs(a, b)
    both_zero = (x == 0) & (y == 0)
    pos = (x > 0) & (y > 0)
    logs = np.concatenate([np.log(x[pos] / y[pos]), np.zeros(int(both_zero.sum()))])
    mean, half, n = t_interval(logs, level)
    if n == 0:
        return Paired(math.nan, math.nan, math.nan, 0, 1.0)
    return Paired(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n, 1.0)


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` of a binomial proportion ``successes / n``
    (Wilson 1927).  ``(nan, nan)`` for ``n = 0``.  O(1)."""
    _check_level(level)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return math.nan, math.nan
    z = _normal_quantile(0.5 + level / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact (Clopper–Pearson 1934) interval ``(low, high)`` of ``successes / n`` from beta
    quantiles; never narrower than the nominal level.  ``(nan, nan)`` for ``n = 0``.  O(1)."""
    _check_level(level)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return math.nan, math.nan
    alpha = 1 - level
    low = 0.0 if successes == 0 else _beta_quantile(alpha / 2, successes, n - successes + 1)
    high = 1.0 if successes == n else _beta_quantile(1 - alpha / 2, successes + 1, n - successes)
    return low, high


def bootstrap_interval(values: Sequence[float] | np.ndarray,
                       statistic: Callable[[np.ndarray], np.ndarray] | None = None, level: float = LEVEL,
                       resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """``(estimate, low, high)``: ``statistic`` of the finite ``values`` and its percentile-bootstrap
    interval from ``resamples`` resamples drawn with ``numpy.random.default_rng(seed)``.  ``statistic``
    maps a ``(resamples, n)`` array to ``resamples`` values along axis 1 (default: the mean).
    Bounds NaN for fewer than two values.  O(resamples · n)."""
    _check_level(level)
    stat = statistic or (lambda a: a.mean(axis=-1))
    x = _finite(values)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    estimate = float(np.asarray(stat(x[None, :])).ravel()[0])
    if x.size < 2:
        return estimate, math.nan, math.nan
    rng = np.random.default_rng(seed)
    samples = x[rng.integers(0, x.size, size=(resamples, x.size))]
    dist = np.asarray(stat(samples), dtype=np.float64)
    low, high = np.quantile(dist, [0.5 - level / 2, 0.5 + level / 2])
    return estimate, float(low), float(high)


def win_tie_loss(per_seed: Mapping[str, Mapping[int, float]], higher_is_better: bool = False,
                 level: float = LEVEL, rel_tol: float = 1e-9) -> dict[tuple[str, str], dict[str, float | int | bool]]:
    """For every ordered pair ``(a, b)`` of schedulers (``per_seed[name][seed] = value``): on how
    many common seeds ``a`` wins, ties (equal within ``rel_tol``) or loses against ``b``, and whether
    ``a`` is significantly better (``"better"``) or worse (``"worse"``) at ``level``: by the paired
    ratio's interval (:func:`paired_ratio`, excluding 1) when every common value is positive, so it
    agrees with the ratio tables, else by the paired difference's (excluding 0).
    O(k² · n) for k schedulers and n seeds."""
    names = list(per_seed)
    out: dict[tuple[str, str], dict[str, float | int | bool]] = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            x, y = _pairs(per_seed[a], per_seed[b])
            tie = np.abs(x - y) <= rel_tol * np.maximum(np.abs(x), np.abs(y))
            a_lower, a_higher = (x < y) & ~tie, (x > y) & ~tie
            win, loss = (a_higher, a_lower) if higher_is_better else (a_lower, a_higher)
            test = paired_ratio(x, y, level) if x.size and np.all(x > 0) and np.all(y > 0) \
                else paired_difference(x, y, level)
            below, above = test.significant and test.high < test.null, test.significant and test.low > test.null
            out[(a, b)] = {"win": int(win.sum()), "tie": int(tie.sum()), "loss": int(loss.sum()), "n": int(x.size),
                           "better": above if higher_is_better else below,
                           "worse": below if higher_is_better else above}
    return out


def significantly_best(per_seed: Mapping[str, Mapping[int, float]], higher_is_better: bool = False,
                       level: float = LEVEL) -> str | None:
    """The scheduler significantly better than every other one on the paired difference over their
    common seeds (each interval excludes 0 in its favour), or ``None`` (no one, a tie, a single
    scheduler, or too few seeds).  No multiple-comparison correction: each pair at ``level``.
    O(k² · n)."""
    if len(per_seed) < 2:
        return None
    table = win_tie_loss(per_seed, higher_is_better, level)
    for a in per_seed:
        if all(table[(a, b)]["better"] for b in per_seed if b != a):
            return a
    return None
