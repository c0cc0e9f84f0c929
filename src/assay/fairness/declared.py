"""What the fairness domain declares once: its metric types (:data:`METRICS`) and the
options of :class:`~assay.fairness.evaluator.FairnessEvaluator` (:data:`OPTIONS`).

The evaluator, the slices, the tallies, the ``assay fairness`` command and the reports read
these; nothing else lists them. Light: no numpy (``--help`` reads it).

Example:
    >>> [METRICS[t].label for t in METRICS.family("definition")]
    ['SPD', 'DI', 'AOD', 'EOD']
    >>> [METRICS[t].label for t in METRICS.family("aggregate")]
    ['DP difference', 'DP ratio', 'EO difference', 'EO ratio']
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assay.errors import InvalidInputError
from assay.metric_table import MetricEntry, MetricTable
from assay.options import ZERO_DIVISION, Bad, Option, Options, choice, custom
from assay.uncertainty.options import by_option, interval_options

__all__ = ["AGGS", "METHODS", "METRICS", "OPTIONS"]

_R = "assay.fairness.records"
_B = ("bootstrap",)

#: The fairness metric types, in report order.
METRICS = MetricTable(
    "fairness",
    # per privileged-group definition, and their mean over definitions
    MetricEntry(
        "StatisticalParityDifference",
        "definition",
        f"{_R}:definition_records",
        True,
        _B,
        help="P(favourable | unprivileged) - P(favourable | privileged).",
        short="SPD",
        ideal=0.0,
    ),
    MetricEntry(
        "DisparateImpact",
        "definition",
        f"{_R}:definition_records",
        True,
        _B,
        help="P(favourable | unprivileged) / P(favourable | privileged).",
        short="DI",
        ideal=1.0,
    ),
    MetricEntry(
        "AverageOddsDifference",
        "definition",
        f"{_R}:definition_records",
        True,
        _B,
        help="Mean of the FPR and TPR differences (unprivileged - privileged).",
        short="AOD",
        ideal=0.0,
    ),
    MetricEntry(
        "EqualOpportunityDifference",
        "definition",
        f"{_R}:definition_records",
        True,
        _B,
        help="TPR difference (unprivileged - privileged).",
        short="EOD",
        ideal=0.0,
    ),
    MetricEntry(
        "GroupCounts",
        "counts",
        f"{_R}:definition_records",
        help="TP, FP, FN, TN of each group (and their weights).",
    ),
    # per group of a group column (fairlearn's MetricFrame.by_group)
    MetricEntry(
        "SelectionRate",
        "rates",
        f"{_R}:by_group",
        help="Share predicted favourable.",
        short="SelectionRate",
    ),
    MetricEntry("TruePositiveRate", "rates", f"{_R}:by_group", help="TP / (TP + FN).", short="TPR"),
    MetricEntry(
        "FalsePositiveRate", "rates", f"{_R}:by_group", help="FP / (FP + TN).", short="FPR"
    ),
    MetricEntry(
        "Accuracy",
        ("rates", "overall"),
        f"{_R}:by_group",
        False,
        _B,
        help="Share of correct predictions (per group, and over all datums).",
    ),
    # over the groups of a group column
    MetricEntry(
        "DemographicParityDifference",
        "aggregate",
        f"{_R}:by_group",
        True,
        _B,
        help="Largest minus smallest selection rate (or to the overall).",
        short="DP difference",
        ideal=0.0,
    ),
    MetricEntry(
        "DemographicParityRatio",
        "aggregate",
        f"{_R}:by_group",
        True,
        _B,
        help="Smallest over largest selection rate.",
        short="DP ratio",
        ideal=1.0,
    ),
    MetricEntry(
        "EqualizedOddsDifference",
        "aggregate",
        f"{_R}:by_group",
        True,
        _B,
        help="The TPR and FPR differences combined by agg.",
        short="EO difference",
        ideal=0.0,
    ),
    MetricEntry(
        "EqualizedOddsRatio",
        "aggregate",
        f"{_R}:by_group",
        True,
        _B,
        help="The TPR and FPR ratios combined by agg.",
        short="EO ratio",
        ideal=1.0,
    ),
    # over all datums
    MetricEntry(
        "Precision",
        "overall",
        f"{_R}:overall_records",
        intervals=_B,
        help="TP / (TP + FP) of the positive label.",
    ),
    MetricEntry(
        "Recall",
        "overall",
        f"{_R}:overall_records",
        intervals=_B,
        help="TP / (TP + FN) of the positive label.",
    ),
)

#: How the aggregates compare groups (fairlearn's ``method=``).
METHODS = ("between_groups", "to_overall")
#: How equalized odds combines its TPR and FPR parts (fairlearn's ``agg=``).
AGGS = ("worst_case", "mean")


def _groups(v: Any) -> tuple[Any, ...]:
    from assay.fairness.types import PrivilegedGroup

    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of privileged-group definitions, got {v!r}")
    try:
        return tuple(PrivilegedGroup.coerce(g) for g in v)
    except InvalidInputError as e:
        raise Bad(e.reason) from None
    except TypeError as e:  # a dict with other keys
        raise Bad(f"not a privileged-group definition: {e}") from None


def _columns(v: Any) -> tuple[Any, ...]:
    from assay.fairness.grouping import column_key

    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of column names (or lists of them), got {v!r}")
    try:
        return tuple(dict.fromkeys(column_key(c) for c in v))
    except InvalidInputError as e:
        raise Bad(e.reason) from None


def _controls(v: Any) -> tuple[str, ...]:
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of column names, got {v!r}")
    names = list(v)
    for c in names:
        if not isinstance(c, str) or not c:
            raise Bad(f"a column must be a non-empty name, got {c!r}")
    return tuple(dict.fromkeys(names))


def _label(v: Any) -> Any:
    v = v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v
    if not isinstance(v, (str, bool, int, float)):
        raise Bad(f"must be a string, number or boolean, got {v!r}")
    return v


def _cross_check(values: dict[str, Any]) -> dict[str, Any]:
    if values["control_columns"] and not values["group_columns"]:
        raise InvalidInputError(
            "control columns need a group column to split", source="control_columns"
        )
    if not values["groups"] and not values["group_columns"]:
        raise InvalidInputError(
            "at least one privileged-group definition or group column is required",
            source="groups",
        )
    return values


#: The options of ``FairnessEvaluator`` (and of ``assay fairness``, whose flags keep their
#: names: ``--sensitive``, ``--group``, ``--control``, ``--equalized-odds-agg``).
OPTIONS = Options(
    Option(
        "groups",
        (),
        custom(
            "a list of privileged-group definitions", _groups, ["sex", [3], [{"x": 1}]], many=True
        ),
        "--sensitive",
        "Privileged-group definition: COLUMN[:THRESHOLD[:invert]] for a numeric "
        "column (a value above THRESHOLD, default 0, is privileged; invert makes values "
        "at or below it privileged) or COLUMN=V1[,V2...] naming the privileged values. "
        "Repeat for several definitions.",
        stored_as=lambda gs: [g.as_dict() for g in gs],
        example=["sex"],
    ),
    Option(
        "group_columns",
        (),
        custom(
            "a list of column names (or lists of them)", _columns, ["sex", [""], [3]], many=True
        ),
        "--group",
        "Group column: selection rate, TPR, FPR and accuracy per group (every "
        "distinct value), and demographic parity and equalized odds difference/ratio "
        "over the groups. Repeat for several columns. A,B (columns joined by commas): "
        "every combination of their values present is a group (crossed groups); a "
        "column whose name holds a comma is named as it is.",
    ),
    Option(
        "control_columns",
        (),
        custom("a list of column names", _controls, ["site", [""]], many=True),
        "--control",
        "Control column (fairlearn's control_features): the --group metrics and "
        "aggregates are computed within each of its values; repeat to control for "
        "every combination of several columns.",
    ),
    Option(
        "positive_label",
        1,
        custom("a string, number or boolean", _label, [None, [1]]),
        "--positive-label",
        "The favourable label value (read as a number when the labels are).",
    ),
    replace(
        ZERO_DIVISION,
        help="Per-group TPR/FPR where the group has no positive/negative labels: this "
        "value (0 gives fairlearn's numbers) instead of undefined (null).",
    ),
    Option(
        "method",
        "between_groups",
        choice(*METHODS),
        "--method",
        "How the group differences and ratios compare: between_groups (largest "
        "vs smallest group) or to_overall (each group vs all data).",
    ),
    Option(
        "agg",
        "worst_case",
        choice(*AGGS),
        "--equalized-odds-agg",
        "How equalized odds combines its TPR and FPR parts: worst_case (larger "
        "difference, smaller ratio) or mean.",
    ),
    by_option(
        "A column of the table",
        "Sliced: the --sensitive metrics and the --group differences and ratios.",
    ),
    interval_options(unit="row"),
    check=_cross_check,
)
