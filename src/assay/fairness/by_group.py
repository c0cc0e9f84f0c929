"""Metrics per group of a categorical column, and the disparity between the groups.

A *group column* splits the datums into groups, one per distinct value (text, or a number
written as short text: ``3`` for 3.0). Per group, with labels and predictions binarised on
the positive label and TP/FP/FN/TN the group's confusion counts:

* ``SelectionRate      = (TP + FP) / n``           the share predicted positive
* ``TruePositiveRate   = TP / (TP + FN)``          undefined without positive labels
* ``FalsePositiveRate  = FP / (FP + TN)``          undefined without negative labels
* ``Accuracy           = (TP + TN) / n``

Over all groups (fairlearn's definitions), with ``method="between_groups"``:

* ``DemographicParityDifference = max_g SR_g - min_g SR_g``      fair value 0
* ``DemographicParityRatio      = min_g SR_g / max_g SR_g``      fair value 1
* ``EqualizedOddsDifference     = max(TPR difference, FPR difference)``
* ``EqualizedOddsRatio          = min(TPR ratio, FPR ratio)``

(``agg="mean"``: the equalized odds aggregates are the mean of the two parts instead.)

With ``method="to_overall"`` each group is compared with the rate over all datums
instead: the difference is ``max_g |r_g - r_all|`` and the ratio ``min_g q_g`` where
``q = r_g / r_all`` folded below 1 (``1/q`` when ``q > 1``).

A rate with a zero denominator is undefined (NaN here, ``null`` in a record), and so is an
aggregate over it; ``zero_division=z`` makes such a rate ``z`` instead (fairlearn's rates
are 0.0 there: ``zero_division=0`` gives its numbers). A ratio whose denominator (the
largest rate, or the overall rate) is 0 is undefined whatever ``zero_division`` is
(fairlearn gives NaN). A single group has difference 0 and ratio 1.

Example:
    >>> t = GroupTable.tally(np.array([1, 0, 1, 0]) == 1, np.array([1, 1, 0, 0]) == 1,
    ...                      np.array(["en", "en", "fr", "fr"]))
    >>> t.names.tolist(), group_rates(t.counts)["SelectionRate"].tolist()
    (['en', 'fr'], [1.0, 0.0])
    >>> disparities(t)["DemographicParityDifference"]
    (1.0, None)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay import ratios
from assay._validation import as_1d, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness.declared import AGGS, METHODS
from assay.fairness.group_table import GroupTable, check_weights
from assay.fairness.grouping import (
    as_group_text,
    crossed_codes,
)

__all__ = [
    "aggregate_values",
    "disparities",
    "group_rates",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
]


def group_rates(
    counts: NDArray[Any], zero_division: float | None = None
) -> dict[str, NDArray[np.float64]]:
    """The four per-group rates from (weighted) counts of shape (..., k, 4) (the leading axes:
    resamples); NaN where undefined.

    With weights, each count is the sum of the weights of the group's rows in that cell
    (fairlearn's ``sample_weight``): the rates are weighted shares."""
    tp, fp, fn, tn = (counts[..., i].astype(np.float64) for i in range(4))
    n = tp + fp + fn + tn
    return {
        "SelectionRate": ratios.divide(tp + fp, n),
        "TruePositiveRate": ratios.divide(tp, tp + fn, zero_division),
        "FalsePositiveRate": ratios.divide(fp, fp + tn, zero_division),
        "Accuracy": ratios.divide(tp + tn, n),
    }


_WHO = {
    "SelectionRate": "weight (its rows' sample weights sum to 0)",
    "TruePositiveRate": "positive labels",
    "FalsePositiveRate": "negative labels",
}
_RATE_NAME = {
    "SelectionRate": "selection rate",
    "TruePositiveRate": "true positive rate",
    "FalsePositiveRate": "false positive rate",
}


def _why_rate(
    rate: str, r: NDArray[np.float64], overall: float, t: GroupTable, method: str
) -> str | None:
    """Why a difference or ratio over this rate is undefined (None when it is defined)."""
    bad = np.flatnonzero(np.isnan(r))
    if len(bad):
        name = _shown(str(t.names[bad[0]]))
        cells = {"TruePositiveRate": [0, 2], "FalsePositiveRate": [1, 3]}.get(rate, [0, 1, 2, 3])
        if rate != "SelectionRate" and t.counts[bad[0], cells].sum():
            return f"group {name!r} has no {_WHO[rate]} of positive weight"
        return f"group {name!r} has no {_WHO[rate]} (its {_RATE_NAME[rate]} is undefined)"
    if method == "to_overall" and np.isnan(overall):
        return f"there are no {_WHO[rate]} at all (the overall {_RATE_NAME[rate]} is undefined)"
    return None


def _shown(name: str) -> str:
    """A group's name for a message: a crossed group's JSON list reads as ``F, b``."""
    if name.startswith('["') and name.endswith('"]'):
        try:
            return ", ".join(map(str, json.loads(name)))
        except ValueError:  # a single column's value that merely looks like a list
            pass
    return name


def _gaps(
    r: NDArray[np.float64], overall: NDArray[np.float64], method: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The difference and the ratio over group rates ``r`` (..., k) with the ``overall``
    rate (..., 1); NaN where undefined (a group's or, ``to_overall``, the overall rate
    undefined; the ratio's denominator 0)."""
    if method == "between_groups":
        top = r.max(axis=-1)
        return top - r.min(axis=-1), ratios.divide(r.min(axis=-1), top)
    q = ratios.divide(r, overall)
    with np.errstate(divide="ignore"):
        folded = np.where(q > 1, 1 / q, q)
    return np.abs(r - overall).max(axis=-1), folded.min(axis=-1)


def aggregate_values(
    counts: NDArray[Any], *, method: str, zero_division: float | None, agg: str
) -> dict[str, NDArray[np.float64]]:
    """The four aggregates of (weighted) counts shaped (..., k, 4) (many resamples at once),
    each shaped (...), NaN where undefined: the one formula of :func:`disparities`."""
    rates = group_rates(counts, zero_division)
    overall = group_rates(counts.sum(axis=-2, keepdims=True), zero_division)
    parts = {r: _gaps(rates[r], overall[r], method) for r in _RATE_NAME}
    (tpr_d, tpr_r), (fpr_d, fpr_r) = parts["TruePositiveRate"], parts["FalsePositiveRate"]
    worst = agg == "worst_case"
    return {
        "DemographicParityDifference": parts["SelectionRate"][0],
        "DemographicParityRatio": parts["SelectionRate"][1],
        "EqualizedOddsDifference": np.maximum(tpr_d, fpr_d) if worst else (tpr_d + fpr_d) / 2,
        "EqualizedOddsRatio": np.minimum(tpr_r, fpr_r) if worst else (tpr_r + fpr_r) / 2,
    }


_PARTS = {
    "DemographicParityDifference": ("difference", ("SelectionRate",)),
    "DemographicParityRatio": ("ratio", ("SelectionRate",)),
    "EqualizedOddsDifference": ("difference", ("TruePositiveRate", "FalsePositiveRate")),
    "EqualizedOddsRatio": ("ratio", ("TruePositiveRate", "FalsePositiveRate")),
}


def disparities(
    t: GroupTable,
    *,
    method: str = "between_groups",
    zero_division: float | None = None,
    agg: str = "worst_case",
) -> dict[str, tuple[float | None, str | None]]:
    """The four aggregates over the groups of ``t``: type -> (value or None, why undefined).

    ``agg`` combines the TPR and FPR parts of equalized odds: ``"worst_case"`` (the larger
    difference, the smaller ratio) or ``"mean"`` (their mean)."""
    values = aggregate_values(t.weights, method=method, zero_division=zero_division, agg=agg)
    out: dict[str, tuple[float | None, str | None]] = {}
    for name, v in values.items():
        value = ratios.value_or_none(v)
        if value is None:  # the first part undefined says why
            kind, rates = _PARTS[name]
            whys = [_why_part(t, r, kind, method, zero_division) for r in rates]
            out[name] = (None, next(w for w in whys if w))
        else:
            out[name] = (value, None)
    return out


def _why_part(
    t: GroupTable, rate: str, kind: str, method: str, zero_division: float | None
) -> str | None:
    """Why one part (the difference or ratio over one rate) is undefined; None when it is
    defined."""
    r = group_rates(t.weights, zero_division)[rate]
    overall = group_rates(t.overall, zero_division)[rate]
    difference, ratio = _gaps(r, overall, method)
    if not np.isnan(ratio if kind == "ratio" else difference):
        return None
    why = _why_rate(rate, r, float(overall[0]), t, method)
    if why is None:  # the ratio's denominator is 0
        between = method == "between_groups"
        zero = (
            "the largest group rate is 0 (the ratio is 0/0)" if between else "the overall rate is 0"
        )
        why = f"{_RATE_NAME[rate]}: {zero}"
    return why


def _table(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    groups: ArrayLike,
    positive_label: Any,
    sample_weight: ArrayLike | None = None,
) -> GroupTable:
    t = as_1d(y_true, source="y_true")
    p = as_1d(y_pred, source="y_pred")
    n = check_same_length(y_true=t, y_pred=p)
    w = None
    if sample_weight is not None:
        w = check_weights(sample_weight, n, source=None, field="sample_weight")
    g = np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups)
    if g.ndim == 2:  # several columns: their crossed groups
        if g.shape[0] != n:
            raise InvalidInputError(f"has {g.shape[0]} rows for {n} labels", source="groups")
        texts = [
            as_group_text(g[:, j], source="groups", field=f"column {j + 1}")
            for j in range(g.shape[1])
        ]
        names, codes = crossed_codes(texts)
        return GroupTable.from_codes(names, codes, t == positive_label, p == positive_label, w)
    text = as_group_text(as_1d(groups, source="groups"), source="groups", field="groups")
    check_same_length(y_true=t, groups=text)
    return GroupTable.tally(t == positive_label, p == positive_label, text, w)


def check_options(method: str, agg: str) -> None:
    """``method`` and ``agg`` are among the known ones."""
    for name, value, known in (("method", method, METHODS), ("agg", agg, AGGS)):
        if value not in known:
            raise InvalidInputError(
                f"must be one of {', '.join(known)}, got {value!r}", source=name
            )


def _aggregate_function(name: str, doc: str) -> Callable[..., float]:
    """The functional form of one aggregate: arrays in, a float out, or
    :class:`~assay.errors.UndefinedMetricError` naming why it is undefined."""

    def aggregate(
        y_true: ArrayLike,
        y_pred: ArrayLike,
        groups: ArrayLike,
        *,
        positive_label: Any = 1,
        method: str = "between_groups",
        zero_division: float | None = None,
        agg: str = "worst_case",
        sample_weight: ArrayLike | None = None,
    ) -> float:
        check_options(method, agg)
        table = _table(y_true, y_pred, groups, positive_label, sample_weight)
        aggregates = disparities(table, method=method, zero_division=zero_division, agg=agg)
        value, why = aggregates[name]
        if value is None:
            raise UndefinedMetricError(name, why or "undefined")
        return value

    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    aggregate.__name__ = aggregate.__qualname__ = snake
    aggregate.__doc__ = doc
    return aggregate


demographic_parity_difference = _aggregate_function(
    "DemographicParityDifference",
    """Largest minus smallest selection rate over the groups (0 is fair).

    Example:
        >>> demographic_parity_difference([0, 0, 0, 0], [1, 1, 1, 0], ["a", "a", "b", "b"])
        0.5
    """,
)

demographic_parity_ratio = _aggregate_function(
    "DemographicParityRatio",
    """Smallest over largest selection rate over the groups (1 is fair).

    Example:
        >>> demographic_parity_ratio([0, 0, 0, 0], [1, 1, 1, 0], ["a", "a", "b", "b"])
        0.5
    """,
)

equalized_odds_difference = _aggregate_function(
    "EqualizedOddsDifference",
    """The larger of the TPR difference and the FPR difference over the groups (0 is fair).

    Example:
        >>> equalized_odds_difference([1, 0, 1, 0], [1, 0, 0, 0], ["a", "a", "b", "b"])
        1.0
    """,
)

equalized_odds_ratio = _aggregate_function(
    "EqualizedOddsRatio",
    """The smaller of the TPR ratio and the FPR ratio over the groups (1 is fair).

    Example:
        >>> equalized_odds_ratio([1, 0, 1, 0], [1, 1, 1, 0], ["a", "a", "b", "b"])
        0.0
    """,
)
