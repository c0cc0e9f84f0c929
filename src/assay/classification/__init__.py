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
from assay.classification.evaluator import (
    METRIC_TYPES,
    ClassificationEvaluator,
    evaluate_classification,
)
from assay.classification.io import parse_long_form
from assay.classification.types import DEFAULT_KEY, KeyBlock, block_from_arrays
from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS

__all__ = [
    "DEFAULT_KEY",
    "DEFAULT_PR_CURVE_THRESHOLDS",
    "METRIC_TYPES",
    "PR_CURVE_SCORE_THRESHOLDS",
    "ClassificationEvaluator",
    "KeyBlock",
    "accuracy_score",
    "block_from_arrays",
    "confusion_counts",
    "evaluate_classification",
    "f1_score",
    "parse_long_form",
    "pr_curve_counts",
    "precision_score",
    "recall_score",
    "roc_auc_score",
]
