"""Properties: confusion-matrix rows add up to the ground-truth counts, columns plus unmatched
predictions to the prediction counts; filtering an evaluator then computing equals computing
on the filtered input (datums and labels)."""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.detection import DetectionEvaluator, parse_datums
from assay.detection.confusion import EPSILON, confusion_counts

LABELS = ["cat", "dog", "bird"]


@st.composite
def _boxes(draw):
    x, y = draw(st.integers(0, 30)), draw(st.integers(0, 30))
    w, h = draw(st.integers(1, 15)), draw(st.integers(1, 15))
    return {"label": draw(st.sampled_from(LABELS)), "box": [x, y, x + w, y + h]}


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 6))
    gts, prs = [], []
    for i in range(n):
        g, p = [], []
        for _ in range(draw(st.integers(0, 4))):
            crowd = draw(st.booleans()) and draw(st.booleans())
            g.append({**draw(_boxes()), "iscrowd": crowd})
        for _ in range(draw(st.integers(0, 5))):
            score = draw(st.sampled_from([0.0, 0.1, 0.5, 0.5, 0.9, 1.0]))
            p.append({**draw(_boxes()), "score": score})
        gts.append({"uid": f"d{i}", "height": 50, "width": 50, "annotations": g})
        prs.append({"uid": f"d{i}", "annotations": p})
    return gts, prs


@settings(max_examples=60, deadline=None)
@given(datasets(), st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0]), min_size=1, max_size=3))
def test_confusion_matrix_rows_sum_to_groundtruth_counts(ds, scores):
    data = parse_datums(*ds)
    assume(len(data.groundtruths) + len(data.predictions) > 0)
    ious = [0.0, 0.3, 0.5, 1.0]
    matrix, ugt, upd = confusion_counts(data, "bbox", ious, scores)
    gts, dts = data.groundtruths, data.predictions
    K = len(data.labels)
    n_gt = np.bincount(gts.label[~gts.crowd], minlength=K)
    for ti in range(len(ious)):
        for si, s in enumerate(scores):
            assert (matrix[ti, si].sum(axis=1) + ugt[ti, si] == n_gt).all()
            live = (dts.score >= s) & (dts.score > EPSILON)
            n_pd = np.bincount(dts.label[live], minlength=K)
            assert (matrix[ti, si].sum(axis=0) + upd[ti, si] == n_pd).all()
            assert (ugt[ti, si] >= 0).all() and (upd[ti, si] >= 0).all()


METRICS = [
    "AP", "mAP", "AR", "mAR", "Counts", "Precision", "F1", "Accuracy",
    "ARAveragedOverScores", "ConfusionMatrix", "InterpolatedPrecisionRecallCurve",
    "PrecisionRecallCurve",
]  # fmt: skip


def _records(ms):
    return sorted((m.type, repr(sorted(m.parameters.items())), repr(m.value)) for m in ms)


@settings(max_examples=50, deadline=None)
@given(datasets(), st.data())
def test_filter_then_compute_equals_compute_on_filtered(ds, draw):
    gts, prs = ds
    uids = [g["uid"] for g in gts]
    chosen = draw.draw(st.lists(st.sampled_from(uids), min_size=1, unique=True))
    present = sorted(
        {a["label"] for r in gts + prs if r["uid"] in chosen for a in r["annotations"]}
    )
    assume(present)
    labels = draw.draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
    opts = dict(iou_thresholds=[0.3, 0.5], score_thresholds=[0.0, 0.5], zero_division=None)
    whole = DetectionEvaluator(**opts).add_datums(gts, prs)
    filtered = whole.filter(datums=chosen, labels=labels)

    def keep(records):
        return [
            {**r, "annotations": [a for a in r["annotations"] if a["label"] in labels]}
            for r in records
            if r["uid"] in chosen
        ]

    direct = DetectionEvaluator(**opts).add_datums(keep(gts), keep(prs))
    assert _records(filtered.compute(METRICS)) == _records(direct.compute(METRICS))
    # the evaluator it came from is unchanged
    assert whole.data.n_datums == len(uids)


def test_filter_refuses_unknown_names_and_keeps_options():
    import pytest

    from assay.errors import InvalidInputError

    gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 5, 5]}]}]
    ev = DetectionEvaluator(iou_thresholds=[0.5], score_thresholds=[0.25]).add_datums(gt, [])
    with pytest.raises(InvalidInputError, match="unknown datum uid 'zz'"):
        ev.filter(datums=["zz"])
    with pytest.raises(InvalidInputError, match="unknown label 'cow'"):
        ev.filter(labels=["cow"])
    with pytest.raises(InvalidInputError, match="not one string"):
        ev.filter(labels="cat")
    sub = ev.filter(labels=[("class", "cat")])
    assert sub.config() == ev.config()
    assert sub.compute(["Counts"]).get("Counts").value == {"tp": 0, "fp": 0, "fn": 1}
    assert ev.filter(datums=[]).is_empty


def test_new_types_do_not_depend_on_batching_merge_or_state():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from contract.cases_detection import _detection_batches

    batches = _detection_batches()
    kinds = [
        "Counts", "Accuracy", "ARAveragedOverScores", "mARAveragedOverScores", "ConfusionMatrix",
        "InterpolatedPrecisionRecallCurve", "Examples", "ConfusionMatrixWithExamples",
    ]  # fmt: skip
    opts = dict(iou_thresholds=[0.5, 0.75], score_thresholds=[0.0, 0.5])
    one = DetectionEvaluator(**opts)
    for g, p in batches:
        one.add_datums(g, p)
    a = DetectionEvaluator(**opts).add_datums(*batches[0])
    b = DetectionEvaluator(**opts)
    for g, p in batches[1:]:
        b.add_datums(g, p)
    merged = a.merge(b)
    restored = DetectionEvaluator.from_state(merged.state())
    want = _records(one.compute(kinds))
    assert len(want) > 0
    assert _records(merged.compute(kinds)) == want
    assert _records(restored.compute(kinds)) == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=40),
    st.sampled_from([1, 2, 64]),
)
def test_greedy_rounds_equal_the_sequential_pass(pairs, rounds):
    import assay.detection.confusion as cf

    pd = np.array([p for p, _ in pairs], dtype=np.int64)
    gt = np.array([g for _, g in pairs], dtype=np.int64)
    want, used_p, used_g = [], set(), set()
    for p, g in pairs:
        ok = p not in used_p and g not in used_g
        want.append(ok)
        if ok:
            used_p.add(p)
            used_g.add(g)
    old = cf._MAX_ROUNDS
    cf._MAX_ROUNDS = rounds  # also exercise the sequential finish
    try:
        got = cf.greedy_pairs(pd, gt, 8, 8)
    finally:
        cf._MAX_ROUNDS = old
    assert got.tolist() == want
