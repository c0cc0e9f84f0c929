"""Automated-scoring evaluation: the RSMTool metric set (spec/rsmtool-evaluation-metrics.md).

Functional API (arrays in, number out) and an evaluator that builds RSMTool's tables.

Example:
    >>> from assay.scoring import quadratic_weighted_kappa
    >>> quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 3, 4])
    1.0
"""

from assay.scoring.compute import (
    adjacent_agreement,
    agreement,
    as_ratings_matrix,
    cohen_kappa,
    difference_of_standardized_means,
    exact_agreement,
    mean_squared_error,
    mse_true,
    pearson_r,
    prmse_true,
    quadratic_weighted_kappa,
    r2,
    rater_error_variance,
    root_mean_squared_error,
    standardized_mean_difference,
    true_score_variance,
)
from assay.scoring.evaluator import ScoringEvaluator, ScoringResult, evaluate_scoring
from assay.scoring.fairness import fairness_analyses, fairness_analyses_ols
from assay.scoring.types import ScoringData

__all__ = [
    "ScoringData",
    "ScoringEvaluator",
    "ScoringResult",
    "adjacent_agreement",
    "agreement",
    "as_ratings_matrix",
    "cohen_kappa",
    "difference_of_standardized_means",
    "evaluate_scoring",
    "exact_agreement",
    "fairness_analyses",
    "fairness_analyses_ols",
    "mean_squared_error",
    "mse_true",
    "pearson_r",
    "prmse_true",
    "quadratic_weighted_kappa",
    "r2",
    "rater_error_variance",
    "root_mean_squared_error",
    "standardized_mean_difference",
    "true_score_variance",
]
