"""Custom value-to-float mappings: which raw values mean correct, incorrect, partial and
no answer (Inspect AI's ``value_to_float(correct=..., ...)``).

A :class:`ValueMapping` replaces the letters C/I/P/N by your own sentinels, and may give
text values a float of their own (``values={"P": 0.0}``); everything else converts as
usual (booleans, yes/no/true/false, finite numbers). Give one to
:func:`~assay.stats.evaluate_scores`, :class:`~assay.stats.ScoreEvaluator`,
:meth:`ScoreFrame.from_scores <assay.stats.ScoreFrame.from_scores>`,
:func:`~assay.stats.aggregate` or :func:`~assay.stats.krippendorff_alpha` as
``to_float=`` (a ``ValueMapping`` or the dict of its fields, which is its JSON form), or
to one metric or reducer (``accuracy(to_float={"P": 0.0})``, ``mean_reducer(to_float=...)``)
so that it converts that metric's or reducer's values only.

Example:
    >>> m = ValueMapping(correct="pass", incorrect="fail", partial="close")
    >>> [m(v) for v in ["pass", "close", "fail", "yes", 0.25]]
    [1.0, 0.5, 0.0, 1.0, 0.25]
    >>> [as_mapping({"P": 0.0})(v) for v in ["C", "P", "I"]]
    [1.0, 0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.stats.score import CORRECT, INCORRECT, NOANSWER, PARTIAL, _rec, value_to_float

__all__ = ["ValueMapping", "as_mapping", "convert_values", "is_partial"]

_LETTERS = (CORRECT, INCORRECT, PARTIAL, NOANSWER)
_FIELDS = ("correct", "incorrect", "partial", "noanswer", "values")


def _check_values(values: Any) -> dict[str, float]:
    """The ``values`` table: text keys, finite numbers."""
    if not isinstance(values, Mapping):
        raise InvalidInputError(
            f"must be a dict of text value -> number, got {values!r}",
            source="ValueMapping",
            field="values",
        )
    out = {}
    for k, v in values.items():
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not isinstance(k, str) or not ok:
            raise InvalidInputError(
                f"{k!r}: {v!r} is not a text value mapped to a finite number",
                source="ValueMapping",
                field="values",
            )
        out[k] = float(v)
    return out


@dataclass(frozen=True)
class ValueMapping:
    """Sentinel values for correct (1), incorrect (0), partial (``partial`` credit, 0.5
    by default) and no answer (0), compared with ``==`` before any other conversion (so a
    numeric sentinel such as ``correct=2`` maps the number 2 to 1.0).

    Other values convert as in :func:`~assay.stats.value_to_float`, except that the
    default letters C/I/P/N are no longer special: a letter that is not one of the
    sentinels is an :class:`~assay.errors.InvalidInputError` (Inspect AI logs a warning
    and uses 0).

    ``values`` maps text values to floats of your choosing, looked up before anything
    else (``values={"P": 0.0}`` counts the partial letter as 0; Inspect AI users write a
    ``to_float`` function for this).

    Examples
    --------
    >>> ValueMapping(correct=2, incorrect=1)(2), ValueMapping(noanswer="skip")("skip")
    (1.0, 0.0)
    >>> ValueMapping().to_dict()
    {'correct': 'C', 'incorrect': 'I', 'partial': 'P', 'noanswer': 'N'}
    >>> ValueMapping(values={"P": 0.25, "meh": 0.1})("P")
    0.25
    """

    correct: Any = CORRECT
    incorrect: Any = INCORRECT
    partial: Any = PARTIAL
    noanswer: Any = NOANSWER
    values: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _FIELDS[:4]:
            v = getattr(self, name)
            if not (v is None or isinstance(v, (str, int, float, bool))):
                raise InvalidInputError(
                    f"a sentinel must be a scalar, got {v!r}", source="ValueMapping", field=name
                )
        object.__setattr__(self, "values", _check_values(self.values))

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``ValueMapping(**d)`` rebuilds it); ``values`` only when set."""
        out = {name: getattr(self, name) for name in _FIELDS[:4]}
        if self.values:
            out["values"] = dict(self.values)
        return out

    @property
    def is_default(self) -> bool:
        """True for the letters C/I/P/N (the plain :func:`value_to_float`)."""
        sentinels = (self.correct, self.incorrect, self.partial, self.noanswer)
        return sentinels == _LETTERS and not self.values

    def is_partial(self, value: Any) -> bool:
        """Whether ``value`` is the partial sentinel (and not given a value of its own)."""
        if isinstance(value, str) and value in self.values:
            return False
        return bool(value == self.partial)

    def __call__(self, value: Any, *, partial: float = 0.5, record: Any = None) -> float:
        if isinstance(value, str) and value in self.values:
            return self.values[value]
        if (self.correct, self.incorrect, self.partial, self.noanswer) == _LETTERS:
            return value_to_float(value, partial=partial, record=record)
        if value == self.correct:
            return 1.0
        if value == self.partial:
            return float(partial)
        if value == self.incorrect or value == self.noanswer:
            return 0.0
        if isinstance(value, str) and value in _LETTERS:
            raise InvalidInputError(
                f"score value {value!r} is not one of this mapping's sentinels {self.to_dict()}",
                record=_rec(record),
                field="value",
            )
        return value_to_float(value, partial=partial, record=record)


def as_mapping(to_float: ValueMapping | Mapping[str, Any] | None) -> ValueMapping | None:
    """``to_float`` as a :class:`ValueMapping` (None stays None).

    A dict whose keys are all field names (``correct``, ``incorrect``, ``partial``,
    ``noanswer``, ``values``) gives those fields; a dict with none of them is a ``values``
    table (``{"P": 0.0}`` is ``ValueMapping(values={"P": 0.0})``).

    Example:
        >>> as_mapping({"correct": "ok"}).correct, as_mapping({"P": 0}).values
        ('ok', {'P': 0.0})
    """
    if to_float is None or isinstance(to_float, ValueMapping):
        return to_float
    if isinstance(to_float, Mapping):
        fields = [k for k in to_float if k in _FIELDS]
        if not fields and to_float:
            return ValueMapping(values=dict(to_float))
        if len(fields) != len(to_float):
            other = sorted(str(k) for k in to_float if k not in _FIELDS)
            raise InvalidInputError(
                f"mixes the fields {fields} with other keys {other}: give the fields "
                f"{list(_FIELDS)}, or only a table of text value -> number",
                source="to_float",
            )
        return ValueMapping(**dict(to_float))
    raise InvalidInputError(
        f"expected a ValueMapping or a dict of its fields, got {to_float!r}", source="to_float"
    )


def is_partial(value: Any, mapping: ValueMapping | None) -> bool:
    """Whether a raw value is the partial-credit letter (``"P"``, or the mapping's)."""
    if mapping is None:
        return isinstance(value, str) and value == PARTIAL
    return mapping.is_partial(value)


def convert_values(
    raw: np.ndarray, ids: Sequence[Any], partial: float, mapping: ValueMapping | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Floats and partial-letter flags for raw scalar values (each distinct value once),
    through ``mapping`` or the default :func:`value_to_float`; an error names the record
    of the first value that fails.

    Example:
        >>> raw = np.array(["C", "P", "C"], dtype=object)
        >>> floats, partial = convert_values(raw, [1, 2, 3], 0.5)
        >>> floats.tolist(), partial.tolist()
        ([1.0, 0.5, 1.0], [False, True, False])
    """
    if mapping is not None and mapping.is_default:
        mapping = None
    to_float = value_to_float if mapping is None else mapping
    fast = _few_values(raw, partial, mapping)
    if fast is not None:
        return fast
    try:
        codes, uniques = pd.factorize(raw, use_na_sentinel=False)
    except TypeError:  # unhashable values (lists, dicts): convert one by one for the error
        for v, sid in zip(raw, ids):
            to_float(v, partial=partial, record=sid)
        raise
    conv = np.empty(len(uniques), dtype=np.float64)
    is_p = np.zeros(len(uniques), dtype=bool)
    for j, u in enumerate(uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)):
        try:
            conv[j] = to_float(u, partial=partial)
        except InvalidInputError:
            first = int(np.flatnonzero(codes == j)[0])
            to_float(raw[first], partial=partial, record=ids[first])
            raise
        is_p[j] = is_partial(u, mapping)
    return conv[codes], is_p[codes]


_FEW = 256  # at most this many distinct values: converted through a dict, no factorize


def _few_values(
    raw: np.ndarray, partial: float, mapping: ValueMapping | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`convert_values` when the values are hashable and take at most ``_FEW``
    distinct values (C/I letters, 0/1, a small scale): each distinct value converted once,
    every value then looked up in one pass (values equal as Python keys, such as ``1``,
    ``1.0`` and ``True``, share one conversion, as ``pandas.factorize`` groups them).
    None when that does not apply or a value fails (the caller then names the record)."""
    values = raw.tolist()
    try:
        distinct = set(values)
    except TypeError:
        return None
    if len(distinct) > _FEW:
        return None
    to_float = value_to_float if mapping is None else mapping
    try:
        table = {u: to_float(u, partial=partial) for u in distinct}
    except InvalidInputError:
        return None
    n = len(values)
    floats = np.fromiter(map(table.__getitem__, values), dtype=np.float64, count=n)
    marked = {u for u in distinct if is_partial(u, mapping)}
    if not marked:
        return floats, np.zeros(n, dtype=bool)
    return floats, np.fromiter(map(marked.__contains__, values), dtype=bool, count=n)
