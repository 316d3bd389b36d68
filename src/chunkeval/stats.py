"""Percentile bootstrap confidence intervals over questions (vectorised numpy).

References
----------
.. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
   Chapman & Hall, 1993 (ch. 13, the percentile interval; ch. 16 on paired data).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator

import numpy as np

from chunkeval.caches import memoize
from chunkeval.errors import UsageError

__all__ = [
    "bootstrap_ci",
    "bootstrap_means",
    "paired_bootstrap",
    "probability_best",
    "questions_needed",
]

# resample blocks hold at most this many (resample, question) weights at once; a block makes
# four arrays of that many 8-byte cells (draws, offsets, counts, weights): 32 MB, where 4M
# cells made 128 MB, the largest transient of a 12,288-question run; no slower
_BLOCK_CELLS = 1_000_000


def _as_2d(values: np.ndarray) -> tuple[np.ndarray, bool]:
    a = np.asarray(values, dtype=float)
    if a.ndim == 1:
        return a[:, None], True
    if a.ndim == 2:
        return a, False
    raise ValueError(f"values must be 1-D (n,) or 2-D (n, m), got shape {a.shape}")


def _check(confidence: float, n_resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise UsageError(f"confidence must be in (0, 1), got {confidence!r}")
    if int(n_resamples) < 1:
        raise UsageError(f"n_resamples must be >= 1, got {n_resamples!r}")


def _weight_blocks(n: int, b_total: int, seed: int) -> Iterator[tuple[int, np.ndarray]]:
    """Bootstrap weights in blocks ``(first resample, weights)``.

    Blocks ``(first resample, weights)``: ``weights[r, i]`` is how many times resample
    ``first + r`` draws row ``i``, at most ``_BLOCK_CELLS`` weights per block.
    """
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // n)
    for b0 in range(0, b_total, block):
        nb = min(block, b_total - b0)
        idx = rng.integers(0, n, size=(nb, n))
        counts = np.bincount((idx + (np.arange(nb) * n)[:, None]).ravel(), minlength=nb * n)
        yield b0, counts.reshape(nb, n).astype(float)


@memoize("stats.bootstrap_weights")
def _drawn_once(n: int, b_total: int, seed: int) -> tuple[tuple[int, np.ndarray], ...]:
    blocks = tuple(_weight_blocks(n, b_total, seed))
    for _, w in blocks:
        w.setflags(write=False)  # shared by every later call with the same (n, B, seed)
    return blocks


def _resample_weights(n: int, b_total: int, seed: int) -> Iterable[tuple[int, np.ndarray]]:
    """The resample weights of :func:`bootstrap_means`, block by block.

    They depend only on ``(n, b_total, seed)``, and a run bootstraps every configuration
    of a dataset over the same questions with the same seed: weights that fit in one block
    are drawn once and kept (a few MB); larger ones are drawn again, block by block, to
    bound memory.
    """
    if n * b_total <= _BLOCK_CELLS:
        return _drawn_once(n, b_total, seed)
    return _weight_blocks(n, b_total, seed)


def bootstrap_means(values: np.ndarray, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Means of every column over bootstrap resamples of the rows (questions).

    Resample ``b`` draws ``n`` row indices uniformly with replacement; the draws
    come from ``numpy.random.default_rng(seed)`` and depend only on ``(n,
    n_resamples, seed)``, so every column -- and every call with the same ``n`` and
    seed -- sees the same resamples.  NaN entries are left out of a column's mean
    (``nanmean`` per resample; NaN when a resample holds only NaN).

    Parameters
    ----------
    values : array-like, shape (n,) or (n, m)
        One row per question, one column per metric.
    n_resamples : int, default 1000
        Number of bootstrap resamples ``B``.
    seed : int, default 0
        Seed of the resampling generator.

    Returns
    -------
    ndarray, shape (B, m)
        Resample means (``m = 1`` for 1-D input).  Shape ``(B, m)`` of NaN when ``n == 0``.

    References
    ----------
    .. [1] Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6.
    """
    a, _ = _as_2d(values)
    n, m = a.shape
    b_total = int(n_resamples)
    if n == 0:
        return np.full((b_total, m), np.nan)
    ok = ~np.isnan(a)
    # centre each column on one of its own values: exact zero width for constant data
    first = np.argmax(ok, axis=0)
    centre = np.where(ok.any(axis=0), a[first, np.arange(m)], 0.0)
    dev = np.where(ok, a - centre, 0.0)
    gaps = ~ok.all(axis=0)
    okf = ok[:, gaps].astype(float)
    out = np.empty((b_total, m))
    for b0, w in _resample_weights(n, b_total, seed):
        nb = w.shape[0]
        num = w @ dev
        # each resample draws n rows: a column without NaN divides by exactly n (a sum of
        # integer weights), so only columns with NaN need their counted rows
        den = np.full((nb, m), float(n))
        if gaps.any():
            den[:, gaps] = w @ okf
        with np.errstate(invalid="ignore", divide="ignore"):
            out[b0 : b0 + nb] = centre + num / den
    return out


def bootstrap_ci(
    values: np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap confidence interval of the mean, per column.

    ``low, high = quantiles (1 - confidence) / 2 and (1 + confidence) / 2`` of the
    ``B`` resample means (linear interpolation, ``numpy.percentile`` default); the
    resamples are drawn once (see :func:`bootstrap_means`) and shared by all columns.
    NaN values are ignored in means.

    Parameters
    ----------
    values : array-like, shape (n,) or (n, m)
        One row per question, one column per metric.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    n_resamples : int, default 1000
        Number of bootstrap resamples.
    seed : int, default 0
        Seed of the resampling generator.

    Returns
    -------
    low, high : float ndarray, shape () for 1-D input or (m,) for 2-D input
        Interval bounds.  ``n == 0``: NaN; ``n == 1``: both bounds equal the value;
        constant data: both bounds equal the constant.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1), ``n_resamples < 1`` or ``values`` is not 1-D/2-D.

    References
    ----------
    .. [1] Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13
       (percentile interval).
    """
    _check(confidence, n_resamples)
    _, one_d = _as_2d(values)
    means = bootstrap_means(values, n_resamples=n_resamples, seed=seed)
    alpha = (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN bounds
        low, high = np.nanpercentile(means, [100 * alpha, 100 * (1 - alpha)], axis=0)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if one_d:
        return low.reshape(()), high.reshape(())
    return low, high


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paired bootstrap of the difference of means ``mean(a) - mean(b)`` on the same questions.

    The per-question differences ``d_i = a_i - b_i`` are resampled together (each
    resample keeps pairs intact), and the percentile interval of ``mean(d*)`` is
    returned.  Questions where either value is NaN are dropped from that column.

    Parameters
    ----------
    a, b : array-like, shape (n,) or (n, m)
        Metric values of two configurations; row ``i`` is the same question in both.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    n_resamples : int, default 1000
        Number of bootstrap resamples.
    seed : int, default 0
        Seed of the resampling generator.

    Returns
    -------
    mean_diff, low, high : float ndarray, shape () or (m,)
        Observed mean difference and its interval bounds (NaN when ``n == 0``).

    Raises
    ------
    ValueError
        If ``a`` and ``b`` have different shapes, or as in :func:`bootstrap_ci`.

    References
    ----------
    .. [1] Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 and 16.
    """
    a_arr = np.asarray(a, dtype=float)
    b_arr = np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"a and b must have the same shape, got {a_arr.shape} and {b_arr.shape}")
    d = a_arr - b_arr
    d2, one_d = _as_2d(d)
    ok = ~np.isnan(d2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, d2, 0.0).sum(axis=0) / ok.sum(axis=0)
    low, high = bootstrap_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    mean = np.asarray(mean, dtype=float)
    if one_d:
        mean = mean.reshape(())
    return mean, low, high


def probability_best(values: np.ndarray, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Share of bootstrap resamples in which each configuration has the highest mean.

    Every column is one configuration measured on the same questions (rows);
    resample ``b`` draws the same rows for all columns (:func:`bootstrap_means`),
    so the comparison is paired. A resample in which ``t`` configurations tie for
    the top mean gives each of them ``1/t``, so the shares sum to 1. Columns that
    are all NaN get 0.

    Parameters
    ----------
    values : array-like, shape (n, m)
        Per-question values (higher is better) of ``m`` configurations.
    n_resamples : int, default 1000
        Bootstrap resamples.
    seed : int, default 0
        Seed of the resampling generator.

    Returns
    -------
    ndarray, shape (m,)
        Probabilities in [0, 1] summing to 1 (all NaN when ``n == 0``).

    Raises
    ------
    ValueError
        ``values`` is not 2-D, or ``n_resamples < 1``.

    References
    ----------
    .. [1] The "probability of being best" of bootstrap model comparison, e.g.
       Efron & Tibshirani (1993), ch. 16; here with ties split evenly.
    """
    a = np.asarray(values, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"values must be 2-D (questions x configurations), got shape {a.shape}")
    _check(0.5, n_resamples)
    if a.shape[0] == 0:
        return np.full(a.shape[1], np.nan)
    means = bootstrap_means(a, n_resamples=n_resamples, seed=seed)
    means = np.where(np.isnan(means), -np.inf, means)
    top = means.max(axis=1, keepdims=True)
    # equal up to rounding: resample means of 0/1 data are exact multiples of 1/n
    is_top = np.isclose(means, top, rtol=0.0, atol=1e-12) & np.isfinite(top)
    shares = is_top / np.maximum(is_top.sum(axis=1, keepdims=True), 1)
    return shares.mean(axis=0)


def questions_needed(differences: np.ndarray, confidence: float = 0.95, power: float = 0.8) -> float:
    """Questions needed for a paired test to detect the observed mean difference.

    The normal-approximation sample size of a two-sided paired test,
    ``n = ((z_{1-alpha/2} + z_power) * s_d / |mean(d)|)^2`` rounded up, with
    ``alpha = 1 - confidence`` and ``s_d`` the sample standard deviation of the
    per-question differences ``d`` (NaN entries left out).

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-question differences ``current - baseline`` of one metric.
    confidence : float, default 0.95
        Confidence level of the test's interval.
    power : float, default 0.8
        Probability of detecting a true difference of the observed size.

    Returns
    -------
    float
        The number of questions (a whole number >= 2), ``inf`` when the mean
        difference is 0 (no finite number of questions detects no difference),
        NaN when fewer than two differences are given.

    Raises
    ------
    ValueError
        ``confidence`` or ``power`` outside (0, 1).

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*,
       2nd ed., 1988, ch. 2 (paired t-test, normal approximation).
    """
    from statistics import NormalDist

    if not 0.0 < confidence < 1.0 or not 0.0 < power < 1.0:
        raise UsageError(f"confidence and power must be in (0, 1), got {confidence!r}, {power!r}")
    d = np.asarray(differences, dtype=float).ravel()
    d = d[~np.isnan(d)]
    if d.size < 2:
        return float("nan")
    mean = float(d.mean())
    if abs(mean) < 1e-12:
        return float("inf")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2) + NormalDist().inv_cdf(power)
    n = (z * float(d.std(ddof=1)) / abs(mean)) ** 2
    return float(max(2, math.ceil(n)))
