"""Property: filtering by expressions over datum and annotation metadata, labels and scores,
then computing, equals computing on the datums and annotations the filters describe; the
string and pyarrow forms agree."""

import pyarrow.compute as pc
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_detection_properties_filters_cm import METRICS, _records, datasets

from assay.detection import DetectionEvaluator
from assay.errors import InvalidInputError

OPTS = dict(iou_thresholds=[0.3, 0.5], score_thresholds=[0.0, 0.5], max_detections=None)


@st.composite
def with_metadata(draw):
    gts, prs = draw(datasets())
    for g in gts:
        g["metadata"] = {"site": draw(st.sampled_from(["x", "y"]))}
        for a in g["annotations"]:
            a["metadata"] = {"hard": draw(st.booleans())}
    for p in prs:
        for a in p["annotations"]:
            if draw(st.booleans()):
                a["metadata"] = {"model": draw(st.sampled_from(["m1", "m2"]))}
    return gts, prs


@settings(max_examples=60, deadline=None)
@given(
    with_metadata(),
    st.sampled_from([None, "x"]),
    st.sampled_from([None, "cat"]),
    st.sampled_from([None, 0.5]),
    st.booleans(),
    st.booleans(),
)
def test_filter_then_compute_equals_compute_on_filtered(ds, site, label, min_score, easy, arrow):
    gts, prs = ds
    kw = {}
    if site is not None:
        kw["datums"] = pc.field("site") == site if arrow else f"site == {site!r}"
    gt_parts, gt_text = [], []
    if label is not None:
        gt_parts.append(pc.field("gt_label") != label)
        gt_text.append(f"label != {label!r}")
    if easy:
        gt_parts.append(~pc.field("hard"))
        gt_text.append("not hard")
    if gt_parts:
        expr = gt_parts[0] if len(gt_parts) == 1 else gt_parts[0] & gt_parts[1]
        kw["groundtruths"] = expr if arrow else " and ".join(gt_text)
    if min_score is not None:  # a missing metadata value never passes: no model, no pass
        kw["predictions"] = (
            (pc.field("pd_score") >= min_score) & (pc.field("model") == "m1")
            if arrow
            else f"score >= {min_score} and model == 'm1'"
        )

    def keep_gt(a):
        return (label is None or a["label"] != label) and not (easy and a["metadata"]["hard"])

    def keep_pd(a):
        return min_score is None or (
            a["score"] >= min_score and a.get("metadata", {}).get("model") == "m1"
        )

    chosen = [g["uid"] for g in gts if site is None or g["metadata"]["site"] == site]
    assume(chosen)
    # a field no annotation has is unknown (an error, tested below): name only fields present
    assume(not easy or any(g["annotations"] for g in gts))
    assume(min_score is None or any("metadata" in a for p in prs for a in p["annotations"]))
    direct_g = [
        {**g, "annotations": [a for a in g["annotations"] if keep_gt(a)]}
        for g in gts
        if g["uid"] in chosen
    ]
    direct_p = [
        {**p, "annotations": [a for a in p["annotations"] if keep_pd(a)]}
        for p in prs
        if p["uid"] in chosen
    ]
    filtered = DetectionEvaluator(**OPTS).add_datums(gts, prs).filter(**kw)
    direct = DetectionEvaluator(**OPTS).add_datums(direct_g, direct_p)
    assert _records(filtered.compute(METRICS)) == _records(direct.compute(METRICS))
    # Examples name the annotations by their position in the unfiltered input (as valor-lite
    # by uid), so compare how many of each kind
    assert _sizes(filtered.compute(["Examples"])) == _sizes(direct.compute(["Examples"]))


def _sizes(ms):
    kinds = ("true_positives", "false_positives", "false_negatives")
    return sorted(
        (repr(sorted(m.parameters.items())), [len(m.value[k]) for k in kinds]) for m in ms
    )


def test_bad_filters_are_clear_errors():
    gts = [{"uid": "a", "metadata": {"site": "x"},
            "annotations": [{"label": "cat", "box": [0, 0, 5, 5]}]}]  # fmt: skip
    ev = DetectionEvaluator().add_datums(gts, [])
    with pytest.raises(InvalidInputError, match="unknown field 'score' for ground truths"):
        ev.filter(groundtruths="score > 0.5")
    with pytest.raises(InvalidInputError, match="unknown field 'gt_label' for datums"):
        ev.filter(datums=pc.field("gt_label") == "cat")
    with pytest.raises(InvalidInputError, match="bad filter expression"):
        ev.filter(predictions="score >>> 1")
    with pytest.raises(InvalidInputError, match="metadata must be an object"):
        DetectionEvaluator().add_datums(
            [{"uid": "a", "annotations": [{"label": "c", "box": [0, 0, 1, 1], "metadata": 3}]}],
            [],
        )


def test_metadata_survives_state_and_merge():
    def batch(u, site):
        g = [
            {
                "uid": u,
                "metadata": {"site": site},
                "annotations": [{"label": "cat", "box": [0, 0, 5, 5], "metadata": {"hard": True}}],
            }
        ]
        p = [{"uid": u, "annotations": [{"label": "cat", "score": 0.9, "box": [0, 0, 5, 5]}]}]
        return g, p  # fmt: skip

    a = DetectionEvaluator().add_datums(*batch("a", "x"))
    b = DetectionEvaluator().add_datums(*batch("b", "y"))
    back = DetectionEvaluator.from_state(a.merge(b).state())
    assert back.filter(datums="site == 'y'").data.uids == ["b"]
    assert len(back.filter(groundtruths="not hard").data.groundtruths) == 0
