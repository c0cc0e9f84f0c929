"""A group column's values as text, and the distinct texts of a batch.

Groups are named by text: a text value stays itself, a boolean becomes ``True``/``False``
and a number its short form (``3`` for 3.0, ``2.5`` for 2.5); a missing value (None, NaN)
or any other kind of value is an error naming its row. :func:`factorize_text` finds the
sorted distinct texts of a large batch and each value's index among them quickly.

Example:
    >>> as_group_text(["en", "fr"], source=None, field="L1").tolist()
    ['en', 'fr']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d
from assay.errors import InvalidInputError

__all__ = ["as_group_text", "factorize_text", "group_column_values"]


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def _one_text(v: Any, i: int, source: str | None, field: str) -> str:
    if isinstance(v, (str, np.str_)):
        return str(v)
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.number)) and not np.isnan(float(v)):
        return _number_text(float(v))
    reason = (
        "missing value"
        if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v))
        else f"a group value must be text or a number, got {type(v).__name__} {v!r}"
    )
    raise InvalidInputError(reason, source=source, record=i + 1, field=field)


def as_group_text(values: ArrayLike, *, source: str | None, field: str) -> NDArray[np.str_]:
    """A group column's values as text (numbers in short form); a missing value is an error.

    Example:
        >>> as_group_text([3.0, 2.5, 3.0], source=None, field="grade").tolist()
        ['3', '2.5', '3']
    """
    v = np.asarray(values)
    if v.dtype.kind in "US":
        return v.astype(str)
    if v.dtype.kind in "biuf":
        uniq, inv = np.unique(v, return_inverse=True)
        if v.dtype.kind == "f" and np.isnan(uniq).any():
            i = int(np.flatnonzero(np.isnan(v))[0])
            raise InvalidInputError("missing value", source=source, record=i + 1, field=field)
        texts = [
            str(bool(u)) if v.dtype.kind == "b" else _number_text(float(u)) for u in uniq.tolist()
        ]
        return np.asarray(texts, dtype=str)[inv.reshape(-1)] if len(v) else v.astype(str)
    if not len(v):
        return np.empty(0, dtype="<U1")
    try:
        codes, uniq = pd.factorize(pd.Series(v, dtype=object), use_na_sentinel=True)
    except TypeError:  # an unhashable value (a list): find it and name its row
        return np.asarray([_one_text(e, i, source, field) for i, e in enumerate(v.tolist())])
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise InvalidInputError("missing value", source=source, record=i + 1, field=field)
    first = np.zeros(len(uniq), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(v) - 1, -1, -1)  # each value's first row
    texts = [_one_text(u, int(i), source, field) for u, i in zip(uniq.tolist(), first)]
    return np.asarray(texts, dtype=str)[codes]


def factorize_text(values: NDArray[np.str_]) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """The sorted distinct texts and each value's index among them (``np.unique`` with
    ``return_inverse``), by hashing the texts' bytes 8 at a time instead of sorting the
    strings: a text array of fixed width w is read as ceil(w/8) unsigned 64-bit words per
    value, the words are factorised one column at a time (combining the codes so far with
    the next word's), and only the few distinct texts are sorted.

    Example:
        >>> names, inv = factorize_text(np.array(["fr", "en", "fr", "de"]))
        >>> names.tolist(), inv.tolist()
        (['de', 'en', 'fr'], [2, 1, 2, 0])
    """
    v = np.ascontiguousarray(values)
    n, width = v.shape[0], v.dtype.itemsize
    if v.ndim != 1 or v.dtype.kind not in "US" or n == 0 or width == 0:
        names, inv = np.unique(v, return_inverse=True)
        return names, inv.reshape(-1).astype(np.int64)
    words = -(-width // 8)
    raw = v.view(np.uint8).reshape(n, width)
    if width != words * 8:
        padded = np.zeros((n, words * 8), dtype=np.uint8)
        padded[:, :width] = raw
        raw = padded
    cols = raw.view(np.uint64)
    codes, k = np.zeros(n, dtype=np.int64), 1
    for j in range(words):
        c, uniq = pd.factorize(cols[:, j])
        codes, seen = pd.factorize(codes * len(uniq) + c)
        k = len(seen)
    first = np.zeros(k, dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)  # each text's first row (the last write wins)
    names = v[first]
    order = np.argsort(names, kind="stable")
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    return names[order], rank[codes]


def group_column_values(
    values: Mapping[str, ArrayLike], name: str, n: int, source: str | None
) -> NDArray[Any]:
    """One group column's values from ``values``: present, and as long as the labels."""
    if name not in values:
        raise InvalidInputError("missing group column", source=source or "group_values", field=name)
    v = as_1d(values[name], source=source or "group_values", field=name)
    if len(v) != n:
        raise InvalidInputError(f"has {len(v)} values for {n} labels", source=source, field=name)
    return v
