"""The exact paired test of a binary metric, and the questions it would need.

A binary per-question metric (``answerable@k``, ``all_parts@k``, ``answerability``: each
question scores 0 or 1) changes between two runs only on the *discordant* questions: those
that went from 1 to 0 (``n_down``) or from 0 to 1 (``n_up``). Under no difference each
discordant question is equally likely to go either way, so ``n_down ~ Binomial(n_down +
n_up, 1/2)``: the exact McNemar test, which is the sign test on the discordant pairs
(McNemar 1947). With few discordant pairs the percentile bootstrap of the mean difference is
too optimistic (at 5 questions it flagged 6.6% of no-difference comparisons where 2.5% was
meant), so the gate lets the exact test decide when there are fewer than :data:`EXACT_BELOW`
discordant pairs: the usual rule of thumb (``b + c < 25``) below which McNemar's
chi-squared approximation is not trusted and the exact binomial form is used. The exact
conditional test never exceeds its nominal level (it is conservative, Fagerland, Lydersen &
Laake 2013), which is what a gate that must not cry wolf needs; from 25 discordant pairs on,
the bootstrap interval decides as before.

References
----------
.. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", *Psychometrika* 12(2), 153–157, 1947.
.. [2] M. W. Fagerland, S. Lydersen, P. Laake, "The McNemar test for binary matched-pairs
   data: mid-p and asymptotic are better than exact conditional", *BMC Medical Research
   Methodology* 13:91, 2013.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from chunkeval.policy import CONFIDENCE

__all__ = ["EXACT_BELOW", "exact_p_value", "exact_questions_needed"]

#: Fewer discordant pairs than this: the exact test decides instead of the bootstrap interval.
EXACT_BELOW = 25
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


def _critical(d: np.ndarray, alpha: float) -> np.ndarray:
    """Smallest ``k`` with ``P(X >= k) <= alpha / 2`` for ``X ~ Binomial(d, 1/2)``, per ``d``
    (``d + 1`` when no ``k`` is small enough: the test cannot reject with ``d`` flips)."""
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
    """:func:`chunkeval.stats.questions_needed` of ``n_down`` differences of -1, ``n_up`` of +1
    and the rest 0, from the counts."""
    from chunkeval.stats import questions_needed

    return questions_needed(
        np.repeat([-1.0, 1.0, 0.0], [n_down, n_up, max(0, n - n_down - n_up)]), confidence, power
    )
