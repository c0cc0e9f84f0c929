"""Detection's options and metric types declared once (issue 35 items 3 and 4).

The configurations below were those of ``DetectionEvaluator.config()`` and of the stored
parameters of ``assay detection`` before the options were declared
(:mod:`assay.detection.declared`); the derived ones must be the same.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.detection import DetectionEvaluator, compute_metrics, evaluate_detection
from assay.detection.declared import DEFAULT_METRICS, METRIC_OPTIONS, METRICS, OPTIONS
from assay.errors import InvalidInputError

BASE: dict[str, Any] = {
    "iou_type": None,
    "iou_thresholds": None,
    "ar_iou_thresholds": [0.5, 0.75],
    "recall_score_threshold": 0.0,
    "score_thresholds": None,
    "max_detections": 100,
    "pr_curve_iou_threshold": 0.5,
    "pr_curve_max_examples": 1,
    "zero_division": None,
    "matching": "coco",
    "examples_limit": None,
    "examples_offset": 0,
}
CI = {"ci": 0.9, "ci_method": "bootstrap", "num_bootstrap": 40, "seed": 3}

#: (keyword arguments, the config() they gave before the declaration)
CONFIGS = [
    ({}, BASE),
    (
        {"iou_type": "segm", "iou_thresholds": [0.5, 0.75], "zero_division": 0},
        BASE | {"iou_type": "segm", "iou_thresholds": [0.5, 0.75], "zero_division": 0},
    ),
    (
        {"score_thresholds": [0, 0.5], "matching": "valor", "max_detections": None,
         "examples_limit": 3, "examples_offset": 1},
        BASE | {"score_thresholds": [0.0, 0.5], "matching": "valor", "max_detections": None,
                "examples_limit": 3, "examples_offset": 1},
    ),
    (
        {"ci": 0.9, "num_bootstrap": 40, "seed": 3, "cluster": "group", "by": ["site", "site"]},
        BASE | CI | {"cluster": "group", "by": ["site"]},
    ),
    (
        {"ci": 0.95, "ci_method": "wilson", "by": ["a"], "recall_score_threshold": 0.3,
         "pr_curve_iou_threshold": 0.75, "pr_curve_max_examples": 0, "ar_iou_thresholds": (0.5,)},
        BASE | {"ar_iou_thresholds": [0.5], "recall_score_threshold": 0.3,
                "pr_curve_iou_threshold": 0.75, "pr_curve_max_examples": 0}
        | {"ci": 0.95, "ci_method": "wilson", "num_bootstrap": 1000, "seed": 0, "by": ["a"]},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("given", "before"), CONFIGS)
def test_config_is_the_one_written_by_hand_before(given, before) -> None:
    config = DetectionEvaluator(**given).config()
    assert config == before
    assert list(config) == list(before)  # the same order, so the stored JSON reads the same


def test_the_command_stores_the_parameters_it_stored_before(tmp_path: Path) -> None:
    box = {"label": "cat", "box": [0, 0, 9, 9]}
    gt = [{"uid": u, "metadata": {"site": u}, "annotations": [box]} for u in "ab"]
    pr = [{"uid": "a", "annotations": [{"label": "cat", "score": 0.8, "box": [0, 0, 9, 8]}]}]
    g, p, db = tmp_path / "g.jsonl", tmp_path / "p.jsonl", tmp_path / "runs.db"
    g.write_text("".join(json.dumps(r) + "\n" for r in gt))
    p.write_text("".join(json.dumps(r) + "\n" for r in pr))
    argv = ["detection", "--groundtruths", str(g), "--predictions", str(p), "--save", "--db",
            str(db), "--iou-thresholds", "0.5,0.75", "--max-detections", "all", "--by", "site",
            "--where-predictions", "score > 0.2", "--score-thresholds", "0,0.5"]  # fmt: skip
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output
    (stored,) = sqlite3.connect(db).execute("select parameters from assay_evaluations")
    assert json.loads(stored[0]) == {
        "groundtruths": str(g),
        "predictions": str(p),
        **BASE,
        "iou_type": "bbox",  # the command's default
        "iou_thresholds": [0.5, 0.75],
        "score_thresholds": [0.0, 0.5],
        "max_detections": None,
        "by": ["site"],
        "where_predictions": "score > 0.2",
    }


def test_the_lists_are_read_from_the_table() -> None:
    assert DEFAULT_METRICS == METRICS.defaults == (
        "AP", "APAveragedOverIOUs", "mAP", "mAPAveragedOverIOUs", "AR", "mAR",
        "PrecisionRecallCurve",
    )  # fmt: skip
    assert set(METRICS.sliced) == set(METRICS.with_interval("bootstrap"))
    assert set(METRICS.sliced) == set(METRICS.family("ap")) | {"AR", "mAR"}
    assert OPTIONS.names == (*METRIC_OPTIONS.names, "by")


def test_compute_metrics_takes_the_declared_options() -> None:
    from assay.detection.jsonl import parse_datums

    data = parse_datums(
        [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}],
        [{"uid": "a", "annotations": [{"label": "cat", "score": 0.8, "box": [0, 0, 10, 9]}]}],
    )
    ms = compute_metrics(data, metrics=["mAR"], score_thresholds=[0.5, 0.9])
    assert [m.value for m in ms] == [1.0, 0.0]
    with pytest.raises(InvalidInputError) as e:
        compute_metrics(data, by=["site"])  # slices are the evaluator's
    assert e.value.source == "options" and "'by'" in e.value.reason
    with pytest.raises(InvalidInputError) as e:
        compute_metrics(data, score_thresholds=[0.5], recall_score_threshold=0.5)
    assert e.value.source == "score_thresholds" and "not both" in e.value.reason
    with pytest.raises(InvalidInputError) as e:
        evaluate_detection(data, max_detections=0)
    assert e.value.source == "max_detections"


def test_the_command_line_names_the_flag(tmp_path: Path) -> None:
    for name in ("g.jsonl", "p.jsonl"):
        (tmp_path / name).write_text("")
    base = ["detection", "--groundtruths", str(tmp_path / "g.jsonl"), "--predictions",
            str(tmp_path / "p.jsonl")]  # fmt: skip
    for extra, line in [
        (["--score-thresholds", "0.5,x"], "--score-thresholds: expected comma-separated numbers"),
        (["--pr-curve-max-examples", "-1"], "--pr-curve-max-examples: must be an integer >= 0"),
        (["--score-thresholds", "0.5", "--recall-score-threshold", "0.2"],
         "--score-thresholds: give score_thresholds or recall_score_threshold, not both"),
        (["--ci-method", "wilson"], "--ci-method: chooses how an interval is computed"),
    ]:  # fmt: skip
        r = CliRunner().invoke(app, [*base, *extra])
        assert r.exit_code == 2, r.output
        assert r.output.strip().startswith(f"error: {line}"), r.output


def test_the_table_view_names_registered_types() -> None:
    from assay.detection.report import PER_CLASS, SUMMARY

    assert {t for t, _, _ in (*SUMMARY, *PER_CLASS)} <= set(METRICS.types)
