"""The paired comparison of runs' records (:mod:`assay.compare.runs`) and ranks
(:mod:`assay.compare.ranks`) on evaluators rebuilt from their kept units."""

from __future__ import annotations

import numpy as np
import pytest

from assay.compare import paired_bootstrap
from assay.compare.ranks import letters, ranks_of
from assay.compare.runs import RunUnits, paired_records, tally_key
from assay.detection import DetectionEvaluator, load_coco
from assay.results import Metric
from assay.store.units import pack_state, rebuild, unpack_state
from assay.testing.detection import make_coco


def test_generic_key_match_by_parameter_values():
    keys = [("AP", "k", "cat", 0.5, 0.0), ("AP", "k", "dog", 0.5, 0.0), ("mAP", "k", None, 0.5)]
    m = Metric("AP", 0.3, {"label_key": "k", "label_value": "dog", "iou_threshold": 0.5,
                           "score_threshold": 0.0, "n": 4})  # fmt: skip
    assert tally_key(object(), m, keys) == keys[1]
    assert tally_key(object(), Metric("mAP", 0.3, {"label_key": "k", "iou_threshold": 0.5}), keys)
    # the values 1 and 1.0 are not the same parameter: no key of another type's value
    one = [("Acc", 1, None), ("Acc", 1.0, None)]
    assert tally_key(object(), Metric("Acc", 0.5, {"x": 1}), one) == one[0]
    # two keys equally good: none chosen
    assert tally_key(object(), Metric("AP", 0.1, {"label_key": "k"}), keys) is None


def test_state_codec_keeps_every_dtype():
    state = {
        "config": np.array('{"a": 1}'),
        "f": np.linspace(0, 1, 7).reshape(7, 1),
        "i": np.arange(5, dtype=np.int32),
        "b": np.array([True, False]),
        "s": np.array(["x", "yy"]),
        "o": np.array(["é", "b"], dtype=object),
        "mixed": np.array([1, "a", None], dtype=object),
        "empty": np.zeros((0, 3)),
    }
    back = unpack_state(pack_state(state))
    assert sorted(back) == sorted(state)
    for k, v in state.items():
        assert back[k].shape == v.shape and back[k].tolist() == v.tolist(), k
        assert (back[k].dtype == object) == (v.dtype == object), k


def _detection(seed: int, drop: int = 0) -> DetectionEvaluator:
    gt, dt = make_coco(n_images=30, n_categories=3, dets_per_image=12, seed=0)
    rng = np.random.default_rng(seed)
    kept = [d for d in dt if rng.random() > 0.15]  # another model: other detections
    return DetectionEvaluator().add(load_coco(gt, kept))


def test_detection_units_rebuild_and_pair_with_the_engine():
    a, b = _detection(1), _detection(2)
    ra = rebuild("assay.detection.evaluator:DetectionEvaluator", pack_state(a.state()))
    rb = rebuild("assay.detection.evaluator:DetectionEvaluator", pack_state(b.state()))
    ma, mb = a.compute(), b.compute()
    assert ra.compute() == ma
    rows = {}
    for m in ma:
        if m.type == "mAP" and isinstance(m.value, float):
            other = mb.get(
                "mAP",
                **{
                    k: v
                    for k, v in m.parameters.items()
                    if k in ("label_key", "iou_threshold", "score_threshold")
                },
            )
            rows[(m.type, m.parameters.get("iou_threshold"))] = (m, other)  # fmt: skip
    assert rows
    found = paired_records(RunUnits(ra), RunUnits(rb), rows, num_bootstrap=200, seed=3)
    assert found.paired and found.n_paired == 30 and found.only_a == found.only_b == 0
    direct = paired_bootstrap(a.tally()[0], b.tally()[0], num_bootstrap=200, seed=3)
    for row, (m, other) in rows.items():
        res = found.results[row]
        assert res.test == "paired_bootstrap"
        assert res.diff == pytest.approx(other.value - m.value, abs=1e-12)
        key = tally_key(a, m, a.tally()[0].keys)
        assert res.ci == direct[key].ci and res.p_value == direct[key].p_value


def test_ranks_and_letters():
    assert ranks_of(np.array([[0.2, 0.5, 0.5], [0.9, 0.1, np.nan]])).tolist() == [
        [3, 1, 1],
        [1, 2, 3],
    ]
    assert ranks_of(np.array([0.2, 0.5]), lower_is_better=True).tolist() == [1, 2]
    # nothing separated: one group; everything separated: one letter each
    assert letters([3.0, 2.0, 1.0], lambda i, j: False) == ["a", "a", "a"]
    assert letters([3.0, 2.0, 1.0], lambda i, j: True) == ["a", "b", "c"]
    assert letters([1.0, 3.0, 2.0], lambda i, j: {i, j} == {0, 1}) == ["b", "a", "ab"]


class _Scores:
    """A toy evaluator: the mean of per-item scores, a tally over items and the per-unit
    hook (``lie``: the hook's values do not give the record)."""

    tally_where = ()

    def __init__(self, ids, x, lie=False):
        self.ids, self.x, self.lie = np.asarray(ids), np.asarray(x, float), lie

    def tally(self):
        from assay.uncertainty.tally import Tally

        cells = np.column_stack([self.x, np.ones_like(self.x)])
        return [Tally((("Mean",),), lambda w: (w @ cells)[:, :1] / (w @ cells)[:, 1:],
                      np.ones(self.x.size, np.int64), ids=self.ids)]  # fmt: skip

    def unit_values(self, key):
        return "paired_t", self.ids, self.x + (1.0 if self.lie else 0.0), None


def test_paired_t_on_shared_units_against_scipy_and_the_guard():
    from scipy import stats

    rng = np.random.default_rng(7)
    q = rng.normal(5, 1, 80)
    xa, xb = q + rng.normal(0, 1, 80), q + 0.3 + rng.normal(0, 1, 80)
    ids = np.array([f"q{i}" for i in range(80)])
    a, b = _Scores(ids[:70], xa[:70]), _Scores(ids[10:][::-1], xb[10:][::-1])
    rec = {"m": (Metric("Mean", float(xa[:70].mean())), Metric("Mean", float(xb[10:].mean())))}
    found = paired_records(RunUnits(a), RunUnits(b), rec, num_bootstrap=300, seed=1)
    res = found.results["m"]
    ref = stats.ttest_rel(xb[10:70], xa[10:70])
    assert res.test == "paired_t" and res.n == 60
    assert (found.n_paired, found.only_a, found.only_b) == (60, 10, 10)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.diff == pytest.approx((xb[10:70] - xa[10:70]).mean(), abs=1e-12)
    ci = ref.confidence_interval(0.95)  # the paired t test's own interval
    assert res.ci_method == "t" and res.ci == pytest.approx((ci.low, ci.high), rel=1e-9)
    liar = _Scores(ids[10:][::-1], xb[10:][::-1], lie=True)
    res = paired_records(RunUnits(a), RunUnits(liar), rec, num_bootstrap=300, seed=1).results
    assert res["m"].test == "paired_bootstrap"  # values that do not give the record: unused


def test_studentized_interval_of_a_mean_difference():
    from scipy import stats

    from assay.testing.compare_sim import _mean_tally

    rng = np.random.default_rng(11)
    q = rng.normal(0, 1, 400)
    xa, xb = q + rng.normal(0, 1, 400), q + 0.2 + rng.normal(0, 1, 400)
    ta, tb = _mean_tally(xa), _mean_tally(xb)
    res = paired_bootstrap(ta, tb, num_bootstrap=2000, seed=2, studentized=True)[("mean",)]
    perc = paired_bootstrap(ta, tb, num_bootstrap=2000, seed=2)[("mean",)]
    d = xb - xa
    ci = stats.ttest_rel(xb, xa).confidence_interval(0.95)
    assert res.ci[0] < d.mean() < res.ci[1]
    # the bootstrap-t of a mean is close to the t interval (the jackknife se of a mean
    # difference is sd(d) / sqrt(n) exactly); the p-value stays the percentile bootstrap's
    assert res.ci == pytest.approx((ci.low, ci.high), abs=0.2 * d.std() / 20)
    assert res.p_value == perc.p_value and res.ci != perc.ci
