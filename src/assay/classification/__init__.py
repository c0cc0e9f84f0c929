"""Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, (detailed) PR curves.

Functional API (arrays in, number out: :func:`precision_score`, :func:`roc_auc_score`, ...),
the accumulating :class:`ClassificationEvaluator` (batches in, metric records out) and the
one-call :func:`evaluate_classification`.

Example:
    >>> from assay.classification import evaluate_classification, roc_auc_score
    >>> roc_auc_score([0, 1, 1], [0.2, 0.9, 0.6])
    1.0
    >>> ms = evaluate_classification([{"uid": "a", "value": "cat"}],
    ...                              [{"uid": "a", "value": "cat", "score": 0.9}])
    >>> ms.get("Accuracy", score_threshold=0.0).value
    1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

# Names load on first use (PEP 562), so importing assay.cli.classification for `--help`
# does not import numpy/pandas code it does not need.
_WHERE = {
    "DEFAULT_PR_CURVE_THRESHOLDS": "assay.classification.compute",
    "accuracy_score": "assay.classification.compute",
    "confusion_counts": "assay.classification.compute",
    "f1_score": "assay.classification.compute",
    "pr_curve_counts": "assay.classification.compute",
    "precision_score": "assay.classification.compute",
    "recall_score": "assay.classification.compute",
    "roc_auc_score": "assay.classification.compute",
    "METRIC_TYPES": "assay.classification.declared",
    "ClassificationEvaluator": "assay.classification.evaluator",
    "evaluate_classification": "assay.classification.evaluator",
    "parse_long_form": "assay.classification.io",
    "parse_wide": "assay.classification.wide",
    "DEFAULT_METRICS": "assay.classification.declared",
    "classification_report": "assay.classification.report",
    "DEFAULT_KEY": "assay.classification.types",
    "KeyBlock": "assay.classification.types",
    "block_from_arrays": "assay.classification.types",
    "PR_CURVE_SCORE_THRESHOLDS": "assay.thresholds",
}

__all__ = [
    "ClassificationEvaluator",
    "DEFAULT_KEY",
    "DEFAULT_PR_CURVE_THRESHOLDS",
    "KeyBlock",
    "METRIC_TYPES",
    "PR_CURVE_SCORE_THRESHOLDS",
    "accuracy_score",
    "block_from_arrays",
    "confusion_counts",
    "evaluate_classification",
    "f1_score",
    "parse_long_form",
    "parse_wide",
    "DEFAULT_METRICS",
    "classification_report",
    "pr_curve_counts",
    "precision_score",
    "recall_score",
    "roc_auc_score",
]

if TYPE_CHECKING:
    from assay.classification.compute import (
        DEFAULT_PR_CURVE_THRESHOLDS,
        accuracy_score,
        confusion_counts,
        f1_score,
        pr_curve_counts,
        precision_score,
        recall_score,
        roc_auc_score,
    )
    from assay.classification.declared import DEFAULT_METRICS, METRIC_TYPES
    from assay.classification.evaluator import ClassificationEvaluator, evaluate_classification
    from assay.classification.io import parse_long_form
    from assay.classification.report import classification_report
    from assay.classification.types import DEFAULT_KEY, KeyBlock, block_from_arrays
    from assay.classification.wide import parse_wide
    from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
