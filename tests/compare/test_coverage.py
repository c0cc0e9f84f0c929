"""A small seeded run of the coverage / type-I simulation (the full one, 500 repetitions
each: benchmarks/compare_coverage.py, table in docs/compare.md). 120 repetitions of each
kind: a 95% interval covers in 88-100% of them and a 0.05 test rejects in at most 11%
(binomial sd 2 points) unless the method is wrong; an unpaired interval or a test that
ignores the pairing fails these bounds. Each test's interval is its own
(``Paired.ci_method``): McNemar's Newcombe's hybrid score interval, the paired t's t
interval, DeLong's normal one, the paired bootstrap's the normal interval with its
standard error. A test without an interval counts as not covering."""

from __future__ import annotations

import numpy as np
import pytest

from assay.scoring import quadratic_weighted_kappa
from assay.testing.compare_sim import _qwk_tally, simulate

REPS = 120


def _rates(name: str, reps: int) -> dict[str, tuple[float, float]]:
    cover: dict[str, list[bool | None]] = {}
    reject: dict[str, list[bool | None]] = {}
    for i in range(reps):
        for null, into in ((False, cover), (True, reject)):
            out = simulate(name, np.random.default_rng([7, i, int(null)]), 200, seed=i, null=null)
            for test, (covered, p) in out.items():
                into.setdefault(test, []).append(covered if not null else bool(p < 0.05))
    return {
        t: (float(np.mean([c is True for c in cover[t]])), float(np.mean(reject[t]))) for t in cover
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["accuracy", "roc_auc", "qwk", "judge", "win_rate"])
def test_paired_intervals_cover_and_tests_hold_their_level(name: str) -> None:
    for test, (cov, rej) in _rates(name, REPS).items():
        assert 0.88 <= cov <= 1.0, (name, test, cov)
        assert rej <= 0.11, (name, test, rej)


@pytest.mark.slow
def test_map_paired_bootstrap_holds_its_level() -> None:
    """mAP's truth needs a 20000-image draw: here only the type-I side, 40 repetitions."""
    p = [
        simulate("map", np.random.default_rng([8, i]), 200, seed=i, null=True)["paired_bootstrap"][
            1
        ]
        for i in range(40)
    ]
    assert np.mean(np.array(p) < 0.05) <= 0.15
    assert 0.3 <= float(np.median(p)) <= 0.7  # null p-values spread over [0, 1]


def test_the_simulated_qwk_is_the_scoring_domains() -> None:
    rng = np.random.default_rng(0)
    h = rng.integers(1, 6, 80).astype(float)
    m = h + rng.normal(0, 0.7, 80)
    assert _qwk_tally(h, m).estimate()[0] == pytest.approx(quadratic_weighted_kappa(h, m))
