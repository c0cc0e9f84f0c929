"""The one validation door: every domain checks user arrays with these helpers.

Each helper raises :class:`~assay.errors.InvalidInputError` naming the source (the argument
or file the values came from), the record (the first offending position, ``index i``,
0-based, for arrays) and the field, and returns the validated array, so a public function
starts with a few lines like::

    y_true = as_1d(y_true, source="y_true")
    y_score = check_probability(as_1d(y_score, source="y_score", dtype=float), source="y_score")
    check_same_length(y_true=y_true, y_score=y_score)

Example:
    >>> import numpy as np
    >>> check_probability(np.array([0.1, 1.5]), source="y_score")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: y_score: index 1: must be in [0, 1], got 1.5
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from assay.errors import InvalidInputError

__all__ = [
    "as_1d",
    "check_same_length",
    "check_finite",
    "check_binary",
    "check_probability",
    "check_nonempty",
    "show",
]


def _where(i: int) -> str:
    return f"index {i}"


def show(v: Any) -> str:
    """A value as the user wrote it, for messages (numpy scalars as plain Python values).

    Example:
        >>> show(np.str_("fox")), show(np.int64(3)), show("fox")
        ("'fox'", '3', "'fox'")
    """
    return repr(v.item() if isinstance(v, np.generic) else v)


def as_1d(
    x: ArrayLike,
    *,
    source: str,
    field: str | None = None,
    dtype: DTypeLike | None = None,
) -> NDArray[Any]:
    """``x`` as a 1-D numpy array (optionally converted to ``dtype``).

    Example:
        >>> as_1d([1, 2], source="y_true").tolist()
        [1, 2]
        >>> as_1d([[1, 2]], source="y_true")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: y_true: expected a 1-D array, got shape (1, 2)
        >>> as_1d(["a"], source="y_score", dtype=float)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: y_score: index 0: expected a number, got 'a'
    """
    if dtype is None:
        a = np.asarray(x)
    else:
        try:
            a = np.asarray(x, dtype=dtype)
        except (TypeError, ValueError):
            raw = np.asarray(x, dtype=object).ravel()
            i = _first_unconvertible(raw, dtype)
            raise InvalidInputError(
                f"expected a number, got {show(raw[i])}",
                source=source,
                record=_where(i),
                field=field,
            ) from None
    if a.ndim != 1:
        raise InvalidInputError(
            f"expected a 1-D array, got shape {a.shape}", source=source, field=field
        )
    return a


def _first_unconvertible(raw: NDArray[Any], dtype: DTypeLike) -> int:
    for i, v in enumerate(raw):
        try:
            np.asarray(v, dtype=dtype)
        except (TypeError, ValueError):
            return i
    return 0


def check_same_length(**arrays: ArrayLike) -> int:
    """The common length of the named arrays; an error naming each length otherwise.

    Example:
        >>> check_same_length(y_true=[1, 0], y_pred=[1, 0])
        2
        >>> check_same_length(y_true=[1, 0], y_pred=[1])
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: y_true, y_pred: lengths differ: y_true has 2, y_pred has 1
    """
    lengths = {k: len(np.asarray(v)) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise InvalidInputError(f"lengths differ: {desc}", source=", ".join(lengths))
    return next(iter(lengths.values()), 0)


def check_nonempty(a: NDArray[Any], *, source: str, field: str | None = None) -> NDArray[Any]:
    """``a`` if it has at least one element.

    Example:
        >>> check_nonempty(np.array([]), source="y_true")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: y_true: no values were given
    """
    if np.size(a) == 0:
        raise InvalidInputError("no values were given", source=source, field=field)
    return a


def check_finite(a: NDArray[Any], *, source: str, field: str | None = None) -> NDArray[Any]:
    """``a`` if every value is finite (no NaN, no infinity).

    Example:
        >>> check_finite(np.array([1.0, np.nan]), source="scores")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: scores: index 1: must be a finite number, got nan
    """
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            raise InvalidInputError(
                f"must be a finite number, got {show(a.ravel()[i])}",
                source=source,
                record=_where(i),
                field=field,
            )
    return a


def check_probability(a: NDArray[Any], *, source: str, field: str | None = None) -> NDArray[Any]:
    """``a`` if every value is a finite number in [0, 1].

    Example:
        >>> check_probability(np.array([0.0, 1.0]), source="y_score").tolist()
        [0.0, 1.0]
    """
    a = check_finite(np.asarray(a, dtype=float), source=source, field=field)
    bad = (a < 0) | (a > 1)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise InvalidInputError(
            f"must be in [0, 1], got {float(a.ravel()[i])!r}",
            source=source,
            record=_where(i),
            field=field,
        )
    return a


def check_binary(
    a: NDArray[Any],
    *,
    source: str,
    field: str | None = None,
    values: tuple[Any, Any] = (0, 1),
) -> NDArray[Any]:
    """``a`` if it holds only the two given values (default 0 and 1).

    Example:
        >>> check_binary(np.array([0, 1, 2]), source="y_true")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: y_true: index 2: must be 0 or 1, got 2
    """
    a = np.asarray(a)
    bad = ~np.broadcast_to((a == values[0]) | (a == values[1]), a.shape)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise InvalidInputError(
            f"must be {values[0]!r} or {values[1]!r}, got {show(a.ravel()[i])}",
            source=source,
            record=_where(i),
            field=field,
        )
    return a
