"""One-call fairness evaluation of a table: :func:`evaluate_fairness`.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0]})
    >>> evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"]).get(
    ...     "DisparateImpact", group_column="sex").value
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay._compat import UNSET, renamed
from assay.fairness.evaluator import FairnessEvaluator, GroupSpec
from assay.results import MetricSet

__all__ = ["evaluate_fairness"]


def evaluate_fairness(
    data: Any,
    *,
    label: str,
    prediction: str,
    groups: Sequence[GroupSpec] = (),
    group_columns: Sequence[str | Sequence[str]] = (),
    control_columns: Sequence[str] = (),
    positive_label: Any = 1,
    sample_weight: str | None = None,
    zero_division: float | None = None,
    method: str = "between_groups",
    agg: str = "worst_case",
    pos_label: Any = UNSET,
    by: Sequence[str] = (),
    **interval: Any,
) -> MetricSet:
    """One-call fairness evaluation of a table (``pos_label=``: deprecated ``positive_label=``);
    ``sample_weight`` names a column of weights; ``by`` columns to slice by; the other
    arguments (``interval``: ``ci``,
    ``ci_method``, ``num_bootstrap``, ``seed``, ``cluster``) are :class:`FairnessEvaluator`'s.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "sex": [1, 1, 0, 0]})
        >>> ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"])
        >>> ms.get("DisparateImpact", group_column="sex").value
        0.0
    """
    label_value = renamed(
        "positive_label", positive_label, "pos_label", pos_label, where="evaluate_fairness"
    )
    return (
        FairnessEvaluator(
            groups,
            group_columns=group_columns,
            control_columns=control_columns,
            positive_label=label_value,
            zero_division=zero_division,
            method=method,
            agg=agg,
            by=by,
            **interval,
        )
        .add(data, label=label, prediction=prediction, sample_weight=sample_weight)
        .compute()
    )
