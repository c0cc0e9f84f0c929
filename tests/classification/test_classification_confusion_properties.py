"""Property tests: confusion-matrix rows, hardmax=False counts, and filters."""

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.classification import METRIC_TYPES, ClassificationEvaluator

LABELS = ["a", "b", "c", "d"]
SCORES = st.sampled_from([None, 0.0, 0.25, 0.5, 0.75, 1.0])  # None: label not predicted
THRESHOLDS = [0.0, 0.25, 0.5, 1.0]


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 4))
    gts, pds = [], []
    for i in range(n):
        gts.append({"uid": f"u{i}", "value": LABELS[draw(st.integers(0, k - 1))]})
        for lab in LABELS[:k]:
            s = draw(SCORES)
            if s is not None:
                pds.append({"uid": f"u{i}", "value": lab, "score": s})
    pds = pd.DataFrame(pds, columns=["uid", "value", "score"])
    return pd.DataFrame(gts), pds


def _evaluator(hardmax, metrics=None):
    return ClassificationEvaluator(
        score_thresholds=THRESHOLDS, hardmax=hardmax, metrics=metrics, pr_curve_max_examples=2
    )


@settings(max_examples=60, deadline=None)
@given(datasets())
def test_hardmax_rows_sum_to_ground_truth_counts(data):
    gts, pds = data
    ms = _evaluator(True, ["ConfusionMatrix"]).add(gts, pds).compute()
    truth = gts.value.value_counts()
    for m in ms:
        cm, um = m.value["confusion_matrix"], m.value["unmatched_ground_truths"]
        for g, row in cm.items():
            assert sum(row.values()) + um[g] == truth.get(g, 0)


@settings(max_examples=60, deadline=None)
@given(datasets())
def test_soft_counts_equal_per_label_binary_counts(data):
    gts, pds = data
    ev = _evaluator(False, ["Counts", "ConfusionMatrix"]).add(gts, pds)
    ms = ev.compute()
    truth = dict(zip(gts.uid, gts.value))
    for m in ms.filter("Counts"):
        lab, t = m.parameters["label_value"], m.parameters["score_threshold"]
        passing = pds[(pds.value == lab) & (pds.score >= t)].uid
        tp = sum(truth[u] == lab for u in passing)
        fp = len(passing) - tp
        fn = sum(v == lab for v in truth.values()) - tp
        assert m.value == {"tp": tp, "fp": fp, "fn": fn, "tn": len(truth) - tp - fp - fn}
        # the soft confusion matrix's column for the label holds the same TP and FP
        cm = ms.get("ConfusionMatrix", score_threshold=t).value["confusion_matrix"]
        assert cm[lab][lab] == tp
        assert sum(row[lab] for g, row in cm.items() if g != lab) == fp


def _records(ms):
    return sorted(m.to_dict().__repr__() for m in ms)


ALL = list(METRIC_TYPES)


@settings(max_examples=60, deadline=None)
@given(datasets(), st.data(), st.booleans())
def test_filter_then_compute_equals_compute_on_filtered_input(data, draw, hardmax):
    gts, pds = data
    uids = draw.draw(st.lists(st.sampled_from(list(gts.uid)), unique=True) | st.none())
    labels = draw.draw(st.lists(st.sampled_from(LABELS), unique=True) | st.none())
    keep = gts
    if uids is not None:
        keep = keep[keep.uid.isin(uids)]
    if labels is not None:
        keep = keep[keep.value.isin(labels)]
    kept_pds = pds[pds.uid.isin(keep.uid)]
    if labels is not None:
        kept_pds = kept_pds[kept_pds.value.isin(labels)]
    assume(len(keep) > 0)
    ev = _evaluator(hardmax, ALL).add(gts, pds)
    view = ev.filter(datums=uids, labels=labels)
    direct = _evaluator(hardmax, ALL).add(keep, kept_pds)
    assert _records(view.compute()) == _records(direct.compute())
    assert len(view.compute()) > 0
    # the filtered view is an ordinary evaluator: the original is untouched
    assert _records(ev.compute()) == _records(_evaluator(hardmax, ALL).add(gts, pds).compute())


def test_filter_keeps_datums_numbered_by_position():
    ev = ClassificationEvaluator(metrics=["Examples"]).add_arrays(
        ["a", "b", "a"], np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]]), labels=["a", "b"]
    )
    ms = ev.filter(datums=[2]).compute()
    assert [m.parameters["datum_uid"] for m in ms] == ["2"]
    assert ms[0].value["false_positives"] == ["b"]


@settings(max_examples=30, deadline=None)
@given(datasets(), st.integers(1, 11), st.booleans())
def test_examples_do_not_depend_on_batches_or_merge_order(data, cut, hardmax):
    gts, pds = data
    assume(cut < len(gts))
    metrics = ["ConfusionMatrixWithExamples", "Examples"]
    first, second = gts.iloc[:cut], gts.iloc[cut:]

    def part(g):
        return _evaluator(hardmax, metrics).add(g, pds[pds.uid.isin(g.uid)])

    whole = _evaluator(hardmax, metrics).add(gts, pds).compute()
    forward = part(first).merge(part(second)).compute()
    backward = part(second).merge(part(first)).compute()
    assert forward.to_list() == whole.to_list() == backward.to_list()
