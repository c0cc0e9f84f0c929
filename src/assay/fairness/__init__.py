"""Group fairness: privileged groups by threshold, SPD, DI, AOD, EOD (spec:
``spec/fairness-and-llm-suites.md`` "Groups calculation" to "Equal opportunity difference")."""

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
