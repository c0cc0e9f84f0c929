"""`assay classification --data` (scikit-learn layouts) and `--format table`, differentially
against scikit-learn's confusion_matrix and classification_report."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()
TOL = 1e-12


def _run(*args):
    r = runner.invoke(app, ["classification", *map(str, args)])
    return r, r.stdout + r.stderr


def _binary_frame(seed=0, n=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1), 2)  # ties
    return pd.DataFrame({"label": y, "proba": s})


def _multiclass_frame(seed=1, n=300):
    rng = np.random.default_rng(seed)
    labels = ["cat", "dog", "fox", "owl"]
    y = rng.integers(0, 3, n)  # "owl" never occurs as truth
    logits = rng.normal(size=(n, 4))
    logits[np.arange(n), y] += 1.5
    p = np.exp(logits)
    p = np.round(p / p.sum(axis=1, keepdims=True), 2)
    frame = pd.DataFrame(p, columns=labels)
    frame.insert(0, "truth", np.asarray(labels)[y])
    return frame, labels


def _write(frame, path):
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_json(path, orient="records", lines=True)
    return path


def _records(text):
    return [m for m in json.loads(text)]


def _counts(records, label, threshold=0.5):
    (m,) = [
        r
        for r in records
        if r["type"] == "Counts"
        and r["parameters"]["label_value"] == label
        and r["parameters"]["score_threshold"] == threshold
    ]
    return m["value"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_binary_y_score_matches_sklearn(tmp_path, suffix):
    frame = _binary_frame()
    path = _write(frame, tmp_path / f"data{suffix}")
    r, text = _run("--data", path, "--y-true", "label", "--y-score", "proba")
    assert r.exit_code == 0, text
    records = _records(r.stdout)
    # hardmax: the top of [1 - s, s], a tie going to the first column (numpy's argmax)
    proba = np.column_stack([1 - frame.proba, frame.proba])
    y_pred = np.argmax(proba, axis=1)
    cm = skm.confusion_matrix(frame.label, y_pred, labels=[0, 1])
    tn, fp, fn, tp = cm.ravel()
    assert _counts(records, "1", 0.0) == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    (matrix,) = [m for m in records if m["type"] == "ConfusionMatrix"]
    grid = matrix["value"]["confusion_matrix"]
    assert [[grid[g][p] for p in ("0", "1")] for g in ("0", "1")] == cm.tolist()
    assert sum(matrix["value"]["unmatched_ground_truths"].values()) == 0
    (auc,) = [m for m in records if m["type"] == "ROCAUC" and m["parameters"]["label_value"] == "1"]
    assert abs(auc["value"] - skm.roc_auc_score(frame.label, frame.proba)) < TOL


def test_binary_threshold_without_hardmax_is_sklearns_threshold(tmp_path):
    """--no-hardmax at 0.5: the positive label counts when its score is >= 0.5."""
    frame = _binary_frame(4)
    path = _write(frame, tmp_path / "d.csv")
    r, text = _run(
        "--data",
        path,
        "--y-true",
        "label",
        "--y-score",
        "proba",
        "--no-hardmax",
        "--score-thresholds",
        "0.5",
        "--metrics",
        "Counts",
    )
    assert r.exit_code == 0, text
    y_pred = (frame.proba >= 0.5).astype(int)
    tn, fp, fn, tp = skm.confusion_matrix(frame.label, y_pred, labels=[0, 1]).ravel()
    assert _counts(_records(r.stdout), "1", 0.5) == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def test_positive_label_names_the_scored_class(tmp_path):
    frame = _binary_frame(2)
    frame["label"] = np.where(frame.label == 1, "spam", "ham")
    path = _write(frame, tmp_path / "d.csv")
    r, text = _run(
        "--data",
        path,
        "--y-true",
        "label",
        "--y-score",
        "proba",
        "--positive-label",
        "spam",
        "--metrics",
        "ROCAUC",
    )
    assert r.exit_code == 0, text
    got = {m["parameters"]["label_value"]: m["value"] for m in _records(r.stdout)}
    want = skm.roc_auc_score(frame.label == "spam", frame.proba)
    assert abs(got["spam"] - want) < TOL
    assert abs(got["ham"] - want) < TOL  # the complement scores 1 - s: the same ranking


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_predict_proba_columns_match_sklearn_report(tmp_path, suffix):
    frame, labels = _multiclass_frame()
    path = _write(frame, tmp_path / f"data{suffix}")
    r, text = _run(
        "--data",
        path,
        "--y-true",
        "truth",
        "--y-score-columns",
        ",".join(labels),
        "--zero-division",
        "0",
    )
    assert r.exit_code == 0, text
    records = _records(r.stdout)
    y_pred = np.asarray(labels)[np.argmax(frame[labels].to_numpy(), axis=1)]
    want = skm.classification_report(
        frame.truth, y_pred, labels=labels, output_dict=True, zero_division=0
    )
    from assay.classification import classification_report
    from assay.results import Metric, MetricSet

    ms = MetricSet(Metric.from_dict(d) for d in records)
    got = classification_report(ms, output_dict=True)["class"][0.0]
    compared = 0
    for name in [*labels, "macro avg", "weighted avg"]:
        for field in ("precision", "recall", "f1-score", "support"):
            assert abs(got[name][field] - want[name][field]) < TOL, (name, field)
            compared += 1
    assert abs(got["accuracy"] - skm.accuracy_score(frame.truth, y_pred)) < TOL
    (matrix,) = [m for m in records if m["type"] == "ConfusionMatrix"]
    grid = matrix["value"]["confusion_matrix"]
    cm = skm.confusion_matrix(frame.truth, y_pred, labels=labels)
    assert [[grid[g][p] for p in labels] for g in labels] == cm.tolist()
    assert compared == 24


def test_table_format_is_a_readable_report(tmp_path):
    frame, labels = _multiclass_frame()
    path = _write(frame, tmp_path / "d.csv")
    out = tmp_path / "out.json"
    r, text = _run(
        "--data",
        path,
        "--y-true",
        "truth",
        "--y-score-columns",
        ",".join(labels),
        "--format",
        "table",
        "--out",
        out,
        "--score-thresholds",
        "0,0.5",
    )
    assert r.exit_code == 0, text
    assert "entries}" not in r.stdout
    assert r.stdout.count("precision    recall  f1-score   support") == 2
    assert "truth \\ predicted" in r.stdout and "unmatched" in r.stdout
    assert "PrecisionRecallCurve class=cat: 19 thresholds, best F1" in r.stdout
    assert "weighted avg" in r.stdout
    # undefined precision (owl is never predicted) shows as '-' without --zero-division
    owl = [line for line in r.stdout.splitlines() if line.strip().startswith("owl ")]
    assert owl and "-" in owl[0], owl
    assert any(m["type"] == "Accuracy" for m in json.loads(out.read_text()))


def test_no_hardmax_counts_every_label_at_or_above_the_threshold(tmp_path):
    frame, labels = _multiclass_frame()
    path = _write(frame, tmp_path / "d.csv")
    r, text = _run(
        "--data",
        path,
        "--y-true",
        "truth",
        "--y-score-columns",
        ",".join(labels),
        "--no-hardmax",
        "--score-thresholds",
        "0.5",
        "--metrics",
        "Counts",
    )
    assert r.exit_code == 0, text
    for label in labels:
        c = _counts(_records(r.stdout), label)
        passing = frame[label] >= 0.5
        assert c["tp"] == int((passing & (frame.truth == label)).sum())
        assert c["fp"] == int((passing & (frame.truth != label)).sum())


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--y-true", "nope", "--y-score", "proba"], ["d.csv", "nope", "missing column"]),
        (["--y-true", "label"], ["--y-score"]),
        (["--y-score", "proba"], ["--y-true"]),
        (["--y-true", "label", "--y-score", "label", "--y-score-columns", "a"], ["exactly one"]),
        (["--y-true", "label", "--y-score-columns", "proba"], ["d.csv", "row 1", "label"]),
        (["--groundtruths", "d.csv", "--y-true", "label", "--y-score", "proba"], ["either"]),
    ],
)
def test_bad_wide_input_exit_2(tmp_path, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    frame = _binary_frame(3, 10)
    frame.loc[4, "proba"] = 1.5
    _write(frame.iloc[:4], tmp_path / "d.csv")
    _write(frame, tmp_path / "bad.csv")
    r, text = _run("--data", "d.csv", *args)
    assert r.exit_code == 2, text
    assert "Traceback" not in text
    for frag in fragments:
        assert frag in text, (frag, text)
    r, text = _run("--data", "bad.csv", "--y-true", "label", "--y-score", "proba")
    assert r.exit_code == 2 and "bad.csv" in text and "row 5" in text and "proba" in text, text
