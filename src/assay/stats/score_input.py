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

from assay.stats.frame import ScoreFrame
from assay.stats.frame_build import score_kind, scores_columns
from assay.stats.score import SampleScore, Score
from assay.stats.value_mapping import ValueMapping

__all__ = ["as_frame", "as_objects", "as_native"]


def as_frame(
    scores: Any, to_float: ValueMapping | None = None, *, borrow: bool = False
) -> ScoreFrame:
    """Scores in any accepted form as a :class:`ScoreFrame`, raw values converted with
    ``to_float`` (default: :func:`~assay.stats.value_to_float`).

    Accepts a ScoreFrame (its raw values are converted again when ``to_float`` is given),
    a sequence of :class:`SampleScore` or :class:`Score` (or Inspect AI's ``SampleScore``
    and ``Score`` objects, read attribute by attribute), raw values (``"C"``, ``True``)
    or numbers. Dict- or list-valued scores are refused: evaluate_scores() takes one key
    or index at a time. ``borrow``: a list or tuple of objects is read in place, not
    copied (for a metric call, whose frame is dropped before the caller's list can change;
    the copy and its release cost about 30 ms per million objects).

    Example:
        >>> as_frame(["C", "I", "P"]).values.tolist(), len(as_frame([0.5, 1.0]))
        ([1.0, 0.0, 0.5], 2)
    """
    if isinstance(scores, ScoreFrame):
        return scores.remap(to_float)
    if isinstance(scores, np.ndarray) and scores.dtype != object:
        return ScoreFrame.from_arrays(scores)
    # a copy unless borrowed: the lazy fields read these objects later
    items = scores if borrow and isinstance(scores, (list, tuple)) else list(scores)
    kind = score_kind(items)
    if kind is not None:  # assay's or Inspect AI's objects, read attribute by attribute
        return ScoreFrame(**scores_columns(items, None, 0.5, to_float, kind, lazy=True))
    if all(isinstance(s, numbers.Real) and not isinstance(s, bool) for s in items):
        return ScoreFrame.from_arrays(np.asarray(items, dtype=np.float64))
    # raw values: "C", True, "yes", ...
    return ScoreFrame.from_scores([Score(v) for v in items], to_float=to_float)


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


def as_native(scores: Any) -> Any:
    """Inspect AI's ``SampleScore`` (or ``Score``) objects as what assay's evaluation takes:
    a :class:`ScoreFrame` when the values are scalars (read attribute by attribute, one
    pass each), else assay :class:`SampleScore` objects (dict and list values are
    evaluated key by key). Anything else is returned as it is.

    Example:
        >>> as_native([Score("C"), Score("I")]).values.tolist()
        [1.0, 0.0]
    """
    if isinstance(scores, ScoreFrame) or isinstance(scores, np.ndarray):
        return scores
    items = scores if isinstance(scores, list) else list(scores)
    kind = score_kind(items)
    if kind is None or type(items[0]) is SampleScore:
        return items
    values = [s.value if kind == "bare" else s.score.value for s in items]
    if not any(isinstance(v, (Mapping, list, tuple)) for v in values):
        return ScoreFrame(**scores_columns(items, None, 0.5, None, kind))
    if kind == "bare":
        return [SampleScore(_score(s), i) for i, s in enumerate(items)]
    return [
        SampleScore(_score(s.score), s.sample_id, getattr(s, "epoch", 1), s.sample_metadata)
        for s in items
    ]


def _score(s: Any) -> Score:
    return Score(s.value, s.answer, s.explanation, s.metadata)
