"""Demo section: a scikit-learn model on the breast-cancer data that ships with scikit-learn,
evaluated with assay (classification metrics, then group fairness on an illustrative split)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from assay.classification import DEFAULT_METRICS, ClassificationEvaluator
from assay.fairness import PrivilegedGroup, evaluate_fairness
from assay.fairness.report import fairness_tables
from assay.report import metrics_table
from assay.results import MetricSet
from saving import save


def run(out_dir: Path, console: Console) -> None:
    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.map(dict(enumerate(data.target_names)))  # "malignant" / "benign"
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_tr, y_tr)
    proba = model.predict_proba(X_te)

    # Long-form inputs, exactly as the CLI reads them from files.
    uids = [f"patient-{i}" for i in X_te.index]
    groundtruths = pd.DataFrame({"uid": uids, "value": y_te.to_numpy()})
    predictions = pd.DataFrame(
        {
            "uid": np.repeat(uids, len(model.classes_)),
            "value": np.tile(model.classes_, len(uids)),
            "score": proba.ravel(),
        }
    )
    metrics = (
        ClassificationEvaluator(
            score_thresholds=[0.0, 0.5, 0.9],
            pr_curve_max_examples=2,
            metrics=[*DEFAULT_METRICS, "ROCCurve"],  # the exact ROC curve, for the report
        )
        .add(groundtruths, predictions)
        .compute()
    )
    headline = MetricSet(
        m
        for m in metrics
        if m.type in ("Accuracy", "Precision", "Recall", "F1", "ROCAUC", "mROCAUC")
        and m.parameters.get("score_threshold", 0.5) == 0.5
    )
    console.print(
        metrics_table(
            headline, title=f"Logistic regression, breast cancer test set ({len(uids)} patients)"
        )
    )
    (out_dir / "classification.json").write_text(metrics.to_json(indent=2))
    data = "sklearn breast_cancer (test split)"
    save(out_dir, metrics, console, kind="classification", dataset=data, model="logistic")

    # Group fairness on an illustrative split: tumours whose mean texture is above the median
    # of the whole data set form the "privileged" group. The threshold is the real median, so
    # the records (threshold, privileged) say exactly who is in the group.
    median = float(np.median(X["mean texture"]))
    group = PrivilegedGroup("mean texture", median)
    table = pd.DataFrame(
        {
            "label": y_te.to_numpy(),
            "prediction": model.predict(X_te),
            "mean texture": X_te["mean texture"].to_numpy(),
        }
    )
    fairness = evaluate_fairness(
        table, label="label", prediction="prediction", groups=[group], positive_label="benign"
    )
    console.print(*fairness_tables(fairness))  # what `assay fairness --format table` prints
    (out_dir / "fairness.json").write_text(fairness.to_json(indent=2))
    save(out_dir, fairness, console, kind="fairness", dataset=data, model="logistic")
    console.print(
        f"wrote {out_dir / 'classification.json'} ({len(metrics)} records) "
        f"and {out_dir / 'fairness.json'}"
    )
