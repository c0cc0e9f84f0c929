"""The `assay detection` and `assay segmentation` commands."""

import contextlib
import copy
import io
import json

import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
from typer.testing import CliRunner

from assay.cli import app
from assay.testing.detection import make_coco

runner = CliRunner()


@pytest.fixture()
def coco_files(tmp_path):
    gt, dt = make_coco(n_images=15, n_categories=3, seed=2)
    g, p = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(dt))
    return g, p, gt, dt


def test_coco_summary_lines_match_pycocotools(coco_files):
    g, p, gt, dt = coco_files
    r = runner.invoke(
        app, ["detection", "--groundtruths", str(g), "--predictions", str(p), "--coco"]
    )
    assert r.exit_code == 0, r.output
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        c = COCO()
        c.dataset = copy.deepcopy(gt)
        c.createIndex()
        e = COCOeval(c, c.loadRes(copy.deepcopy(dt)), "bbox")
        e.evaluate()
        e.accumulate()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        e.summarize()
    assert r.output.strip().splitlines() == out.getvalue().strip().splitlines()


def test_json_records_and_options(coco_files, tmp_path):
    g, p, *_ = coco_files
    out = tmp_path / "m.json"
    r = runner.invoke(
        app,
        [
            "detection",
            "--groundtruths",
            str(g),
            "--predictions",
            str(p),
            "--metrics",
            "AP,mAR",
            "--iou-thresholds",
            "0.5,0.6",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    recs = json.loads(out.read_text())
    assert {m["type"] for m in recs} == {"AP", "mAR"}
    assert {m["parameters"]["iou_threshold"] for m in recs if m["type"] == "AP"} == {0.5, 0.6}


def test_bad_input_exit_2(coco_files, tmp_path):
    g, *_ = coco_files
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps([{"image_id": 12345, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.3}])
    )
    r = runner.invoke(app, ["detection", "--groundtruths", str(g), "--predictions", str(bad)])
    assert r.exit_code == 2
    assert "unknown image id 12345" in r.output
    r = runner.invoke(
        app, ["detection", "--groundtruths", str(g), "--predictions", str(bad), "--metrics", "Nope"]
    )
    assert r.exit_code == 2


def test_segmentation_command(tmp_path):
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text(
        json.dumps(
            {
                "uid": "a",
                "height": 4,
                "width": 4,
                "annotations": [{"label": "road", "box": [0, 0, 4, 2]}],
            }
        )
    )
    p.write_text(json.dumps({"uid": "a", "annotations": [{"label": "road", "box": [0, 0, 4, 4]}]}))
    r = runner.invoke(
        app,
        [
            "segmentation",
            "--groundtruths",
            str(g),
            "--predictions",
            str(p),
            "--metrics",
            "IOU,mIOU",
        ],
    )
    assert r.exit_code == 0, r.output
    recs = json.loads(r.output)
    assert [m["value"] for m in recs] == [0.5, 0.5]
    p.write_text(json.dumps({"uid": "a", "annotations": [{"label": "road", "box": [3, 0, 1, 4]}]}))
    r = runner.invoke(app, ["segmentation", "--groundtruths", str(g), "--predictions", str(p)])
    assert r.exit_code == 2 and "xmax < xmin" in r.output


def test_jsonl_segm_with_coco_summary(tmp_path):
    g, p, out = tmp_path / "g.jsonl", tmp_path / "p.jsonl", tmp_path / "m.json"
    g.write_text(
        json.dumps(
            {
                "uid": "a",
                "height": 50,
                "width": 50,
                "annotations": [
                    {"label": "x", "polygon": [[[0, 0], [40, 0], [40, 40], [0, 40], [0, 0]]]}
                ],
            }
        )
    )
    p.write_text(
        json.dumps(
            {"uid": "a", "annotations": [{"label": "x", "score": 0.7, "box": [0, 0, 40, 40]}]}
        )
    )
    r = runner.invoke(
        app,
        [
            "detection",
            "--groundtruths",
            str(g),
            "--predictions",
            str(p),
            "--iou-type",
            "segm",
            "--coco",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].endswith("= 1.000")
    recs = json.loads(out.read_text())
    assert {m["type"] for m in recs} == {"COCOSummary"}
    assert recs[0]["value"] == pytest.approx(1.0)
