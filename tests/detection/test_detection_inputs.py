"""Loaders: COCO and JSONL inputs, and clear errors naming the datum and annotation."""

import json

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from assay.detection.io import load_coco
from assay.detection.jsonl import load_jsonl, parse_datums
from assay.detection.metrics import compute_metrics
from assay.errors import InvalidInputError


def _rle(h, w, fill=(slice(0, 2), slice(0, 2))):
    m = np.zeros((h, w), np.uint8, order="F")
    m[fill] = 1
    r = mask_utils.encode(m)
    return {"size": [h, w], "counts": r["counts"].decode()}


def gt_datum(**ann):
    return [{"uid": "img7", "height": 10, "width": 10, "annotations": [{"label": "cat", **ann}]}]


@pytest.mark.parametrize(
    "ann, field, text",
    [
        ({"box": [5, 0, 1, 4]}, "box", "xmax < xmin"),
        ({"box": [0, 5, 4, 1]}, "box", "ymax < ymin"),
        ({"polygon": [[0, 0], [4, 0], [4, 4], [0, 4]]}, "polygon", "does not close"),
        ({"polygon": [[0, 0], [4, 4], [4, 0], [0, 4], [0, 0]]}, "polygon", "Self-intersection"),
        ({"mask_rle": _rle(5, 5)}, "mask_rle", "differs from the datum's size"),
        ({"box": [0, 0, 1, 1], "mask_rle": _rle(10, 10)}, None, "exactly one of"),
    ],
)
def test_bad_geometry_names_datum_annotation_and_field(ann, field, text):
    with pytest.raises(InvalidInputError) as e:
        parse_datums(gt_datum(**ann), [])
    msg = str(e.value)
    assert "datum 'img7' annotation 0" in msg and text in msg
    assert e.value.field == field


def test_missing_label_and_unknown_datum():
    with pytest.raises(InvalidInputError, match="annotation 0.*no label"):
        parse_datums([{"uid": "a", "annotations": [{"box": [0, 0, 1, 1]}]}], [])
    with pytest.raises(InvalidInputError, match="datum 'zz'.*unknown datum"):
        parse_datums(gt_datum(box=[0, 0, 1, 1]), [{"uid": "zz", "annotations": []}])
    with pytest.raises(InvalidInputError, match="score"):
        parse_datums(
            gt_datum(box=[0, 0, 1, 1]),
            [{"uid": "img7", "annotations": [{"label": "cat", "box": [0, 0, 1, 1]}]}],
        )


def coco_gt():
    return {
        "images": [{"id": 1, "width": 10, "height": 10}, {"id": 2, "width": 10, "height": 10}],
        "categories": [{"id": 1, "name": "cat"}],
        "annotations": [
            {
                "id": 5,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 4, 4],
                "area": 16,
                "iscrowd": 0,
                "segmentation": [[0, 0, 4, 0, 4, 4, 0, 4]],
            }
        ],
    }


def test_coco_errors():
    with pytest.raises(InvalidInputError, match="unknown image id 3") as e:
        load_coco(
            coco_gt(), [{"image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}]
        )
    assert e.value.field == "image_id"
    with pytest.raises(InvalidInputError, match="negative"):
        load_coco(
            coco_gt(), [{"image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 1], "score": 0.5}]
        )
    with pytest.raises(InvalidInputError, match="no label"):
        load_coco(coco_gt(), [{"image_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}])
    with pytest.raises(
        InvalidInputError, match=r"datum 1 annotation 5: field 'segmentation': missing"
    ):
        gt = coco_gt()
        del gt["annotations"][0]["segmentation"]
        load_coco(
            gt,
            [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}],
            iou_type="segm",
        )
    with pytest.raises(InvalidInputError, match=r"mask size \[5, 5\] differs"):
        load_coco(
            coco_gt(),
            [{"image_id": 1, "category_id": 1, "segmentation": _rle(5, 5), "score": 0.5}],
            iou_type="segm",
        )


def test_coco_files_roundtrip(tmp_path):
    g, p = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(coco_gt()))
    p.write_text(
        json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "score": 0.9}])
    )
    data = load_coco(g, p)
    assert data.uids == [1, 2] and data.labels == [("class", "cat")]
    ms = compute_metrics(data, metrics=["mAP"], iou_thresholds=[0.5])
    assert ms.get("mAP").value == pytest.approx(1.0)
    with pytest.raises(InvalidInputError, match="malformed JSON"):
        p.write_text("[{")
        load_coco(g, p)


def test_jsonl_files_all_kinds(tmp_path):
    g, p = tmp_path / "gt.jsonl", tmp_path / "pr.jsonl"
    g.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "uid": "a",
                    "height": 10,
                    "width": 10,
                    "annotations": [
                        {"label": "cat", "box": [0, 0, 4, 4]},
                        {
                            "labels": [{"key": "animal", "value": "dog"}],
                            "polygon": [[[5, 5], [9, 5], [9, 9], [5, 9], [5, 5]]],
                        },
                        {"label": "bird", "mask_rle": _rle(10, 10, (slice(6, 10), slice(0, 3)))},
                    ],
                },
                {"uid": "b", "height": 10, "width": 10, "annotations": []},
            ]
        )
    )
    p.write_text(
        json.dumps(
            {
                "uid": "a",
                "annotations": [
                    {"label": "cat", "score": 0.9, "box": [0, 0, 4, 4]},
                    {
                        "labels": [{"key": "animal", "value": "dog", "score": 0.8}],
                        "box": [5, 5, 9, 9],
                    },
                    {
                        "label": "bird",
                        "score": 0.7,
                        "polygon": [[[0, 6], [3, 6], [3, 10], [0, 10], [0, 6]]],
                    },
                ],
            }
        )
    )
    data = load_jsonl(g, p)
    assert sorted(data.labels) == [("animal", "dog"), ("class", "bird"), ("class", "cat")]
    ms = compute_metrics(data, iou_type="segm", metrics=["mAP"], iou_thresholds=[0.99])
    # every prediction covers exactly its ground truth (box vs polygon, polygon vs raster): IoU 1
    assert ms.get("mAP", label_key="class").value == pytest.approx(1.0)
    assert ms.get("mAP", label_key="animal").value == pytest.approx(1.0)


def test_degenerate_inputs_are_defined_or_explicitly_undefined():
    gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 4, 4]}]}]
    ms = compute_metrics(parse_datums(gt, []), metrics=["AP", "mAP", "AR", "PrecisionRecallCurve"])
    assert ms.get("AP", label_value="cat", iou_threshold=0.5).value == 0.0  # no predictions at all
    assert ms.get("AR", label_value="cat").value == 0.0
    curve = ms.get("PrecisionRecallCurve").value["cat"][0.5]
    assert curve["precision"] is None and curve["recall"] == 0.0
    pr = [{"uid": "a", "annotations": [{"label": "dog", "score": 0.5, "box": [0, 0, 4, 4]}]}]
    ms = compute_metrics(parse_datums(gt, pr), metrics=["AP", "mAP", "AR", "mAR"])
    dog = ms.get("AP", label_value="dog", iou_threshold=0.5)
    assert dog.value is None and "ground truth" in dog.parameters["undefined"]
    assert ms.get("mAP", iou_threshold=0.5).value == 0.0  # only 'cat' counts: defined
    empty = compute_metrics(parse_datums([], []), metrics=["mAP"])
    assert len(empty) == 0


def test_coco_results_file_errors_name_the_result(tmp_path):
    g, p = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(coco_gt()))
    ok = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "score": 0.9}
    p.write_text(json.dumps([ok, {**ok, "bbox": [0, 0, 4]}]))
    with pytest.raises(InvalidInputError, match="annotation 1.*bbox must be"):
        load_coco(g, p)
    p.write_text(json.dumps([ok, {**ok, "score": "high"}]))
    with pytest.raises(InvalidInputError) as e:
        load_coco(g, p)
    assert e.value.record == "annotation 1" and e.value.field == "score"
    p.write_text(json.dumps([ok, {k: v for k, v in ok.items() if k != "category_id"}]))
    with pytest.raises(InvalidInputError, match="category_id"):
        load_coco(g, p)
    # the typed fast path and the dict path read the same data identically
    p.write_text(json.dumps([ok, {**ok, "image_id": 2, "score": 0.5}]))
    a, b = load_coco(g, p), load_coco(coco_gt(), json.loads(p.read_text()))
    assert np.array_equal(a.predictions.box, b.predictions.box) and np.array_equal(
        a.predictions.datum, b.predictions.datum
    )
