"""Classification metrics: counts, precision/recall/F1/accuracy, ROC AUC, PR curves, detailed PR curves.

Functional API (arrays in, number out) and :class:`ClassificationEvaluator` (batches in,
metric records out). Spec: ``spec/valor-metrics.md`` "Classification Metrics" and
``spec/fairness-and-llm-suites.md`` "Accuracy", "Precision", "Recall".
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
from assay.classification.types import DEFAULT_KEY, KeyBlock, block_from_arrays, parse_long_form

__all__ = [
    "DEFAULT_KEY",
    "DEFAULT_PR_CURVE_THRESHOLDS",
    "METRIC_TYPES",
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
