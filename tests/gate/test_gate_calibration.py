"""The gate's false alarms stay at the nominal rate for any number of changed questions.

"No real change" is simulated the way the sign-flip test states it: each question's pair of
values (baseline, current) is swapped or not with probability 1/2. A regression flagged then is a
false alarm; the nominal rate is ``(1 - confidence) / 2`` = 2.5% (one side of a two-sided test at
95%). The graded metric is recall@5 on two-part questions (values 0, 0.5, 1), the 0/1 metric
answerable@5. Run with ``-s`` to see the rates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from chunkeval.gate.checks import Check
from chunkeval.gate.outcomes import Stats, decide, paired_columns
from chunkeval.gate.paired import EXACT_UP_TO, exact_p_value, sign_flip_p_values

NOMINAL = 0.025
STATS = Stats(0.95, 20, 0)  # the bootstrap interval is only shown: few resamples will do
LEVELS = {"recall@5": (0.0, 0.5, 1.0), "answerable@5": (0.0, 1.0)}


def _changed_pairs(rng, metric: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Values (x, y), x != y, of k changed questions of ``metric``."""
    levels = LEVELS[metric]
    pairs = list(itertools.permutations(levels, 2))
    chosen = rng.integers(0, len(pairs), size=k)
    x, y = np.array([pairs[i] for i in chosen]).T
    return x, y


def _flags(metric: str, n: int, x: np.ndarray, y: np.ndarray, swaps: np.ndarray) -> np.ndarray:
    """Whether the gate (tolerance 0) flags a regression in each column of ``swaps``.

    ``swaps``: shape (k, sims), True where a changed question's pair is swapped. The n - k
    unchanged questions keep one value on both sides.
    """
    k, sims = swaps.shape
    steady = np.full((n - k, sims), LEVELS[metric][-1])
    base = np.vstack([np.where(swaps, y[:, None], x[:, None]), steady])
    cur = np.vstack([np.where(swaps, x[:, None], y[:, None]), steady])
    rows = paired_columns(base, cur, STATS, needed=False)
    check = Check(metric)
    return np.array([decide({**r, "metric": metric}, check, STATS.confidence) == "regressed" for r in rows])


def _rate(metric: str, n: int, k: int, rng, sims: int) -> tuple[float, bool]:
    """The false-alarm rate at n questions of which k changed: exact over every swap pattern
    when there are at most 2**10 of them, else over ``sims`` random ones."""
    x, y = _changed_pairs(rng, metric, k)
    if k <= 10:
        swaps = ((np.arange(2**k)[None, :] >> np.arange(k)[:, None]) & 1).astype(bool)
        return float(_flags(metric, n, x, y, swaps).mean()), True
    return float(_flags(metric, n, x, y, rng.random((k, sims)) < 0.5).mean()), False


def _check_grid(ns, ks, sims):
    """Every exact rate at most the nominal one; every sampled rate within 4 standard errors of
    it (over a few hundred cells, 3 would be passed by chance alone) and their pooled mean within
    3 standard errors of the pooled sample."""
    rng = np.random.default_rng(33)
    lines, over, sampled = [], [], []
    for metric in LEVELS:
        for n in ns:
            cells = []
            for k in (k for k in ks if k <= n):
                rate, exact = _rate(metric, n, k, rng, sims)
                cells.append(f"{k}:{rate:.3f}{'' if exact else '~'}")
                bound = NOMINAL if exact else NOMINAL + 4 * math.sqrt(NOMINAL * (1 - NOMINAL) / sims)
                if rate > bound + 1e-12:
                    over.append((metric, n, k, rate))
                if not exact:
                    sampled.append(rate)
            lines.append(f"{metric} n={n}: " + " ".join(cells))
    pooled = float(np.mean(sampled)) if sampled else 0.0
    print(
        "\ngate false-alarm rate by changed questions (~: sampled):\n"
        + "\n".join(lines)
        + f"\npooled over the {len(sampled)} sampled cells: {pooled:.4f}"
    )
    assert not over, over
    assert pooled <= NOMINAL + 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / (sims * max(1, len(sampled))))


def test_false_alarms_at_nominal_rate_for_few_changed_questions():
    _check_grid(ns=(5, 500), ks=(1, 2, 3, 4, 5, 6, 8, 10, 13, 17, 30), sims=300)


@pytest.mark.slow
def test_false_alarms_at_nominal_rate_for_1_to_30_changed_questions_and_n_5_to_500():
    _check_grid(ns=(5, 10, 20, 50, 100, 200, 500), ks=range(1, 31), sims=500)


def test_the_issue_case_4_worse_0_better_is_not_a_regression():
    # 4 questions worse, 0 better: exact p = 2 / 16 = 0.125 (the sign test), graded or 0/1
    for worse in (np.array([-1.0, -1, -1, -1]), np.array([-0.5, -1, -0.5, -0.25])):
        diff = np.concatenate([worse, np.zeros(96)])[:, None]
        p, exact = sign_flip_p_values(diff)
        assert exact[0] and p[0] == pytest.approx(0.125)
    # and 6 worse, 0 better on a 0/1 metric is one (p = 2 / 64)
    p, _ = sign_flip_p_values(np.concatenate([-np.ones(6), np.zeros(50)])[:, None])
    assert p[0] == pytest.approx(1 / 32)


def test_sign_flip_on_a_0_1_metric_is_the_exact_mcnemar_test():
    rng = np.random.default_rng(0)
    for _ in range(50):
        down, up = (int(v) for v in rng.integers(0, 9, size=2))
        diff = np.concatenate([-np.ones(down), np.ones(up), np.zeros(20)])[:, None]
        p, exact = sign_flip_p_values(diff)
        assert exact[0] == (down + up <= EXACT_UP_TO)
        assert p[0] == pytest.approx(exact_p_value(down, up))


def test_sign_flip_hand_checked_graded_and_sampled():
    # d = (-1, -0.5, +0.25): |S| = 1.25; patterns with |S*| >= 1.25: (-,-,+) (+,+,-) (-,-,-) (+,+,+)
    p, exact = sign_flip_p_values(np.array([[-1.0], [-0.5], [0.25], [0.0], [np.nan]]))
    assert exact[0] and p[0] == pytest.approx(4 / 8)
    # beyond EXACT_UP_TO: Monte Carlo, never 0, near the exact binomial value, seeded
    diff = np.concatenate([-np.ones(20), np.ones(4), np.zeros(10)])[:, None]
    p1, exact = sign_flip_p_values(diff, seed=1)
    assert not exact[0] and p1[0] > 0
    assert p1[0] == pytest.approx(exact_p_value(20, 4), abs=0.003)
    assert sign_flip_p_values(diff, seed=1)[0][0] == p1[0]
    assert sign_flip_p_values(np.zeros((5, 2)))[0].tolist() == [1.0, 1.0]


@pytest.mark.slow
def test_checks_on_metrics_fixed_by_the_data_are_left_out_with_one_line(tmp_path):
    from _multidoc import write_multidoc_dataset
    from chunkeval.benchmarks import run
    from chunkeval.gate import compare

    spec = write_multidoc_dataset(tmp_path / "data", single_every=0)  # every question joins two documents
    base = run(spec, {"a": "fixed(chunk_size=48)"}, ks=(5,), n_resamples=50)
    cur = run(spec, {"a": "fixed(chunk_size=32)"}, ks=(5,), n_resamples=50)
    cmp = compare(base, cur, "answerable@5,recall@5")
    rows = cmp.rows.set_index("metric")
    assert not rows.loc["answerable@5", "checked"] and rows.loc["recall@5", "checked"]
    (note,) = [n for n in cmp.notes if "not checked" in n]
    assert note.startswith("dataset multidoc: answerable@5 not checked, n/a: 0 by construction")
    assert f"  note: {note}" in cmp.to_text().splitlines()
    # a gate whose every check is n/a here could fail on nothing: refused, naming the fix
    idle = compare(base, cur, "answerable@5,mrr")
    assert idle.exit_code == 2
    assert idle.verdict() == (
        "incomparable: every check (answerable@5, mrr) is n/a on this data, so nothing would be "
        "checked; choose metrics it defines (e.g. recall@k, mrr_any_part) with --fail-on"
    )
