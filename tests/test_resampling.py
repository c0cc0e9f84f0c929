"""The bootstrap's count schemes (``assay.uncertainty.resampling``): each draws exactly
``Multinomial(n, m / n)``, checked against the exact distribution; seeded and independent
of the chunk size."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from assay.uncertainty.resampling import SCHEMES, choose_scheme, poisson_table, resample_counts


@pytest.mark.parametrize("mean", [0.0, 1.0, 7.0, 14.96, 15.0])
def test_poisson_table_is_the_inversion_of_its_slots(mean: float) -> None:
    table, cdf = poisson_table(mean)
    slots = table.size
    want = sps.poisson.cdf(np.arange(cdf.size), mean)
    np.testing.assert_allclose(cdf, want, rtol=1e-12, atol=1e-15)
    assert cdf[-1] == 1.0 and (np.diff(cdf) >= 0).all()
    lo = np.arange(slots) / slots
    at_lo = np.searchsorted(cdf, lo, "right")
    at_hi = np.searchsorted(cdf, np.nextafter(lo + 1 / slots, 0), "right")
    sure = table != 255
    np.testing.assert_array_equal(table[sure], at_lo[sure])
    np.testing.assert_array_equal(at_lo[sure], at_hi[sure])  # constant over the slot
    assert (at_lo[~sure] < at_hi[~sure]).all()  # a jump inside every ambiguous slot


def test_ambiguous_reads_are_the_inversion_of_a_double() -> None:
    """Every table side by side: a read in an ambiguous slot at ``x = (u + fine) / 4096``
    gives ``#{k: F(k) <= x}``, for ``fine`` at both ends and inside the slot."""
    from assay.uncertainty.resampling import _Tables

    t = _Tables.of(0.997, 12)
    slot = np.flatnonzero(t.table == 255)
    for fine in (0.0, 0.37, 0.999):
        got = t.resolve(slot, np.full(slot.size, fine))
        x = ((slot % 4096) + fine) / 4096
        means = 0.997 * (slot // 4096)
        want = [np.searchsorted(poisson_table(float(v))[1], xi, "right") for v, xi in zip(means, x)]
        np.testing.assert_array_equal(got, want)


def _compositions(n: int, k: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_scheme_draws_the_exact_multinomial(scheme: str) -> None:
    """Chi-square of 20000 draws against the exact pmf of every outcome (35 outcomes)."""
    m = np.array([1, 2, 1, 1])
    n = int(m.sum())
    w = np.concatenate(list(resample_counts(m, 20000, seed=4, scheme=scheme)))
    assert (w.sum(axis=1) == n).all() and (w >= 0).all()
    outcomes = _compositions(n, m.size)
    index = {c: i for i, c in enumerate(outcomes)}
    seen = np.bincount([index[tuple(r)] for r in w.astype(int).tolist()], minlength=len(outcomes))
    pmf = np.array([sps.multinomial.pmf(c, n, m / n) for c in outcomes])
    p = sps.chisquare(seen, pmf * len(w)).pvalue
    assert p > 1e-3, p


@pytest.mark.parametrize("scheme", SCHEMES)
def test_large_multiplicities_have_multinomial_moments(scheme: str) -> None:
    """Multiplicities above one table (15) are sums of table reads: mean m, covariance
    n (diag(p) - p p^T), and each marginal Binomial(n, p_c) (chi-square)."""
    m = np.array([70, 130, 5, 1, 64, 200])
    n, p = m.sum(), m / m.sum()
    w = np.concatenate(list(resample_counts(m, 20000, seed=7, scheme=scheme)))
    assert (w.sum(axis=1) == n).all()
    np.testing.assert_allclose(w.mean(axis=0), m, rtol=0.02, atol=0.05)
    np.testing.assert_allclose(np.cov(w.T), n * (np.diag(p) - np.outer(p, p)), atol=3.0, rtol=0.05)
    k = np.arange(40, 101)
    seen = np.array([(w[:, 0] == v).sum() for v in k])
    want = sps.binom.pmf(k, n, p[0]) * len(w)
    assert sps.chisquare(seen, want * seen.sum() / want.sum()).pvalue > 1e-3


@pytest.mark.parametrize("scheme", SCHEMES)
def test_seeded_and_independent_of_the_chunk_size(scheme: str) -> None:
    m = np.array([3, 1, 4, 1, 5, 90, 2, 6])
    a = np.concatenate(list(resample_counts(m, 50, seed=9, chunk_elements=7, scheme=scheme)))
    b = np.concatenate(list(resample_counts(m, 50, seed=9, scheme=scheme)))
    c = np.concatenate(list(resample_counts(m, 50, seed=10, scheme=scheme)))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_the_cheapest_scheme_is_chosen() -> None:
    assert choose_scheme(np.ones(500, np.int64)) == "balls"  # 500 images
    assert choose_scheme(np.array([250_000] * 4)) == "multinomial"  # four cells
    assert choose_scheme(np.ones(10**6, np.int64)) == "poisson"  # distinct scores
    assert choose_scheme(np.full(20_000, 50)) == "poisson"  # rounded scores


def test_the_blocked_search_finds_the_entry_holding_each_draw() -> None:
    """The removal step's blocked search equals a search of the full running sum."""
    from assay.uncertainty.resampling import _holding

    rng = np.random.default_rng(0)
    for _ in range(200):
        row = rng.poisson(rng.random() * 3, int(rng.integers(1, 300))).astype(float)
        total = int(row.sum())
        if total == 0:
            continue
        balls = np.sort(rng.choice(total, int(rng.integers(1, total + 1)), replace=False))
        want = np.searchsorted(np.cumsum(row), balls, "right")
        for block in (1, 3, 64):
            np.testing.assert_array_equal(_holding(row, balls, block), want)


def test_rows_of_units_read_from_the_table_or_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """The added draws' rows: the table of every unit's row (up to 2^23 units) and the
    search of the cumulative multiplicities (above) agree."""
    import assay.uncertainty.resampling as r

    m = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    units = np.arange(int(m.sum()))
    table = r._PoissonPlan.of(m).rows_of(units)
    monkeypatch.setattr(r, "_LOOKUP", 0)
    searched = r._PoissonPlan.of(m).rows_of(units)
    np.testing.assert_array_equal(table, np.repeat(np.arange(m.size), m))
    np.testing.assert_array_equal(searched, table)


@pytest.mark.parametrize("bits", [12, 11, 10])
def test_every_table_width_draws_the_exact_multinomial(bits: int, monkeypatch) -> None:
    """Each width the Poisson scheme may choose (forced here): chi-square of every outcome
    of a small problem, and the marginal of a row read in several parts."""
    import assay.uncertainty.resampling as r

    monkeypatch.setattr(r, "_BITS", (bits,))
    m = np.array([1, 2, 1, 1])
    w = np.concatenate(list(resample_counts(m, 20000, seed=5, scheme="poisson")))
    outcomes = _compositions(5, 4)
    index = {c: i for i, c in enumerate(outcomes)}
    seen = np.bincount([index[tuple(x)] for x in w.astype(int).tolist()], minlength=len(outcomes))
    pmf = np.array([sps.multinomial.pmf(c, 5, m / 5) for c in outcomes])
    assert sps.chisquare(seen, pmf * len(w)).pvalue > 1e-3
    big = np.array([150, 40, 7, 3])
    w = np.concatenate(list(resample_counts(big, 20000, seed=6, scheme="poisson")))
    assert (w.sum(axis=1) == 200).all()
    k = np.arange(130, 171)
    seen_k = np.array([(w[:, 0] == v).sum() for v in k])
    want = sps.binom.pmf(k, 200, 0.75) * len(w)
    assert sps.chisquare(seen_k, want * seen_k.sum() / want.sum()).pvalue > 1e-3


def test_the_table_width_follows_the_multiplicities() -> None:
    from assay.uncertainty.resampling import _choose_bits

    assert _choose_bits(np.ones(10**5, np.int64)) == 12  # distinct scores
    assert _choose_bits(np.full(20_000, 50)) in (10, 11)  # tie groups of rounded scores
