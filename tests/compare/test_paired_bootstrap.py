"""The paired bootstrap of two tallies against brute force: the same resample counts over
the shared units, each resample's units copied out and both runs' evaluators re-run on
them (ROC AUC and accuracy of the classification evaluator, runs given in different
orders, each with a unit the other lacks); the swap invariant by hypothesis."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.classification import ClassificationEvaluator
from assay.compare import pair_units, paired_bootstrap
from assay.errors import InvalidInputError
from assay.uncertainty.resampling import resample_counts
from assay.uncertainty.tally import Tally

N, B = 40, 60
rng = np.random.default_rng(3)
truth = np.where(rng.random(N + 1) < 0.45, "pos", "neg")
score_a = np.round(np.clip(rng.normal(0.4 + 0.2 * (truth == "pos"), 0.2), 0, 1), 2)
score_b = np.round(np.clip(rng.normal(0.4 + 0.3 * (truth == "pos"), 0.2), 0, 1), 2)


def _run(scores: np.ndarray, idx: np.ndarray, ids: bool = False) -> ClassificationEvaluator:
    ev = ClassificationEvaluator(metrics=["Accuracy", "ROCAUC"], score_thresholds=[0.5])
    uids = idx.tolist() if ids else None  # a resample repeats units: numbered by position
    return ev.add_arrays(truth[idx], scores[idx], labels=["neg", "pos"], uids=uids)


def _values(ev: ClassificationEvaluator) -> dict[tuple[str, str | None], float]:
    out = {}
    for m in ev.compute():
        if m.type in ("Accuracy", "ROCAUC") and m.value is not None:
            out[(m.type, m.parameters.get("label_value"))] = float(m.value)
    return out


def test_paired_bootstrap_is_the_bootstrap_of_the_paired_units() -> None:
    ids_a = np.arange(N)  # unit N only in B, unit 0 only in A; B's units in reverse order
    ids_b = np.arange(N, 0, -1)
    a = _run(score_a, ids_a, ids=True)
    b = _run(score_b, ids_b, ids=True)
    tallies_a, tallies_b = a.tally(), b.tally()
    got: dict = {}
    for ta, tb in zip(tallies_a, tallies_b):
        got |= paired_bootstrap(ta, tb, num_bootstrap=B, seed=5, level=0.9)
    pairing = pair_units(tallies_a[0], tallies_b[0])
    assert (pairing.n, pairing.only_a, pairing.only_b) == (N - 1, 1, 1)
    shared = np.arange(1, N)  # in A's order
    diffs = []
    for w in np.concatenate(list(resample_counts(np.ones(N - 1, np.int64), B, 5))):
        take = np.repeat(shared, w.astype(int))
        va, vb = _values(_run(score_a, take)), _values(_run(score_b, take))
        diffs.append([vb[k] - va[k] for k in (("Accuracy", None), ("ROCAUC", "pos"))])
    z = NormalDist().inv_cdf(0.95)
    whole_a, whole_b = _values(_run(score_a, shared)), _values(_run(score_b, shared))
    for j, (name, label) in enumerate((("Accuracy", None), ("ROCAUC", "pos"))):
        (key,) = [k for k in got if k[0] == name and (label is None or k[2] == label)]
        r = got[key]
        assert r.test == "paired_bootstrap" and r.n == N - 1
        assert r.diff == pytest.approx(whole_b[(name, label)] - whole_a[(name, label)], abs=1e-12)
        d = np.array(diffs)[:, j]
        # the normal interval with the bootstrap's standard error, level 0.9
        assert r.ci_method == "bootstrap_normal"
        assert r.ci == pytest.approx((r.diff - z * d.std(ddof=1), r.diff + z * d.std(ddof=1)))
        tail = min((d < 0).sum(), (d > 0).sum()) + (d == 0).sum() / 2
        assert r.p_value == pytest.approx(min(1.0, 2 * (tail + 1) / (B + 1)))
        assert r.se == pytest.approx(d.std(ddof=1), rel=1e-9)


def _accuracy(right: list[bool], ids: list[int]) -> Tally:
    cells = np.array(right, dtype=np.float64)[:, None]
    return Tally(
        (("Accuracy",),),
        lambda w: w @ cells / w.sum(1, keepdims=True),
        np.ones(len(ids), np.int64),
        ids=np.array(ids),
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), min_size=3, max_size=30), st.integers(0, 9)
)
def test_swapping_the_runs_negates_the_bootstrap(units: list, seed: int) -> None:
    ids = list(range(len(units)))
    a = _accuracy([u[0] for u in units], ids)
    b = _accuracy([u[1] for u in units], ids)
    fwd = paired_bootstrap(a, b, num_bootstrap=99, seed=seed)[("Accuracy",)]
    back = paired_bootstrap(b, a, num_bootstrap=99, seed=seed)[("Accuracy",)]
    assert fwd.ci is not None and back.ci is not None
    assert back.diff == pytest.approx(-fwd.diff, abs=1e-12)
    assert back.p_value == pytest.approx(fwd.p_value)
    assert back.ci == pytest.approx((-fwd.ci[1], -fwd.ci[0]), abs=1e-12)
    # the normal interval, symmetric about the difference: d +- z se (its p-value is the
    # percentile bootstrap's, which at a handful of units can disagree with it)
    z = NormalDist().inv_cdf(0.975)
    assert fwd.ci == pytest.approx((fwd.diff - z * fwd.se, fwd.diff + z * fwd.se), abs=1e-12)


def test_cluster_pairing_and_bad_ids() -> None:
    a = _accuracy([True, False, True, True], [0, 1, 2, 3])
    b = _accuracy([True, True, True, True], [0, 1, 2, 3])
    one = paired_bootstrap(a, b, num_bootstrap=50, clusters=np.zeros(4, np.intp))[("Accuracy",)]
    assert one.ci == pytest.approx((0.25, 0.25))  # one cluster: every resample is the data
    assert paired_bootstrap(a, _accuracy([True], [9]), num_bootstrap=10) == {}
    with pytest.raises(InvalidInputError, match="not unique"):
        paired_bootstrap(a, _accuracy([True, False], [1, 1]))
