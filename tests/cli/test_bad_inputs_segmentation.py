"""Bad-input corpus for ``assay segmentation``: every case exits 2 with one clear line naming
the file (or option) and the place, never a traceback (nor a crash of pycocotools' decoder),
and leaves ``--out`` untouched."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()
# every case both ways: with the compiled COCO kernels and without (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("native_path")
SENTINEL = "previous results\n"


def _gt() -> list[dict[str, Any]]:
    return [
        {
            "uid": "a",
            "height": 8,
            "width": 8,
            "annotations": [
                {"label": "road", "box": [0, 0, 8, 4]},
                {"label": "car", "mask_rle": {"size": [8, 8], "counts": [36, 4, 24]}},
            ],
        },
        {
            "uid": "b",
            "height": 8,
            "width": 8,
            "annotations": [{"label": "road", "box": [0, 0, 8, 8]}],
        },
    ]


def _pr() -> list[dict[str, Any]]:
    return [{"uid": "a", "annotations": [{"label": "road", "box": [0, 0, 8, 5]}]}]


def _edit(obj: Any, path: list[Any], value: Any) -> Any:
    obj = copy.deepcopy(obj)
    o = obj
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = value
    return obj


COCO_GT = {"images": [{"id": 1, "height": 8, "width": 8}], "annotations": [], "categories": []}

# (id, gt content, predictions content, extra args, the file/option named, a piece of the
#  location or reason). Content: a list of records, bytes, a dict (written as one JSON
#  document), "DIR" (a directory) or "LATIN1".
CASES = [
    ("duplicate_gt_uid", _gt() + [_gt()[0]], _pr(), [], "gt", "listed twice"),
    ("duplicate_pred_uid", _gt(), _pr() * 2, [], "dt", "listed twice"),
    ("gt_empty_file", b"", _pr(), [], "gt", "holds no datum"),
    ("gt_blank_lines", b"\n\n", _pr(), [], "gt", "holds no datum"),
    ("gt_is_coco", COCO_GT, _pr(), [], "gt", "COCO annotations file"),
    (
        "gt_is_coco_one_line",
        b'{"images": [], "annotations": []}\n',
        _pr(),
        [],
        "gt",
        "COCO annotations file",
    ),
    (
        "corrupt_rle_counts",
        _edit(_gt(), [0, "annotations", 1, "mask_rle", "counts"], "%%%"),
        _pr(),
        [],
        "gt",
        "corrupt RLE",
    ),
    (
        "rle_wrong_total",
        _edit(_gt(), [0, "annotations", 1, "mask_rle", "counts"], [3, 4]),
        _pr(),
        [],
        "gt",
        "runs add up",
    ),
    (
        "rle_negative_run",
        _edit(_gt(), [0, "annotations", 1, "mask_rle", "counts"], [-4, 68]),
        _pr(),
        [],
        "gt",
        "non-negative",
    ),
    (
        "rle_size_mismatch",
        _edit(_gt(), [0, "annotations", 1, "mask_rle", "size"], [4, 4]),
        _pr(),
        [],
        "gt",
        "differs",
    ),
    (
        "pred_garbage_rle",
        _gt(),
        _edit(
            _pr(),
            [0, "annotations", 0],
            {"label": "road", "mask_rle": {"size": [8, 8], "counts": "\u00ff"}},
        ),
        [],
        "dt",
        "mask_rle",
    ),
    (
        "huge_raster",
        _edit(_edit(_gt(), [0, "height"], 200000), [0, "width"], 200000),
        _pr(),
        [],
        "gt",
        "larger than",
    ),
    ("string_height", _edit(_gt(), [0, "height"], "8"), _pr(), [], "gt", "height"),
    ("missing_size", _edit(_gt(), [1, "width"], 0), _pr(), [], "gt", "height and width"),
    ("uid_list", _edit(_gt(), [0, "uid"], ["a"]), [], [], "gt", "uid"),
    ("unknown_pred_uid", _gt(), [{"uid": "zz", "annotations": []}], [], "dt", "unknown datum"),
    (
        "overlapping_masks",
        _gt(),
        _edit(
            _pr(),
            [0, "annotations"],
            [{"label": "road", "box": [0, 0, 4, 4]}, {"label": "car", "box": [2, 2, 6, 6]}],
        ),
        [],
        "dt",
        "overlaps",
    ),
    (
        "no_label",
        _edit(_gt(), [0, "annotations", 0], {"box": [0, 0, 2, 2]}),
        _pr(),
        [],
        "gt",
        "no label",
    ),
    (
        "bad_polygon",
        _edit(_gt(), [0, "annotations", 0], {"label": "road", "polygon": [[0, 0], [4, 0], [4, 4]]}),
        _pr(),
        [],
        "gt",
        "polygon",
    ),
    (
        "huge_box",
        _edit(_gt(), [0, "annotations", 0, "box"], [0, 0, 1e308, 1e308]),
        _pr(),
        [],
        "gt",
        "box",
    ),
    ("gt_latin1", "LATIN1", _pr(), [], "gt", "UTF-8"),
    ("pred_binary", _gt(), b"\x00\xff\xfe\x01", [], "dt", "UTF-8"),
    ("gt_directory", "DIR", _pr(), [], "gt", "directory"),
    ("pred_directory", _gt(), "DIR", [], "dt", "directory"),
    ("pred_not_object", _gt(), b"[1, 2]\n", [], "dt", "line 1"),
    ("gt_malformed", b'{"uid": "a"\n', _pr(), [], "gt", "line 1"),
    ("unknown_metric", _gt(), _pr(), ["--metrics", "IOU,Nope"], "--metrics", "Nope"),
    ("by_unknown", _gt(), _pr(), ["--by", "zone"], "by", "field 'zone': is not a metadata"),
]


def _write(path: Path, content: Any) -> None:
    if content == "DIR":
        path.mkdir()
    elif content == "LATIN1":
        path.write_bytes('{"uid": "caf\u00e9", "height": 2, "width": 2}\n'.encode("latin-1"))
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, dict):
        path.write_text(json.dumps(content, indent=1))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in content))


def _run(tmp_path: Path, gt: Any, pr: Any, args: list[str]):
    g, p, out = tmp_path / "gt.jsonl", tmp_path / "pr.jsonl", tmp_path / "out.json"
    _write(g, gt)
    _write(p, pr)
    out.write_text(SENTINEL)
    r = runner.invoke(
        app,
        [
            "segmentation",
            "--groundtruths",
            str(g),
            "--predictions",
            str(p),
            "--out",
            str(out),
            *args,
        ],
    )
    return r, {"gt": str(g), "dt": str(p)}, out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_naming_the_file(tmp_path: Path, case: tuple) -> None:
    _name, gt, pr, args, names, where = case
    r, files, out = _run(tmp_path, gt, pr, args)
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    text = r.output.translate({ord(c): " " for c in "│╭╮╰╯─"})
    flat = " ".join(text.split())
    named = files.get(names, names)
    assert named in r.output.replace("\n", "") or named in flat.replace(" ", ""), r.output
    if names in files:  # the message blames the right file, not the other one
        other = files["dt" if names == "gt" else "gt"]
        assert other not in flat.replace(named, ""), r.output
    assert where and where in flat, r.output
    assert out.read_text() == SENTINEL


def test_corpus_cases_are_distinct() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) >= 25


def test_good_input_writes_out(tmp_path: Path) -> None:
    r, _, out = _run(tmp_path, _gt(), _pr(), [])
    assert r.exit_code == 0, r.output
    recs = json.loads(out.read_text())
    iou = {m["parameters"]["label_value"]: m["value"] for m in recs if m["type"] == "IOU"}
    # road: datum a has 32 ground-truth pixels, 40 predicted, 32 shared; datum b 64 missed
    assert iou["road"] == pytest.approx((32 + 0) / (40 + 64))
