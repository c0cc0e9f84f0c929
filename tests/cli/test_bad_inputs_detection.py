"""Bad-input corpus for ``assay detection``: every case exits 2 with one clear line naming
the file (or option) and the place, never a traceback, and leaves ``--out`` untouched."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.io.masks import mask_to_rle

runner = CliRunner()
# every case both ways: with the compiled COCO kernels and without (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("native_path")
SENTINEL = "previous results\n"


def _gt() -> dict[str, Any]:
    m = np.zeros((20, 20), bool)
    m[2:8, 2:8] = True
    return {
        "images": [{"id": 1, "height": 20, "width": 20}, {"id": 2, "height": 20, "width": 20}],
        "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [2, 2, 6, 6],
                "area": 36,
                "iscrowd": 0,
                "segmentation": mask_to_rle(m),
            }
        ],
    }


def _dt() -> list[dict[str, Any]]:
    m = np.zeros((20, 20), bool)
    m[2:9, 2:8] = True
    return [
        {
            "image_id": 1,
            "category_id": 1,
            "bbox": [2, 2, 6, 7],
            "score": 0.9,
            "segmentation": mask_to_rle(m),
        }
    ]


def _jsonl_gt() -> list[dict[str, Any]]:
    return [
        {
            "uid": "a",
            "height": 20,
            "width": 20,
            "annotations": [{"label": "cat", "box": [0, 0, 5, 5]}],
        }
    ]


def _jsonl_pr() -> list[dict[str, Any]]:
    return [{"uid": "a", "annotations": [{"label": "cat", "score": 0.5, "box": [0, 0, 5, 5]}]}]


def _edit(obj: Any, fn) -> Any:
    obj = copy.deepcopy(obj)
    fn(obj)
    return obj


def _set(path: list[Any], value: Any):
    def fn(o: Any) -> None:
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value

    return fn


def _del(path: list[Any]):
    def fn(o: Any) -> None:
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]

    return fn


def _huge_gt() -> dict[str, Any]:
    """An image of 200000 x 200000 pixels (pycocotools' decoder would crash on it)."""
    gt = _gt()
    gt["images"][0]["height"] = gt["images"][0]["width"] = 200000
    gt["annotations"][0]["segmentation"] = [[2, 2, 8, 2, 8, 8]]
    return gt


# (id, gt content, predictions content, extra args, which file/option the message names,
#  and a piece of the location or reason it must show). Content: a JSON-able object, bytes,
#  or "DIR" (a directory in place of the file).
COCO_CASES = [
    ("missing_image_id", _edit(_gt(), _del(["images", 0, "id"])), _dt(), [], "gt", "image 0"),
    (
        "missing_category_id",
        _edit(_gt(), _del(["categories", 1, "id"])),
        _dt(),
        [],
        "gt",
        "category 1",
    ),
    ("string_height", _edit(_gt(), _set(["images", 1, "height"], "20")), _dt(), [], "gt", "height"),
    (
        "mixed_category_ids",
        _edit(_gt(), _set(["categories", 1, "id"], "2")),
        _dt(),
        [],
        "gt",
        "mix integers and strings",
    ),
    (
        "result_image_id_string",
        _gt(),
        _edit(_dt(), _set([0, "image_id"], "1")),
        [],
        "dt",
        "image_id",
    ),
    (
        "result_category_string",
        _gt(),
        _edit(_dt(), _set([0, "category_id"], "1")),
        [],
        "dt",
        "category_id",
    ),
    (
        "unknown_image",
        _gt(),
        _edit(_dt(), _set([0, "image_id"], 99)),
        [],
        "dt",
        "unknown image id 99",
    ),
    ("huge_box", _gt(), _edit(_dt(), _set([0, "bbox"], [1e308, 0, 1e308, 5])), [], "dt", "bbox"),
    (
        "huge_gt_box",
        _edit(_gt(), _set(["annotations", 0, "bbox"], [0, 0, 1e308, 1e308])),
        _dt(),
        [],
        "gt",
        "bbox",
    ),
    (
        "nan_score",
        _gt(),
        b'[{"image_id": 1, "category_id": 1, "bbox": [0,0,1,1], "score": NaN}]',
        [],
        "dt",
        "malformed JSON",
    ),
    (
        "garbage_rle_counts",
        _gt(),
        _edit(_dt(), _set([0, "segmentation", "counts"], "not an RLE ~~~")),
        ["--iou-type", "segm"],
        "dt",
        "segmentation",
    ),
    (
        "rle_wrong_total",
        _gt(),
        _edit(_dt(), _set([0, "segmentation", "counts"], "05")),
        ["--iou-type", "segm"],
        "dt",
        "runs add up",
    ),
    (
        "corrupt_gt_rle",
        _edit(_gt(), _set(["annotations", 0, "segmentation", "counts"], [5, 5])),
        _dt(),
        ["--iou-type", "segm"],
        "gt",
        "segmentation",
    ),
    (
        "mask_only_results_garbage",
        _gt(),
        [
            {
                "image_id": 1,
                "category_id": 1,
                "score": 0.5,
                "segmentation": {"size": [20, 20], "counts": "\x7f\x7f"},
            }
        ],
        [],
        "dt",
        "segmentation",
    ),
    ("huge_raster", _huge_gt(), _dt(), ["--iou-type", "segm"], "gt", "larger than"),
    ("gt_latin1", "LATIN1", _dt(), [], "gt", "UTF-8"),
    ("gt_utf16", "UTF16", _dt(), [], "gt", "UTF-16"),
    ("dt_binary", _gt(), b"\x00\x01\x02\xff\xfe", [], "dt", "UTF-8"),
    ("gt_directory", "DIR", _dt(), [], "gt", "directory"),
    ("dt_directory", _gt(), "DIR", [], "dt", "directory"),
    ("gt_empty", b"", _dt(), [], "gt", "is empty"),
    ("gt_is_results", _dt(), _dt(), [], "gt", "COCO annotations"),
    ("dt_is_annotations", _gt(), _gt(), [], "dt", "annotations file"),
    (
        "iou_threshold_above_1",
        _gt(),
        _dt(),
        ["--iou-thresholds", "1.5"],
        "--iou-thresholds",
        "[0, 1]",
    ),
    (
        "iou_threshold_text",
        _gt(),
        _dt(),
        ["--iou-thresholds", "half"],
        "--iou-thresholds",
        "comma-separated",
    ),
    (
        "ar_threshold_negative",
        _gt(),
        _dt(),
        ["--ar-iou-thresholds", "-0.5"],
        "--ar-iou-thresholds",
        "must be numbers",
    ),
    (
        "max_detections_negative",
        _gt(),
        _dt(),
        ["--max-detections", "-3"],
        "--max-detections",
        "must be >= 1",
    ),
    (
        "max_detections_text",
        _gt(),
        _dt(),
        ["--max-detections", "many"],
        "--max-detections",
        "positive integer",
    ),
    ("unknown_metric", _gt(), _dt(), ["--metrics", "AP,Nope"], "--metrics", "Nope"),
    ("iou_type_unknown", _gt(), _dt(), ["--iou-type", "mask"], "--iou-type", "bbox or segm"),
    (
        "pr_curve_iou_threshold",
        _gt(),
        _dt(),
        ["--pr-curve-iou-threshold", "2"],
        "--pr-curve-iou-threshold",
        "must be numbers",
    ),
]

COCO_CASES += [
    ("huge_image_id", _edit(_gt(), _set(["images", 1, "id"], 2**70)), _dt(), [], "gt", "64 bits"),
    (
        "huge_result_image_id",
        _gt(),
        _edit(_dt(), _set([0, "image_id"], 2**70)),
        [],
        "dt",
        "64 bits",
    ),
    (
        "huge_annotation_id",
        _edit(_gt(), _set(["annotations", 0, "id"], 2**70)),
        _dt(),
        [],
        "gt",
        "64-bit",
    ),
    ("bool_image_id", _gt(), _edit(_dt(), _set([0, "image_id"], True)), [], "dt", "image_id"),
    ("string_area", _edit(_gt(), _set(["annotations", 0, "area"], "big")), _dt(), [], "gt", "area"),
]

JSONL_CASES = [
    ("jsonl_uid_list", [{"uid": [1], "annotations": []}], _jsonl_pr(), [], "gt", "uid"),
    ("jsonl_duplicate_uid", _jsonl_gt() * 2, _jsonl_pr(), [], "gt", "listed twice"),
    (
        "jsonl_string_height",
        _edit(_jsonl_gt(), _set([0, "height"], "20")),
        _jsonl_pr(),
        [],
        "gt",
        "height",
    ),
    (
        "jsonl_huge_box",
        _jsonl_gt(),
        _edit(_jsonl_pr(), _set([0, "annotations", 0, "box"], [0, 0, 1e308, 1e308])),
        [],
        "dt",
        "box",
    ),
    (
        "jsonl_garbage_rle",
        _jsonl_gt(),
        _edit(
            _jsonl_pr(),
            _set(
                [0, "annotations", 0],
                {"label": "cat", "score": 0.5, "mask_rle": {"size": [20, 20], "counts": "~~~"}},
            ),
        ),
        [],
        "dt",
        "mask_rle",
    ),
    (
        "jsonl_score_text",
        _jsonl_gt(),
        _edit(_jsonl_pr(), _set([0, "annotations", 0, "score"], "high")),
        [],
        "dt",
        "score",
    ),
    ("jsonl_not_object", _jsonl_gt(), [[1, 2]], [], "dt", "line 1"),
    ("jsonl_gt_latin1", "LATIN1", _jsonl_pr(), [], "gt", "UTF-8"),
    (
        "jsonl_unknown_uid",
        _jsonl_gt(),
        [{"uid": "zz", "annotations": []}],
        [],
        "dt",
        "unknown datum",
    ),
    ("jsonl_gt_empty", b"", _jsonl_pr(), [], "gt", "no datum"),
    ("jsonl_where_unknown", _jsonl_gt(), _jsonl_pr(), ["--where", "site == 'a'"], "--where",
     "unknown field 'site' for datums"),
    ("jsonl_where_syntax", _jsonl_gt(), _jsonl_pr(), ["--where", "uid =="], "--where",
     "bad filter expression"),
    ("jsonl_where_nothing", _jsonl_gt(), _jsonl_pr(), ["--where", "uid == 'none'"], "--where",
     "keep no datum"),
    ("jsonl_where_pd_unknown", _jsonl_gt(), _jsonl_pr(), ["--where-predictions", "scor > 1"],
     "--where-predictions", "unknown field 'scor'"),
    ("jsonl_where_gt_score", _jsonl_gt(), _jsonl_pr(), ["--where-groundtruths", "score > 1"],
     "--where-groundtruths", "unknown field 'score' for ground truths"),
    ("jsonl_metadata_text", _edit(_jsonl_gt(), _set([0, "metadata"], "site=a")), _jsonl_pr(),
     [], "gt", "metadata must be an object"),
    ("jsonl_ann_metadata_list", _edit(_jsonl_gt(), _set([0, "annotations", 0, "metadata"],
     {"tags": [1]})), _jsonl_pr(), [], "gt", "metadata.tags"),
    ("jsonl_by_unknown", _jsonl_gt(), _jsonl_pr(), ["--by", "camera"], "by",
     "field 'camera': is not a metadata field of the images"),
    ("jsonl_examples_limit", _jsonl_gt(), _jsonl_pr(), ["--examples-limit", "-2"],
     "--examples-limit", "must be an integer >= 0"),
]  # fmt: skip


def _write(path: Path, content: Any, jsonl: bool) -> None:
    if isinstance(content, str) and content == "DIR":
        path.mkdir()
    elif isinstance(content, str) and content == "LATIN1":
        text = (
            '{"uid": "caf\u00e9", "annotations": []}\n'
            if jsonl
            else '{"images": [], "annotations": [], "categories": [{"id": 1, "name": "caf\u00e9"}]}'
        )
        path.write_bytes(text.encode("latin-1"))
    elif isinstance(content, str) and content == "UTF16":
        path.write_bytes(json.dumps(_gt()).encode("utf-16"))
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in content))
    else:
        path.write_text(json.dumps(content))


def _run(tmp_path: Path, gt: Any, dt: Any, args: list[str], jsonl: bool):
    ext = ".jsonl" if jsonl else ".json"
    g, p, out = tmp_path / f"gt{ext}", tmp_path / f"dt{ext}", tmp_path / "out.json"
    _write(g, gt, jsonl)
    _write(p, dt, jsonl)
    out.write_text(SENTINEL)
    r = runner.invoke(
        app,
        ["detection", "--groundtruths", str(g), "--predictions", str(p), "--out", str(out), *args],
    )
    return r, {"gt": str(g), "dt": str(p)}, out


@pytest.mark.parametrize(
    "case", COCO_CASES + JSONL_CASES, ids=[c[0] for c in COCO_CASES + JSONL_CASES]
)
def test_bad_input_exits_2_naming_the_file(tmp_path: Path, case: tuple) -> None:
    name, gt, dt, args, names, where = case
    r, files, out = _run(tmp_path, gt, dt, args, jsonl=name.startswith("jsonl"))
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    named = files.get(names, names)
    text = r.output.translate({ord(c): " " for c in "│╭╮╰╯─"})
    flat = " ".join(text.split())  # rich/click may wrap long lines and draw boxes
    assert named in r.output.replace("\n", "") or named in flat.replace(" ", ""), r.output
    other = files["dt" if names == "gt" else "gt"] if names in files else None
    if other is not None:  # the message blames the right file, not the other one
        assert other not in flat.replace(named, ""), r.output
    assert where and where in flat, r.output
    assert out.read_text() == SENTINEL


def test_corpus_is_large_and_every_case_distinct() -> None:
    ids = [c[0] for c in COCO_CASES + JSONL_CASES]
    assert len(ids) == len(set(ids)) >= 40


def test_good_input_still_writes_out(tmp_path: Path) -> None:
    r, _, out = _run(tmp_path, _gt(), _dt(), ["--iou-type", "segm"], jsonl=False)
    assert r.exit_code == 0, r.output
    assert out.read_text() != SENTINEL and json.loads(out.read_text())
