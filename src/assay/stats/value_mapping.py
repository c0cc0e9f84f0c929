"""Custom value-to-float mappings: which raw values mean correct, incorrect, partial and
no answer (Inspect AI's ``value_to_float(correct=..., ...)``).

A :class:`ValueMapping` replaces the letters C/I/P/N by your own sentinels; everything
else converts as usual (booleans, yes/no/true/false, finite numbers). Give one to
:func:`~assay.stats.evaluate_scores`, :class:`~assay.stats.ScoreEvaluator`,
:meth:`ScoreFrame.from_scores <assay.stats.ScoreFrame.from_scores>`,
:func:`~assay.stats.aggregate` or :func:`~assay.stats.krippendorff_alpha` as
``to_float=`` (a ``ValueMapping`` or the dict of its fields, which is its JSON form).

Example:
    >>> m = ValueMapping(correct="pass", incorrect="fail", partial="close")
    >>> [m(v) for v in ["pass", "close", "fail", "yes", 0.25]]
    [1.0, 0.5, 0.0, 1.0, 0.25]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from assay.errors import InvalidInputError
from assay.stats.types import CORRECT, INCORRECT, NOANSWER, PARTIAL, _rec, value_to_float

__all__ = ["ValueMapping", "as_mapping", "convert_values"]

_LETTERS = (CORRECT, INCORRECT, PARTIAL, NOANSWER)


@dataclass(frozen=True)
class ValueMapping:
    """Sentinel values for correct (1), incorrect (0), partial (``partial`` credit, 0.5
    by default) and no answer (0), compared with ``==`` before any other conversion (so a
    numeric sentinel such as ``correct=2`` maps the number 2 to 1.0).

    Other values convert as in :func:`~assay.stats.value_to_float`, except that the
    default letters C/I/P/N are no longer special: a letter that is not one of the
    sentinels is an :class:`~assay.errors.InvalidInputError` (Inspect AI logs a warning
    and uses 0).

    Examples
    --------
    >>> ValueMapping(correct=2, incorrect=1)(2), ValueMapping(noanswer="skip")("skip")
    (1.0, 0.0)
    >>> ValueMapping().to_dict()
    {'correct': 'C', 'incorrect': 'I', 'partial': 'P', 'noanswer': 'N'}
    """

    correct: Any = CORRECT
    incorrect: Any = INCORRECT
    partial: Any = PARTIAL
    noanswer: Any = NOANSWER

    def __post_init__(self) -> None:
        for name, v in self.to_dict().items():
            if not (v is None or isinstance(v, (str, int, float, bool))):
                raise InvalidInputError(
                    f"a sentinel must be a scalar, got {v!r}", source="ValueMapping", field=name
                )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``ValueMapping(**d)`` rebuilds it)."""
        return asdict(self)

    @property
    def is_default(self) -> bool:
        """True for the letters C/I/P/N (the plain :func:`value_to_float`)."""
        return (self.correct, self.incorrect, self.partial, self.noanswer) == _LETTERS

    def is_partial(self, value: Any) -> bool:
        """Whether ``value`` is the partial sentinel."""
        return bool(value == self.partial)

    def __call__(self, value: Any, *, partial: float = 0.5, record: Any = None) -> float:
        if self.is_default:
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

    Example:
        >>> as_mapping({"correct": "ok"}).correct
        'ok'
    """
    if to_float is None or isinstance(to_float, ValueMapping):
        return to_float
    if isinstance(to_float, Mapping):
        try:
            return ValueMapping(**dict(to_float))
        except TypeError as e:
            raise InvalidInputError(str(e), source="to_float") from None
    raise InvalidInputError(
        f"expected a ValueMapping or a dict of its fields, got {to_float!r}", source="to_float"
    )


def convert_values(
    raw: np.ndarray, ids: list[Any], partial: float, mapping: ValueMapping | None = None
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
        is_p[j] = isinstance(u, str) and u == PARTIAL if mapping is None else mapping.is_partial(u)
    return conv[codes], is_p[codes]
