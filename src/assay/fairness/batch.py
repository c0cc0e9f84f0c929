"""A validated batch of the fairness evaluator, and the checks that labels, predictions and
the positive label speak the same language.

:func:`read_table` reads a batch's columns from a table; :func:`read_batch` checks everything
about a batch before the evaluator's state changes: labels and predictions (of the same length
and language), weights, each privileged-group definition's mask (and how many rows matched
each privileged value), each group column's groups, each slice's rows and each cluster's rows.
A :class:`Batch` restricted to some of its rows (:meth:`Batch.on`: a slice's, a cluster's) has
the groups those rows have.

Fairness binarises labels and predictions by equality with the positive label, so a
mismatch (``"yes"``/``"no"`` predictions against ``1``/``0`` labels, a positive label
``"Yes"`` for labels ``"yes"``/``"no"``) would silently make everything negative and every
gap 0. These checks turn such data into an error naming the values seen:

* at ``add``: labels, predictions and the positive label must all be numbers (booleans
  count as numbers) or all be text; a column mixing both is an error;
* at ``compute`` (over everything added): when two or more distinct values were seen, the
  positive label must be one of them (a single value seen, e.g. all ``0``, may be the
  negative class alone); and labels and predictions must share a value unless there are at
  most two values in all.

Example:
    >>> import numpy as np
    >>> kind_and_values(np.array(["yes", "no", "yes"]), source="d.csv", field="y")
    ('text', array(['no', 'yes'], dtype='<U3'))
    >>> check_same_language(np.array([0.0, 1.0]), np.array(["no", "yes"]), 1,
    ...                     source="d.csv", fields=("y", "yhat"))
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: d.csv: field 'yhat': labels and predictions hold different
    kinds of values: labels (y) hold 0, 1; predictions (yhat) hold 'no', 'yes'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d, check_same_length, show
from assay.errors import InvalidInputError
from assay.fairness.group_table import check_weights
from assay.fairness.grouping import (
    GroupColumn,
    Groupings,
    Masked,
    as_group_text,
    batch_grouping,
    cluster_rows,
    columns_of,
    group_column_values,
    restrict,
    row_slices,
)
from assay.fairness.types import PrivilegedGroup
from assay.io.tables import as_dataframe, require_columns
from assay.uncertainty.intervals import CIOptions

__all__ = [
    "Batch",
    "read_batch",
    "read_table",
    "kind_and_values",
    "kind_of",
    "check_same_language",
    "check_value_sets",
    "shown",
]


def kind_of(value: Any) -> str:
    """``"number"`` for numbers and booleans, ``"text"`` for strings, else ``"other"``."""
    if isinstance(value, (str, np.str_)):
        return "text"
    if isinstance(value, (bool, int, float, np.bool_, np.number)):
        return "number"
    return "other"


def shown(values: NDArray[Any], limit: int = 5) -> str:
    """A few values as text for a message: ``0, 1`` or ``'no', 'yes'``."""
    items = []
    for v in values[:limit].tolist():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        items.append(repr(v))
    more = f", ... ({len(values)} values)" if len(values) > limit else ""
    return ", ".join(items) + more


def kind_and_values(a: NDArray[Any], *, source: str | None, field: str) -> tuple[str, NDArray[Any]]:
    """The kind of a column's values and its distinct values (sorted; float64 or text)."""
    if a.dtype.kind in "biuf":
        x = a.astype(np.float64)
        bad = np.isnan(x)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError("missing value", source=source, record=i + 1, field=field)
        return "number", np.unique(x)
    if a.dtype.kind in "US":
        return "text", np.unique(a.astype(str))
    code = {"number": 0, "text": 1, "other": 2}
    kinds = np.fromiter((code[kind_of(v)] for v in a), dtype=np.int8, count=len(a))
    odd = (kinds == 2) | (kinds != kinds[0]) if len(a) else kinds.astype(bool)
    if odd.any():
        i = int(np.flatnonzero(odd)[0])
        v = a[i]
        reason = (
            f"expected a number or a string, got {type(v).__name__} {show(v)}"
            if kinds[i] == 2
            else f"one column holds numbers or strings, not both: got {show(v)} after {show(a[0])}"
        )
        raise InvalidInputError(reason, source=source, record=i + 1, field=field)
    distinct = pd.unique(pd.Series(a, dtype=object))
    if len(a) and kinds[0] == 1:
        return "text", np.unique(np.array([str(v) for v in distinct], dtype=str))
    return "number", np.unique(np.array(distinct, dtype=np.float64))


def check_same_language(
    labels: NDArray[Any],
    predictions: NDArray[Any],
    positive_label: Any,
    *,
    source: str | None,
    fields: tuple[str, str],
) -> None:
    """Labels and predictions (distinct values) are of the positive label's kind."""
    lk = "number" if labels.dtype.kind in "biuf" else "text"
    pk = "number" if predictions.dtype.kind in "biuf" else "text"
    if lk != pk:
        raise InvalidInputError(
            "labels and predictions hold different kinds of values: "
            f"labels ({fields[0]}) hold {shown(labels)}; "
            f"predictions ({fields[1]}) hold {shown(predictions)}",
            source=source,
            field=fields[1],
        )
    if len(labels) and kind_of(positive_label) != lk:
        raise InvalidInputError(
            f"the positive label {positive_label!r} is a {kind_of(positive_label)} but the "
            f"labels ({fields[0]}) hold {shown(labels)}",
            source=source,
            field=fields[0],
        )


def check_value_sets(
    labels: NDArray[Any], predictions: NDArray[Any], positive_label: Any, *, source: str
) -> None:
    """Over all data: the positive label occurs, and labels and predictions share values."""
    seen = np.union1d(labels, predictions)
    if len(seen) > 1 and not np.any(seen == positive_label):
        raise InvalidInputError(
            f"the positive label {positive_label!r} occurs in neither the labels "
            f"({shown(labels)}) nor the predictions ({shown(predictions)})",
            source=source,
        )
    if len(seen) > 2 and len(np.intersect1d(labels, predictions)) == 0:
        raise InvalidInputError(
            f"labels and predictions share no value: labels hold {shown(labels)}; "
            f"predictions hold {shown(predictions)}",
            source=source,
        )


class Options(Protocol):
    """What a batch is checked against: the evaluator's configuration."""

    groups: tuple[PrivilegedGroup, ...]
    group_columns: tuple[GroupColumn, ...]
    control_columns: tuple[str, ...]
    positive_label: Any
    by: tuple[str, ...]
    ci: CIOptions | None


@dataclass(frozen=True)
class Batch:
    """Labels ``t``, predictions ``p``, weights ``w`` (None: none given), per definition the
    privileged mask and the rows matching each privileged value (``masked``), per group column
    the group names and each row's code (``groupings``), the distinct labels and predictions
    (``seen``), each slice's rows (``cuts``: column, value, rows) and each cluster's
    (``clusters``: cluster, row indices)."""

    t: NDArray[Any]
    p: NDArray[Any]
    w: NDArray[np.float64] | None
    masked: Masked
    groupings: Groupings
    seen: tuple[NDArray[Any], NDArray[Any]]
    cuts: Sequence[tuple[str, str | None, NDArray[np.bool_]]] = ()
    clusters: Sequence[tuple[str, NDArray[np.intp]]] = ()

    def on(self, rows: NDArray[Any], *, cuts: bool = True) -> Batch:
        """The batch on some of its ``rows`` (a mask or indices): the groups those rows have,
        no clusters, and (with ``cuts``) its slices' rows among them."""
        masked, groupings = restrict(self.masked, self.groupings, rows)
        within = [(c, v, r[rows]) for c, v, r in self.cuts] if cuts else []
        w = None if self.w is None else self.w[rows]
        return Batch(self.t[rows], self.p[rows], w, masked, groupings, self.seen, within)


def read_batch(
    ev: Options,
    y_true: ArrayLike,
    y_pred: ArrayLike,
    values: Mapping[str, ArrayLike],
    *,
    source: str | None,
    fields: tuple[str, str],
    sample_weight: ArrayLike | None,
    weight_field: str,
) -> Batch:
    """A batch checked against ``ev``'s configuration (see the module docstring)."""
    t = as_1d(y_true, source=source or fields[0], field=fields[0] if source else None)
    p = as_1d(y_pred, source=source or fields[1], field=fields[1] if source else None)
    n = check_same_length(**{fields[0]: t, fields[1]: p})
    w = None
    if sample_weight is not None:
        w = check_weights(sample_weight, n, source=source, field=weight_field)
    masked = [_privileged(g, values, n, source) for g in ev.groups]
    groupings = [batch_grouping(values, c, ev.control_columns, n, source) for c in ev.group_columns]
    _, labels = kind_and_values(t, source=source, field=fields[0])
    _, predictions = kind_and_values(p, source=source, field=fields[1])
    check_same_language(labels, predictions, ev.positive_label, source=source, fields=fields)
    cuts = [(c, v, rows) for c in ev.by for v, rows in row_slices(values, c, n, source)]
    column = ev.ci.cluster if ev.ci is not None else None
    clusters = [] if column is None else cluster_rows(values, column, n, source)
    return Batch(t, p, w, masked, groupings, (labels, predictions), cuts, clusters)


def read_table(
    ev: Options, data: Any, label: str, prediction: str, source: str, sample_weight: str | None
) -> dict[str, Any]:
    """The arrays of a table (pandas/polars frame, file path or records) by column names, as
    :meth:`~assay.fairness.FairnessEvaluator.add_arrays` takes them: labels and predictions
    (none missing), every column the configuration names and the weights (``sample_weight``:
    a column name)."""
    df = as_dataframe(data, source=source)
    columns = dict.fromkeys(
        [
            *(g.group_column for g in ev.groups),
            *(c for key in ev.group_columns for c in columns_of(key)),
            *ev.control_columns,
            *ev.by,
            *([ev.ci.cluster] if ev.ci is not None and ev.ci.cluster else []),
        ]
    )
    weights = [] if sample_weight is None else [sample_weight]
    require_columns(df, [label, prediction, *columns, *weights], source=source)
    for c in (label, prediction):
        miss = df[c].isna().to_numpy()
        if miss.any():
            row = int(np.flatnonzero(miss)[0]) + 1
            raise InvalidInputError("missing value", source=source, record=row, field=c)
    return {
        "y_true": df[label].to_numpy(),
        "y_pred": df[prediction].to_numpy(),
        "group_values": {c: df[c].to_numpy() for c in columns},
        "fields": (label, prediction),
        "sample_weight": None if sample_weight is None else df[sample_weight].to_numpy(),
        "weight_field": sample_weight or "sample_weight",
    }


def _privileged(
    g: PrivilegedGroup, values: Mapping[str, ArrayLike], n: int, source: str | None
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """The privileged mask and, for privileged values, how many datums matched each."""
    v = group_column_values(values, g.group_column, n, source)
    if g.values is None:
        return g.privileged(v, source=source), np.zeros(0, dtype=np.int64)
    text = as_group_text(v, source=source, field=g.group_column)
    matched = np.array([int((text == x).sum()) for x in g.values], dtype=np.int64)
    return np.isin(text, np.asarray(g.values, dtype=str)), matched
