"""Differential tests: assay's COCO engine against pycocotools COCOeval (bbox and segm)."""

import contextlib
import copy
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from assay.detection.compute import coco_evaluate
from assay.detection.io import load_coco
from assay.detection.params import CocoParams
from assay.testing.detection import make_coco

TOL = 1e-9


def run_pycocotools(gt, dt, iou_type, **params):
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        res = coco.loadRes(copy.deepcopy(dt))
        ev = COCOeval(coco, res, iou_type)
        for k, v in params.items():
            setattr(ev.params, k, v)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def per_class_ap(precision, k):
    s = precision[:, :, k, 0, -1]
    return float(np.mean(s[s > -1])) if (s > -1).any() else -1.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_matches_pycocotools_exactly(seed, iou_type):
    segm = iou_type == "segm"
    gt, dt = make_coco(
        n_images=25 if segm else 60, n_categories=6, dets_per_image=30, segm=segm, seed=seed
    )
    # the generated data must exercise the awkward cases
    assert any(a["iscrowd"] for a in gt["annotations"])
    img_with_gt = {a["image_id"] for a in gt["annotations"]}
    assert len(img_with_gt) < len(gt["images"])  # empty images
    assert {6} - {d["category_id"] for d in dt}  # a category with no detection
    peer = run_pycocotools(gt, dt, iou_type)
    ours = coco_evaluate(load_coco(gt, dt, iou_type=iou_type), CocoParams(iou_type=iou_type))
    K = len(peer.params.catIds)
    np.testing.assert_allclose(ours.stats(), peer.stats, atol=TOL, rtol=0)
    assert len(peer.stats) == 12  # values compared
    np.testing.assert_allclose(ours.precision[:, :, :K], peer.eval["precision"], atol=TOL, rtol=0)
    np.testing.assert_allclose(ours.recall[:, :K], peer.eval["recall"], atol=TOL, rtol=0)
    assert peer.eval["precision"].size > 0 and peer.eval["recall"].size > 0  # values compared
    mine = ours.per_label_ap()
    for k in range(K):
        assert abs(mine[k] - per_class_ap(peer.eval["precision"], k)) <= TOL
    # stats are not all trivial
    assert 0 < ours.stats()[0] < 1 and ours.stats()[8] > 0
    # the summary-only path (precision for the largest max-dets only) gives the same 12 numbers
    fast = coco_evaluate(
        load_coco(gt, dt, iou_type=iou_type), CocoParams(iou_type=iou_type), all_precision=False
    )
    np.testing.assert_allclose(fast.stats(), peer.stats, atol=TOL, rtol=0)
    np.testing.assert_allclose(fast.recall[:, :K], peer.eval["recall"], atol=TOL, rtol=0)


def test_custom_params_match_pycocotools():
    gt, dt = make_coco(n_images=40, n_categories=5, dets_per_image=25, seed=11)
    thr = np.array([0.3, 0.5, 0.9, 1.0])
    areas = [[0, 1e10], [0, 50.0**2], [50.0**2, 1e10]]
    peer = run_pycocotools(
        gt,
        dt,
        "bbox",
        iouThrs=thr,
        areaRng=areas,
        areaRngLbl=["all", "small", "large"],
        maxDets=[2, 5, 20],
    )
    params = CocoParams(
        iou_thresholds=thr,
        area_ranges=(("all", 0, 1e10), ("small", 0, 2500.0), ("large", 2500.0, 1e10)),
        max_dets=(2, 5, 20),
    )
    ours = coco_evaluate(load_coco(gt, dt), params)
    K = len(peer.params.catIds)
    np.testing.assert_allclose(ours.precision[:, :, :K], peer.eval["precision"], atol=TOL, rtol=0)
    np.testing.assert_allclose(ours.recall[:, :K], peer.eval["recall"], atol=TOL, rtol=0)
    assert peer.eval["precision"].size > 0 and peer.eval["recall"].size > 0  # values compared


def test_crowd_region_absorbs_detections_and_ties_take_the_later_ground_truth():
    # two identical ground truths: COCOeval gives the first detection the *later* one (ties)
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": 2,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": 3,
                "image_id": 1,
                "category_id": 1,
                "bbox": [50, 50, 40, 40],
                "area": 1600,
                "iscrowd": 1,
            },
        ],
    }
    dt = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [60, 60, 10, 10], "score": 0.8},
        {"image_id": 1, "category_id": 1, "bbox": [61, 61, 10, 10], "score": 0.7},
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.6},
    ]
    data = load_coco(gt, dt)
    ours = coco_evaluate(data)
    peer = run_pycocotools(gt, dt, "bbox")
    np.testing.assert_allclose(ours.stats(), peer.stats, atol=TOL, rtol=0)
    assert len(peer.stats) == 12  # values compared
    m = ours.matching
    first = np.flatnonzero(data.predictions.score[m.det] == 0.9)[0]
    crowd_hits = np.flatnonzero(np.isin(data.predictions.score[m.det], [0.8, 0.7]))
    assert m.dtm[0, 0, first] and m.dt_ignore[0, 0, crowd_hits].all()  # crowd: matched and ignored
    assert ours.stats()[0] == pytest.approx(1.0)  # two TPs, crowd hits ignored


def test_no_detections_and_no_groundtruths_give_minus_one_like_cocoeval():
    gt, _ = make_coco(n_images=5, seed=3)
    ours = coco_evaluate(load_coco(gt, []))
    assert (ours.stats()[[0, 8]] == 0).all()  # ground truths but no detections: AP = AR = 0
    gt_empty = {"images": gt["images"], "annotations": [], "categories": gt["categories"]}
    _, dt = make_coco(n_images=5, seed=3)
    ours = coco_evaluate(load_coco(gt_empty, dt))
    assert (ours.stats() == -1).all()


@st.composite
def tiny_coco(draw):
    """Small COCO datasets built to collide: integer boxes (equal IoUs), few score values (ties),
    crowds, duplicates, all three area ranges, images without ground truths or detections."""
    n_img = draw(st.integers(1, 4))
    n_cat = draw(st.integers(1, 3))
    size = st.sampled_from([2, 5, 20, 40, 100, 150])
    anns, dets = [], []
    for img in range(1, n_img + 1):
        for _ in range(draw(st.integers(0, 5))):
            x, y = draw(st.integers(0, 60)), draw(st.integers(0, 60))
            w, h = draw(size), draw(size)
            box = [x, y, w, h]
            cat = draw(st.integers(1, n_cat))
            crowd = int(draw(st.integers(0, 5)) == 0)
            for _ in range(1 + int(draw(st.integers(0, 4)) == 0)):  # sometimes an exact duplicate
                anns.append(
                    {
                        "id": len(anns) + 1,
                        "image_id": img,
                        "category_id": cat,
                        "bbox": box,
                        "area": float(w * h),
                        "iscrowd": crowd,
                    }
                )
            for _ in range(draw(st.integers(0, 3))):  # detections near this object
                dx, dy = draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
                dets.append(
                    {
                        "image_id": img,
                        "category_id": draw(st.integers(1, n_cat)),
                        "bbox": [x + dx, y + dy, max(1, w + dx), max(1, h + dy)],
                        "score": draw(st.sampled_from([0.2, 0.5, 0.5, 0.9])),
                    }
                )
        for _ in range(draw(st.integers(0, 2))):  # background detections
            dets.append(
                {
                    "image_id": img,
                    "category_id": draw(st.integers(1, n_cat)),
                    "bbox": [
                        draw(st.integers(0, 90)),
                        draw(st.integers(0, 90)),
                        draw(size),
                        draw(size),
                    ],
                    "score": draw(st.sampled_from([0.2, 0.5, 0.9])),
                }
            )
    gt = {
        "images": [{"id": i, "width": 300, "height": 300} for i in range(n_img, 0, -1)],
        "categories": [{"id": c, "name": f"c{c}"} for c in range(1, n_cat + 1)],
        "annotations": anns,
    }
    return gt, dets


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_coco(), st.sampled_from([(1, 10, 100), (1, 2, 3)]))
def test_random_collisions_match_pycocotools(case, max_dets):
    gt, dt = case
    if not dt:
        return  # pycocotools' loadRes cannot take an empty list
    peer = run_pycocotools(gt, dt, "bbox", maxDets=list(max_dets))
    ours = coco_evaluate(load_coco(gt, dt), CocoParams(max_dets=max_dets))
    K = len(peer.params.catIds)
    np.testing.assert_allclose(ours.precision[:, :, :K], peer.eval["precision"], atol=TOL, rtol=0)
    np.testing.assert_allclose(ours.recall[:, :K], peer.eval["recall"], atol=TOL, rtol=0)
    assert peer.eval["precision"].size > 0 and peer.eval["recall"].size > 0  # values compared
