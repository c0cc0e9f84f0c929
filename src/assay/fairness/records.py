"""Typed builders of group-fairness metric records: each parameter name is spelled once.

Per privileged-group definition, records carry ``group_column``, ``threshold``, ``invert``,
``privileged`` (who is privileged, in words: ``"age <= 40"``) and ``positive_label``;
``GroupCounts`` records add ``group`` (``"privileged"`` or ``"unprivileged"``). Averages over
the definitions carry ``average_over`` (the definitions' text forms) instead.

Per group of a ``group_column`` (``--group``), ``SelectionRate``, ``TruePositiveRate``,
``FalsePositiveRate``, ``Accuracy`` and ``GroupCounts`` carry ``group_column``, ``group``
and ``positive_label``; the aggregates over its groups (``DemographicParityDifference``, ...)
carry ``group_column``, ``method`` and ``positive_label`` (the equalized odds ones also
``agg``). Both add ``zero_division`` when it is set.

From counts to records: per definition the four
:data:`~assay.fairness.compute.FAIRNESS_METRICS` of its eight counts (undefined ones carry the
reason) and the ``GroupCounts`` of its two groups (:func:`definition_records`); each metric's
mean over the definitions, undefined as soon as one definition's value is, naming it
(:func:`average_records`); every record of a group column (:func:`by_group`); over all datums
accuracy ``(TP + TN) / n``, precision ``TP / (TP + FP)`` and recall ``TP / (TP + FN)``
(:func:`overall_records`). With sample weights the values come from the weight sums.

Example:
    >>> from assay.fairness.types import PrivilegedGroup
    >>> g = PrivilegedGroup("age", 40.0, invert=True)
    >>> per_definition("DisparateImpact", 0.5, g, positive_label=1).parameters
    {'group_column': 'age', 'threshold': 40.0, 'invert': True, 'privileged': 'age <= 40',
     'positive_label': 1}
    >>> average("DisparateImpact", None, [g], positive_label=1, undefined="why").parameters
    {'average_over': ['age:40:invert'], 'positive_label': 1, 'undefined': 'why'}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay import ratios
from assay.errors import UndefinedMetricError
from assay.fairness.by_group import disparities, group_rates
from assay.fairness.compute import FAIRNESS_METRICS, GroupCounts
from assay.fairness.declared import METRICS
from assay.fairness.group_table import GroupTable, group_label, split_by_control
from assay.fairness.types import PrivilegedGroup
from assay.results import Metric, record

__all__ = [
    "definition_parameters",
    "per_definition",
    "group_counts",
    "average",
    "overall",
    "per_group",
    "per_group_counts",
    "disparity",
    "by_group",
    "definition_records",
    "average_records",
    "overall_records",
    "overall_values",
    "metric_value",
]


def definition_parameters(group: PrivilegedGroup, positive_label: Any) -> dict[str, Any]:
    """The parameters naming one privileged-group definition (``privileged_values`` for a
    categorical one, ``threshold`` and ``invert`` for a numeric one)."""
    if group.values is not None:
        return {
            "group_column": group.group_column,
            "privileged_values": list(group.values),
            "privileged": group.describe(),
            "positive_label": positive_label,
        }
    return {
        "group_column": group.group_column,
        "threshold": group.threshold,
        "invert": group.invert,
        "privileged": group.describe(),
        "positive_label": positive_label,
    }


def _weighted(params: dict[str, Any], weighted: bool) -> dict[str, Any]:
    return {**params, "weighted": True} if weighted else params


def per_definition(
    type: str,
    value: float | None,
    group: PrivilegedGroup,
    *,
    positive_label: Any,
    undefined: str | None = None,
    worst_value: str | None = None,
    weighted: bool = False,
) -> Metric:
    """A fairness metric of one definition (``worst_value``: why EOD took its worst value;
    ``weighted``: computed from sample-weight sums)."""
    params = definition_parameters(group, positive_label)
    if worst_value is not None:
        params["worst_value"] = worst_value
    return record(type, value, undefined=undefined, **_weighted(params, weighted))


def group_counts(
    value: dict[str, Any],
    group: PrivilegedGroup,
    *,
    which: str,
    positive_label: Any,
    weighted: bool = False,
) -> Metric:
    """``GroupCounts``: ``{"tp", "fp", "fn", "tn"}`` of the privileged or unprivileged group
    (weighted: plus ``weighted_tp``, ... the weight sums)."""
    params = {**definition_parameters(group, positive_label), "group": which}
    return Metric("GroupCounts", value, _weighted(params, weighted))


def average(
    type: str,
    value: float | None,
    groups: Sequence[PrivilegedGroup],
    *,
    positive_label: Any,
    undefined: str | None = None,
    weighted: bool = False,
) -> Metric:
    """The mean of a fairness metric over all definitions."""
    params = {"average_over": [g.label for g in groups], "positive_label": positive_label}
    return record(type, value, undefined=undefined, **_weighted(params, weighted))


def overall(
    type: str,
    value: float | None,
    *,
    positive_label: Any,
    undefined: str | None = None,
    weighted: bool = False,
) -> Metric:
    """``Accuracy``, ``Precision`` or ``Recall`` over all datums, on the positive label
    (``weighted``: from sample-weight sums, and the record says so)."""
    params: dict[str, Any] = {"positive_label": positive_label}
    if weighted:
        params["weighted"] = True
    return record(type, value, undefined=undefined, **params)


def _by_group_params(
    group_column: str | Sequence[str],
    positive_label: Any,
    zero_division: float | None,
    weighted: bool = False,
    **more: Any,
) -> dict[str, Any]:
    column = group_column if isinstance(group_column, str) else list(group_column)
    params = {"group_column": column, **more, "positive_label": positive_label}
    if zero_division is not None:
        params["zero_division"] = float(zero_division)
    if weighted:
        params["weighted"] = True
    return params


def per_group(
    type: str,
    value: float | None,
    *,
    group_column: str | Sequence[str],
    group: str | list[str],
    positive_label: Any,
    zero_division: float | None = None,
    undefined: str | None = None,
    weighted: bool = False,
) -> Metric:
    """A rate of one group of ``group_column`` (``SelectionRate``, ``TruePositiveRate``, ...).

    Example:
        >>> per_group("SelectionRate", 0.5, group_column="L1", group="en",
        ...           positive_label=1).parameters
        {'group_column': 'L1', 'group': 'en', 'positive_label': 1}
    """
    params = _by_group_params(group_column, positive_label, zero_division, weighted, group=group)
    return record(type, value, undefined=undefined, **params)


def per_group_counts(
    value: dict[str, Any],
    *,
    group_column: str | Sequence[str],
    group: str | list[str],
    positive_label: Any,
    weighted: bool = False,
) -> Metric:
    """``GroupCounts`` (``{"tp", "fp", "fn", "tn"}``, weighted: also ``weighted_tp``, ...)
    of one group of ``group_column``."""
    params = _by_group_params(group_column, positive_label, None, weighted, group=group)
    return Metric("GroupCounts", value, params)


def disparity(
    type: str,
    value: float | None,
    *,
    group_column: str | Sequence[str],
    method: str,
    positive_label: Any,
    zero_division: float | None = None,
    undefined: str | None = None,
    agg: str | None = None,
    weighted: bool = False,
) -> Metric:
    """An aggregate over all groups of ``group_column`` (``DemographicParityDifference``, ...);
    ``agg`` for the equalized odds aggregates."""
    more = {"method": method} if agg is None else {"method": method, "agg": agg}
    params = _by_group_params(group_column, positive_label, zero_division, weighted, **more)
    return record(type, value, undefined=undefined, **params)


_UNDEFINED_RATE = {
    "SelectionRate": "the group's sample weights sum to 0",
    "TruePositiveRate": "requires positive labels in the group (TP + FN > 0)",
    "FalsePositiveRate": "requires negative labels in the group (FP + TN > 0)",
    "Accuracy": "the group's sample weights sum to 0",
}
_CELLS = ("tp", "fp", "fn", "tn")


def _counts_value(table: GroupTable, k: int) -> dict[str, Any]:
    value: dict[str, Any] = dict(zip(_CELLS, (int(x) for x in table.counts[k])))
    if table.sums is not None:
        value |= {f"weighted_{c}": float(x) for c, x in zip(_CELLS, table.sums[k])}
    return value


def by_group(
    column: str | Sequence[str],
    table: GroupTable,
    *,
    positive_label: Any,
    zero_division: float | None,
    method: str,
    agg: str = "worst_case",
    control_columns: Sequence[str] = (),
) -> list[Metric]:
    """Every record of one group column (or crossing of columns): per group the four rates
    and the counts, then the four aggregates over its groups; with control columns, all of
    that per control level (``table`` then keyed by the control values, then the group's),
    the records carrying ``control_column`` and ``control``."""
    options = {"positive_label": positive_label, "zero_division": zero_division,
               "method": method, "agg": agg}  # fmt: skip
    if not control_columns:
        return _one_table(column, table, **options)
    out = []
    name = control_columns[0] if len(control_columns) == 1 else list(control_columns)
    crossed = not isinstance(column, str)
    for control, sub in split_by_control(table, len(control_columns), crossed):
        for m in _one_table(column, sub, **options):
            p = dict(m.parameters)
            head = {"group_column": p.pop("group_column"), "control_column": name}
            out.append(Metric(m.type, m.value, {**head, "control": control, **p}))
    return out


def _one_table(
    column: str | Sequence[str],
    table: GroupTable,
    *,
    positive_label: Any,
    zero_division: float | None,
    method: str,
    agg: str,
) -> list[Metric]:
    out = []
    rates = group_rates(table.weights, zero_division)
    crossed = not isinstance(column, str)
    weighted = table.sums is not None
    common = {"group_column": column, "positive_label": positive_label, "weighted": weighted}
    for k, name in enumerate(table.names.tolist()):
        group = group_label(name, crossed)
        for rate in METRICS.family("rates"):
            value = ratios.value_or_none(rates[rate][k])
            why = None if value is not None else _UNDEFINED_RATE[rate]
            if why and rate in _WEIGHTED_WHY and table.counts[k, _CELLS_OF[rate]].sum():
                why = _WEIGHTED_WHY[rate]
            out.append(
                per_group(
                    rate, value, group=group, zero_division=zero_division, undefined=why, **common
                )
            )
        out.append(per_group_counts(_counts_value(table, k), group=group, **common))
    aggregates = disparities(table, method=method, zero_division=zero_division, agg=agg)
    for name, (value, why) in aggregates.items():
        extra: dict[str, Any] = {"agg": agg} if name.startswith("EqualizedOdds") else {}
        out.append(
            disparity(
                name, value, method=method, zero_division=zero_division, undefined=why,
                **common, **extra,
            )
        )  # fmt: skip
    return out


_CELLS_OF = {"TruePositiveRate": [0, 2], "FalsePositiveRate": [1, 3]}
_WEIGHTED_WHY = {
    "TruePositiveRate": "the group's positive labels have total weight 0",
    "FalsePositiveRate": "the group's negative labels have total weight 0",
}


# ---------------------------------------------------------------- records of counts


def metric_value(name: str, c: GroupCounts) -> tuple[float | None, str | None]:
    """``(value, None)`` of fairness metric ``name`` on counts ``c``, or ``(None, reason)``."""
    try:
        return FAIRNESS_METRICS[name](c), None
    except UndefinedMetricError as e:
        return None, e.reason


def _definition_counts(c: GroupCounts, i: int, weights: GroupCounts | None) -> dict[str, Any]:
    value: dict[str, Any] = {k: int(getattr(c, k)[i]) for k in _CELLS}
    if weights is not None:
        value |= {f"weighted_{k}": float(getattr(weights, k)[i]) for k in _CELLS}
    return value


def definition_records(
    g: PrivilegedGroup, c: GroupCounts, *, positive_label: Any, weights: GroupCounts | None = None
) -> list[Metric]:
    """The metric records and the two ``GroupCounts`` records of definition ``g``; with
    ``weights`` (the weight sums of the same cells) the metrics are computed from them."""
    on = c if weights is None else weights
    weighted = weights is not None
    out = []
    for name in FAIRNESS_METRICS:
        value, why = metric_value(name, on)
        worst = None
        if name == "EqualOpportunityDifference" and (on.positives == 0).any():
            worst = "a group has no positive labels"
        out.append(per_definition(name, value, g, positive_label=positive_label, undefined=why,
                                  worst_value=worst, weighted=weighted))  # fmt: skip
    for i, which in ((0, "unprivileged"), (1, "privileged")):
        cells = _definition_counts(c, i, weights)
        out.append(group_counts(cells, g, which=which, positive_label=positive_label,
                                weighted=weighted))  # fmt: skip
    return out


def average_records(
    groups: Sequence[PrivilegedGroup],
    counts: Sequence[GroupCounts],
    *,
    positive_label: Any,
    weighted: bool = False,
) -> list[Metric]:
    """Each metric's mean over the definitions ``groups`` (with their ``counts``, the weight
    sums when ``weighted``)."""
    out = []
    for name in FAIRNESS_METRICS:
        values = [metric_value(name, c) for c in counts]
        missing = [(g, why) for g, (v, why) in zip(groups, values) if v is None]
        mean = None if missing else float(np.mean([v for v, _ in values]))
        why = (
            f"undefined for definition {missing[0][0].label}: {missing[0][1]}" if missing else None
        )
        out.append(
            average(
                name, mean, groups, positive_label=positive_label, undefined=why, weighted=weighted
            )
        )
    return out


_OVERALL = (
    ("Accuracy", "requires at least one data point"),
    ("Precision", "requires TP + FP > 0"),
    ("Recall", "requires TP + FN > 0"),
)


def overall_values(overall: NDArray[Any]) -> NDArray[np.float64]:
    """Accuracy, precision and recall of ``[TP, FP, FN, TN]`` (weighted) counts shaped
    (..., 4) (many resamples at once), shape (..., 3), NaN where undefined."""
    tp, fp, fn, tn = (np.asarray(overall, np.float64)[..., i] for i in range(4))
    nums, dens = (tp + tn, tp, tp), (tp + fp + fn + tn, tp + fp, tp + fn)
    return np.stack([ratios.divide(a, b) for a, b in zip(nums, dens)], axis=-1)


def overall_records(
    counts: NDArray[Any], *, positive_label: Any, weighted: bool = False
) -> list[Metric]:
    """Accuracy, precision and recall from the overall ``[TP, FP, FN, TN]`` (weighted) counts."""
    return [
        overall(name, ratios.value_or_none(v), positive_label=positive_label, undefined=req,
                weighted=weighted)
        for (name, req), v in zip(_OVERALL, overall_values(counts).tolist())
    ]  # fmt: skip
