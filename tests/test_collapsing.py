"""collapse against np.unique(axis=0): the same rows, inverse and counts, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from assay.uncertainty.collapsing import collapse


def _unique(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = a[:, None] if a.ndim == 1 else a
    uniq, inverse, counts = np.unique(a, axis=0, return_inverse=True, return_counts=True)
    return uniq, counts.astype(np.int64), inverse.reshape(-1)


def _same(a: np.ndarray) -> None:
    want, got = _unique(a), collapse(a)
    for w, g in zip(want, got, strict=True):
        assert w.dtype == g.dtype and w.shape == g.shape
        assert np.array_equal(w, g, equal_nan=w.dtype.kind == "f")


_rows = st.one_of(
    hnp.arrays(
        np.int64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
        elements=st.integers(-5, 5),
    ),
    hnp.arrays(
        np.int64,
        hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=40),
        elements=st.integers(-(2**40), 2**40),
    ),
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
        elements=st.sampled_from([0.0, 0.5, 1.0, 1.5, -2.0, np.inf, 1e300]),
    ),
    hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40)),
)


@settings(max_examples=300, deadline=None)
@given(_rows)
def test_collapse_is_numpy_unique_over_rows(a: np.ndarray) -> None:
    _same(a)


@pytest.mark.parametrize(
    "a",
    [
        np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 1.0]]),  # NaN rows: numpy's own path
        np.array([[-0.0, 1.0], [0.0, 1.0]]),  # a negative zero counts with zero
        np.array([[0.0, 1.0], [-0.0, 1.0], [-0.0, 2.0]]),
        np.array(["b", "a", "b"]),
        np.random.default_rng(0).random((200, 3)).round(1),
        np.random.default_rng(1).integers(0, 2**62, (50, 3)).astype(np.uint64),
        np.random.default_rng(2).integers(0, 3, (100, 45)),  # codes past 2^62: numpy's path
    ],
)
def test_collapse_edge_rows(a: np.ndarray) -> None:
    _same(a)


def test_a_negative_zero_takes_the_fast_path_and_reads_zero() -> None:
    """A system score rounded to -0.0 once sent every collapse down np.unique's sort of whole
    rows (about 10x slower at 10^6 rows); it is counted with 0.0 and its row reads 0.0."""
    import assay.uncertainty.collapsing as c

    a = np.array([[-0.0, 1.0], [0.0, 1.0], [0.5, 1.0]])
    assert c._by_codes(a) is not None
    uniq, mult, inverse = collapse(a)
    assert uniq.tolist() == [[0.0, 1.0], [0.5, 1.0]] and not np.signbit(uniq[0, 0])
    assert mult.tolist() == [2, 1] and inverse.tolist() == [0, 0, 1]


def test_collapse_weights_sum_per_row() -> None:
    a = np.array([[1.5, 2.0], [0.5, 1.0], [1.5, 2.0]])
    uniq, mult, inverse = collapse(a, weights=[2, 1, 3])
    assert uniq.tolist() == [[0.5, 1.0], [1.5, 2.0]]
    assert mult.tolist() == [1, 5] and inverse.tolist() == [1, 0, 1]
