"""The classification options and metric types, declared once (issue 35 items 3 and 4),
leave what is stored as it was.

``declared_baseline.json`` holds, for the configurations below, what the code before the
declaration gave: the evaluator's ``config()`` (what two evaluators must share to merge,
and what ``from_state`` rebuilds from) and the parameters ``assay classification --save``
stores. Both must come out the same, key order included (the stored JSON is text).
Regenerate only on purpose: ``python tests/classification/test_classification_declared.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "data" / "declared_baseline.json"
INPUTS = HERE.parent / "pinned" / "inputs"

#: Keyword arguments of ClassificationEvaluator.
CONFIGS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "thresholds": {"score_thresholds": [0.5, 0.1], "pr_curve_thresholds": [0.9, 0.2, 0.5]},
    "metrics": {"metrics": ["Precision", "ROCCurve", "Examples"], "pr_curve_max_examples": 0},
    "examples": {"number_of_examples": 2, "examples_limit": 3, "examples_offset": 1},
    "soft-zero": {"hardmax": False, "zero_division": 0},
    "compact": {"compact": True, "pr_curve_max_examples": 0},
    "ci": {"ci": 0.9},
    "ci-all": {
        "ci": 0.8,
        "ci_method": "delong",
        "num_bootstrap": 50,
        "seed": 4,
        "cluster": "site",
        "by": ["site", "batch", "site"],
    },
    "by": {"by": ["site"]},
}

BIN = ["--data", "binary.csv", "--y-true", "label", "--y-score", "proba", "--positive-label", "pos"]
MULTI = ["--data", "multiclass.csv", "--y-true", "label", "--y-score-columns", "cat,dog,fox"]
LONG = ["--groundtruths", "long_groundtruths.jsonl", "--predictions", "long_predictions.jsonl"]

#: Arguments of ``assay classification`` (file names are those of tests/pinned/inputs).
COMMANDS: dict[str, list[str]] = {
    "long": LONG,
    "long-where-by": [
        *LONG,
        "--where",
        "site == 'y'",
        "--by",
        "site",
        "--cluster",
        "batch",
        "--ci",
        "0.9",
    ],
    "long-where-all": [
        *LONG,
        "--where-groundtruths",
        "label != 'red'",
        "--where-predictions",
        "score > 0.1",
        "--metrics",
        "Precision,Recall",
    ],
    "binary": [*BIN, "--score-thresholds", "0,0.5", "--pr-curve-max-examples", "0"],
    "binary-ci": [
        *BIN,
        "--ci",
        "0.9",
        "--num-bootstrap",
        "50",
        "--cluster",
        "patient",
        "--by",
        "site",
    ],
    "binary-wilson": [*BIN, "--ci", "0.95", "--ci-method", "wilson", "--seed", "2"],
    "multi": [*MULTI, "--no-hardmax", "--zero-division", "0", "--metrics", "Accuracy,Examples"],
    "multi-meta": [*MULTI, "--metadata-columns", "patient", "--by", "site", "--uid-column", "uid"],
    "multi-compact": [*MULTI, "--compact", "--pr-curve-max-examples", "0"],
    "multi-examples": [
        *MULTI,
        "--metrics",
        "ConfusionMatrixWithExamples,Examples",
        "--number-of-examples",
        "1",
        "--examples-limit",
        "2",
        "--examples-offset",
        "1",
    ],
}


def config_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    from assay.classification import ClassificationEvaluator

    return ClassificationEvaluator(**kwargs).config()


def stored_by(args: list[str], monkeypatch: Any) -> dict[str, Any]:
    """The parameters ``assay classification ARGS --save`` stores (the store call caught)."""
    import assay.cli.support as support
    from assay.cli.main import app

    caught: dict[str, Any] = {}

    def save(metrics: Any, **kw: Any) -> None:
        caught.update(kw)

    monkeypatch.setattr(support, "save_metrics", save)
    argv = ["classification", *(str(INPUTS / a) if (INPUTS / a).is_file() else a for a in args)]
    r = CliRunner().invoke(app, [*argv, "--save"])
    assert r.exit_code == 0, r.output
    params = dict(caught["parameters"])
    for k, v in params.items():  # the input paths, relative to the inputs folder
        if isinstance(v, str) and v.startswith(str(INPUTS)):
            params[k] = Path(v).name
    return {"kind": caught["kind"], "dataset": Path(caught["dataset"]).name, "parameters": params}


def _baseline() -> dict[str, Any]:
    return json.loads(BASELINE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_is_as_before(name: str) -> None:
    got = json.loads(json.dumps(config_of(CONFIGS[name])))
    want = _baseline()["config"][name]
    assert got == want
    assert list(got) == list(want)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_stored_parameters_are_as_before(name: str, monkeypatch: Any) -> None:
    got = json.loads(json.dumps(stored_by(COMMANDS[name], monkeypatch)))
    want = _baseline()["stored"][name]
    assert got == want
    assert list(got["parameters"]) == list(want["parameters"])


if __name__ == "__main__":  # regenerate the baseline from the code as it is
    mp = pytest.MonkeyPatch()
    out = {
        "config": {k: config_of(v) for k, v in CONFIGS.items()},
        "stored": {k: stored_by(v, mp) for k, v in COMMANDS.items()},
    }
    mp.undo()
    BASELINE.parent.mkdir(exist_ok=True)
    BASELINE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {BASELINE}\n")
