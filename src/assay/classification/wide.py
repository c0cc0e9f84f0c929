"""Wide (scikit-learn style) classification input: one row per datum.

Two layouts of a table (DataFrame, or a CSV/Parquet/JSONL file):

* binary: a ``y_true`` column and one ``y_score`` column, the score of ``positive_label``
  (default 1); the other value of ``y_true`` is the negative label and scores ``1 - s``;
* ``predict_proba``: a ``y_true`` column and ``y_score_columns``, one score column per label,
  the column names being the labels.

Labels are compared as text (``1``, ``1.0`` read from a file and ``"1"`` are the same label).

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1, 0, 1], "p": [0.9, 0.2, 0.4]})
    >>> b = parse_wide(df, y_true="y", y_score="p")
    >>> b.labels, b.gt.tolist()
    (('0', '1'), [1, 0, 1])
    >>> df = pd.DataFrame({"y": ["cat", "dog"], "cat": [0.7, 0.1], "dog": [0.3, 0.9]})
    >>> parse_wide(df, y_true="y", y_score_columns=["cat", "dog"]).labels
    ('cat', 'dog')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from assay._validation import show
from assay.classification.io import _text_column
from assay.classification.types import DEFAULT_KEY, KeyBlock, block_from_arrays
from assay.errors import InvalidInputError
from assay.io.tables import as_dataframe, numeric_column, require_columns

__all__ = ["parse_wide"]


def _label_text(df: pd.DataFrame, column: str, source: str) -> NDArray[np.str_]:
    s = df[column]
    if s.dtype.kind == "f":
        v = s.to_numpy()
        if np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            return np.asarray(v.astype(np.int64).astype(str), dtype=str)
    if s.dtype.kind == "b":
        return np.asarray(s.astype(int).astype(str).to_numpy(), dtype=str)
    return _text_column(df, column, source)


def _distinct(truth: NDArray[np.str_]) -> NDArray[np.str_]:
    """The distinct values of a text column (labels of one or two characters: as integers)."""
    width = truth.dtype.itemsize
    if truth.dtype.kind == "U" and width in (4, 8):
        word = np.uint32 if width == 4 else np.uint64
        return np.unique(np.ascontiguousarray(truth).view(word)).view(truth.dtype)
    return np.unique(truth)


def _negative_label(truth: NDArray[np.str_], positive: str, column: str, source: str) -> str:
    others = sorted(set(_distinct(truth).tolist()) - {positive})
    if len(others) > 1:
        raise InvalidInputError(
            f"a single score column needs two classes; y_true has {len(others) + 1} "
            f"({', '.join([positive, *others][:5])}, ...): give one score column per label "
            "(y_score_columns) for more",
            source=source,
            field=column,
        )
    if others:
        return str(others[0])
    return "0" if positive == "1" else f"not {positive}"


def parse_wide(
    data: Any,
    *,
    y_true: str,
    y_score: str | None = None,
    y_score_columns: Sequence[str] | None = None,
    positive_label: Any = 1,
    uid: str | None = None,
    key: str = DEFAULT_KEY,
    source: str = "data",
) -> KeyBlock:
    """Validate a wide table into a :class:`KeyBlock` (exactly one of the score layouts).

    Raises :class:`InvalidInputError` naming the source, row and column for a missing
    column or value, a score that is not a number in [0, 1], a ``y_true`` value that is not
    one of ``y_score_columns``, or more than two classes with a single score column.
    """
    if (y_score is None) == (y_score_columns is None):
        raise InvalidInputError("give either y_score or y_score_columns", source="y_score")
    df = as_dataframe(data, source=source)
    if len(df) == 0:
        raise InvalidInputError("the table holds no rows", source=source)
    columns = [y_true, *([y_score] if y_score is not None else list(y_score_columns or []))]
    if uid is not None:
        columns.append(uid)
    require_columns(df, columns, source=source)
    truth = _label_text(df, y_true, source)
    uids = None if uid is None else _text_column(df, uid, source)
    if y_score is not None:
        pos = str(positive_label)
        labels = [_negative_label(truth, pos, y_true, source), pos]
        scores = numeric_column(df, y_score, source=source, lo=0.0, hi=1.0)
    else:
        labels = [str(c) for c in y_score_columns or []]
        if len(set(labels)) != len(labels) or not labels:
            raise InvalidInputError("score columns must be distinct and not empty", source=source)
        unknown = ~np.isin(truth, labels)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise InvalidInputError(
                f"label {show(truth[i])} has no score column (score columns: {', '.join(labels)})",
                source=source,
                record=i + 1,
                field=y_true,
            )
        scores = np.column_stack(
            [numeric_column(df, c, source=source, lo=0.0, hi=1.0) for c in labels]
        )
    try:
        return block_from_arrays(truth, scores, labels=labels, uids=uids, key=key)
    except InvalidInputError as e:  # duplicate uids
        raise InvalidInputError(e.reason, source=source, record=e.record, field=uid) from None
