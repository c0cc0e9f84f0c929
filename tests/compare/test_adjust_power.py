"""Holm and Benjamini-Hochberg against statsmodels' ``multipletests`` (and their
invariants by hypothesis); the minimum detectable difference against a simulation of its
power, and the units needed against the formula solved the other way."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from assay.compare import adjust, mde, n_for_width, n_needed, paired_t
from assay.errors import InvalidInputError

SM = {"holm": "holm", "bh": "fdr_bh"}


@pytest.mark.parametrize("method", ["holm", "bh"])
@pytest.mark.parametrize("seed", range(8))
def test_adjust_matches_statsmodels(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 2, int(rng.integers(1, 30)))
    p[rng.random(p.size) < 0.2] = p[0]  # ties
    ref = multipletests(p, method=SM[method])[1]
    np.testing.assert_allclose(adjust(p, method), ref, rtol=1e-12)


def test_adjust_leaves_nan_out_and_checks_its_input() -> None:
    got = adjust([0.01, float("nan"), 0.04], "holm")
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.04)
    assert adjust([0.2, 0.01], "none").tolist() == [0.2, 0.01]
    with pytest.raises(InvalidInputError, match="unknown adjustment 'bonf'"):
        adjust([0.1], "bonf")
    with pytest.raises(InvalidInputError, match="outside"):
        adjust([1.5], "bh")


p_values = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(p_values, st.sampled_from(["holm", "bh"]))
def test_adjusted_p_values_keep_the_order_and_never_shrink(p: list[float], method: str) -> None:
    raw = np.array(p)
    adj = adjust(raw, method)
    assert ((adj >= raw - 1e-15) & (adj <= 1.0)).all()
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adj[order]) >= -1e-15).all()  # monotone in the raw p-values
    assert (adjust(raw, "holm") >= adjust(raw, "bh") - 1e-15).all()  # FWER is the stricter


def test_power_formulas() -> None:
    z = 1.959963984540054 + 0.8416212335729143
    assert mde(0.02) == pytest.approx(z * 0.02, rel=1e-12)
    n = n_needed(0.02, 100, 0.05)  # sd = 0.2
    assert n == math.ceil((z * 0.2 / 0.05) ** 2)
    assert mde(0.2 / math.sqrt(n)) <= 0.05 < mde(0.2 / math.sqrt(n - 1))
    w = n_for_width(0.02, 100, 0.1, level=0.9)
    assert w == math.ceil((2 * 1.6448536269514722 * 0.2 / 0.1) ** 2)
    for bad in (0.0, -0.1):
        with pytest.raises(InvalidInputError, match="--mde: must be > 0"):
            n_needed(0.02, 100, bad)
        with pytest.raises(InvalidInputError, match="--target-width: must be > 0"):
            n_for_width(0.02, 100, bad)


def test_power_at_the_mde_is_eighty_percent_by_simulation() -> None:
    """2000 comparisons of 400 paired units whose true difference is the MDE of their
    per-unit spread: the paired t test rejects about 80% of them (binomial sd 0.009). A
    large pilot's estimated spread gives back those 400 units as ``n_needed``."""
    from scipy import stats

    rng = np.random.default_rng(7)
    n, sd = 400, 1.3
    d = mde(sd / math.sqrt(n))
    sims = rng.normal(d, sd, (2000, n))
    t = sims.mean(1) / (sims.std(1, ddof=1) / math.sqrt(n))
    power = np.mean(2 * stats.t.sf(np.abs(t), n - 1) < 0.05)
    assert 0.775 <= power <= 0.825, power
    pilot = paired_t(np.zeros(20_000), rng.normal(0, sd, 20_000))
    assert n_needed(pilot.se, 20_000, d) == pytest.approx(n, rel=0.04)
