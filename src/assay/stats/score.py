"""Scores: one scorer's verdict on one sample, and its conversion to a number.

* :class:`Score` — a ``value`` (number, bool, string, list or dict, or ``None`` for a
  sample that failed to score) with an optional ``answer``, ``explanation`` and
  ``metadata``. :meth:`Score.as_float` converts the value to a number.
* :class:`SampleScore` — a score with its ``sample_id``, ``epoch`` and the sample's
  metadata (where :func:`~assay.stats.grouped` and ``stderr(cluster=...)`` find their
  column).

The columnar form every metric computes on is :class:`~assay.stats.ScoreFrame`
(:mod:`assay.stats.frame`).

Conversion to float (:func:`value_to_float`):

=======================================  ==========================
value                                    float
=======================================  ==========================
``"C"`` (correct)                        1.0
``"I"`` (incorrect), ``"N"`` (no answer)  0.0
``"P"`` (partial)                        0.5 (``partial=`` changes it)
``True`` / ``False``                     1.0 / 0.0
``"yes"``/``"true"``, ``"no"``/``"false"`` 1.0 / 0.0 (any letter case)
int, float, numeric string ("0.25")      the number (must be finite)
anything else                            :class:`InvalidInputError`
=======================================  ==========================

Example:
    >>> Score("C").as_float(), Score("P").as_float(), Score("yes").as_float(), Score(3).as_float()
    (1.0, 0.5, 1.0, 3.0)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.errors import InvalidInputError

__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "SampleScore",
    "Score",
    "Value",
    "value_to_float",
]

CORRECT = "C"
INCORRECT = "I"
PARTIAL = "P"
NOANSWER = "N"

Scalar = str | int | float | bool
Value = Scalar | Sequence[Scalar] | Mapping[str, Scalar | None] | None
"""A score value: a scalar, a list of scalars, a dict of scalars, or ``None`` (failed)."""

_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def value_to_float(value: Any, *, partial: float = 0.5, record: Any = None) -> float:
    """Convert one score value to a float (table in the module docstring).

    Letters first (``C`` = 1, ``I`` = ``N`` = 0, ``P`` = ``partial``), then booleans,
    then the words yes/true (1) and no/false (0) in any case, then anything that reads as
    a finite number.

    Parameters
    ----------
    value
        A scalar score value.
    partial
        The credit given to the partial letter ``"P"``.
    record
        The sample id, used only to name the record in an error.

    Returns
    -------
    float

    Raises
    ------
    InvalidInputError
        ``None``, lists, dicts, non-finite numbers and strings that are none of the
        known forms.

    Examples
    --------
        >>> value_to_float("I"), value_to_float("False"), value_to_float(" 0.25 ")
        (0.0, 0.0, 0.25)
    """
    if isinstance(value, (bool, np.bool_)):
        return 1.0 if value else 0.0
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise InvalidInputError(
                f"score value {value!r} is not finite (mark a failed sample with None)",
                record=_rec(record),
                field="value",
            )
        return f
    if isinstance(value, str):
        return _string_to_float(value, partial, record)
    if value is None:
        raise InvalidInputError(
            "score value is None (a failed sample) and has no numeric value",
            record=_rec(record),
            field="value",
        )
    kind = type(value).__name__
    raise InvalidInputError(
        f"cannot convert a {kind} score value to one number; metrics over dict- and "
        "list-valued scores are computed per key or index (assay.stats.evaluate_scores)",
        record=_rec(record),
        field="value",
    )


def _string_to_float(value: str, partial: float, record: Any) -> float:
    if value == CORRECT:
        return 1.0
    if value == PARTIAL:
        return float(partial)
    if value == INCORRECT or value == NOANSWER:
        return 0.0
    word = value.strip().lower()
    if word in _WORDS:
        return _WORDS[word]
    try:
        f = float(word)
    except ValueError:
        f = math.nan
    if math.isfinite(f):
        return f
    raise InvalidInputError(
        f"cannot convert score value {value!r} to a number: expected C/I/P/N, "
        "yes/no, true/false, a boolean or a finite number",
        record=_rec(record),
        field="value",
    )


def _item(value: Any, key: Any) -> Any:
    """``value[key]`` for a dict (missing -> None) or a list (index past the end -> None)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(key)
    if isinstance(key, int) and 0 <= key < len(value):
        return value[key]
    return None


def _rec(record: Any) -> Any:
    return None if record is None else f"sample {record!r}"


@dataclass(slots=True)
class Score:
    """One score: a value and what explains it.

    Parameters
    ----------
    value
        Number, bool, string (C/I/P/N, yes/no, ...), list, dict, or ``None`` when the
        sample failed to score (excluded from metrics and counted).
    answer
        The answer extracted from the model output.
    explanation
        Why the scorer gave this value.
    metadata
        Anything else the scorer wants to keep.

    Examples
    --------
    >>> Score("P", answer="42").as_float(partial=0.0)
    0.0
    >>> Score({"f1": 0.5, "em": "C"}).as_dict()
    {'f1': 0.5, 'em': 'C'}
    >>> Score(2.0).as_int(), Score("no").as_bool(), Score(1).as_str(), Score([1, 0]).as_list()
    (2, False, '1', [1, 0])
    """

    value: Value
    answer: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] | None = None

    def as_float(self, *, partial: float = 0.5) -> float:
        """The value as a float (see :func:`value_to_float`)."""
        return value_to_float(self.value, partial=partial)

    def as_int(self) -> int:
        """The value as an int (via :meth:`as_float`; must be integral)."""
        f = self.as_float()
        if not f.is_integer():
            raise InvalidInputError(f"score value {self.value!r} is not an integer", field="value")
        return int(f)

    def as_bool(self) -> bool:
        """The value as a bool: ``as_float() != 0``."""
        return self.as_float() != 0.0

    def as_str(self) -> str:
        """The value as a string (scalars only)."""
        if isinstance(self.value, (Mapping, list, tuple)) or self.value is None:
            raise InvalidInputError(f"score value {self.value!r} is not a scalar", field="value")
        return str(self.value)

    def as_list(self) -> list[Any]:
        """The value as a list (list values only)."""
        if not isinstance(self.value, (list, tuple)):
            raise InvalidInputError(f"score value {self.value!r} is not a list", field="value")
        return list(self.value)

    def as_dict(self) -> dict[str, Any]:
        """The value as a dict (dict values only)."""
        if not isinstance(self.value, Mapping):
            raise InvalidInputError(f"score value {self.value!r} is not a dict", field="value")
        return dict(self.value)


@dataclass(slots=True)
class SampleScore:
    """A :class:`Score` for one sample in one epoch.

    Parameters
    ----------
    score
        The score.
    sample_id
        The sample's id (scores with the same id are epochs of one sample).
    epoch
        The epoch number (1-based); epochs of a sample are reduced in this order.
    sample_metadata
        The sample's metadata: the columns for ``grouped()`` and ``stderr(cluster=...)``
        are looked up here.

    Examples
    --------
    >>> s = SampleScore(Score("C"), sample_id="q1", epoch=2, sample_metadata={"topic": "m"})
    >>> s.epoch, s.sample_metadata["topic"]
    (2, 'm')
    """

    score: Score
    sample_id: str | int | None = None
    epoch: int = 1
    sample_metadata: dict[str, Any] | None = None
