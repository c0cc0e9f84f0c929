"""COCO files read as columns (msgspec straight into arrays) give exactly the data the generic
reader builds from the same JSON, and the metrics of hotcoco (a pycocotools-exact peer).

The fast path is taken only for files; ``load_coco`` on parsed dicts always takes the generic
one, so comparing the two on the same content compares the two readers.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from assay.detection.compute import coco_evaluate
from assay.detection.io import load_coco
from assay.detection.params import CocoParams
from assay.io.coco import read_coco_annotations, read_coco_results
from assay.io.coco_columns import AnnotationColumns, ResultColumns
from assay.testing.detection import make_coco

# every case both ways: with the compiled COCO kernels and without (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("native_path")

FIELDS = ("datum", "label", "box", "area", "score", "crowd", "ann_id", "kind")


def write(tmp_path, gt, dt):
    g, p = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(dt))
    return g, p


def assert_same_data(a, b):
    assert a.uids == b.uids and a.labels == b.labels and list(a.label_ids) == list(b.label_ids)
    np.testing.assert_array_equal(a.heights, b.heights)
    np.testing.assert_array_equal(a.widths, b.widths)
    for side in ("groundtruths", "predictions"):
        x, y = getattr(a, side), getattr(b, side)
        assert len(x) == len(y) > 0
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f"{side}.{f}")
            assert getattr(x, f).dtype == getattr(y, f).dtype, f"{side}.{f}"
        assert _rle_list(x.rles) == _rle_list(y.rles)


def _rle_list(rles):
    """Sizes and counts (as bytes: columns keep the file's text)."""
    out = []
    for r in rles:
        c = None if r is None else r["counts"]
        out.append(
            None if r is None else (list(r["size"]), c.encode() if isinstance(c, str) else c)
        )
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_columns_from_files_equal_the_generic_reader(tmp_path, seed, iou_type):
    segm = iou_type == "segm"
    gt, dt = make_coco(n_images=20, n_categories=5, dets_per_image=20, segm=segm, seed=seed)
    # some annotations without an id, an area or iscrowd: pycocotools' defaults apply
    for a in gt["annotations"][::7]:
        a.pop("area")
        a.pop("iscrowd")
    g, p = write(tmp_path, gt, dt)
    assert isinstance(read_coco_annotations(g, columns=iou_type)["annotations"], AnnotationColumns)
    assert isinstance(read_coco_results(p), ResultColumns)
    assert_same_data(load_coco(g, p, iou_type=iou_type), load_coco(gt, dt, iou_type=iou_type))


def test_annotations_without_ids_are_numbered_from_one_as_pycocotools_does(tmp_path):
    gt, dt = make_coco(n_images=5, n_categories=3, dets_per_image=5, seed=1)
    for a in gt["annotations"]:
        del a["id"]
    g, p = write(tmp_path, gt, dt)
    cols = read_coco_annotations(g, columns="bbox")["annotations"]
    assert cols.ann_id.tolist() == list(range(1, len(gt["annotations"]) + 1))
    assert_same_data(load_coco(g, p), load_coco(gt, dt))


def test_string_ids_and_mixed_boxes_fall_back_to_the_generic_reader(tmp_path):
    gt, dt = make_coco(n_images=6, n_categories=3, dets_per_image=5, seed=2)
    for im in gt["images"]:
        im["id"] = f"img{im['id']}"
    for a in gt["annotations"]:
        a["image_id"] = f"img{a['image_id']}"
    for r in dt:
        r["image_id"] = f"img{r['image_id']}"
    g, p = write(tmp_path, gt, dt)
    assert isinstance(read_coco_annotations(g, columns="bbox")["annotations"], list)
    assert not isinstance(read_coco_results(p), ResultColumns)
    assert_same_data(load_coco(g, p), load_coco(gt, dt))


def test_segmentations_are_skipped_unparsed_for_boxes(tmp_path):
    gt, dt = make_coco(n_images=6, n_categories=3, dets_per_image=5, segm=True, seed=3)
    g, p = write(tmp_path, gt, dt)
    cols = read_coco_annotations(g, columns="bbox")["annotations"]
    assert cols.segmentation is None
    assert_same_data(load_coco(g, p), load_coco(gt, dt))


def run_hotcoco(g, p, iou_type):
    hotcoco = pytest.importorskip("hotcoco")
    with contextlib.redirect_stdout(io.StringIO()):
        ev = hotcoco.COCOeval(hotcoco.COCO(str(g)), hotcoco.COCO(str(g)).load_res(str(p)), iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_matches_hotcoco_from_files(tmp_path, seed, iou_type):
    segm = iou_type == "segm"
    gt, dt = make_coco(
        n_images=25 if segm else 60, n_categories=6, dets_per_image=30, segm=segm, seed=seed
    )
    g, p = write(tmp_path, gt, dt)
    peer = run_hotcoco(g, p, iou_type)
    ours = coco_evaluate(load_coco(g, p, iou_type=iou_type), CocoParams(iou_type=iou_type))
    stats = np.asarray(peer.stats, dtype=np.float64)
    assert len(stats) == 12 and 0 < stats[0] < 1  # values compared, not trivial
    np.testing.assert_allclose(ours.stats(), stats, atol=1e-12, rtol=0)
    precision = np.asarray(peer.eval["precision"])
    K = precision.shape[2]
    np.testing.assert_allclose(ours.precision[:, :, :K], precision, atol=1e-12, rtol=0)
    np.testing.assert_allclose(ours.recall[:, :K], np.asarray(peer.eval["recall"]), atol=1e-12)


@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
def test_results_decoded_in_chunks_equal_one_decode(tmp_path, monkeypatch, iou_type):
    import assay.io.coco_columns as coco

    gt, dt = make_coco(n_images=8, n_categories=4, dets_per_image=10, segm=iou_type == "segm")
    # a field the reader ignores, holding objects in a list and a string with "}, {" in it:
    # cuts that land there fail to decode, and the whole file is decoded at once instead
    dt[3]["extra"] = [{"a": 1}, {"b": "}, {"}]
    g, p = write(tmp_path, gt, dt)
    whole = load_coco(g, p, iou_type=iou_type)
    monkeypatch.setattr(coco, "_CHUNK_BYTES", 64)  # a cut after every result or so
    assert coco._chunked_columns(p.read_bytes()) is None  # a cut landed inside dt[3]
    del dt[3]["extra"]
    p.write_text(json.dumps(dt, indent=1))  # pretty-printed: newlines between results
    cols = coco._chunked_columns(p.read_bytes())
    assert isinstance(cols, ResultColumns) and len(cols) == len(dt)
    assert_same_data(load_coco(g, p, iou_type=iou_type), whole)
    assert_same_data(whole, load_coco(gt, dt, iou_type=iou_type))


def test_ground_truth_categories_missing_from_the_list_keep_their_first_seen_order(tmp_path):
    gt, dt = make_coco(n_images=6, n_categories=3, dets_per_image=5, seed=4)
    for a, c in zip(gt["annotations"], [9, 7, 9, 8]):
        a["category_id"] = c  # not among the categories, and not in ascending order
    g, p = write(tmp_path, gt, dt)
    data = load_coco(g, p)
    assert [x for x in data.label_ids if x > 3][:3] == [9, 7, 8]
    assert_same_data(data, load_coco(gt, dt))
