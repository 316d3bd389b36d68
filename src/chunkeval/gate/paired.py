"""The gate's paired test: a sign-flip permutation test on the questions that changed.

Also the number of questions an exact test would need.

Under *no difference* between two runs, each question's pair of values (baseline, current) is as
likely either way round, so each nonzero per-question difference ``d_i`` is as likely to have
either sign. The sign-flip (Fisher–Pitman permutation) test compares the observed sum
``S = Σ d_i`` with the sums over sign patterns of the changed questions: the two-sided p-value
is the share of patterns with ``|S*| >= |S|``. It holds its level for every metric, binary or
graded, and every number of changed questions, because it *is* the null hypothesis the gate's
false-alarm guarantee is about, with nothing estimated. Up to :data:`EXACT_UP_TO` changed
questions every pattern is enumerated (exact); beyond, :data:`SIGN_FLIP_DRAWS` random patterns
(seeded) give the Monte Carlo p-value ``(1 + hits) / (1 + draws)``, which is also valid at its
level (Phipson & Smyth 2010). For a 0/1 metric (``answerable@k``, ``all_parts@k``,
``answerability``) the differences are ±1 on the discordant questions and the exact test is the
exact McNemar test, the sign test on the discordant pairs (McNemar 1947), :func:`exact_p_value`.

The percentile bootstrap interval of the mean difference is still shown beside the test, but it
no longer decides: with few changed questions it is too optimistic (with 4 questions worse and 0
better it excluded zero although the exact p-value is 0.125; at 5-16 changed questions it
flagged 2.3-5.3% of no-difference comparisons where 2.5% was meant).

References
----------
.. [1] R. A. Fisher, *The Design of Experiments*, 1935, §21 (the paired permutation test);
   E. J. G. Pitman, "Significance tests which may be applied to samples from any populations",
   *JRSS Supplement* 4(1), 119–130, 1937.
.. [2] B. Phipson, G. K. Smyth, "Permutation p-values should never be zero", *Statistical
   Applications in Genetics and Molecular Biology* 9(1), 2010.
.. [3] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", *Psychometrika* 12(2), 153–157, 1947.
.. [4] M. W. Fagerland, S. Lydersen, P. Laake, "The McNemar test for binary matched-pairs
   data: mid-p and asymptotic are better than exact conditional", *BMC Medical Research
   Methodology* 13:91, 2013.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from chunkeval.policy import CONFIDENCE

__all__ = [
    "EXACT_UP_TO",
    "SIGN_FLIP_DRAWS",
    "exact_p_value",
    "exact_questions_needed",
    "sign_flip_p_values",
]

#: Up to this many changed questions the sign-flip test enumerates every pattern (2**16).
EXACT_UP_TO = 16
#: Random sign patterns of the Monte Carlo sign-flip test beyond :data:`EXACT_UP_TO`.
SIGN_FLIP_DRAWS = 9_999
#: Sign patterns drawn at once (rows of one matrix product).
_DRAW_BLOCK = 1_000
#: Beyond this many questions the exact search stops and the normal approximation answers.
_EXACT_SEARCH_LIMIT = 20_000


def exact_p_value(n_down: int, n_up: int) -> float:
    """Two-sided exact McNemar (sign test) p-value of ``n_down`` against ``n_up`` flips.

    ``p = min(1, 2 * P(X <= min(n_down, n_up)))`` with ``X ~ Binomial(n_down + n_up, 1/2)``,
    computed exactly with integer binomial coefficients; equal to
    ``scipy.stats.binomtest(n_down, n_down + n_up).pvalue`` (the distribution is
    symmetric, so doubling the smaller tail is the two-sided test).

    Parameters
    ----------
    n_down, n_up : int
        Questions that went from 1 to 0, and from 0 to 1.

    Returns
    -------
    float
        In (0, 1]; 1.0 when no question changed.
    """
    d = int(n_down) + int(n_up)
    if d == 0:
        return 1.0
    tail = sum(math.comb(d, i) for i in range(min(int(n_down), int(n_up)) + 1))
    return min(1.0, 2.0 * tail / 2.0**d)


def sign_flip_p_values(
    diff: np.ndarray, seed: int = 0, draws: int = SIGN_FLIP_DRAWS
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided sign-flip p-values of paired differences, one per column.

    Parameters
    ----------
    diff : ndarray, shape (n_questions, n_columns)
        Per-question differences ``current - baseline``; NaN (a missing value) and 0 (no change)
        take no part. The statistic is the column's sum ``S`` of the rest.
    seed : int, default 0
        Seed of the random sign patterns (used only beyond :data:`EXACT_UP_TO` changed questions).
    draws : int, default :data:`SIGN_FLIP_DRAWS`
        Random patterns of the Monte Carlo test.

    Returns
    -------
    p_value : ndarray of float, shape (n_columns,)
        ``P(|S*| >= |S|)`` over the sign patterns of the column's changed questions: exact up to
        :data:`EXACT_UP_TO` of them, ``(1 + hits) / (1 + draws)`` beyond; 1.0 when none changed.
    exact : ndarray of bool, shape (n_columns,)
        Whether the column's p-value was enumerated exactly.
    """
    d = np.where(np.isfinite(diff), diff, 0.0).astype(np.float64).reshape(diff.shape[0], -1)
    changed = (d != 0).sum(axis=0)
    observed = np.abs(d.sum(axis=0))
    # sums that equal the observed one in exact arithmetic may differ in the last bits
    tol = 1e-9 * np.maximum(1.0, np.abs(d).sum(axis=0))
    p = np.ones(d.shape[1])
    exact = changed <= EXACT_UP_TO
    # the null distribution depends only on the sizes |d_i|: columns that share them (answerable@k
    # at several k often do) share one enumeration, kept sorted for a binary search
    null: dict[bytes, np.ndarray] = {}
    for j in np.flatnonzero(exact & (changed > 0)):
        sizes = np.sort(np.abs(d[d[:, j] != 0, j]))
        key = sizes.tobytes()
        if key not in null:
            null[key] = np.sort(np.abs(_sign_patterns(sizes.size) @ sizes))
        sums = null[key]
        p[j] = float(sums.size - np.searchsorted(sums, observed[j] - tol[j], side="left")) / sums.size
    drawn = np.flatnonzero(~exact)
    if drawn.size:
        rng = np.random.default_rng(seed)
        hits = np.zeros(drawn.size, dtype=np.int64)
        # only questions that changed somewhere take part: a zero adds nothing whatever its sign
        moved = d[np.flatnonzero((d[:, drawn] != 0).any(axis=1))][:, drawn]
        for start in range(0, draws, _DRAW_BLOCK):
            signs = rng.integers(0, 2, size=(min(_DRAW_BLOCK, draws - start), moved.shape[0]), dtype=np.int8)
            sums = (2.0 * signs - 1.0) @ moved
            hits += (np.abs(sums) >= observed[drawn] - tol[drawn]).sum(axis=0)
        p[drawn] = (1.0 + hits) / (1.0 + draws)
    return p, exact


@functools.lru_cache(maxsize=EXACT_UP_TO + 1)
def _sign_patterns(k: int) -> np.ndarray:
    """Every pattern of ``k`` signs, shape (2**k, k), values ±1 (read only)."""
    bits = (np.arange(2**k, dtype=np.int64)[:, None] >> np.arange(k)) & 1
    patterns = 2.0 * bits - 1.0
    patterns.setflags(write=False)
    return patterns


def _critical(d: np.ndarray, alpha: float) -> np.ndarray:
    """Per ``d``, the smallest ``k`` with ``P(X >= k) <= alpha / 2`` for ``X ~ Binomial(d, 1/2)``.

    Smallest ``k`` with ``P(X >= k) <= alpha / 2`` for ``X ~ Binomial(d, 1/2)``, per ``d``
    (``d + 1`` when no ``k`` is small enough: the test cannot reject with ``d`` flips).
    """
    from scipy.special import bdtrc  # bdtrc(k, n, p) = P(X > k)

    k = np.ceil(d / 2 + 0.5 * np.sqrt(d) * _z(alpha)).astype(np.int64)
    k = np.clip(k, 0, d + 1)
    for _ in range(64):  # the normal guess is off by a few at most; step to the exact value
        up = (k <= d) & (bdtrc(k - 1, d, 0.5) > alpha / 2)
        down = (k >= 1) & (bdtrc(k - 2, d, 0.5) <= alpha / 2)
        if not (up.any() or down.any()):
            break
        k = k + up.astype(np.int64) - down.astype(np.int64)
    return np.where(bdtrc(k - 1, d, 0.5) <= alpha / 2, k, d + 1)


@functools.lru_cache(maxsize=8)
def _critical_table(alpha: float, size: int) -> np.ndarray:
    """:func:`_critical` of ``d = 0 .. size - 1`` (read only), computed once per size."""
    table = _critical(np.arange(size, dtype=np.int64), alpha)
    table.setflags(write=False)
    return table


def _z(alpha: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - alpha / 2)


def _exact_power(m: int, p_discordant: float, q_major: float, alpha: float) -> float:
    """Power of the two-sided exact test at ``m`` questions for the given flip rates."""
    from scipy.special import bdtr, bdtrc

    d = np.arange(m + 1, dtype=np.int64)
    pmf = np.diff(bdtr(d, m, p_discordant), prepend=0.0)  # P(D = d)
    reject = bdtrc(_critical_table(alpha, 1 << int(m).bit_length())[: m + 1] - 1, d, q_major)
    return float(np.sum(pmf * reject))


@functools.lru_cache(maxsize=4096)
def exact_questions_needed(
    n_down: int, n_up: int, n: int, confidence: float = CONFIDENCE, power: float = 0.8
) -> float:
    """Questions the exact paired test needs to detect the observed flip rates at ``power``.

    Treats the observed shares of questions that went down, ``n_down / n``, and up,
    ``n_up / n``, as the true ones; at ``m`` questions the number of discordant questions
    is ``D ~ Binomial(m, (n_down + n_up) / n)`` and, given ``D``, the majority direction
    holds ``Binomial(D, max(n_down, n_up) / (n_down + n_up))`` of them. The power at ``m``
    sums, over ``D``, the chance that the two-sided exact test at level
    ``alpha = 1 - confidence`` rejects; the answer is the smallest ``m`` (found by doubling,
    then bisection) whose power reaches ``power``. The exact test's power saw-tooths with
    ``m``, so this is "about".

    Parameters
    ----------
    n_down, n_up, n : int
        Flips down, flips up, questions compared.
    confidence, power : float
        Test level ``1 - alpha`` and the wanted power, both in (0, 1).

    Returns
    -------
    float
        A whole number of questions; ``inf`` when ``n_down == n_up`` (no difference to
        detect). Beyond 20,000 questions the normal approximation of
        :func:`chunkeval.stats.questions_needed` answers instead (it is accurate there).

    References
    ----------
    .. [1] J. M. Lachin, "Power and sample size evaluation for the McNemar test with
       application to matched case-control studies", *Statistics in Medicine* 11(9),
       1239–1251, 1992 (the conditional power on the discordant pairs).
    """
    d = int(n_down) + int(n_up)
    if n <= 0 or d == 0 or n_down == n_up:
        return math.inf
    p_d, q = d / n, max(n_down, n_up) / d
    alpha = 1.0 - confidence
    lo, hi = 1, max(2, int(n))
    while _exact_power(hi, p_d, q, alpha) < power:
        lo, hi = hi, hi * 2
        if hi > _EXACT_SEARCH_LIMIT:  # large samples: the normal approximation is good there
            return _normal_needed(n_down, n_up, n, confidence, power)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _exact_power(mid, p_d, q, alpha) >= power else (mid, hi)
    return float(hi)


def _normal_needed(n_down: int, n_up: int, n: int, confidence: float, power: float) -> float:
    """:func:`chunkeval.stats.questions_needed` of -1/0/+1 differences, from their counts.

    :func:`chunkeval.stats.questions_needed` of ``n_down`` differences of -1, ``n_up`` of +1
    and the rest 0, from the counts.
    """
    from chunkeval.stats import questions_needed

    return questions_needed(
        np.repeat([-1.0, 1.0, 0.0], [n_down, n_up, max(0, n - n_down - n_up)]), confidence, power
    )
