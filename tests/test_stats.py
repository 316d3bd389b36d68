"""Bootstrap confidence intervals: exact edge cases and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.stats import bootstrap_ci, bootstrap_means, paired_bootstrap


def test_empty_gives_nan_bounds():
    low, high = bootstrap_ci(np.array([]))
    assert np.isnan(low) and np.isnan(high)
    low, high = bootstrap_ci(np.zeros((0, 3)))
    assert low.shape == (3,) and np.isnan(low).all() and np.isnan(high).all()
    mean, low, high = paired_bootstrap([], [])
    assert np.isnan(mean) and np.isnan(low) and np.isnan(high)


def test_single_value_gives_that_value():
    low, high = bootstrap_ci([0.37])
    assert low == 0.37 and high == 0.37
    low, high = bootstrap_ci(np.array([[0.1, 5.0]]))
    assert low.tolist() == [0.1, 5.0] and high.tolist() == [0.1, 5.0]


def test_constant_data_zero_width():
    low, high = bootstrap_ci(np.full(997, 0.1))
    assert low == 0.1 and high == 0.1
    low, high = bootstrap_ci(np.c_[np.full(50, 1 / 3), np.full(50, 7.0)])
    assert low.tolist() == [1 / 3, 7.0] and high.tolist() == [1 / 3, 7.0]


def test_shapes_and_determinism():
    x = np.random.default_rng(1).random((200, 4))
    a = bootstrap_ci(x, seed=5)
    b = bootstrap_ci(x, seed=5)
    c = bootstrap_ci(x, seed=6)
    assert a[0].shape == (4,) and a[1].shape == (4,)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    low, high = bootstrap_ci(x[:, 0], seed=5)
    assert low.shape == () and high.shape == ()


def test_same_resamples_for_every_column():
    x = np.random.default_rng(2).random(100)
    low, high = bootstrap_ci(np.c_[x, 2 * x, x + 1])
    # linear transforms of one column move with it: same resamples reused
    assert np.allclose([low[1], high[1]], [2 * low[0], 2 * high[0]], rtol=0, atol=1e-12)
    assert np.allclose([low[2], high[2]], [low[0] + 1, high[0] + 1], rtol=0, atol=1e-12)
    # a column alone gives the same interval as inside the matrix
    l0, h0 = bootstrap_ci(x)
    assert np.isclose(l0, low[0], rtol=0, atol=1e-12) and np.isclose(h0, high[0], rtol=0, atol=1e-12)


def test_resample_means_match_explicit_resampling():
    x = np.arange(7, dtype=float)
    means = bootstrap_means(x, n_resamples=3, seed=0)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 7, size=(3, 7))
    assert np.allclose(means[:, 0], x[idx].mean(axis=1), rtol=0, atol=1e-12)


def test_nan_values_are_ignored():
    x = np.array([1.0, np.nan, 3.0, np.nan])
    low, high = bootstrap_ci(x, n_resamples=2000)
    assert 1.0 <= low <= 2.0 <= high <= 3.0
    low, high = bootstrap_ci(np.full(5, np.nan))
    assert np.isnan(low) and np.isnan(high)


def test_confidence_levels_nest():
    x = np.random.default_rng(3).normal(size=300)
    l90, h90 = bootstrap_ci(x, confidence=0.90)
    l99, h99 = bootstrap_ci(x, confidence=0.99)
    assert l99 <= l90 < h90 <= h99


def test_invalid_arguments():
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci([1.0, 2.0], n_resamples=0)
    with pytest.raises(ValueError, match="1-D"):
        bootstrap_ci(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="same shape"):
        paired_bootstrap([1.0], [1.0, 2.0])


def test_paired_bootstrap():
    a = np.array([0.5, 0.75, 1.0, 0.125])  # dyadic: differences are exact
    mean, low, high = paired_bootstrap(a, a)
    assert mean == 0.0 and low == 0.0 and high == 0.0
    mean, low, high = paired_bootstrap(a + 0.25, a)  # constant difference
    assert mean == 0.25 and low == 0.25 and high == 0.25
    rng = np.random.default_rng(4)
    base = rng.random(400)
    b = base + rng.normal(0.0, 0.01, 400) - 0.05
    mean, low, high = paired_bootstrap(base, b)
    assert low <= mean <= high
    assert low > 0  # pairing removes the per-question spread
    mean2, low2, high2 = paired_bootstrap(np.c_[base, base], np.c_[b, base])
    assert mean2.shape == (2,) and low2[1] == 0.0 and high2[1] == 0.0
    assert np.isclose(low2[0], low, rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=60), st.integers(0, 10))
def test_ci_contains_mean_and_lies_within_data(values, seed):
    x = np.array(values)
    low, high = bootstrap_ci(x, n_resamples=400, seed=seed)
    # resample means lie within [min, max]; the interval is ordered
    assert x.min() - 1e-9 <= low <= high <= x.max() + 1e-9
    if len(set(values)) == 1:
        assert low == high == x[0]


def test_ci_contains_sample_mean_on_symmetric_data():
    x = np.random.default_rng(7).normal(size=500)
    low, high = bootstrap_ci(x)
    assert low < x.mean() < high
