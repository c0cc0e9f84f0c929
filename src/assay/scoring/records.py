"""Typed builders of scoring metric records: each parameter name is spelled once here.

Every cell of an RSMTool-style table becomes one record. Its parameters say where the cell
lives: ``table`` (the RSMTool table name), ``score`` (the score column the row is about) and,
in by-group tables, ``group_column`` and ``group`` (see ``docs/records.md``). A value of
``None`` makes an undefined record (``value=None``, the reason in
``parameters["undefined"]``). The order of the parameters is part of the published JSON, so
each builder fixes it.

Example:
    >>> cell("QWK", 0.71, table="eval", score="m").parameters
    {'table': 'eval', 'score': 'm'}
    >>> r = group_cell("SMD", None, "requires h_sd > 0", table="eval_by_L1", score="m",
    ...                group_column="L1", group="a")
    >>> r.value, r.parameters["group"], r.parameters["undefined"]
    (None, 'a', 'requires h_sd > 0')
    >>> n_dropped(3, reason="system_non_numeric").to_dict()
    {'type': 'NDropped', 'value': 3, 'parameters': {'reason': 'system_non_numeric'}}
"""

from __future__ import annotations

from typing import Any

from assay.results import Metric, record

__all__ = [
    "UNDEFINED",
    "cell",
    "group_cell",
    "disattenuated_group_cell",
    "fairness_cell",
    "n_dropped",
    "score_distribution",
    "confusion_matrix",
]

#: The reason of an undefined cell when the computation gave none.
UNDEFINED = "undefined"


def cell(
    type_: str,
    value: Any,
    reason: str = UNDEFINED,
    /,
    *,
    table: str,
    score: str,
    smd_method: str | None = None,
) -> Metric:
    """One cell of a pooled table (``eval``, ``consistency``, ``degradation``, ...).

    ``reason`` says why the cell is undefined; it is used only when ``value`` is ``None``.
    ``smd_method`` names the denominator of an SMD computed with another method than
    RSMTool's default (``unpooled`` in ``eval``).

    Example:
        >>> cell("N", 4, table="consistency", score="h2").to_dict()["parameters"]
        {'table': 'consistency', 'score': 'h2'}
        >>> cell("SMD", 0.1, table="eval", score="m", smd_method="williamson").parameters
        {'table': 'eval', 'score': 'm', 'smd_method': 'williamson'}
    """
    extra = {} if smd_method is None else {"smd_method": smd_method}
    return record(type_, value, undefined=reason, table=table, score=score, **extra)


def group_cell(
    type_: str,
    value: Any,
    reason: str = UNDEFINED,
    /,
    *,
    table: str,
    score: str,
    group_column: str,
    group: str,
) -> Metric:
    """One cell of a by-group table (``eval_by_<col>``, ``consistency_by_<col>``).

    Example:
        >>> group_cell("N", 2, table="eval_by_g", score="m", group_column="g", group="a").parameters
        {'table': 'eval_by_g', 'score': 'm', 'group_column': 'g', 'group': 'a'}
    """
    params = {"table": table, "score": score, "group_column": group_column, "group": group}
    return record(type_, value, undefined=reason, **params)


def disattenuated_group_cell(
    type_: str, value: Any, reason: str = UNDEFINED, /, *, table: str, group_column: str, group: str
) -> Metric:
    """One cell of ``disattenuated_correlations_by_<col>``: a row per group, no score.

    The group comes before the group column here, as these records were first published.

    Example:
        >>> r = disattenuated_group_cell(
        ...     "DisattenuatedCorrelation", None, "requires a positive human-human correlation",
        ...     table="disattenuated_correlations_by_g", group_column="g", group="a")
        >>> list(r.parameters)
        ['table', 'group', 'group_column', 'undefined']
    """
    params = {"table": table, "group": group, "group_column": group_column}
    return record(type_, value, undefined=reason, **params)


def fairness_cell(
    type_: str,
    value: float | None,
    reason: str = UNDEFINED,
    /,
    *,
    table: str,
    score: str,
    group_column: str,
    base_category: Any,
) -> Metric:
    """R2 or p value of one fairness model (OSA, OSD, CSD) in ``fairness_metrics_by_<col>``.

    ``base_category`` is the group the others are compared with (the reference level).

    Example:
        >>> fairness_cell("OverallScoreAccuracy", 0.01, table="fairness_metrics_by_g", score="m",
        ...               group_column="g", base_category="a").parameters["base_category"]
        'a'
    """
    params = {
        "table": table,
        "score": score,
        "group_column": group_column,
        "base_category": base_category,
    }
    return record(type_, value, undefined=reason, **params)


def score_distribution(lo: int, human: Any, system: Any, *, score: str) -> Metric:
    """``ScoreDistribution``: responses per rounded score level, human and system.

    RSMTool's ``score_dist`` table as counts: ``{"levels", "human", "system"}``, where
    ``system`` counts the rounded system scores (``rint``; before any trimming).

    Example:
        >>> score_distribution(1, [2, 1], [1, 2], score="m").value
        {'levels': [1, 2], 'human': [2, 1], 'system': [1, 2]}
    """
    value = {
        "levels": list(range(lo, lo + len(human))),
        "human": [int(c) for c in human],
        "system": [int(c) for c in system],
    }
    return Metric("ScoreDistribution", value, {"table": "score_dist", "score": score})


def confusion_matrix(lo: int, counts: Any, *, score: str) -> Metric:
    """``ConfusionMatrix``: responses per (human score, rounded system score) pair.

    RSMTool's ``confMatrix``: ``{"levels", "counts"}``, ``counts[i][j]`` the responses with
    human score ``levels[i]`` and ``rint(system) == levels[j]``.

    Example:
        >>> confusion_matrix(1, [[2, 0], [1, 1]], score="m").value
        {'levels': [1, 2], 'counts': [[2, 0], [1, 1]], 'rows': 'human', 'columns': 'system'}
    """
    value = {
        "levels": list(range(lo, lo + len(counts))),
        "counts": [[int(c) for c in row] for row in counts],
        "rows": "human",
        "columns": "system",
    }
    return Metric("ConfusionMatrix", value, {"table": "confMatrix", "score": score})


def n_dropped(count: int, *, reason: str) -> Metric:
    """``NDropped``: how many responses were left out, and why (a count, never undefined).

    Example:
        >>> n_dropped(2, reason="human_zero").value
        2
    """
    return Metric("NDropped", count, {"reason": reason})
