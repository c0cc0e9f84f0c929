"""Semantic segmentation: IoU / mIoU / confusion counts, against valor-lite and by hand."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.segmentation import (
    SegmentationEvaluator,
    iou_from_confusion,
    mask_iou,
    mean_iou,
    pixel_confusion,
)

valor = pytest.importorskip("valor_lite.semantic_segmentation")


def test_hand_worked():
    g = np.array([[1, 1, 0], [2, 2, 0]])
    p = np.array([[1, 0, 0], [2, 2, 2]])
    c = pixel_confusion(g, p, 2)
    assert c.tolist() == [[1, 0, 1], [1, 1, 0], [0, 0, 2]]
    assert iou_from_confusion(c).tolist() == [0.5, 2 / 3]
    assert mean_iou(c) == pytest.approx((0.5 + 2 / 3) / 2)
    assert mask_iou(g == 1, p == 1) == 0.5
    with pytest.raises(UndefinedMetricError):
        mask_iou(np.zeros(3, bool), np.zeros(3, bool))


def _maps(rng, n, shape, n_labels):
    return [
        (rng.integers(0, n_labels + 1, shape), rng.integers(0, n_labels + 1, shape))
        for _ in range(n)
    ]


def test_matches_valor_lite():
    rng = np.random.default_rng(0)
    labels = ["sky", "road", "car"]
    maps = _maps(rng, 6, (17, 23), 3)
    ev = SegmentationEvaluator()
    segs = []
    for i, (g, p) in enumerate(maps):
        ev.add_label_maps(f"d{i}", g, p, labels=labels)
        segs.append(
            valor.Segmentation(
                uid=f"d{i}",
                groundtruths=g.astype(np.uint16),
                predictions=p.astype(np.uint16),
                labels=labels,
            )
        )
    loader = valor.Loader.in_memory()
    loader.add_data(segs)
    res = loader.finalize().compute_precision_recall_iou()
    theirs = {
        m.to_dict()["type"]: m.to_dict()
        for v in res.values()
        for m in v
        if m.to_dict()["type"] == "mIOU"
    }
    ious = [m.to_dict() for v in res.values() for m in v if m.to_dict()["type"] == "IOU"]
    ms = ev.compute()
    assert ms.get("mIOU").value == pytest.approx(theirs["mIOU"]["value"], abs=1e-12)
    for m in ious:
        assert ms.get("IOU", label_value=m["parameters"]["label"]).value == pytest.approx(
            m["value"], abs=1e-12
        )
    assert len(ious) == 3


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), cut=st.integers(0, 5))
def test_merge_equals_one_pass(seed, cut):
    rng = np.random.default_rng(seed)
    maps = _maps(rng, 5, (6, 7), 3)
    # batches may declare labels in different orders
    names = [["a", "b", "c"], ["c", "a", "b"]]
    one, left, right = SegmentationEvaluator(), SegmentationEvaluator(), SegmentationEvaluator()
    for i, (g, p) in enumerate(maps):
        perm = names[i % 2]
        remap = np.array([0] + [perm.index(x) + 1 for x in ["a", "b", "c"]])
        one.add_label_maps(i, remap[g], remap[p], labels=perm)
        (left if i < cut else right).add_label_maps(i, remap[g], remap[p], labels=perm)
    a, b = one.compute(), left.merge(right).compute()
    for lab in "abc":
        x, y = a.get("IOU", label_value=lab).value, b.get("IOU", label_value=lab).value
        assert x == y or (x is None and y is None)
        assert 0 <= x <= 1
    assert a.get("mIOU").value == b.get("mIOU").value


def test_absent_label_is_undefined_and_left_out_of_miou():
    ev = SegmentationEvaluator().add_label_maps(
        "x", np.array([1, 0]), np.array([1, 0]), labels=["a", "ghost"]
    )
    ms = ev.compute()
    assert ms.get("IOU", label_value="ghost").value is None
    assert ms.get("mIOU").value == 1.0
    cm = ms.get("ConfusionMatrix").value
    assert cm["labels"] == ["(background)", "a", "ghost"] and cm["counts"][1][1] == 1


def _rle(h, w, rows, cols):
    m = np.zeros((h, w), np.uint8, order="F")
    m[rows, cols] = 1
    return {"size": [h, w], "counts": mask_utils.encode(m)["counts"].decode()}


def test_jsonl_records_and_errors():
    gt = [
        {
            "uid": "a",
            "height": 4,
            "width": 4,
            "annotations": [
                {"label": "road", "mask_rle": _rle(4, 4, slice(0, 2), slice(0, 4))},
                {"label": "car", "box": [0, 2, 2, 4]},
            ],
        }
    ]
    pr = [
        {
            "uid": "a",
            "annotations": [{"label": "road", "mask_rle": _rle(4, 4, slice(0, 4), slice(0, 4))}],
        }
    ]
    ms = SegmentationEvaluator().add(gt, pr).compute()
    assert ms.get("IOU", label_value="road").value == 0.5
    assert ms.get("IOU", label_value="car").value == 0.0
    bad = [
        {
            "uid": "a",
            "annotations": [{"label": "road", "mask_rle": _rle(3, 3, slice(0, 1), slice(0, 1))}],
        }
    ]
    with pytest.raises(InvalidInputError, match="datum 'a' annotation 0.*differs"):
        SegmentationEvaluator().add(gt, bad)
    overlap = [
        {
            "uid": "a",
            "annotations": [
                {"label": "road", "box": [0, 0, 2, 2]},
                {"label": "car", "box": [1, 1, 2, 2]},
            ],
        }
    ]
    with pytest.raises(InvalidInputError, match="overlaps"):
        SegmentationEvaluator().add(gt, overlap)
    with pytest.raises(InvalidInputError, match="unknown datum"):
        SegmentationEvaluator().add(gt, [{"uid": "q", "annotations": []}])
