"""The `assay detection` command, against pycocotools where COCO defines the numbers."""

import contextlib
import copy
import io
import json

import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
from typer.testing import CliRunner

from assay.cli.main import app
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


def _pycocotools_stats(gt, dt, iou_type, printed=None):
    """COCOeval's 12 numbers; what ``summarize`` prints goes to ``printed`` (a StringIO)."""
    with contextlib.redirect_stdout(io.StringIO()):
        c = COCO()
        c.dataset = copy.deepcopy(gt)
        c.createIndex()
        e = COCOeval(c, c.loadRes(copy.deepcopy(dt)), iou_type)
        e.evaluate()
        e.accumulate()
    with contextlib.redirect_stdout(printed or io.StringIO()):
        e.summarize()
    return e.stats


def test_mask_only_segm_results_over_255_match_pycocotools(tmp_path):
    # Issue: results carrying only `segmentation` (the normal segm form) crashed with more
    # than 255 masks (pycocotools.mask.area on a list; numpy 2 uint8 overflow).
    gt, dt = make_coco(n_images=12, n_categories=4, dets_per_image=30, segm=True, seed=3)
    dt = [{k: v for k, v in d.items() if k != "bbox"} for d in dt]
    assert len(dt) > 255 and all("bbox" not in d for d in dt)
    g, p, out = tmp_path / "gt.json", tmp_path / "dt.json", tmp_path / "m.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(dt))
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--iou-type", "segm"]
    r = runner.invoke(app, [*args, "--coco", "--out", str(out)])
    assert r.exit_code == 0, (r.output, r.exception)
    printed = io.StringIO()
    peer = _pycocotools_stats(gt, dt, "segm", printed)
    ours = [m["value"] for m in json.loads(out.read_text()) if m["type"] == "COCOSummary"]
    assert len(ours) == 12 and 0 < peer[0] < 1
    compared = 0
    for a, b in zip(ours, peer):
        assert (a is None and b == -1) or abs(a - b) <= 1e-12
        compared += 1
    assert compared == 12
    # the printed summary is pycocotools' own text
    assert r.output.strip().splitlines() == printed.getvalue().strip().splitlines()


def test_max_detections_all_equals_the_api_none(coco_files, tmp_path):
    from assay.detection import compute_metrics, load_coco

    g, p, *_ = coco_files
    outs = {}
    for value in ("all", "3"):
        out = tmp_path / f"m{value}.json"
        r = runner.invoke(
            app,
            ["detection", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "mAP,mAR"]
            + ["--max-detections", value, "--out", str(out)],
        )
        assert r.exit_code == 0, r.output
        outs[value] = json.loads(out.read_text())
    r = runner.invoke(app, ["detection", "--groundtruths", str(g), "--predictions", str(p),
                            "--max-detections", "0"])  # fmt: skip
    assert r.exit_code == 2 and "'all'" in r.output  # 0, the old spelling of all: removed
    data = load_coco(g, p)
    api = compute_metrics(data, metrics=["mAP", "mAR"], max_detections=None).to_list()
    assert outs["all"] == json.loads(json.dumps(api))
    three = compute_metrics(data, metrics=["mAP", "mAR"], max_detections=3).to_list()
    assert outs["3"] == json.loads(json.dumps(three)) and outs["3"] != outs["all"]


def test_per_class_labels_in_natural_order(tmp_path):
    gt, dt = make_coco(n_images=20, n_categories=12, seed=4)
    g, p, out = tmp_path / "gt.json", tmp_path / "dt.json", tmp_path / "m.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(dt))
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p)]
    r = runner.invoke(
        app, [*args, "--metrics", "APAveragedOverIOUs,PrecisionRecallCurve", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    recs = json.loads(out.read_text())
    names = [m["parameters"]["label_value"] for m in recs if m["type"] == "APAveragedOverIOUs"]
    cats = [n for n in names if n.startswith("cat")]
    assert cats[:3] == ["cat1", "cat2", "cat3"] and cats.index("cat10") > cats.index("cat9")
    curve = next(m for m in recs if m["type"] == "PrecisionRecallCurve")["value"]
    assert [n for n in curve if n.startswith("cat")] == cats


def test_segm_data_remembers_its_iou_type(coco_files, tmp_path):
    from assay.detection import CocoParams, coco_evaluate, compute_metrics, load_coco
    from assay.errors import InvalidInputError

    gt, dt = make_coco(n_images=10, n_categories=3, dets_per_image=20, segm=True, seed=5)
    data = load_coco(gt, dt, iou_type="segm")
    segm = coco_evaluate(data).stats()
    explicit = coco_evaluate(data, CocoParams(iou_type="segm")).stats()
    boxes = coco_evaluate(load_coco(gt, dt, iou_type="bbox")).stats()
    assert (segm == explicit).all() and (segm != boxes).any()
    with pytest.raises(InvalidInputError, match="loaded with iou_type='segm'"):
        coco_evaluate(data, CocoParams(iou_type="bbox"))
    with pytest.raises(InvalidInputError, match="loaded with iou_type='segm'"):
        compute_metrics(data, iou_type="bbox")
    peer = _pycocotools_stats(gt, dt, "segm")
    assert abs(segm - peer).max() <= 1e-12


def test_score_thresholds_matching_and_new_types(coco_files, tmp_path):
    from assay.detection.io import load_coco
    from assay.detection.metrics import compute_metrics

    g, p, gt, dt = coco_files
    out = tmp_path / "m.json"
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--out", str(out)]
    args += ["--metrics", "Counts,F1,ARAveragedOverScores,ConfusionMatrix"]
    args += ["--iou-thresholds", "0.5", "--score-thresholds", "0,0.5,1", "--matching", "valor"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    got = json.loads(out.read_text())
    recs = got["metrics"] if isinstance(got, dict) else got
    api = compute_metrics(
        load_coco(gt, dt),
        metrics=["Counts", "F1", "ARAveragedOverScores", "ConfusionMatrix"],
        iou_thresholds=[0.5],
        score_thresholds=[0.0, 0.5, 1.0],
        matching="valor",
    )
    assert len(recs) == len(api) > 0
    counts = [m for m in recs if m["type"] == "Counts"]
    assert {m["parameters"]["score_threshold"] for m in counts} == {0.0, 0.5, 1.0}
    assert sorted(json.dumps(m["value"], sort_keys=True) for m in counts) == sorted(
        json.dumps(m.value, sort_keys=True) for m in api if m.type == "Counts"
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--matching", "hungarian"], "must be coco or valor"),
        (["--score-thresholds", "0.5,x"], "expected comma-separated numbers"),
        (["--score-thresholds", "0.5", "--recall-score-threshold", "0.3"], "not both"),
    ],
)
def test_bad_score_threshold_and_matching_options_exit_2(coco_files, extra, message):
    g, p, *_ = coco_files
    args = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--metrics", "Counts"]
    r = runner.invoke(app, args + extra)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


def test_where_filters_and_examples_pages(tmp_path):
    box = {"box": [0, 0, 10, 10]}
    gts = [
        {"uid": u, "metadata": {"site": s},
         "annotations": [{"label": "cat", **box, "metadata": {"hard": h}}]}
        for u, s, h in (("a", "x", True), ("b", "y", False), ("c", "y", False))
    ]  # fmt: skip
    prs = [{"uid": u, "annotations": [{"label": "cat", "score": sc, **box}]}
           for u, sc in (("a", 0.9), ("b", 0.4), ("c", 0.8))]  # fmt: skip
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(json.dumps(r) + "\n" for r in gts))
    p.write_text("".join(json.dumps(r) + "\n" for r in prs))
    base = ["detection", "--groundtruths", str(g), "--predictions", str(p),
            "--iou-thresholds", "0.5", "--metrics", "Examples"]  # fmt: skip

    def uids(*args):
        r = runner.invoke(app, [*base, *args])
        assert r.exit_code == 0, r.output
        return [m["parameters"]["datum_uid"] for m in json.loads(r.stdout)]

    assert uids("--where", "site == 'y'") == ["b", "c"]
    assert uids("--where", "site == 'y'", "--examples-offset", "1") == ["c"]
    assert uids("--examples-limit", "2") == ["a", "b"]
    assert uids("--where-groundtruths", "not hard", "--where-predictions", "score > 0.5") == [
        "a", "b", "c"
    ]  # fmt: skip
    r = runner.invoke(app, [*base, "--where-groundtruths", "not hard",
                            "--where-predictions", "score > 0.5"])  # fmt: skip
    ex = {m["parameters"]["datum_uid"]: m["value"] for m in json.loads(r.stdout)}
    assert ex["a"]["false_positives"] == [0] and ex["a"]["false_negatives"] == []
    assert ex["b"]["false_negatives"] == [0] and ex["c"]["true_positives"] == [[0, 0]]
