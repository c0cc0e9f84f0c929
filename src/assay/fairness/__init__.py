"""Group fairness: privileged groups by threshold; statistical parity difference, disparate
impact, average odds difference and equal opportunity difference.

Functional API on arrays (:func:`statistical_parity_difference`, ...), the accumulating
:class:`FairnessEvaluator` and the one-call :func:`evaluate_fairness`.

Example:
    >>> from assay.fairness import disparate_impact
    >>> disparate_impact([1, 0, 1, 1], privileged=[False, False, True, True])
    0.5
"""

from assay.fairness.compute import (
    EOD_WORST,
    FAIRNESS_METRICS,
    GroupCounts,
    average_odds_difference,
    disparate_impact,
    equal_opportunity_difference,
    group_counts,
    statistical_parity_difference,
)
from assay.fairness.evaluator import FairnessEvaluator, evaluate_fairness
from assay.fairness.types import PrivilegedGroup

__all__ = [
    "EOD_WORST",
    "FAIRNESS_METRICS",
    "FairnessEvaluator",
    "GroupCounts",
    "PrivilegedGroup",
    "average_odds_difference",
    "disparate_impact",
    "equal_opportunity_difference",
    "evaluate_fairness",
    "group_counts",
    "statistical_parity_difference",
]
