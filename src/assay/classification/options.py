"""The options of :class:`~assay.classification.evaluator.ClassificationEvaluator`: its
metric types and the checks of its thresholds and of ``compact``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from assay.errors import InvalidInputError

__all__ = ["DEFAULT_METRICS", "METRIC_TYPES", "check_compact", "check_thresholds"]

METRIC_TYPES: tuple[str, ...] = (
    "Counts",
    "Precision",
    "Recall",
    "F1",
    "Accuracy",
    "ROCAUC",
    "mROCAUC",
    "ROCCurve",
    "PrecisionRecallCurve",
    "DetailedPrecisionRecallCurve",
    "ConfusionMatrix",
    "ConfusionMatrixWithExamples",
    "Examples",
)

#: Computed when ``metrics`` is not given: all but the exact ROC curve (as long as the
#: data) and the per-datum and example-carrying types.
DEFAULT_METRICS: tuple[str, ...] = tuple(
    t for t in METRIC_TYPES if t not in ("ROCCurve", "ConfusionMatrixWithExamples", "Examples")
)


def check_thresholds(values: Iterable[float], source: str) -> tuple[float, ...]:
    """Score thresholds as floats in [0, 1], or an error naming the entry.

    Example:
        >>> check_thresholds([0.5, 1], "score_thresholds")
        (0.5, 1.0)
    """
    out = []
    for i, v in enumerate(values):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"expected a number, got {v!r}", source=source, record=f"index {i}"
            ) from None
        if not 0.0 <= f <= 1.0:  # also refuses NaN
            raise InvalidInputError(
                f"a score threshold must be in [0, 1], got {v!r}",
                source=source,
                record=f"index {i}",
            )
        out.append(f)
    return tuple(out)


def check_compact(compact: Any, max_examples: int, metrics: tuple[str, ...]) -> bool:
    """``compact`` as a bool, refused where the evaluator must keep datums (examples)."""
    if not isinstance(compact, (bool, np.bool_)):
        raise InvalidInputError(f"must be true or false, got {compact!r}", source="compact")
    named = sorted(set(metrics) & {"ConfusionMatrixWithExamples", "Examples"})
    if compact and (max_examples or named):
        why = f"metric types {named}" if named else "pr_curve_max_examples > 0"
        raise InvalidInputError(
            f"compact keeps counts, not datums, but {why} name datums: set "
            "pr_curve_max_examples=0 and leave out ConfusionMatrixWithExamples and Examples",
            source="compact",
        )
    return bool(compact)
