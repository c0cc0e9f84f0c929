"""Typed builders of score-statistics records: each parameter name is spelled once here.

A stats record's parameters come in a fixed order (the names of ``docs/records.md``):

1. the metric's own parameters, as its factory was called (``partial_credit``,
   ``cluster``, ``num_samples``, ``seed`` ...);
   ``to_float`` is the metric's own value mapping, when it has one;
2. the context it was computed in: ``reducer`` (the epoch reducer's name),
   ``reducer_to_float`` (the reducer's own value mapping, when it has one), ``score_key``
   (dict-valued scores only), ``n_failed`` (samples with no usable score);
   :func:`~assay.stats.grouped` adds ``group_column`` and ``group``, then ``name`` when a
   ``name_template`` renames the groups, or ``all`` on the aggregate record;
3. ``n``, the number of samples the value was computed from;
4. on an undefined record (``value=None``), ``undefined``: the reason.

A group's record carries no ``n_failed`` (failures are counted per score column, not per
group); the aggregate over all samples keeps it.

Example:
    >>> ctx = run_context(reducer="mean", n_failed=1)
    >>> record("Stderr", 0.12, params={"cluster": "doc"}, context=ctx, n=40).parameters
    {'cluster': 'doc', 'reducer': 'mean', 'n_failed': 1, 'n': 40}
    >>> g = group_context(ctx, group_column="topic", group="math")
    >>> undefined_record("Var", "requires at least 2 scores, got 1", params={}, context=g, n=1)
    ... # doctest: +NORMALIZE_WHITESPACE
    Metric(type='Var', value=None, parameters={'reducer': 'mean', 'group_column': 'topic',
           'group': 'math', 'n': 1, 'undefined': 'requires at least 2 scores, got 1'})
    >>> aggregate_context(ctx, group_column="topic", group="all", all="groups")
    {'reducer': 'mean', 'n_failed': 1, 'group_column': 'topic', 'group': 'all', 'all': 'groups'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.results import Metric, undefined

__all__ = [
    "aggregate_context",
    "group_context",
    "record",
    "run_context",
    "undefined_record",
]


def run_context(
    *,
    reducer: str | None = None,
    reducer_to_float: Mapping[str, Any] | None = None,
    score_key: Any = None,
    n_failed: int | None = None,
) -> dict[str, Any]:
    """The context of one evaluation run: ``reducer``, ``reducer_to_float`` (the
    reducer's own value mapping, when it has one), ``score_key``, ``n_failed``.

    An argument left at None is absent from the record (``score_key`` exists only for
    dict-valued scores; metrics over every epoch have no ``reducer``).

    Example:
        >>> run_context(reducer="pass_at_1", score_key="a", n_failed=0)
        {'reducer': 'pass_at_1', 'score_key': 'a', 'n_failed': 0}
        >>> run_context(n_failed=2)
        {'n_failed': 2}
    """
    given = {
        "reducer": reducer,
        "reducer_to_float": reducer_to_float,
        "score_key": score_key,
        "n_failed": n_failed,
    }
    return {k: v for k, v in given.items() if v is not None}


def group_context(
    context: Mapping[str, Any], *, group_column: str, group: str, name: str | None = None
) -> dict[str, Any]:
    """``context`` for one group of ``group_column``: adds ``group`` (and ``name`` when the
    group is renamed) and drops ``n_failed``.

    Example:
        >>> group_context({"reducer": "mean", "n_failed": 3}, group_column="t", group="a",
        ...               name="t_a")
        {'reducer': 'mean', 'group_column': 't', 'group': 'a', 'name': 't_a'}
    """
    out = {**context, "group_column": group_column, "group": group}
    if name is not None:
        out["name"] = name
    out.pop("n_failed", None)
    return out


def aggregate_context(
    context: Mapping[str, Any], *, group_column: str, group: str, all: str
) -> dict[str, Any]:
    """``context`` for the aggregate over the groups of ``group_column``: ``group`` is the
    aggregate's label and ``all`` says how it aggregates (``"samples"`` or ``"groups"``).

    Example:
        >>> aggregate_context({}, group_column="t", group="all", all="samples")
        {'group_column': 't', 'group': 'all', 'all': 'samples'}
    """
    return {**context, "group_column": group_column, "group": group, "all": all}


def _parameters(params: Mapping[str, Any], context: Mapping[str, Any], n: int) -> dict[str, Any]:
    return {**params, **context, "n": n}


def record(
    name: str, value: Any, *, params: Mapping[str, Any], context: Mapping[str, Any], n: int
) -> Metric:
    """A defined record of type ``name``: ``value`` (a float, or a dict for metrics with
    several values) over ``n`` samples, computed with ``params`` in ``context``.

    Example:
        >>> record("Accuracy", 0.5, params={"partial_credit": True}, context={}, n=4)
        Metric(type='Accuracy', value=0.5, parameters={'partial_credit': True, 'n': 4})
    """
    return Metric(name, value, _parameters(params, context, n))


def undefined_record(
    name: str, reason: str, *, params: Mapping[str, Any], context: Mapping[str, Any], n: int
) -> Metric:
    """An undefined record of type ``name`` (``value=None``) with ``reason`` in
    ``parameters["undefined"]``.

    Example:
        >>> undefined_record("Mean", "requires at least 1 score", params={}, context={}, n=0)
        ... # doctest: +NORMALIZE_WHITESPACE
        Metric(type='Mean', value=None, parameters={'n': 0,
               'undefined': 'requires at least 1 score'})
    """
    return undefined(name, reason, **_parameters(params, context, n))
