"""Typed builders of the suites' metric records: each parameter name is spelled once here.

Parameters (``docs/records.md``): ``scope`` (CAT: ``general``, ``intrasentence``,
``intersentence`` or a bias type), ``language`` (language exams; ``all`` for every
language), ``group_column``, ``privileged``, ``group`` (LLM fairness), ``n`` (the
denominator of a rate), ``calls``, ``counterfactual``, and for averages ``evaluations`` and
``datasets``. A value of ``None`` or NaN makes an undefined record (``value=None``, the
reason in ``parameters["undefined"]``).

Example:
    >>> scoped("SS", 62.5, scope="gender").to_dict()
    {'type': 'SS', 'value': 62.5, 'parameters': {'scope': 'gender'}}
    >>> rate("Recall", float("nan"), n=0, reason="TP + FN = 0").parameters
    {'n': 0, 'undefined': 'TP + FN = 0'}
    >>> response_counts(3, 1, 0, counterfactual=True).parameters
    {'counterfactual': True}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.results import Metric, MetricSet, record

__all__ = [
    "scoped",
    "error_rate",
    "per_language",
    "fairness",
    "rate",
    "response_counts",
    "averaged",
    "overall",
]


def scoped(kind: str, value: Any, *, scope: str, reason: str | None = None) -> Metric:
    """A CAT record (``LMS``, ``SS``, ``ICAT``, ``CATCounts``) of one scope."""
    return record(kind, value, undefined=reason, scope=scope)


def error_rate(value: float, *, calls: int) -> Metric:
    """``ErrorRate``: failed calls over all calls of the run."""
    return Metric("ErrorRate", float(value), {"scope": "general", "calls": calls})


def per_language(kind: str, value: Any, *, language: str, reason: str | None = None) -> Metric:
    """A language-exam record (``FormatErrorRate``, ``Accuracy``, ``AccuracyOnValid``,
    ``LanguageCounts``) of one language, or ``all``."""
    return record(kind, value, undefined=reason, language=language)


def fairness(
    kind: str, value: Any, *, group_column: str, privileged: Any, reason: str | None = None
) -> Metric:
    """A group-fairness record of the valid answers (SPD, DI, AOD, EOD)."""
    return record(kind, value, undefined=reason, group_column=group_column, privileged=privileged)


def rate(
    kind: str,
    value: float | None,
    *,
    n: int,
    reason: str,
    group_column: str | None = None,
    group: Any = None,
) -> Metric:
    """A ratio over ``n`` (``Accuracy``, ``Precision``, ``Recall``,
    ``CounterfactualChangeRate``), optionally of one group."""
    params: dict[str, Any] = {}
    if group_column is not None:
        params["group_column"] = group_column
    if group is not None:
        params["group"] = group
    params["n"] = n
    return record(kind, value, undefined=reason, **params)


def response_counts(valid: int, invalid: int, errors: int, *, counterfactual: bool) -> Metric:
    """``ResponseCounts`` of the original (or the counterfactual) calls."""
    value = {"valid": valid, "invalid": invalid, "errors": errors}
    return Metric("ResponseCounts", value, {"counterfactual": True} if counterfactual else {})


def averaged(
    kind: str, value: float | None, *, evaluations: Sequence[int], datasets: Sequence[str]
) -> Metric:
    """The mean of ``kind`` over stored evaluations, naming which ones it averaged."""
    params = {"evaluations": list(evaluations), "datasets": list(datasets), "n": len(evaluations)}
    return record(kind, value, undefined="no evaluation has a value for it", **params)


def overall(ms: MetricSet, kind: str) -> Metric | None:
    """The record of ``kind`` over the whole run in ``ms`` (not one group's, not one slice's,
    as a run with ``--by`` has), or None when the run has none."""
    found = [m for m in ms.filter(kind) if "group" not in m.parameters]
    found = [m for m in found if "slice" not in m.parameters]
    return found[0] if found else None
