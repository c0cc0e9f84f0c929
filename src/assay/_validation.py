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
    "as_texts",
    "as_text_lists",
    "check_thresholds",
    "check_zero_division",
    "check_choice",
    "check_known",
    "check_finite_number",
    "parse_numbers",
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
    lengths = {k: _length(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise InvalidInputError(f"lengths differ: {desc}", source=", ".join(lengths))
    return next(iter(lengths.values()), 0)


def _length(v: Any) -> int:
    try:
        return len(v)  # lists of lists of any shape, ranges, arrays (rows)
    except TypeError:
        return len(np.asarray(v))


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


def _not_text(v: Any) -> str:
    return "missing (None)" if v is None else f"expected a string, got {type(v).__name__}"


def as_texts(values: Any, *, source: str, field: str | None = None) -> list[str]:
    """``values`` as a list of strings (one text per datum).

    Example:
        >>> as_texts(["a cat", "a dog"], source="predictions")
        ['a cat', 'a dog']
        >>> as_texts(["a cat", None], source="predictions")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: predictions: index 1: missing (None)
    """
    if isinstance(values, str) or values is None or not hasattr(values, "__iter__"):
        got = "one string" if isinstance(values, str) else type(values).__name__
        raise InvalidInputError(f"expected a list of strings, got {got}", source=source)
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise InvalidInputError(_not_text(v), source=source, record=_where(i), field=field)
    return out


def as_text_lists(values: Any, *, source: str, field: str | None = None) -> list[list[str]]:
    """Each datum's texts as a non-empty list of strings (a string is a list of one).

    Example:
        >>> as_text_lists(["a cat", ["a dog", "the dog"]], source="references")
        [['a cat'], ['a dog', 'the dog']]
        >>> as_text_lists(["a cat", None], source="references")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: references: index 1: missing (None)
    """
    if isinstance(values, str) or values is None or not hasattr(values, "__iter__"):
        got = "one string" if isinstance(values, str) else type(values).__name__
        raise InvalidInputError(f"expected a list, got {got}", source=source)
    out: list[list[str]] = []
    for i, r in enumerate(values):
        if isinstance(r, str):
            out.append([r])
            continue
        if r is None or not hasattr(r, "__iter__"):
            raise InvalidInputError(
                _not_text(r)
                if r is None
                else f"expected a string or a list of strings, got {type(r).__name__}",
                source=source,
                record=_where(i),
                field=field,
            )
        texts = list(r)
        if not texts:
            raise InvalidInputError("no text", source=source, record=_where(i), field=field)
        for v in texts:
            if not isinstance(v, str):
                raise InvalidInputError(_not_text(v), source=source, record=_where(i), field=field)
        out.append(texts)
    return out


def check_thresholds(values: ArrayLike, *, source: str) -> NDArray[np.float64]:
    """A non-empty 1-D float array of thresholds, each in [0, 1].

    Example:
        >>> check_thresholds([0.5, 0.75], source="iou_thresholds").tolist()
        [0.5, 0.75]
        >>> check_thresholds([0.5, 1.5], source="--iou-thresholds")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --iou-thresholds: index 1: must be in [0, 1], got 1.5
    """
    a = as_1d(np.asarray(values, dtype=object).reshape(-1), source=source, dtype=np.float64)
    return check_probability(check_nonempty(a, source=source), source=source)


def check_finite_number(value: Any, *, source: str, minimum: float | None = None) -> float | None:
    """``value`` (``None`` passes) if it is a finite number, and ``>= minimum`` when given.

    Example:
        >>> check_finite_number(-1.0, source="--variance", minimum=0)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --variance: must be a finite number >= 0, got -1.0
    """
    if value is None:
        return None
    bound = "" if minimum is None else f" >= {minimum:g}"
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.number))
    if not ok or not np.isfinite(float(value)) or (minimum is not None and value < minimum):
        raise InvalidInputError(f"must be a finite number{bound}, got {show(value)}", source=source)
    return float(value)


def check_zero_division(value: Any, *, source: str = "zero_division") -> float | None:
    """The value of a ratio whose denominator is 0: ``None`` (undefined) or a finite number.

    Example:
        >>> check_zero_division(None), check_zero_division(0)
        (None, 0.0)
        >>> check_zero_division(float("nan"), source="--zero-division")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --zero-division: must be a finite number, got nan
    """
    return check_finite_number(value, source=source)


def check_choice(value: Any, choices: tuple[Any, ...], *, source: str) -> Any:
    """``value`` if it is one of ``choices``.

    Example:
        >>> check_choice("segm", ("bbox", "segm"), source="--iou-type")
        'segm'
        >>> check_choice("mask", ("bbox", "segm"), source="--iou-type")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --iou-type: must be bbox or segm, got 'mask'
    """
    if value not in choices:
        names = [str(c) for c in choices]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        raise InvalidInputError(f"must be {listed}, got {show(value)}", source=source)
    return value


def check_known(names: Any, known: Any, *, source: str) -> list[Any]:
    """``names`` (a list) if every one is in ``known``.

    Example:
        >>> check_known(["AP", "APX"], ["AP", "AR"], source="--metrics")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --metrics: unknown ['APX']; choose from AP, AR
    """
    names = list(names)
    bad = [n for n in names if n not in set(known)]
    if bad:
        raise InvalidInputError(
            f"unknown {bad}; choose from {', '.join(map(str, known))}", source=source
        )
    return names


def parse_numbers(text: str | None, *, source: str) -> list[float] | None:
    """``"0.5,0.75"`` as floats (``None`` when not given).

    Example:
        >>> parse_numbers("0.5, 0.75", source="--bleu-weights")
        [0.5, 0.75]
        >>> parse_numbers("0.5,x", source="--weights")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --weights: expected comma-separated numbers, got '0.5,x'
    """
    if text is None:
        return None
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InvalidInputError(
            f"expected comma-separated numbers, got {text!r}", source=source
        ) from None
