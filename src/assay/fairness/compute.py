"""Group-fairness metrics from eight counts.

Every metric compares the *unprivileged* group (u) with the *privileged* group (p), on
binarised labels ``y_true == positive_label`` and predictions ``y_pred == positive_label``:

* statistical parity difference  ``SPD = P(ŷ=1 | u) - P(ŷ=1 | p)``                 fair value 0
* disparate impact               ``DI  = P(ŷ=1 | u) / P(ŷ=1 | p)``                 fair value 1
* average odds difference        ``AOD = ((FPR_u - FPR_p) + (TPR_u - TPR_p)) / 2``  fair value 0
* equal opportunity difference   ``EOD = TPR_u - TPR_p``                            fair value 0

SPD and DI require both groups to be non-empty (DI also a positive prediction rate in the
privileged group, its denominator); AOD requires positives and negatives (by label) in both
groups. These raise :class:`~assay.errors.UndefinedMetricError` otherwise. EOD returns its
worst value 1.0 when either group has no positive labels (the convention of the fairness
suites assay follows), and the evaluator flags that value.

All four are computed from eight counts per group definition (:class:`GroupCounts`), which
add up exactly across batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay import ratios
from assay._compat import removed_keywords
from assay._validation import as_1d, check_same_length
from assay.errors import UndefinedMetricError

__all__ = [
    "FAIRNESS_METRICS",
    "GroupCounts",
    "group_counts",
    "FAIRNESS_VALUES",
    "statistical_parity_difference",
    "disparate_impact",
    "average_odds_difference",
    "equal_opportunity_difference",
    "EOD_WORST",
]

#: The value EOD takes when a group has no positive labels (its worst value).
EOD_WORST = 1.0


@dataclass(frozen=True)
class GroupCounts:
    """Confusion counts of the unprivileged (index 0) and privileged (index 1) groups.

    Each attribute is an int array of shape (2,): ``tp``, ``fp``, ``fn``, ``tn``.
    """

    tp: NDArray[np.int64]
    fp: NDArray[np.int64]
    fn: NDArray[np.int64]
    tn: NDArray[np.int64]

    def __add__(self, other: GroupCounts) -> GroupCounts:
        return GroupCounts(
            self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn
        )

    @property
    def size(self) -> NDArray[np.int64]:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def predicted_positive(self) -> NDArray[np.int64]:
        return self.tp + self.fp

    @property
    def positives(self) -> NDArray[np.int64]:
        return self.tp + self.fn

    @property
    def negatives(self) -> NDArray[np.int64]:
        return self.fp + self.tn

    @classmethod
    def of_cells(cls, cells: NDArray[Any]) -> GroupCounts:
        """The counts of cells shaped (..., 4, 2): TP, FP, FN, TN x (unprivileged,
        privileged); each count shaped (..., 2) (many resamples, or definitions, at once)."""
        return cls(*(cells[..., i, :] for i in range(4)))

    @classmethod
    def zeros(cls) -> GroupCounts:
        z = np.zeros(2, dtype=np.int64)
        return cls(z, z, z, z)


@removed_keywords(pos_label="positive_label")
def group_counts(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    privileged: ArrayLike,
    *,
    positive_label: Any = 1,
    sample_weight: NDArray[np.float64] | None = None,
) -> GroupCounts:
    """Count TP/FP/FN/TN per group in one vectorised pass.

    A label or prediction equal to ``positive_label`` is positive. With ``sample_weight``
    (checked floats, one per datum) each cell is the sum of its datums' weights instead of
    their number.

    Example:
        >>> c = group_counts([1, 0, 1, 0], [1, 1, 0, 0], [True, True, False, False])
        >>> c.tp.tolist(), c.fp.tolist()  # [unprivileged, privileged]
        ([0, 1], [0, 1])
    """
    t = as_1d(y_true, source="y_true")
    p = as_1d(y_pred, source="y_pred")
    g = as_1d(privileged, source="privileged").astype(bool)
    check_same_length(y_true=t, y_pred=p, privileged=g)
    t, p = t == positive_label, p == positive_label
    cell = g.astype(np.int64) * 4 + t.astype(np.int64) * 2 + p.astype(np.int64)
    c = np.bincount(cell, weights=sample_weight, minlength=8).reshape(2, 2, 2)  # [g, t, p]
    return GroupCounts(tp=c[:, 1, 1], fp=c[:, 0, 1], fn=c[:, 1, 0], tn=c[:, 0, 0])


def _require(cond: bool, metric: str, reason: str) -> None:
    if not cond:
        raise UndefinedMetricError(metric, reason)


def _rates(num: NDArray[Any], den: NDArray[Any]) -> tuple[NDArray[np.float64], ...]:
    """The unprivileged and the privileged group's rate (last axis), NaN where 0/0."""
    r = ratios.divide(num, den)
    return r[..., 0], r[..., 1]


def spd_values(c: GroupCounts) -> NDArray[np.float64]:
    """SPD of counts shaped (..., 2) (the last axis: unprivileged, privileged), NaN where
    undefined: the one formula of :func:`spd_from_counts` and the bootstrap's replicates."""
    u, p = _rates(c.predicted_positive, c.size)
    return u - p


def di_values(c: GroupCounts) -> NDArray[np.float64]:
    """DI of counts shaped (..., 2), NaN where undefined (see :func:`spd_values`)."""
    u, p = _rates(c.predicted_positive, c.size)
    return ratios.divide(u, p)


def aod_values(c: GroupCounts) -> NDArray[np.float64]:
    """AOD of counts shaped (..., 2), NaN where undefined (see :func:`spd_values`)."""
    tu, tp = _rates(c.tp, c.positives)
    fu, fp = _rates(c.fp, c.negatives)
    return ((fu - fp) + (tu - tp)) / 2


def eod_values(c: GroupCounts) -> NDArray[np.float64]:
    """EOD of counts shaped (..., 2): :data:`EOD_WORST` where a group has no positive
    labels (see :func:`spd_values`)."""
    u, p = _rates(c.tp, c.positives)
    return np.where((np.asarray(c.positives) == 0).any(axis=-1), EOD_WORST, u - p)


def _nonempty(c: GroupCounts, metric: str) -> None:
    n = c.size
    _require(n[0] > 0, metric, "requires the unprivileged group to have elements")
    _require(n[1] > 0, metric, "requires the privileged group to have elements")


def spd_from_counts(c: GroupCounts) -> float:
    """Statistical parity difference from counts (see :func:`statistical_parity_difference`)."""
    _nonempty(c, "StatisticalParityDifference")
    return float(spd_values(c))


def di_from_counts(c: GroupCounts) -> float:
    """Disparate impact from group counts (see :func:`disparate_impact`)."""
    _nonempty(c, "DisparateImpact")
    _require(
        c.predicted_positive[1] > 0,
        "DisparateImpact",
        "requires a positive prediction in the privileged group (denominator 0)",
    )
    return float(di_values(c))


def aod_from_counts(c: GroupCounts) -> float:
    """Average odds difference from group counts (see :func:`average_odds_difference`)."""
    for i, name in ((0, "unprivileged"), (1, "privileged")):
        _require(
            c.positives[i] > 0,
            "AverageOddsDifference",
            f"requires positive labels in the {name} group",
        )
        _require(
            c.negatives[i] > 0,
            "AverageOddsDifference",
            f"requires negative labels in the {name} group",
        )
    return float(aod_values(c))


def eod_from_counts(c: GroupCounts) -> float:
    """Equal opportunity difference from group counts (see :func:`equal_opportunity_difference`)."""
    return float(eod_values(c))


#: Metric type -> kernel on :class:`GroupCounts`, in report order.
FAIRNESS_METRICS = {
    "StatisticalParityDifference": spd_from_counts,
    "DisparateImpact": di_from_counts,
    "AverageOddsDifference": aod_from_counts,
    "EqualOpportunityDifference": eod_from_counts,
}

#: Metric type -> the same metric on counts shaped (..., 2), NaN where undefined.
FAIRNESS_VALUES = {
    "StatisticalParityDifference": spd_values,
    "DisparateImpact": di_values,
    "AverageOddsDifference": aod_values,
    "EqualOpportunityDifference": eod_values,
}


@removed_keywords(pos_label="positive_label")
def statistical_parity_difference(
    y_pred: ArrayLike, privileged: ArrayLike, *, positive_label: Any = 1
) -> float:
    """Statistical parity difference ``P(ŷ=pos | u) - P(ŷ=pos | p)``.

    The rate of positive predictions in the unprivileged group minus that in the
    privileged group; 0 is fair. Requires both groups to be non-empty.

    Example:
        >>> statistical_parity_difference([1, 0, 1, 1], [False, False, True, True])
        -0.5
    """
    return spd_from_counts(group_counts(y_pred, y_pred, privileged, positive_label=positive_label))


@removed_keywords(pos_label="positive_label")
def disparate_impact(y_pred: ArrayLike, privileged: ArrayLike, *, positive_label: Any = 1) -> float:
    """Disparate impact ``P(ŷ=pos | u) / P(ŷ=pos | p)``.

    The ratio of the positive-prediction rates; 1 is fair. Requires both groups non-empty
    and a positive prediction in the privileged group (the denominator).

    Example:
        >>> disparate_impact([1, 0, 1, 1], [False, False, True, True])
        0.5
    """
    return di_from_counts(group_counts(y_pred, y_pred, privileged, positive_label=positive_label))


@removed_keywords(pos_label="positive_label")
def average_odds_difference(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    privileged: ArrayLike,
    *,
    positive_label: Any = 1,
) -> float:
    """Average odds difference ``((FPR_u - FPR_p) + (TPR_u - TPR_p)) / 2``.

    TPR = TP / (TP + FN) and FPR = FP / (FP + TN) within a group; 0 is fair. Requires
    positive and negative labels in both groups.

    Example:
        >>> average_odds_difference([1, 0, 1, 0], [1, 1, 0, 0], [True, True, False, False])
        -1.0
    """
    return aod_from_counts(group_counts(y_true, y_pred, privileged, positive_label=positive_label))


@removed_keywords(pos_label="positive_label")
def equal_opportunity_difference(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    privileged: ArrayLike,
    *,
    positive_label: Any = 1,
) -> float:
    """Equal opportunity difference ``TPR_u - TPR_p``: the gap in recall; 0 is fair.

    When either group has no positive labels, the worst value 1.0 (:data:`EOD_WORST`).

    Example:
        >>> equal_opportunity_difference([1, 1, 1, 1], [1, 0, 1, 1], [False, False, True, True])
        -0.5
        >>> equal_opportunity_difference([0, 1], [0, 1], [False, True])
        1.0
    """
    return eod_from_counts(group_counts(y_true, y_pred, privileged, positive_label=positive_label))
