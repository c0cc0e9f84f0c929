"""Automated-scoring evaluation: the RSMTool metric set.

Plain functions (arrays in, number out), an evaluator that follows the evaluator contract
(:class:`ScoringEvaluator`, :func:`evaluate_scoring` -> ``MetricSet``) and the RSMTool tables
as a view of its numbers (:class:`ScoringTables`, :func:`scoring_tables`).

Example:
    >>> from assay.scoring import quadratic_weighted_kappa
    >>> quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 3, 4])
    1.0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.scoring.compute import (
        adjacent_agreement,
        agreement,
        cohen_kappa,
        difference_of_standardized_means,
        exact_agreement,
        mean_squared_error,
        pearson_r,
        quadratic_weighted_kappa,
        r2,
        root_mean_squared_error,
        standardized_mean_difference,
    )
    from assay.scoring.evaluator import ScoringEvaluator, evaluate_scoring, scoring_tables
    from assay.scoring.helpers import (
        convert_to_ordered_category,
        disattenuated_correlations,
        n_human_scores,
        partial_correlations,
    )
    from assay.scoring.rsmeval import RsmevalTables, rsmeval_tables, run_rsmeval
    from assay.scoring.rsmeval_config import RsmevalConfig
    from assay.scoring.rsmeval_preprocess import trim
    from assay.scoring.subgroup_ols import fairness_analyses, fairness_analyses_ols
    from assay.scoring.tables import ScoringTables
    from assay.scoring.true_score import (
        as_ratings_matrix,
        mse_true,
        prmse_true,
        rater_error_variance,
        true_score_variance,
    )
    from assay.scoring.types import ScoringData

__all__ = [
    "RsmevalConfig",
    "RsmevalTables",
    "ScoringData",
    "ScoringEvaluator",
    "ScoringTables",
    "adjacent_agreement",
    "agreement",
    "as_ratings_matrix",
    "cohen_kappa",
    "convert_to_ordered_category",
    "difference_of_standardized_means",
    "disattenuated_correlations",
    "evaluate_scoring",
    "exact_agreement",
    "fairness_analyses",
    "fairness_analyses_ols",
    "mean_squared_error",
    "mse_true",
    "n_human_scores",
    "partial_correlations",
    "pearson_r",
    "prmse_true",
    "quadratic_weighted_kappa",
    "r2",
    "rater_error_variance",
    "root_mean_squared_error",
    "rsmeval_tables",
    "run_rsmeval",
    "scoring_tables",
    "standardized_mean_difference",
    "trim",
    "true_score_variance",
]

# Names are imported on first use, so ``import assay.cli.scoring`` (and ``assay --help``)
# does not load pandas, scipy or statsmodels.
_HOME = {
    **dict.fromkeys(
        (
            "adjacent_agreement",
            "agreement",
            "cohen_kappa",
            "difference_of_standardized_means",
            "exact_agreement",
            "mean_squared_error",
            "pearson_r",
            "quadratic_weighted_kappa",
            "r2",
            "root_mean_squared_error",
            "standardized_mean_difference",
        ),
        "compute",
    ),
    **dict.fromkeys(
        (
            "as_ratings_matrix",
            "mse_true",
            "prmse_true",
            "rater_error_variance",
            "true_score_variance",
        ),
        "true_score",
    ),
    **dict.fromkeys(("ScoringEvaluator", "evaluate_scoring", "scoring_tables"), "evaluator"),
    **dict.fromkeys(("fairness_analyses", "fairness_analyses_ols"), "subgroup_ols"),
    **dict.fromkeys(
        (
            "convert_to_ordered_category",
            "disattenuated_correlations",
            "n_human_scores",
            "partial_correlations",
        ),
        "helpers",
    ),
    **dict.fromkeys(("RsmevalTables", "rsmeval_tables", "run_rsmeval"), "rsmeval"),
    "RsmevalConfig": "rsmeval_config",
    "trim": "rsmeval_preprocess",
    "ScoringTables": "tables",
    "ScoringData": "types",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.scoring' has no attribute {name!r}")
    return getattr(importlib.import_module(f"assay.scoring.{home}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
