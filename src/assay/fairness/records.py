"""Typed builders of group-fairness metric records: each parameter name is spelled once.

Per privileged-group definition, records carry ``group_column``, ``threshold``, ``invert``,
``privileged`` (who is privileged, in words: ``"age <= 40"``) and ``positive_label``;
``GroupCounts`` records add ``group`` (``"privileged"`` or ``"unprivileged"``). Averages over
the definitions carry ``average_over`` (the definitions' text forms) instead.

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

from assay.fairness.types import PrivilegedGroup
from assay.results import Metric
from assay.results import undefined as _undefined

__all__ = ["definition_parameters", "per_definition", "group_counts", "average", "overall"]


def definition_parameters(group: PrivilegedGroup, positive_label: Any) -> dict[str, Any]:
    """The parameters naming one privileged-group definition."""
    return {
        "group_column": group.group_column,
        "threshold": group.threshold,
        "invert": group.invert,
        "privileged": group.describe(),
        "positive_label": positive_label,
    }


def _record(type: str, value: float | None, why: str | None, params: dict[str, Any]) -> Metric:
    if value is None:
        return _undefined(type, why or "undefined", **params)
    return Metric(type, float(value), params)


def per_definition(
    type: str,
    value: float | None,
    group: PrivilegedGroup,
    *,
    positive_label: Any,
    undefined: str | None = None,
    worst_value: str | None = None,
) -> Metric:
    """A fairness metric of one definition (``worst_value``: why EOD took its worst value)."""
    params = definition_parameters(group, positive_label)
    if worst_value is not None:
        params["worst_value"] = worst_value
    return _record(type, value, undefined, params)


def group_counts(
    value: dict[str, int], group: PrivilegedGroup, *, which: str, positive_label: Any
) -> Metric:
    """``GroupCounts``: ``{"tp", "fp", "fn", "tn"}`` of the privileged or unprivileged group."""
    return Metric(
        "GroupCounts", value, {**definition_parameters(group, positive_label), "group": which}
    )


def average(
    type: str,
    value: float | None,
    groups: Sequence[PrivilegedGroup],
    *,
    positive_label: Any,
    undefined: str | None = None,
) -> Metric:
    """The mean of a fairness metric over all definitions."""
    params = {"average_over": [g.label for g in groups], "positive_label": positive_label}
    return _record(type, value, undefined, params)


def overall(
    type: str, value: float | None, *, positive_label: Any, undefined: str | None = None
) -> Metric:
    """``Accuracy``, ``Precision`` or ``Recall`` over all datums, on the positive label."""
    return _record(type, value, undefined, {"positive_label": positive_label})
