"""Binary classification as scikit-learn users hold it (``--data --y-score --positive-label
1``): the records keep both labels (valor-lite's view), and the table puts the positive
label's precision, recall and F1 first under the decision rule they are computed at, the
top-scoring label, i.e. score > 0.5: each equal to scikit-learn's call (docs/classification.md
maps every record to its scikit-learn call)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
from sklearn import metrics as skm
from typer.testing import CliRunner

from assay.cli.main import app


def test_positive_label_first_with_its_decision_rule(tmp_path):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    p = np.round(np.clip(0.35 * y + 0.65 * rng.random(300), 0, 1), 3)
    p[:5] = 0.5  # ties go to the negative label, as scikit-learn's predict (p > 0.5)
    data = tmp_path / "d.csv"
    pd.DataFrame({"y": y, "p": p}).to_csv(data, index=False)
    argv = ["classification", "--data", str(data), "--y-true", "y", "--y-score", "p",
            "--positive-label", "1"]  # fmt: skip
    runner = CliRunner()
    records = json.loads(runner.invoke(app, argv).stdout)
    table = runner.invoke(app, [*argv, "--format", "table"], env={"COLUMNS": "200"}).stdout

    pred = (p > 0.5).astype(int)
    want = {
        "Precision": skm.precision_score(y, pred),
        "Recall": skm.recall_score(y, pred),
        "F1": skm.f1_score(y, pred),
    }
    got = {
        r["type"]: r["value"]
        for r in records
        if r["parameters"].get("label_value") == "1" and r["type"] in want
    }
    assert got == {k: float(v) for k, v in want.items()} or all(
        abs(got[k] - want[k]) < 1e-12 for k in want
    )
    assert {r["parameters"].get("label_value") for r in records if r["type"] == "F1"} == {"0", "1"}
    (acc,) = [r["value"] for r in records if r["type"] == "Accuracy"]
    assert abs(acc - skm.accuracy_score(y, pred)) < 1e-12

    first, second = table.splitlines()[:2]
    assert first.startswith("positive label '1': ")
    for name, key in (("precision", "Precision"), ("recall", "Recall"), ("f1-score", "F1")):
        shown = float(re.search(rf"{name} (\d\.\d\d)", first).group(1))
        assert abs(shown - want[key]) <= 0.0051
    assert "top-scoring label" in second and "above 0.5" in second
