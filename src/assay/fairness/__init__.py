"""Group fairness: privileged groups by threshold or by value (statistical parity difference,
disparate impact, average odds difference, equal opportunity difference), and metrics per
group of a column with the demographic parity and equalized odds difference and ratio over
the groups (fairlearn's definitions).

Functional API on arrays (:func:`statistical_parity_difference`, ...,
:func:`demographic_parity_difference`, ...), the accumulating :class:`FairnessEvaluator` and
the one-call :func:`evaluate_fairness`.

Example:
    >>> from assay.fairness import disparate_impact
    >>> disparate_impact([1, 0, 1, 1], privileged=[False, False, True, True])
    0.5
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

# Names load on first use (PEP 562), so importing assay.cli.fairness for `--help` stays light.
_WHERE = {
    "EOD_WORST": "assay.fairness.compute",
    "FAIRNESS_METRICS": "assay.fairness.compute",
    "GroupCounts": "assay.fairness.compute",
    "average_odds_difference": "assay.fairness.compute",
    "disparate_impact": "assay.fairness.compute",
    "equal_opportunity_difference": "assay.fairness.compute",
    "group_counts": "assay.fairness.compute",
    "statistical_parity_difference": "assay.fairness.compute",
    "demographic_parity_difference": "assay.fairness.by_group",
    "demographic_parity_ratio": "assay.fairness.by_group",
    "equalized_odds_difference": "assay.fairness.by_group",
    "equalized_odds_ratio": "assay.fairness.by_group",
    "FairnessEvaluator": "assay.fairness.evaluator",
    "evaluate_fairness": "assay.fairness.evaluator",
    "PrivilegedGroup": "assay.fairness.types",
}

__all__ = [
    "EOD_WORST",
    "FAIRNESS_METRICS",
    "FairnessEvaluator",
    "GroupCounts",
    "PrivilegedGroup",
    "average_odds_difference",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "disparate_impact",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "evaluate_fairness",
    "group_counts",
    "statistical_parity_difference",
]

if TYPE_CHECKING:
    from assay.fairness.by_group import (
        demographic_parity_difference,
        demographic_parity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
    )
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


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
