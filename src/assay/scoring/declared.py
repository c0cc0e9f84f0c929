"""What the scoring domain declares once: its metric types (:data:`METRICS`) and the options
of :class:`~assay.scoring.evaluator.ScoringEvaluator` (:data:`OPTIONS`).

A scoring record is one cell of an RSMTool table; a type's family is the table it is first
written in (``eval``; ``consistency``, ``degradation``, ``true_score_eval``, ...), and one
builder (:func:`assay.scoring.build.build`) fills every table in one pass. Which columns of
which table carry an interval is the tally's business (:mod:`assay.scoring.tally`); the
table here says which types can carry one (``bootstrap``, and ``bca`` where the evaluator
offers it) and which are recomputed per slice (``by``).

Light on purpose (no numpy, no pandas): ``assay scoring --help`` reads it.

Example:
    >>> METRICS.sliced[:4], len(METRICS.sliced), METRICS["PRMSE"].family
    (('PearsonR', 'QWK', 'R2', 'CohenKappa'), 10, 'true_score_eval')
    >>> OPTIONS.validate({"human": "h", "system": "m", "smd_method": "Johnson",
    ...                   "population_sds": {"h": 1}})["smd_method"]
    'johnson'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from assay.metric_table import MetricEntry, MetricTable
from assay.options import REQUIRED, Bad, Option, Options, custom, flag, number, text
from assay.uncertainty.options import by_option, interval_options

__all__ = ["METRICS", "OPTIONS", "SMD_METHODS"]

_BUILD = "assay.scoring.build:build"
_SLICES = "assay.scoring.build:slice_records"
_CI = ("bootstrap", "bca")

#: RSMTool's denominators of the standardised mean difference (``smd_method``).
SMD_METHODS = ("unpooled", "pooled", "johnson", "williamson")


def _m(
    type_: str,
    family: str,
    help_: str,
    *,
    sliced: bool = False,
    ci: bool = False,
    builder: str = _BUILD,
) -> MetricEntry:
    return MetricEntry(type_, family, builder, sliced, _CI if ci else (), help=help_)


#: The scoring metric types, in the order the tables are written.
METRICS = MetricTable(
    "scoring",
    _m("N", "eval", "responses in the row (pair of scores, group, rater set)"),
    _m("HumanMean", "eval", "mean human score"),
    _m("HumanSD", "eval", "standard deviation of the human score"),
    _m("HumanMin", "eval", "lowest human score"),
    _m("HumanMax", "eval", "highest human score"),
    _m("SystemMean", "eval", "mean system score (as given, or rounded)"),
    _m("SystemSD", "eval", "standard deviation of the system score"),
    _m("SystemMin", "eval", "lowest system score"),
    _m("SystemMax", "eval", "highest system score"),
    _m("PearsonR", "eval", "Pearson correlation of human and system", sliced=True, ci=True),
    _m("QWK", "eval", "quadratically weighted kappa (RSMTool's wtkappa)", sliced=True, ci=True),
    _m("R2", "eval", "R^2 of the system score as a prediction", sliced=True, ci=True),
    _m("CohenKappa", "eval", "Cohen's kappa of the rounded scores", sliced=True, ci=True),
    _m("ExactAgreement", "eval", "% of responses with equal scores", sliced=True, ci=True),
    _m("AdjacentAgreement", "eval", "% of responses within one point", sliced=True, ci=True),
    _m("SMD", "eval", "standardised mean difference (smd_method)", sliced=True, ci=True),
    _m("DSM", "eval", "difference of standardised means", sliced=True, ci=True),
    _m("RMSE", "eval", "root mean squared error", sliced=True, ci=True),
    _m("MSE", "eval", "mean squared error"),
    _m("ScoreDistribution", "score_dist", "responses per score level, human and rounded system"),
    _m("ConfusionMatrix", "confMatrix", "responses per (human, rounded system) score pair"),
    _m("Human1Mean", "consistency", "mean first human score (double-scored responses)"),
    _m("Human1SD", "consistency", "standard deviation of the first human score"),
    _m("Human1Min", "consistency", "lowest first human score"),
    _m("Human1Max", "consistency", "highest first human score"),
    _m("Human2Mean", "consistency", "mean second human score"),
    _m("Human2SD", "consistency", "standard deviation of the second human score"),
    _m("Human2Min", "consistency", "lowest second human score"),
    _m("Human2Max", "consistency", "highest second human score"),
    _m("PearsonRDegradation", "degradation", "system PearsonR minus human-human", ci=True),
    _m("QWKDegradation", "degradation", "system QWK minus human-human", ci=True),
    _m("CohenKappaDegradation", "degradation", "system kappa minus human-human", ci=True),
    _m("ExactAgreementDegradation", "degradation", "exact agreement minus human's", ci=True),
    _m("AdjacentAgreementDegradation", "degradation", "adjacent agreement minus human's", ci=True),
    _m("SMDDegradation", "degradation", "system SMD minus human-human SMD", ci=True),
    _m("HumanHumanPearsonR", "disattenuated_correlations", "correlation of the two humans"),
    _m("SqrtHumanHumanPearsonR", "disattenuated_correlations", "its square root"),
    _m("DisattenuatedCorrelation", "disattenuated_correlations", "PearsonR / sqrt(HH r)"),
    _m("NRaters", "true_score_eval", "human raters"),
    _m("NSingle", "true_score_eval", "responses with one human score"),
    _m("NMultiple", "true_score_eval", "responses with several human scores"),
    _m("RaterErrorVariance", "true_score_eval", "variance of the raters' errors", ci=True),
    _m("TrueScoreVariance", "true_score_eval", "variance of the true score", ci=True),
    _m("MSETrue", "true_score_eval", "mean squared error against the true score", ci=True),
    _m("PRMSE", "true_score_eval", "proportional reduction in MSE", sliced=True, ci=True),
    _m("OverallScoreAccuracy", "fairness", "R^2 of the group in the error (OSA)", ci=True),
    _m("OverallScoreAccuracyPValue", "fairness", "its p value"),
    _m("OverallScoreDifference", "fairness", "R^2 of the group in the difference (OSD)", ci=True),
    _m("OverallScoreDifferencePValue", "fairness", "its p value"),
    _m("ConditionalScoreDifference", "fairness", "R^2 given the human score (CSD)", ci=True),
    _m("ConditionalScoreDifferencePValue", "fairness", "its p value"),
    _m("NDropped", "dropped", "responses left out, per reason"),
)


# ------------------------------------------------------------------ the options' rules


def _column_list(*, dedupe: bool, keep_none: bool = False) -> Any:
    """Column names: one name, a list of names, or None (none; kept as None with
    ``keep_none``)."""
    describe = "a column name, a list of column names or None"

    def normalize(v: Any) -> tuple[str, ...] | None:
        if v is None:
            return None if keep_none else ()
        got = [v] if isinstance(v, str) else v
        if isinstance(got, (bytes, Mapping)) or not hasattr(got, "__iter__"):
            raise Bad(f"must be {describe}, got {v!r}")
        got = list(got)
        if not all(isinstance(c, str) for c in got):
            raise Bad(f"must be {describe}, got {v!r}")
        return tuple(dict.fromkeys(got)) if dedupe else tuple(got)

    return custom(describe, normalize, (3, [1]), many=True)


def _mapping(describe: str) -> Any:
    """A mapping (None: empty); its keys and values are the cross-check's business."""

    def normalize(v: Any) -> dict[Any, Any]:
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            raise Bad(f"must be {describe}, got {v!r}")
        return dict(v)

    return custom(describe, normalize, ("x", [1]))


def _smd_method(v: Any) -> str:
    name = v.lower() if isinstance(v, str) else v
    if name not in SMD_METHODS:
        raise Bad(
            f"method must be 'unpooled', 'pooled', 'johnson' or 'williamson' (any case), got {v!r}"
        )
    return str(name)


def _cross_check(values: dict[str, Any]) -> dict[str, Any]:
    """The SMD options against the score columns
    (:class:`~assay.scoring.smd_options.SmdOptions`, RSMTool's rules)."""
    from assay.scoring.smd_options import SmdOptions

    human2 = values["human2"]
    smd = SmdOptions.checked(
        values["smd_method"],
        values["use_diff_std_means"],
        values["population_means"],
        values["population_sds"],
        human=values["human"],
        system=values["system"],
        human2=human2[0] if human2 else None,
    )
    values["population_means"] = smd.population_means
    values["population_sds"] = smd.population_sds
    return values


def _variance() -> Any:
    """A number >= 0 or None, kept as given (an integer stays one in ``config()``)."""
    rule = number(0, none=True)

    def normalize(v: Any) -> Any:
        rule.normalize(v)
        return v

    return custom(rule.describe, normalize, rule.bad, cli_type=float)


def _never(values: Mapping[str, Any]) -> bool:
    return False


#: The options of ``ScoringEvaluator`` (``assay scoring`` offers those with a flag; its
#: ``--keep-zero-scores`` is ``exclude_zero_scores`` turned round, and rsmeval's
#: configuration file sets the SMD options).
OPTIONS = Options(
    Option("human", REQUIRED, text(), "--human", "Column of the (first) human score.", example="h"),
    Option("system", REQUIRED, text(), "--system", "Column of the system score.", example="m"),
    Option(
        "human2",
        None,
        _column_list(dedupe=False),
        "--human2",
        "Column of a second human score (repeat for more raters).",
    ),
    Option(
        "group_columns",
        None,
        _column_list(dedupe=True),
        "--subgroup",
        "Group column for the by-group and fairness tables (repeatable).",
    ),
    Option(
        "exclude_zero_scores",
        True,
        flag(),
        None,
        "Drop responses whose human score is 0 (RSMTool's default; the command's "
        "--keep-zero-scores turns it off).",
    ),
    Option(
        "rater_error_variance",
        None,
        _variance(),
        "--rater-error-variance",
        "Rater error variance estimated elsewhere (for PRMSE).",
    ),
    Option(
        "base_groups",
        None,
        _mapping("a mapping of group column -> group or None"),
        None,
        "Reference group per group column for the fairness fits (default: the largest).",
    ),
    Option(
        "smd_method",
        "unpooled",
        custom(" or ".join(SMD_METHODS) + " (any case)", _smd_method, ("no such method", 3)),
        None,
        "The denominator of eval's SMD, as RSMTool's smd_method.",
    ),
    Option(
        "use_diff_std_means",
        False,
        flag(),
        None,
        "A DSM column in eval and consistency in place of SMD.",
    ),
    Option(
        "population_means",
        None,
        _mapping("a mapping of score column -> number or None"),
        None,
        "Population mean per score column (RSMTool's population_mn_dict).",
    ),
    Option(
        "population_sds",
        None,
        _mapping("a mapping of score column -> number or None"),
        None,
        "Population sd per score column (RSMTool's population_sd_dict).",
    ),
    replace(
        by_option("A response column", "Sliced: the eval metrics, DSM and PRMSE."),
        default=None,
        rule=replace(_column_list(dedupe=True), metavar="COLUMN"),
    ),
    interval_options(unit="response"),
    check=_cross_check,
)
