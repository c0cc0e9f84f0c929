"""Scores in any accepted form, as the two shapes metrics take.

A metric's scores may come as a :class:`~assay.stats.ScoreFrame`, a sequence of
:class:`~assay.stats.SampleScore` or :class:`~assay.stats.Score`, raw values (``"C"``,
``True``, ``"yes"``) or plain numbers. :func:`as_frame` turns them into a ScoreFrame of
floats (raw values converted by a :class:`~assay.stats.ValueMapping`); :func:`as_objects`
into the scored SampleScore objects with their raw values, for metrics over raw values.

Example:
    >>> as_frame([1, 0, 1]).values.tolist(), len(as_objects([None, "C"]))
    ([1.0, 0.0, 1.0], 1)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.stats.frame import ScoreFrame
from assay.stats.types import SampleScore, Score
from assay.stats.value_mapping import ValueMapping

__all__ = ["as_frame", "as_objects"]


def as_frame(scores: Any, to_float: ValueMapping | None = None) -> ScoreFrame:
    """Scores in any accepted form as a :class:`ScoreFrame`, raw values converted with
    ``to_float`` (default: :func:`~assay.stats.value_to_float`).

    Accepts a ScoreFrame (its raw values are converted again when ``to_float`` is given),
    a sequence of :class:`SampleScore` or :class:`Score`, raw values (``"C"``, ``True``)
    or numbers.

    Example:
        >>> as_frame(["C", "I", "P"]).values.tolist(), len(as_frame([0.5, 1.0]))
        ([1.0, 0.0, 0.5], 2)
    """
    if isinstance(scores, ScoreFrame):
        return scores.remap(to_float)
    if isinstance(scores, np.ndarray) and scores.dtype != object:
        return ScoreFrame.from_arrays(scores)
    items = list(scores)
    if items and all(isinstance(s, SampleScore) for s in items):
        pass
    elif items and all(isinstance(s, Score) for s in items):
        items = [SampleScore(s, i) for i, s in enumerate(items)]
    elif all(isinstance(s, numbers.Real) and not isinstance(s, bool) for s in items):
        return ScoreFrame.from_arrays(np.asarray(items, dtype=np.float64))
    else:  # raw values: "C", True, "yes", ...
        items = [SampleScore(Score(v), i) for i, v in enumerate(items)]
    if any(isinstance(s.score.value, (Mapping, list, tuple)) for s in items):
        raise InvalidInputError(
            "dict- or list-valued scores: call assay.stats.evaluate_scores() (one metric per "
            "key or index) or ScoreFrame.from_scores(scores, key=...)",
            source="scores",
        )
    return ScoreFrame.from_scores(items, to_float=to_float)


def as_objects(scores: Any) -> list[SampleScore]:
    """Scores in any accepted form as the scored :class:`SampleScore` objects (raw values
    kept; scores whose value is ``None`` left out), for metrics over raw values.

    Example:
        >>> [s.score.value for s in as_objects(["yes", None, ["a", "b"]])]
        ['yes', ['a', 'b']]
    """
    if isinstance(scores, ScoreFrame):
        return list(scores)
    if isinstance(scores, np.ndarray) and scores.dtype != object:
        return list(ScoreFrame.from_arrays(scores))
    out = []
    for i, s in enumerate(scores):
        if not isinstance(s, SampleScore):
            s = SampleScore(s if isinstance(s, Score) else Score(s), i)
        if s.score.value is not None:
            out.append(s)
    return out
