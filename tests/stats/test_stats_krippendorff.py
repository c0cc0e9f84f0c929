"""krippendorff_alpha against the ``krippendorff`` PyPI package (all four levels, missing
ratings included), and its properties (hypothesis)."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

import assay.stats as st
from assay.errors import InvalidInputError

krippendorff = pytest.importorskip("krippendorff")

LEVELS = ["nominal", "ordinal", "interval", "ratio"]


def _alpha(matrix, level):
    """assay's α for a raters × units matrix with NaN for missing ratings."""
    units = [[None if math.isnan(x) else x for x in col] for col in np.asarray(matrix).T]
    return st.krippendorff_alpha(level)([st.Score(u) for u in units])


def _matrix(rng, raters, units, missing, levels=5):
    base = rng.integers(1, levels + 1, units)
    noise = rng.integers(-1, 2, (raters, units)) * (rng.random((raters, units)) < 0.4)
    m = np.clip(base + noise, 1, levels).astype(float)
    m[rng.random(m.shape) < missing] = np.nan
    return m


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_the_krippendorff_package(level, seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for raters, units, missing in [(2, 10, 0.0), (3, 50, 0.2), (5, 200, 0.4), (4, 7, 0.5)]:
        m = _matrix(rng, raters, units, missing)
        if level == "interval" and seed % 2:
            m = m + rng.normal(size=m.shape).round(3)  # continuous ratings
        pairable = (np.sum(~np.isnan(m), axis=0) >= 2).sum()
        usable = pairable > 0 and len(np.unique(m[:, np.sum(~np.isnan(m), axis=0) >= 2])) > 1
        if not usable:
            continue
        expected = krippendorff.alpha(reliability_data=m, level_of_measurement=level)
        assert math.isclose(_alpha(m, level), expected, rel_tol=1e-12, abs_tol=1e-12)
        compared += 1
    assert compared >= 3


def test_krippendorffs_own_example():
    """The example of Krippendorff (2011), 4 raters × 12 units with missing ratings."""
    nan = np.nan
    m = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert round(_alpha(m, "nominal"), 3) == 0.743
    assert round(_alpha(m, "interval"), 3) == 0.849
    for level in LEVELS:
        expected = krippendorff.alpha(reliability_data=m, level_of_measurement=level)
        assert math.isclose(_alpha(m, level), expected, rel_tol=1e-12)


def test_undefined_when_no_unit_has_two_ratings_and_ratio_rejects_negatives():
    rec = st.evaluate_scores(
        [st.SampleScore(st.Score([1, None]), 0), st.SampleScore(st.Score([2]), 1)],
        [st.krippendorff_alpha()],
    ).get("KrippendorffAlpha")
    assert rec.value is None and "two or more ratings" in rec.parameters["undefined"]
    with pytest.raises(InvalidInputError, match="≥ 0"):
        st.krippendorff_alpha("ratio")([st.Score([1, -1]), st.Score([2, 2])])
    with pytest.raises(InvalidInputError, match="level"):
        st.krippendorff_alpha("cardinal")


ratings = hs.lists(hs.lists(hs.integers(1, 4), min_size=2, max_size=4), min_size=2, max_size=25)


@settings(max_examples=60, deadline=None)
@given(ratings, hs.sampled_from(LEVELS), hs.randoms(use_true_random=False))
def test_permuting_raters_and_units_leaves_alpha_unchanged(units, level, rnd):
    before = st.krippendorff_alpha(level)([st.Score(u) for u in units])
    shuffled = [rnd.sample(u, len(u)) for u in units]
    rnd.shuffle(shuffled)
    after = st.krippendorff_alpha(level)([st.Score(u) for u in shuffled])
    assert math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(hs.tuples(hs.integers(1, 6), hs.integers(2, 5)), min_size=2, max_size=30),
    hs.sampled_from(LEVELS),
)
def test_perfect_agreement_is_one(units, level):
    assume(len({v for v, _ in units}) > 1)
    scores = [st.Score([v] * m) for v, m in units]
    assert math.isclose(st.krippendorff_alpha(level)(scores), 1.0, abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(ratings, hs.sampled_from(LEVELS))
def test_alpha_is_at_most_one_and_relabelling_nominal_categories_changes_nothing(units, level):
    alpha = st.krippendorff_alpha(level)([st.Score(u) for u in units])
    assert alpha <= 1.0 + 1e-12
    if level == "nominal":
        relabelled = [[f"x{v * 7}" for v in u] for u in units]
        other = st.krippendorff_alpha("nominal")([st.Score(u) for u in relabelled])
        assert math.isclose(alpha, other, rel_tol=1e-12, abs_tol=1e-12)
