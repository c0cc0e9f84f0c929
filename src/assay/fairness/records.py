"""Typed builders of group-fairness metric records: each parameter name is spelled once.

Per privileged-group definition, records carry ``group_column``, ``threshold``, ``invert``,
``privileged`` (who is privileged, in words: ``"age <= 40"``) and ``positive_label``;
``GroupCounts`` records add ``group`` (``"privileged"`` or ``"unprivileged"``). Averages over
the definitions carry ``average_over`` (the definitions' text forms) instead.

Per group of a ``group_column`` (``--group``), ``SelectionRate``, ``TruePositiveRate``,
``FalsePositiveRate``, ``Accuracy`` and ``GroupCounts`` carry ``group_column``, ``group``
and ``positive_label``; the aggregates over its groups (``DemographicParityDifference``, ...)
carry ``group_column``, ``method`` and ``positive_label`` (the equalized odds ones also
``agg``). Both add ``zero_division`` when
it is set.

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
from assay.fairness.by_group import RATES, GroupTable, aggregate_values, disparities, group_rates
from assay.fairness.group_table import group_label
from assay.fairness.grouping import control_levels, split_by_control
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
    "by_group_values",
    "control_rows",
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


def control_rows(
    column: str | Sequence[str], names: NDArray[np.str_], control_columns: Sequence[str] = ()
) -> list[NDArray[np.int64]]:
    """The rows of a group column's table (``names``) of each control level, in the order of
    :func:`by_group`'s records (one level of every row without control columns)."""
    if not control_columns:
        return [np.arange(len(names))]
    crossed = not isinstance(column, str)
    return [rows for _, _, rows in control_levels(names, len(control_columns), crossed)]


def by_group_values(
    counts: NDArray[Any],
    levels: Sequence[NDArray[np.int64]],
    *,
    zero_division: float | None,
    method: str,
    agg: str = "worst_case",
) -> NDArray[np.float64]:
    """The values of :func:`by_group`'s records of (weighted) counts shaped (b, K, 4) (b
    resamples of a table's K rows; ``levels``: :func:`control_rows`), shape (b, records):
    per level, per group the four rates and NaN for ``GroupCounts``, then the aggregates;
    NaN where undefined."""
    out = []
    for rows in levels:
        w = counts[:, rows]
        rates = group_rates(w, zero_division)
        nan = np.full(w.shape[:-1], np.nan)
        per = np.stack([*(rates[r] for r in RATES), nan], axis=-1)
        out.append(per.reshape(len(w), -1))
        aggs = aggregate_values(w, method=method, zero_division=zero_division, agg=agg)
        out.append(np.stack(list(aggs.values()), axis=-1))
    return np.concatenate(out, axis=-1)


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
        for rate in RATES:
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
