"""Column names of the scoring tables (RSMTool's) and the Metric type each one becomes.

Which columns a slice reports is read from the scoring metric table
(:data:`assay.scoring.declared.METRICS`, its sliced types).
"""

from __future__ import annotations

from assay.scoring.declared import METRICS

__all__ = [
    "EVAL_COLUMNS",
    "CONSISTENCY_COLUMNS",
    "SHORT_CONTINUOUS",
    "SHORT_ROUNDED",
    "DEGRADATION_COLUMNS",
    "DISATTENUATED_COLUMNS",
    "TRUE_SCORE_COLUMNS",
    "METRIC_TYPES",
    "ALL_DATA",
    "SLICE_COLUMNS",
]

# The row of a by-group table that pools every group.
ALL_DATA = "All data"

EVAL_COLUMNS = (
    "N",
    "h_mean",
    "h_sd",
    "h_min",
    "h_max",
    "sys_mean",
    "sys_sd",
    "sys_min",
    "sys_max",
    "corr",
    "wtkappa",
    "R2",
    "kappa",
    "exact_agr",
    "adj_agr",
    "SMD",
    "RMSE",
    "MSE",
)
CONSISTENCY_COLUMNS = (
    "N",
    "h1_mean",
    "h1_sd",
    "h1_min",
    "h1_max",
    "h2_mean",
    "h2_sd",
    "h2_min",
    "h2_max",
    "corr",
    "wtkappa",
    "kappa",
    "exact_agr",
    "adj_agr",
    "SMD",
)
SHORT_CONTINUOUS = ("sys_mean", "sys_sd", "wtkappa", "corr", "SMD", "RMSE", "R2")
SHORT_ROUNDED = ("sys_mean", "sys_sd", "kappa", "exact_agr", "adj_agr", "SMD")
DEGRADATION_COLUMNS = ("corr", "kappa", "wtkappa", "exact_agr", "adj_agr", "SMD")
DISATTENUATED_COLUMNS = ("corr_HM", "corr_HH", "sqrt_HH", "corr_disattenuated")
TRUE_SCORE_COLUMNS = (
    "N",
    "N raters",
    "N single",
    "N multiple",
    "Variance of errors",
    "True score var",
    "MSE true",
    "PRMSE true",
)
INT_COLUMNS = ("N", "N raters", "N single", "N multiple")

# table column -> stable Metric type
METRIC_TYPES = {
    "N": "N",
    "h_mean": "HumanMean",
    "h_sd": "HumanSD",
    "h_min": "HumanMin",
    "h_max": "HumanMax",
    "sys_mean": "SystemMean",
    "sys_sd": "SystemSD",
    "sys_min": "SystemMin",
    "sys_max": "SystemMax",
    "h1_mean": "Human1Mean",
    "h1_sd": "Human1SD",
    "h1_min": "Human1Min",
    "h1_max": "Human1Max",
    "h2_mean": "Human2Mean",
    "h2_sd": "Human2SD",
    "h2_min": "Human2Min",
    "h2_max": "Human2Max",
    "corr": "PearsonR",
    "wtkappa": "QWK",
    "R2": "R2",
    "kappa": "CohenKappa",
    "exact_agr": "ExactAgreement",
    "adj_agr": "AdjacentAgreement",
    "SMD": "SMD",
    "DSM": "DSM",
    "RMSE": "RMSE",
    "MSE": "MSE",
    "N raters": "NRaters",
    "N single": "NSingle",
    "N multiple": "NMultiple",
    "Variance of errors": "RaterErrorVariance",
    "True score var": "TrueScoreVariance",
    "MSE true": "MSETrue",
    "PRMSE true": "PRMSE",
    "Overall score accuracy": "OverallScoreAccuracy",
    "Overall score difference": "OverallScoreDifference",
    "Conditional score difference": "ConditionalScoreDifference",
    "corr_HM": "PearsonR",
    "corr_HH": "HumanHumanPearsonR",
    "sqrt_HH": "SqrtHumanHumanPearsonR",
    "corr_disattenuated": "DisattenuatedCorrelation",
}

#: The ``eval`` columns a slice (``by``) reports: those of sliced types, in the table's
#: order, DSM (against the whole set) after SMD.
SLICE_COLUMNS = tuple(
    column
    for c in EVAL_COLUMNS
    for column in ((c, "DSM") if c == "SMD" else (c,))
    if METRIC_TYPES[column] in METRICS.sliced
)
