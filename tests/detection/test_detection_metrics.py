"""Metric records: hand-worked examples from the spec, properties, evaluator batches."""

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

from assay.detection import (
    DetectionEvaluator,
    coco_evaluate,
    compute_metrics,
    load_coco,
    parse_datums,
)
from assay.detection.geometry import box_iou, box_iou_matrix, raster_to_polygon
from assay.detection.params import CocoParams
from assay.testing.detection import make_coco


def B(x0, y0, x1, y1, label="cat", score=None):
    a = {"label": label, "box": [x0, y0, x1, y1]}
    if score is not None:
        a["score"] = score
    return a


def test_pr_curve_hand_worked():
    # datum a: 2 cats; predictions: a hit (0.9), a miss (0.6), a hit (0.3)
    # datum b: no cat ground truth; a cat prediction there (0.8) is a false positive (spec rule)
    gt = [
        {"uid": "a", "annotations": [B(0, 0, 10, 10), B(20, 20, 30, 30)]},
        {"uid": "b", "annotations": [B(0, 0, 10, 10, label="dog")]},
    ]
    pr = [
        {
            "uid": "a",
            "annotations": [
                B(0, 0, 10, 10, score=0.9),
                B(50, 50, 60, 60, score=0.6),
                B(20, 20, 30, 29, score=0.3),
            ],
        },
        {"uid": "b", "annotations": [B(0, 0, 10, 10, score=0.8)]},
    ]
    ms = compute_metrics(
        parse_datums(gt, pr), metrics=["PrecisionRecallCurve", "AP", "AR"], iou_thresholds=[0.5]
    )
    cat = ms.get("PrecisionRecallCurve").value["cat"]
    assert cat[0.25] == {
        "tp": 2,
        "fp": 2,
        "fn": 0,
        "precision": 0.5,
        "recall": 1.0,
        "f1_score": pytest.approx(2 / 3),
    }
    assert cat[0.7] == {"tp": 1, "fp": 1, "fn": 1, "precision": 0.5, "recall": 0.5, "f1_score": 0.5}
    # no prediction scores >= 0.95: precision is undefined, so is F1 (the ratio kernel's rule,
    # F1 being the harmonic mean of precision and recall) ...
    assert cat[0.95] == {
        "tp": 0,
        "fp": 0,
        "fn": 2,
        "precision": None,
        "recall": 0.0,
        "f1_score": None,
    }
    # ... unless zero_division says what a 0/0 is (then F1 = 2TP / (2TP + FP + FN) = 0)
    zd = compute_metrics(
        parse_datums(gt, pr),
        metrics=["PrecisionRecallCurve"],
        iou_thresholds=[0.5],
        zero_division=0,
    )
    assert zd.get("PrecisionRecallCurve").value["cat"][0.95] == {
        "tp": 0,
        "fp": 0,
        "fn": 2,
        "precision": 0.0,
        "recall": 0.0,
        "f1_score": 0.0,
    }
    # AP (101-point): ranked 0.9 TP, 0.8 FP, 0.6 FP, 0.3 TP -> precision 1 up to recall .5, then 0.5
    ap = ms.get("AP", label_value="cat", iou_threshold=0.5).value
    assert ap == pytest.approx((51 * 1.0 + 50 * 0.5) / 101, abs=1e-12)
    # AR over [0.5, 0.75]: the 0.3 box has IoU 0.9 -> both matched at both thresholds
    assert ms.get("AR", label_value="cat").value == pytest.approx(1.0)
    dog = ms.get("PrecisionRecallCurve").value["dog"][0.05]
    assert (dog["tp"], dog["fp"], dog["fn"]) == (0, 0, 1)


def test_detailed_pr_curve_observations():
    gt = [{"uid": "a", "annotations": [B(0, 0, 10, 10, label="dog"), B(20, 20, 30, 30)]}]
    pr = [
        {
            "uid": "a",
            "annotations": [
                B(0, 0, 10, 10, label="cat", score=0.9),  # over the dog: misclassification
                B(60, 60, 70, 70, label="cat", score=0.4),
            ],
        }
    ]  # nothing there: hallucination
    ms = compute_metrics(
        parse_datums(gt, pr), metrics=["DetailedPrecisionRecallCurve"], pr_curve_max_examples=2
    )
    v = ms.get("DetailedPrecisionRecallCurve").value
    cat, dog = v["cat"][0.3], v["dog"][0.3]
    assert cat["fp"]["observations"]["misclassifications"]["count"] == 1
    assert cat["fp"]["observations"]["hallucinations"]["count"] == 1
    assert cat["fn"]["observations"]["missed_detections"]["count"] == 1  # the cat at (20, 20)
    assert cat["tp"]["total"] == 0
    assert dog["fn"]["observations"]["misclassifications"]["count"] == 1  # a cat box sits on it
    ex = cat["fp"]["observations"]["hallucinations"]["examples"][0]
    assert ex["datum"] == "a" and ex["geometry"] == {
        "type": "box",
        "xmin": 60.0,
        "ymin": 60.0,
        "xmax": 70.0,
        "ymax": 70.0,
    }
    # above the misclassifying prediction's score the dog is simply missed
    assert v["dog"][0.95]["fn"]["observations"]["missed_detections"]["count"] == 1
    assert v["cat"][0.5]["fp"]["observations"]["hallucinations"]["count"] == 0


def test_map_and_mar_equal_coco_summary():
    gt, dt = make_coco(n_images=30, n_categories=4, seed=5)
    data = load_coco(gt, dt)
    stats = coco_evaluate(data).stats()
    coco_t = list(np.linspace(0.5, 0.95, 10))
    ms = compute_metrics(
        data, metrics=["mAPAveragedOverIOUs", "mAP", "mAR"], ar_iou_thresholds=coco_t
    )
    assert ms.get("mAPAveragedOverIOUs").value == pytest.approx(stats[0], abs=1e-12)
    assert ms.get("mAP", iou_threshold=0.5).value == pytest.approx(stats[1], abs=1e-12)
    assert ms.get("mAR").value == pytest.approx(stats[8], abs=1e-12)


def _random_datums(draw_boxes, n_datums, seed):
    rng = np.random.default_rng(seed)
    gts, prs = [], []
    for i in range(n_datums):
        g = []
        for _ in range(int(rng.integers(0, 4))):
            x, y = rng.uniform(0, 50, 2)
            g.append(
                B(x, y, x + rng.uniform(1, 30), y + rng.uniform(1, 30), label=str(rng.integers(3)))
            )
        p = []
        for _ in range(int(rng.integers(0, 6))):
            x, y = rng.uniform(0, 50, 2)
            p.append(
                B(
                    x,
                    y,
                    x + rng.uniform(1, 30),
                    y + rng.uniform(1, 30),
                    label=str(rng.integers(3)),
                    score=float(rng.integers(1, 10)) / 10,
                )
            )
        gts.append({"uid": f"d{i}", "annotations": g})
        prs.append({"uid": f"d{i}", "annotations": p})
    return gts, prs


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 12), cuts=st.lists(st.integers(0, 12), max_size=3), seed=st.integers(0, 10_000)
)
def test_batches_merge_equal_one_batch(n, cuts, seed):
    gts, prs = _random_datums(None, n, seed)
    names = ["AP", "mAP", "AR", "mAR", "PrecisionRecallCurve", "DetailedPrecisionRecallCurve"]
    whole = DetectionEvaluator().add_datums(gts, prs).compute(names)
    bounds = sorted({0, n, *[min(c, n) for c in cuts]})
    parts = [
        DetectionEvaluator().add_datums(gts[a:b], prs[a:b]) for a, b in zip(bounds, bounds[1:])
    ]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    got = merged.compute(names)
    # labels first appear in the same order, so records come out identical
    assert got.to_json() == whole.to_json()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(*[st.floats(0, 100)] * 2, *[st.floats(0.5, 50)] * 2), min_size=2, max_size=6)
)
def test_box_iou_properties(boxes):
    b = np.array(boxes, dtype=float)
    m = box_iou_matrix(b, b)
    assert ((m >= 0) & (m <= 1 + 1e-12)).all()
    np.testing.assert_allclose(m, m.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(m), 1.0, atol=1e-12)
    # same as shapely's exact areas
    polys = shapely.box(b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3])
    i, j = np.triu_indices(len(b), 1)
    inter = shapely.area(shapely.intersection(polys[i], polys[j]))
    union = shapely.area(shapely.union(polys[i], polys[j]))
    np.testing.assert_allclose(m[i, j], inter / union, atol=1e-9)


def test_box_iou_equals_pycocotools_bit_for_bit():
    rng = np.random.default_rng(0)
    d = rng.uniform(0, 50, (40, 4))
    g = rng.uniform(0, 50, (7, 4))
    crowd = np.array([0, 1, 0, 0, 1, 0, 0], bool)
    ref = np.asarray(mask_utils.iou(d.tolist(), g.tolist(), crowd.astype(int).tolist()))
    assert np.array_equal(box_iou_matrix(d, g, crowd), ref)
    assert box_iou(d[:1], g[:1], crowd[:1])[0] == ref[0, 0]


def test_raster_to_polygon_is_exact():
    rng = np.random.default_rng(1)
    m = np.asfortranarray((rng.random((12, 9)) < 0.4).astype(np.uint8))
    poly = raster_to_polygon(mask_utils.encode(m))
    assert poly.area == m.sum()
    other = np.asfortranarray(np.roll(m, 1, axis=1))
    p2 = raster_to_polygon(mask_utils.encode(other))
    pixel_iou = (m & other).sum() / (m | other).sum()
    assert shapely.area(shapely.intersection(poly, p2)) / shapely.area(
        shapely.union(poly, p2)
    ) == pytest.approx(pixel_iou)


def test_segm_mixed_kinds_raster_vs_polygon():
    m = np.zeros((20, 20), np.uint8, order="F")
    m[2:8, 3:9] = 1  # rows 2..7, cols 3..8: the square [3, 9] x [2, 8]
    r = mask_utils.encode(m)
    rle = {"size": [20, 20], "counts": r["counts"].decode()}
    gt = [{"uid": "a", "height": 20, "width": 20, "annotations": [{"label": "x", "mask_rle": rle}]}]
    pr = [
        {
            "uid": "a",
            "annotations": [
                {"label": "x", "score": 0.9, "polygon": [[[3, 2], [9, 2], [9, 5], [3, 5], [3, 2]]]}
            ],
        }
    ]
    data = parse_datums(gt, pr)
    ev = coco_evaluate(data, CocoParams(iou_type="segm", iou_thresholds=[0.5, 0.51]))
    # IoU = 18 / 36 = 0.5 exactly: matched at 0.5, not at 0.51
    assert ev.matching.dtm[0, :, 0].tolist() == [True, False]


def test_polygon_with_hole_against_box_and_raster():
    ring = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
    hole = [[3, 3], [7, 3], [7, 7], [3, 7], [3, 3]]
    m = np.zeros((12, 12), np.uint8, order="F")
    m[0:10, 0:10] = 1
    full = {"size": [12, 12], "counts": mask_utils.encode(m)["counts"].decode()}
    gt = [
        {
            "uid": "a",
            "height": 12,
            "width": 12,
            "annotations": [{"label": "x", "polygon": [ring, hole]}],
        }
    ]
    for pred in ({"box": [0, 0, 10, 10]}, {"mask_rle": full}):
        pr = [{"uid": "a", "annotations": [{"label": "x", "score": 0.9, **pred}]}]
        ev = coco_evaluate(
            parse_datums(gt, pr), CocoParams(iou_type="segm", iou_thresholds=[0.84, 0.8401])
        )
        assert ev.matching.dtm[0, :, 0].tolist() == [True, False]  # IoU = 84 / 100 exactly


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 10_000))
def test_rle_roundtrip_and_pixel_iou(h, w, seed):
    from assay.detection import mask_to_rle, rle_to_mask

    rng = np.random.default_rng(seed)
    a, b = rng.random((h, w)) < 0.5, rng.random((h, w)) < 0.5
    ra, rb = mask_to_rle(a), mask_to_rle(b)
    assert (rle_to_mask(ra) == a).all() and ra["size"] == [h, w] and isinstance(ra["counts"], str)
    if (a | b).any():
        want = (a & b).sum() / (a | b).sum()
        gt = [
            {"uid": "u", "height": h, "width": w, "annotations": [{"label": "x", "mask_rle": ra}]}
        ]
        pr = [{"uid": "u", "annotations": [{"label": "x", "score": 0.5, "mask_rle": rb}]}]
        data = parse_datums(gt, pr)
        from assay.detection.geometry import segm_iou

        got = segm_iou(data.predictions, data.groundtruths, np.array([0]), np.array([0]))[0]
        assert got == pytest.approx(want, abs=1e-12)
