"""Clusters.weights: every row counts its clusters' draws times its units there, by the
gather (each row in one cluster, the rows collapse_by makes) or the sparse product (a row
in several clusters, as compact forms can give)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.uncertainty.clusters import Clusters, collapse_by


def _dense(unit: np.ndarray, codes: np.ndarray, rows: int, counts: np.ndarray) -> np.ndarray:
    out = np.zeros((counts.shape[0], rows))
    for r, g in zip(unit, codes, strict=True):
        out[:, r] += counts[:, g]
    return out


def _codes_of(c: Clusters) -> np.ndarray:
    """Each row's one cluster, read off the membership matrix."""
    return np.asarray(c.membership.tocsc().indices)


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 40), groups=st.integers(1, 6), b=st.integers(1, 5), seed=st.integers(0, 999)
)
def test_weights_equal_each_unit_counting_its_cluster(n, groups, b, seed) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, n).astype(float)
    codes = rng.integers(0, groups, n)
    codes[0] = groups - 1  # every cluster code below the largest may be absent, not beyond
    counts = rng.integers(0, 3, (b, groups)).astype(float)
    # the rows of collapse_by keep the cluster: one cluster per row, the gather path
    rows, c = collapse_by(values[:, None], codes)
    pair = {(float(v), int(g)): i for i, (v, g) in enumerate(zip(rows[:, 0], _codes_of(c)))}
    unit = np.array([pair[(float(v), int(g))] for v, g in zip(values, codes, strict=True)])
    assert c._single is not None
    np.testing.assert_array_equal(c.weights(counts), _dense(unit, codes, len(pair), counts))
    # rows shared by clusters: the product
    shared = Clusters.of(unit=values.astype(np.intp), codes=codes, rows=4)
    want = _dense(values.astype(np.intp), codes, 4, counts)
    np.testing.assert_array_equal(shared.weights(counts), want)
