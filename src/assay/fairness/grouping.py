"""Which rows form a group (one group column, crossed group columns, control columns), a
slice (``by``) or a cluster (``cluster``).

Groups are named by text: a text value stays itself, a boolean becomes ``True``/``False``
and a number its short form (``3`` for 3.0, ``2.5`` for 2.5); a missing value (None, NaN)
or any other kind of value is an error naming its row. :func:`factorize_text` finds the
sorted distinct texts of a large batch and each value's index among them quickly.

A group column's every distinct value is a group; a tuple of group columns makes every
combination of their values present in the data a group (crossed groups). *Control
columns* (fairlearn's ``control_features``) split the data into control levels (every
combination of their values present) and the groups are formed, and compared, within each
level: a table is then keyed by the control values followed by the group values, and
:func:`control_levels` finds the rows of each control level. A slice is the rows
of one value of a ``by`` column (rows without a value are in no slice); a cluster the rows of
one value of the ``cluster`` column (every row needs one); :func:`restrict` gives a batch's
privileged masks and groupings on such a part of its rows.

Example:
    >>> values = {"sex": ["F", "M", "F"], "site": ["x", "x", "y"]}
    >>> names, codes = batch_grouping(values, "sex", ("site",), 3, None)
    >>> names.tolist(), codes.tolist()
    (['["x", "F"]', '["x", "M"]', '["y", "F"]'], [0, 1, 2])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay._validation import as_1d
from assay.errors import InvalidInputError
from assay.uncertainty.slices import slice_text, value_masks

__all__ = ["GroupColumn", "as_group_text", "batch_grouping", "cluster_rows", "column_key",
           "control_key", "control_levels", "crossed_codes", "factorize_text",
           "group_column_values", "restrict", "row_slices"]  # fmt: skip

Masked = list[tuple[NDArray[np.bool_], NDArray[np.int64]]]
Groupings = list[tuple[NDArray[np.str_], NDArray[np.int64]]]


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


def crossed_codes(texts: Sequence[NDArray[np.str_]]) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """The crossed groups of several columns' texts: the sorted names of the combinations
    present (JSON lists of the values, in column order) and each row's index among them.

    The per-column codes are combined into one code per row (code so far times the next
    column's number of values plus its code, re-factorised after each column), so there is
    no Python loop over rows; only the distinct combinations are turned into names.

    Example:
        >>> names, codes = crossed_codes([np.array(["F", "M", "F"]), np.array(["b", "a", "b"])])
        >>> names.tolist(), codes.tolist()
        (['["F", "b"]', '["M", "a"]'], [0, 1, 0])
    """
    n = len(texts[0])
    codes, k = np.zeros(n, dtype=np.int64), 1
    per_column = []
    for t in texts:
        names, inv = factorize_text(np.asarray(t))
        per_column.append((names, inv))
        codes, seen = pd.factorize(codes * len(names) + inv)
        codes, k = codes.astype(np.int64), len(seen)
    first = np.zeros(k, dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)  # each combination's first row
    values = [names[inv[first]].tolist() for names, inv in per_column]
    labels = np.asarray(
        [json.dumps(list(combo), ensure_ascii=False) for combo in zip(*values)], dtype=str
    )
    order = np.argsort(labels, kind="stable")
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    return labels[order], rank[codes]


#: A group column, or several whose combinations are the groups (crossed groups).
GroupColumn = str | tuple[str, ...]


def column_key(c: Any, source: str = "group_columns") -> GroupColumn:
    """A group column's name, or a tuple of several (a one-column list is that column).

    Example:
        >>> column_key(["sex", "race"]), column_key(["sex"]), column_key("L1")
        (('sex', 'race'), 'sex', 'L1')
    """
    if isinstance(c, (list, tuple)) and c:
        names = tuple(dict.fromkeys(_name(x, source) for x in c))
        return names[0] if len(names) == 1 else names
    return _name(c, source)


def control_key(columns: Iterable[Any]) -> tuple[str, ...]:
    """The control columns, each a non-empty name, without repeats."""
    return tuple(dict.fromkeys(_name(c, "control_columns") for c in columns))


def _name(c: Any, source: str) -> str:
    if not isinstance(c, str) or not c:
        raise InvalidInputError(f"a column must be a non-empty name, got {c!r}", source=source)
    return c


def columns_of(column: GroupColumn) -> list[str]:
    """The column names of a group column key."""
    return [column] if isinstance(column, str) else list(column)


def batch_grouping(
    values: Mapping[str, ArrayLike],
    column: GroupColumn,
    controls: tuple[str, ...],
    n: int,
    source: str | None,
) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """The sorted group names of one batch and each row's index among them. One column
    without controls: its texts; otherwise the combinations present of the control and
    group columns' values, named by JSON lists (controls first)."""
    columns = [*controls, *columns_of(column)]
    texts = [
        as_group_text(group_column_values(values, c, n, source), source=source, field=c)
        for c in columns
    ]
    if len(columns) == 1:
        names, codes = factorize_text(texts[0])
        return names.astype(str), codes
    return crossed_codes(texts)


def control_levels(
    names: NDArray[np.str_], controls: int, crossed: bool
) -> list[tuple[Any, NDArray[np.str_], NDArray[np.int64]]]:
    """The control levels of a table's group ``names`` (keyed by ``controls`` control values,
    then the group's): ``(control, the level's group names, their rows in the table)``, in
    the order of :func:`split_by_control`."""
    keys = [json.loads(name) for name in names.tolist()]
    levels: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        levels.setdefault(json.dumps(key[:controls], ensure_ascii=False), []).append(i)
    out = []
    for level in sorted(levels):
        rows = np.asarray(levels[level], dtype=np.int64)
        sub = [
            json.dumps(keys[i][controls:], ensure_ascii=False) if crossed else keys[i][controls]
            for i in rows
        ]
        order = np.argsort(np.asarray(sub, dtype=str), kind="stable")
        control = json.loads(level)
        out.append((control[0] if controls == 1 else control, np.asarray(sub, str)[order],
                    rows[order]))  # fmt: skip
    return out


def cluster_rows(
    values: Mapping[str, ArrayLike], column: str, n: int, source: str | None
) -> list[tuple[str, NDArray[np.intp]]]:
    """``(cluster, rows)`` of a batch (clusters as text, sorted; rows as indices, found by
    one sort, not one comparison per cluster); every row must have one."""
    v = group_column_values(values, column, n, source)
    missing = np.asarray(pd.isna(v), dtype=bool)
    if missing.any():
        raise InvalidInputError(
            "missing value (every row needs a cluster)",
            source=source or "cluster",
            record=int(np.flatnonzero(missing)[0]) + 1,
            field=column,
        )
    text = np.array([slice_text(x) for x in np.asarray(v).tolist()], dtype=str)
    names, code = np.unique(text, return_inverse=True)
    order = np.argsort(code.reshape(-1), kind="stable")
    cuts = np.cumsum(np.bincount(code.reshape(-1), minlength=len(names)))[:-1]
    return list(zip(names.tolist(), np.split(order, cuts)))


def restrict(masked: Masked, groupings: Groupings, rows: NDArray[Any]) -> tuple[Any, Any]:
    """A batch's privileged masks and groupings on some of its ``rows`` (a slice's, a
    cluster's; a mask or indices): the groups are those the rows have."""
    parts = [(m[rows], np.zeros_like(k)) for m, k in masked]
    within = []
    for names, codes in groupings:
        present, inv = np.unique(codes[rows], return_inverse=True)
        within.append((names[present], inv.reshape(-1)))
    return parts, within


def row_slices(
    values: Mapping[str, ArrayLike], column: str, n: int, source: str | None
) -> Iterator[tuple[str | None, NDArray[np.bool_]]]:
    """``(value, rows)`` of every slice of ``column`` in a batch (missing values: the slice
    ``None``, last)."""
    v = group_column_values(values, column, n, source)
    yield from value_masks(v, ~np.asarray(pd.isna(v), dtype=bool))
