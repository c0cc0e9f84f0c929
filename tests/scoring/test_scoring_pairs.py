"""``Pairs`` (the distinct pairs prepared once for every chunk of resamples) against the
direct sums: a resample's sums, histograms and extremes, for the whole set and for a
subgroup, whatever the counts (zeros, rows drawing none of the smallest values)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.scoring import tally as replicates
from assay.scoring.tally import Pairs


def _direct(x, y, w, shift):
    """The sums, histograms and extremes of each row of ``w`` written out (zeros ignored)."""
    xs, ys, d = x - shift, y - shift, y - x
    terms = [np.ones_like(x), xs, ys, xs * xs, ys * ys, xs * ys, d * d]
    terms += [np.abs(d) <= 0.0, np.abs(d) <= 1.0, np.rint(x) == np.rint(y)]
    sums = np.array([[float((row * t).sum()) for t in terms] for row in w])
    ext = [
        [min([v for v, c in zip(vals, row, strict=True) if c > 0], default=np.inf) for row in w]
        for vals in (x, y)
    ]
    top = [
        [max([v for v, c in zip(vals, row, strict=True) if c > 0], default=-np.inf) for row in w]
        for vals in (x, y)
    ]
    return sums, ext, top


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 60),
    b=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    candidates=st.sampled_from([1, 2, 32]),
    sparse=st.booleans(),
)
def test_pairs_equal_the_direct_sums(n, b, seed, candidates, sparse):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, n).astype(float)
    y = np.round(x + rng.normal(0, 1, n), 1)
    w = rng.poisson(0.3 if sparse else 1.0, (b, n)).astype(float)
    keep = rng.random(n) < 0.5
    old = replicates.CANDIDATES
    replicates.CANDIDATES = candidates  # few candidates: the fallback over every unit runs
    try:
        for mask in (None, keep):
            got = Pairs(x, y, 2.0, mask).resampled(w)
            sub = slice(None) if mask is None else mask
            sums, low, high = _direct(x[sub], y[sub], w[:, sub], 2.0)
            for i, name in enumerate(replicates._SUMS):
                np.testing.assert_allclose(getattr(got, name), sums[:, i], rtol=1e-12, atol=1e-9)
            assert got.xmin.tolist() == low[0] and got.ymin.tolist() == low[1]
            assert got.xmax.tolist() == high[0] and got.ymax.tolist() == high[1]
            if got.hist_x is not None:
                full = replicates.resampled_pairs(x, y, w * (1.0 if mask is None else mask), 2.0)
                np.testing.assert_array_equal(got.hist_x, full.hist_x)
                np.testing.assert_array_equal(got.hist_y, full.hist_y)
    finally:
        replicates.CANDIDATES = old
