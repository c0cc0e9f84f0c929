"""The public shape of assay.detection: the one-call entry, the evaluator contract's edges,
zero_division, the names 0.2.0 removed, and the COCOeval view."""

import numpy as np
import pytest

from assay.detection import (
    DetectionEvaluator,
    coco_evaluate,
    compute_metrics,
    evaluate_detection,
    load_coco,
    parse_datums,
)
from assay.errors import InvalidInputError
from assay.segmentation import SegmentationEvaluator, evaluate_segmentation
from assay.testing.detection import make_coco


def _datums():
    gt = [
        {
            "uid": "a",
            "height": 60,
            "width": 60,
            "annotations": [
                {"label": "cat", "box": [0, 0, 10, 10]},
                {"label": "dog", "polygon": [[[20, 20], [40, 20], [40, 40], [20, 40], [20, 20]]]},
            ],
        },
        {
            "uid": "b",
            "height": 60,
            "width": 60,
            "annotations": [
                {"label": "cat", "mask_rle": {"size": [60, 60], "counts": [0, 600, 3000]}},
            ],
        },
    ]
    pr = [
        {
            "uid": "a",
            "annotations": [
                {"label": "cat", "score": 0.9, "box": [0, 0, 10, 9]},
                {"label": "bird", "score": 0.4, "box": [30, 30, 35, 35]},
            ],
        },
        {"uid": "b", "annotations": [{"label": "cat", "score": 0.8, "box": [0, 0, 10, 60]}]},
    ]
    return gt, pr


def test_empty_evaluators_refuse():
    for ev in (DetectionEvaluator(), SegmentationEvaluator()):
        with pytest.raises(InvalidInputError, match="no data was added"):
            ev.compute()
    with pytest.raises(InvalidInputError, match="no data was added"):
        evaluate_detection([], [])
    with pytest.raises(InvalidInputError, match="no data was added"):
        evaluate_segmentation([], [])
    with pytest.raises(InvalidInputError, match="no data was added"):
        DetectionEvaluator().coco()


def test_one_call_equals_evaluator_and_functional_api():
    gt, pr = _datums()
    for iou_type in ("bbox", "segm"):
        one = evaluate_detection(gt, pr, iou_type=iou_type)
        ev = DetectionEvaluator(iou_type=iou_type).add_datums(gt, pr).compute()
        fn = compute_metrics(parse_datums(gt, pr), iou_type=iou_type)
        assert one.to_list() == ev.to_list() == fn.to_list() and len(one) > 10


def test_state_round_trip_keeps_polygons_and_rasters():
    gt, pr = _datums()
    ev = DetectionEvaluator(iou_type="segm").add_datums(gt, pr)
    state = ev.state()
    assert all(v.dtype != object for v in state.values())
    back = DetectionEvaluator.from_state(state)
    assert back.compute().to_list() == ev.compute().to_list()
    assert back.data.predictions.kind.tolist() == ev.data.predictions.kind.tolist()


def test_coco_view_is_coco_evaluate_of_the_same_data():
    gt, dt = make_coco(n_images=8, n_categories=3, seed=1)
    data = load_coco(gt, dt)
    ev = DetectionEvaluator().add(data)
    assert np.array_equal(ev.coco().stats(), coco_evaluate(data).stats())
    with pytest.raises(InvalidInputError, match="iou_type"):
        DetectionEvaluator(iou_type="segm").add(data)


def test_zero_division_counts_labels_without_ground_truths():
    gt, pr = _datums()
    strict = evaluate_detection(gt, pr, metrics=["AP", "mAP", "AR"], iou_thresholds=[0.5])
    zero = evaluate_detection(
        gt, pr, metrics=["AP", "mAP", "AR"], iou_thresholds=[0.5], zero_division=0.0
    )
    assert strict.get("AP", label_value="bird").value is None
    assert zero.get("AP", label_value="bird").value == 0.0
    assert zero.get("AR", label_value="bird").value == 0.0
    labelled = [strict.get("AP", label_value=v).value for v in ("cat", "dog")]
    assert strict.get("mAP").value == pytest.approx(np.mean(labelled))
    assert zero.get("mAP").value == pytest.approx(np.mean(labelled + [0.0]))
    assert zero.get("mAP").parameters["zero_division"] == 0.0


def test_bad_options_are_invalid_input():
    gt, pr = _datums()
    for kw in (
        {"iou_thresholds": [1.5]},
        {"iou_thresholds": []},
        {"max_detections": 0},
        {"zero_division": float("nan")},
        {"iou_type": "mask"},
        {"pr_curve_max_examples": -1},
    ):
        with pytest.raises(InvalidInputError):
            evaluate_detection(gt, pr, **kw)
    with pytest.raises(InvalidInputError, match="metrics"):
        evaluate_detection(gt, pr, metrics=["Nope"])


def test_the_names_removed_in_0_2_0_are_gone():
    import importlib

    import assay.detection
    import assay.segmentation

    with pytest.raises(AttributeError):
        assay.detection.evaluate  # noqa: B018  (coco_evaluate)
    with pytest.raises(AttributeError):
        assay.segmentation.confusion_counts  # noqa: B018  (pixel_confusion)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("assay.detection.synthetic")  # assay.testing.detection
    gt, dt = make_coco(n_images=4, n_categories=2, seed=2)
    assert coco_evaluate(load_coco(gt, dt)).stats().shape == (12,)


def test_batches_read_for_different_iou_types_are_refused_whole():
    gt, dt = make_coco(n_images=4, n_categories=2, dets_per_image=5, segm=True, seed=3)
    jsonl_gt, jsonl_pr = _datums()
    ev = DetectionEvaluator().add_datums(jsonl_gt, jsonl_pr)  # keeps exact geometry: either type
    ev.add(load_coco(gt, dt, iou_type="segm"))
    with pytest.raises(InvalidInputError, match="iou_type='bbox'"):
        ev.add(load_coco(gt, dt, iou_type="bbox"))
    other = DetectionEvaluator().add(load_coco(gt, dt, iou_type="bbox"))
    before = len(ev.data.uids)
    with pytest.raises(InvalidInputError, match="iou_type"):
        ev.merge(other)
    assert len(ev.data.uids) == before  # nothing was merged
