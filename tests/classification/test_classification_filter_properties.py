"""Property tests: filtering by expression (metadata, ground truths, predictions), then
computing, equals computing on the input the filters describe; and the two expression forms
(pandas-query string, pyarrow Expression) select the same rows."""

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.classification import METRIC_TYPES, ClassificationEvaluator
from assay.errors import InvalidInputError

LABELS = ["a", "b", "c"]
SCORES = st.sampled_from([None, 0.0, 0.25, 0.5, 0.75, 1.0])
THRESHOLDS = [0.0, 0.5]
EMPTY = pd.DataFrame(columns=["uid", "value", "score"])


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 10))
    gts, pds = [], []
    for i in range(n):
        meta = {"site": draw(st.sampled_from(["x", "y"]))}
        w = draw(st.sampled_from([None, 0, 1, 2]))
        if w is not None:
            meta["w"] = w
        gts.append({"uid": f"u{i}", "value": draw(st.sampled_from(LABELS)), "metadata": meta})
        for lab in LABELS:
            s = draw(SCORES)
            if s is not None:
                pds.append({"uid": f"u{i}", "value": lab, "score": s})
    return pd.DataFrame(gts), pd.DataFrame(pds, columns=["uid", "value", "score"])


def _ev(hardmax):
    return ClassificationEvaluator(
        score_thresholds=THRESHOLDS, hardmax=hardmax, metrics=list(METRIC_TYPES),
        pr_curve_max_examples=2,
    )  # fmt: skip


def _records(ms):
    return sorted(repr(m.to_dict()) for m in ms)


SITE = st.sampled_from([None, "x", "y"])
MIN_W = st.sampled_from([None, 1, 2])
MIN_SCORE = st.sampled_from([None, 0.25, 0.5])
GT = st.sampled_from([None, ("a",), ("b", "c")])


@settings(max_examples=80, deadline=None)
@given(datasets(), SITE, MIN_W, GT, MIN_SCORE, st.booleans(), st.booleans())
def test_filter_then_compute_equals_compute_on_filtered_input(
    data, site, min_w, gt_labels, min_score, hardmax, arrow
):
    gts, pds = data
    meta = pd.DataFrame(list(gts.metadata))
    keep = np.ones(len(gts), bool)
    text, expr = [], []
    if site is not None:
        keep &= (meta.site == site).to_numpy()
        text.append(f"site == {site!r}")
        expr.append(pc.field("site") == site)
    if min_w is not None:
        w = meta["w"] if "w" in meta else pd.Series(np.nan, index=meta.index)
        keep &= (w >= min_w).fillna(False).to_numpy(bool)  # a missing value never passes
        text.append(f"w >= {min_w}")
        expr.append(pc.field("w") >= min_w)
    if gt_labels is not None:
        keep &= gts.value.isin(gt_labels).to_numpy()
    kept = pds[pds.uid.isin(gts.uid[keep])]
    if min_score is not None:
        kept = kept[kept.score >= min_score]
        keep &= gts.uid.isin(kept.uid).to_numpy()  # a datum left without predictions goes
    assume(keep.any())
    kw = {}
    if text:
        kw["datums"] = " and ".join(text) if not arrow else _and(expr)
    if gt_labels is not None:
        kw["groundtruths"] = (
            pc.field("gt_label").isin(list(gt_labels)) if arrow else f"label in {list(gt_labels)}"
        )
    if min_score is not None:
        kw["predictions"] = pc.field("pd_score") >= min_score if arrow else f"score >= {min_score}"
    view = _ev(hardmax).add(gts, pds).filter(**kw)
    direct = _ev(hardmax).add(gts[keep].drop(columns="metadata"), kept)
    assert _records(view.compute()) == _records(direct.compute())


def _and(parts):
    out = parts[0]
    for p in parts[1:]:
        out = out & p
    return out


def test_unknown_field_and_bad_expression_are_clear_errors():
    ev = ClassificationEvaluator().add(
        [{"uid": "a", "value": "x", "metadata": {"site": "s1"}}],
        [{"uid": "a", "value": "x", "score": 0.9}],
    )
    with pytest.raises(InvalidInputError, match=r"unknown field 'sitee' for datums.*site"):
        ev.filter(datums="sitee == 's1'")
    with pytest.raises(InvalidInputError, match=r"field 'zz'.*unknown field 'zz'"):
        ev.filter(predictions=pc.field("zz") > 1)
    with pytest.raises(InvalidInputError, match="bad filter expression"):
        ev.filter(datums="site ==")
    with pytest.raises(InvalidInputError, match="true or false"):
        ev.filter(datums="uid")
    with pytest.raises(InvalidInputError, match="unknown field 'score' for datums"):
        ev.filter(datums="score > 0.5")  # a datum has no score: filter predictions instead


def test_metadata_survives_state_and_merge():
    def batch(i, site):
        return (
            [{"uid": f"d{i}", "value": "a", "metadata": {"site": site, "w": i}}],
            [{"uid": f"d{i}", "value": "a", "score": 0.5 + i / 10}],
        )

    a = ClassificationEvaluator(metrics=["Examples"]).add(*batch(1, "x"))
    b = ClassificationEvaluator(metrics=["Examples"]).add(*batch(2, "y"))
    b.add([{"uid": "d3", "value": "a", "metadata": {"w": 2.5}}], EMPTY)
    merged = ClassificationEvaluator.from_state(a.merge(b).state())
    got = merged.filter(datums="w >= 2").compute()
    assert [m.parameters["datum_uid"] for m in got] == ["d2", "d3"]
    assert [m.parameters["datum_uid"] for m in merged.filter(datums="site == 'x'").compute()] == [
        "d1"
    ]


def test_bad_metadata_is_refused():
    gts = [{"uid": "a", "value": "x", "metadata": {"w": [1, 2]}}]
    with pytest.raises(InvalidInputError, match=r"row 1: field 'metadata.w'"):
        ClassificationEvaluator().add(gts, EMPTY)
    gts = [
        {"uid": "a", "value": "x", "metadata": {"w": 1}},
        {"uid": "b", "value": "x", "metadata": {"w": "one"}},
    ]
    with pytest.raises(InvalidInputError, match=r"metadata.w.*different types"):
        ClassificationEvaluator().add(gts, EMPTY)
    with pytest.raises(InvalidInputError, match="reserved"):
        gts = [{"uid": "a", "value": "x", "metadata": {"score": 1}}]
        ClassificationEvaluator().add(gts, EMPTY)


def test_backticks_name_a_field_that_is_not_an_identifier():
    gts = [
        {"uid": "a", "value": "x", "metadata": {"camera id": 1}},
        {"uid": "b", "value": "x", "metadata": {"camera id": 2}},
    ]
    pds = pd.DataFrame({"uid": ["a", "b"], "value": ["x", "x"], "score": [0.9, 0.8]})
    ev = ClassificationEvaluator(metrics=["Examples"]).add(gts, pds)
    by_text = ev.filter(datums="`camera id` == 2").compute()
    by_arrow = ev.filter(datums=pc.field("camera id") == 2).compute()
    assert [m.parameters["datum_uid"] for m in by_text] == ["b"]
    assert by_text.to_list() == by_arrow.to_list()
