"""What the classification domain declares once: its metric types (:data:`METRICS`) and the
options of :class:`~assay.classification.evaluator.ClassificationEvaluator` (:data:`OPTIONS`).

The evaluator (which family builders to run, the sliced types, the compact form's
refusals), the tallies (which closed-form interval applies to which type),
``evaluate_classification``, the ``assay classification`` command (its flags, the
``--metrics`` choices and help) and the text report read these; nothing else lists them.
Light: no numpy (``--help`` reads it).

A family is the types one builder emits together; a builder is
``builder(block, want, options) -> records`` (the label key's datums, the types asked for,
the evaluator's clean options), run in the table's order.

Example:
    >>> METRICS.family("curves")
    ('ROCAUC', 'mROCAUC', 'ROCCurve', 'PrecisionRecallCurve', 'DetailedPrecisionRecallCurve')
    >>> METRICS.with_interval("wilson"), METRICS.with_interval("delong")
    (('Precision', 'Recall', 'Accuracy'), ('ROCAUC',))
    >>> [t for t in METRICS.types if t not in METRICS.defaults]
    ['ROCCurve', 'ConfusionMatrixWithExamples', 'Examples']
    >>> OPTIONS.validate({"metrics": ["F1"]})["metrics"], OPTIONS.validate({})["compact"]
    (('F1',), False)
    >>> OPTIONS.validate({"compact": True})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: compact: keeps counts, not datums, but ...
"""

from __future__ import annotations

from typing import Any

from assay.errors import InvalidInputError
from assay.metric_table import MetricEntry, MetricTable
from assay.options import (
    EXAMPLES_PAGE,
    ZERO_DIVISION,
    Option,
    Options,
    choices,
    custom,
    flag,
    number,
    numbers_in,
)
from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS
from assay.uncertainty.options import by_option, interval_options

__all__ = ["DATUMS", "DEFAULT_METRICS", "METRICS", "METRIC_TYPES", "OPTIONS"]

_PKG = "assay.classification"
_HARDMAX = f"{_PKG}.hardmax:build"
_CURVES = f"{_PKG}.curves:build"
_CONFUSION = f"{_PKG}.confusion:build"
_WILSON = ("bootstrap", "wilson")

#: The tag of the types whose records name datums (example uids): the compact form, which
#: keeps counts instead of datums, refuses them.
DATUMS = "datums"

#: The classification metric types, in the order a label key's records are emitted.
METRICS = MetricTable(
    "classification",
    MetricEntry(
        "Counts",
        "hardmax",
        _HARDMAX,
        help="TP, FP, FN, TN of each label at each score threshold (support: TP + FN).",
    ),
    MetricEntry(
        "Precision",
        "hardmax",
        _HARDMAX,
        True,
        _WILSON,
        help="Each label's TP / (TP + FP) at each score threshold.",
    ),
    MetricEntry(
        "Recall",
        "hardmax",
        _HARDMAX,
        True,
        _WILSON,
        help="Each label's TP / (TP + FN) at each score threshold.",
    ),
    MetricEntry(
        "F1",
        "hardmax",
        _HARDMAX,
        True,
        ("bootstrap",),
        help="Each label's 2TP / (2TP + FP + FN) at each score threshold.",
    ),
    MetricEntry(
        "Accuracy",
        "hardmax",
        _HARDMAX,
        True,
        _WILSON,
        help="Per key and score threshold: datums whose counted top prediction is right.",
    ),
    MetricEntry(
        "ROCAUC",
        "curves",
        _CURVES,
        True,
        ("bootstrap", "delong"),
        help="Each label's area under the ROC curve, one-vs-rest over all its scores.",
    ),
    MetricEntry(
        "mROCAUC",
        "curves",
        _CURVES,
        True,
        ("bootstrap",),
        help="Per key: the mean ROC AUC over the labels where it is defined.",
    ),
    MetricEntry(
        "ROCCurve",
        "curves",
        _CURVES,
        default=False,
        help="Per key: each label's exact ROC curve (up to one point per distinct score).",
    ),
    MetricEntry(
        "PrecisionRecallCurve",
        "curves",
        _CURVES,
        help="Per key: each label's counts, precision, recall and F1 at each curve threshold.",
    ),
    MetricEntry(
        "DetailedPrecisionRecallCurve",
        "curves",
        _CURVES,
        help="The curve's false positives and negatives split by kind, with example uids.",
    ),
    MetricEntry(
        "ConfusionMatrix",
        "confusion",
        _CONFUSION,
        help="Per key and score threshold: counts per (truth, prediction) and the unmatched.",
    ),
    MetricEntry(
        "ConfusionMatrixWithExamples",
        "confusion",
        _CONFUSION,
        default=False,
        help="The confusion matrix with example datums (uid, score) in each cell.",
        tags=(DATUMS,),
    ),
    MetricEntry(
        "Examples",
        "confusion",
        _CONFUSION,
        default=False,
        help="Per datum and score threshold: its TP, FP and FN labels.",
        tags=(DATUMS,),
    ),
)

#: Every type (the ``metrics`` choices), and those computed when none are named: public
#: names of :mod:`assay.classification`, read from :data:`METRICS`.
METRIC_TYPES: tuple[str, ...] = METRICS.types
DEFAULT_METRICS: tuple[str, ...] = METRICS.defaults

_GRID = numbers_in(0, 1)


def _sorted_grid(v: Any) -> tuple[float, ...]:
    return tuple(sorted(_GRID.normalize(v)))


def _check(values: dict[str, Any]) -> dict[str, Any]:
    """No ``metrics``: the default set. ``compact`` keeps counts, not datums: refused with
    a type or an option that names datums."""
    if values["metrics"] is None:
        values["metrics"] = METRICS.defaults
    named = sorted(set(values["metrics"]) & set(METRICS.tagged(DATUMS)))
    if values["compact"] and (values["pr_curve_max_examples"] or named):
        why = f"metric types {named}" if named else "pr_curve_max_examples > 0"
        raise InvalidInputError(
            f"keeps counts, not datums, but {why} name datums: set pr_curve_max_examples=0 "
            f"and leave out {' and '.join(METRICS.tagged(DATUMS))}",
            source="compact",
        )
    return values


def _opt_in() -> str:
    rest = [t for t in METRICS.types if t not in METRICS.defaults]
    return f"{', '.join(rest[:-1])} and {rest[-1]}"


#: The options of ``ClassificationEvaluator`` (and of ``assay classification``).
OPTIONS = Options(
    Option(
        "score_thresholds",
        (0.0,),
        numbers_in(0, 1),
        "--score-thresholds",
        f"Comma-separated thresholds in 0..1 for {'/'.join(METRICS.family('hardmax'))} and "
        "the confusion matrices.",
        separator=",",
    ),
    Option(
        "pr_curve_thresholds",
        PR_CURVE_SCORE_THRESHOLDS,
        custom(_GRID.describe, _sorted_grid, _GRID.bad, cli_type=float, many=True),
        None,
        "Thresholds in [0, 1] of the (detailed) precision-recall curves, kept sorted.",
    ),
    Option(
        "pr_curve_max_examples",
        1,
        number(0, integer=True),
        "--pr-curve-max-examples",
        "Example uids per observation in DetailedPrecisionRecallCurve.",
    ),
    Option(
        "metrics",
        None,
        choices(*METRICS.types, none=True),
        "--metrics",
        f"Comma-separated metric types (default all but {_opt_in()}): {', '.join(METRICS.types)}.",
        separator=",",
    ),
    ZERO_DIVISION,
    Option(
        "hardmax",
        True,
        flag(),
        "--hardmax",
        "Only each datum's top prediction counts (default), or every label scoring at or "
        "above the threshold.",
    ),
    Option(
        "number_of_examples",
        None,
        number(0, integer=True, none=True),
        "--number-of-examples",
        "Examples per cell of ConfusionMatrixWithExamples (default: all).",
    ),
    EXAMPLES_PAGE,
    Option(
        "compact",
        False,
        flag(),
        "--compact",
        "Keep counts of distinct (truth, scores) datums instead of every datum: memory "
        "O(labels x distinct scores), the same records (needs --pr-curve-max-examples 0; "
        "no --where).",
    ),
    interval_options(unit="datum"),
    by_option(
        "A datum metadata column",
        f"Sliced: {', '.join(METRICS.sliced)}. With --data the column is read as metadata; "
        "long form: give it in --metadata-columns or metadata.",
    ),
    check=_check,
)
