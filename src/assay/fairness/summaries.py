"""From the fairness evaluator's accumulated counts to its records.

Per privileged-group definition: the four :data:`~assay.fairness.compute.FAIRNESS_METRICS`
computed from its eight counts (undefined ones carry the reason) and the ``GroupCounts`` of
its unprivileged and privileged groups; over all definitions, each metric's mean (undefined
as soon as one definition's value is, naming it); over all datums, accuracy
``(TP + TN) / n``, precision ``TP / (TP + FP)`` and recall ``TP / (TP + FN)`` on the
positive label.

Example:
    >>> import numpy as np
    >>> [m.value for m in overall_records(np.array([2, 1, 1, 0]), positive_label=1)]
    [0.5, 0.6666666666666666, 0.6666666666666666]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay import ratios
from assay.errors import UndefinedMetricError
from assay.fairness import records
from assay.fairness.compute import FAIRNESS_METRICS, FAIRNESS_VALUES, GroupCounts
from assay.fairness.types import PrivilegedGroup
from assay.results import Metric

__all__ = [
    "average_records",
    "average_values",
    "definition_records",
    "definition_values",
    "metric_value",
    "overall_records",
    "overall_values",
]

F64 = NDArray[np.float64]


def metric_value(name: str, c: GroupCounts) -> tuple[float | None, str | None]:
    """``(value, None)`` of fairness metric ``name`` on counts ``c``, or ``(None, reason)``."""
    try:
        return FAIRNESS_METRICS[name](c), None
    except UndefinedMetricError as e:
        return None, e.reason


def _counts_value(c: GroupCounts, i: int, weights: GroupCounts | None) -> dict[str, Any]:
    value: dict[str, Any] = {k: int(getattr(c, k)[i]) for k in ("tp", "fp", "fn", "tn")}
    if weights is not None:
        value |= {f"weighted_{k}": float(getattr(weights, k)[i]) for k in ("tp", "fp", "fn", "tn")}
    return value


def definition_records(
    g: PrivilegedGroup, c: GroupCounts, *, positive_label: Any, weights: GroupCounts | None = None
) -> list[Metric]:
    """The metric records and the two ``GroupCounts`` records of definition ``g``; with
    ``weights`` (the weight sums of the same cells) the metrics are computed from them."""
    on = c if weights is None else weights
    weighted = weights is not None
    out = []
    for name in FAIRNESS_METRICS:
        value, why = metric_value(name, on)
        worst = None
        if name == "EqualOpportunityDifference" and (on.positives == 0).any():
            worst = "a group has no positive labels"
        out.append(
            records.per_definition(
                name,
                value,
                g,
                positive_label=positive_label,
                undefined=why,
                worst_value=worst,
                weighted=weighted,
            )
        )
    for i, which in ((0, "unprivileged"), (1, "privileged")):
        cells = _counts_value(c, i, weights)
        out.append(
            records.group_counts(
                cells, g, which=which, positive_label=positive_label, weighted=weighted
            )
        )
    return out


def average_records(
    groups: Sequence[PrivilegedGroup],
    counts: Sequence[GroupCounts],
    *,
    positive_label: Any,
    weighted: bool = False,
) -> list[Metric]:
    """Each metric's mean over the definitions ``groups`` (with their ``counts``, the weight
    sums when ``weighted``)."""
    out = []
    for name in FAIRNESS_METRICS:
        values = [metric_value(name, c) for c in counts]
        missing = [(g, why) for g, (v, why) in zip(groups, values) if v is None]
        mean = None if missing else float(np.mean([v for v, _ in values]))
        why = (
            f"undefined for definition {missing[0][0].label}: {missing[0][1]}" if missing else None
        )
        out.append(
            records.average(
                name, mean, groups, positive_label=positive_label, undefined=why, weighted=weighted
            )
        )
    return out


def definition_values(c: GroupCounts) -> F64:
    """The values of :func:`definition_records` of counts shaped (..., 2) (many resamples at
    once), shape (..., 6): the four metrics (NaN where undefined) and NaN for the two
    ``GroupCounts``."""
    values = [f(c) for f in FAIRNESS_VALUES.values()]
    nan = np.full(np.shape(values[0]), np.nan)
    return np.stack([*values, nan, nan], axis=-1)


def average_values(c: GroupCounts) -> F64:
    """The values of :func:`average_records` of counts shaped (..., D, 2), shape (..., 4):
    each metric's mean over the D definitions, NaN when one is undefined."""
    return np.stack([np.mean(f(c), axis=-1) for f in FAIRNESS_VALUES.values()], axis=-1)


_OVERALL = (
    ("Accuracy", "requires at least one data point"),
    ("Precision", "requires TP + FP > 0"),
    ("Recall", "requires TP + FN > 0"),
)


def overall_values(overall: NDArray[Any]) -> F64:
    """Accuracy, precision and recall of ``[TP, FP, FN, TN]`` (weighted) counts shaped
    (..., 4), shape (..., 3), NaN where undefined."""
    tp, fp, fn, tn = (np.asarray(overall, np.float64)[..., i] for i in range(4))
    nums, dens = (tp + tn, tp, tp), (tp + fp + fn + tn, tp + fp, tp + fn)
    return np.stack([ratios.divide(a, b) for a, b in zip(nums, dens)], axis=-1)


def overall_records(
    overall: NDArray[Any], *, positive_label: Any, weighted: bool = False
) -> list[Metric]:
    """Accuracy, precision and recall from the overall ``[TP, FP, FN, TN]`` (weighted) counts."""
    values = overall_values(overall)
    return [
        records.overall(name, ratios.value_or_none(v), positive_label=positive_label,
                        undefined=req, weighted=weighted)
        for (name, req), v in zip(_OVERALL, values.tolist())
    ]  # fmt: skip
