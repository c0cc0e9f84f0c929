"""Reducing :class:`~assay.stats.SampleScore` objects, Inspect style: one reduced score
per sample, with dict values reduced key by key and list values index by index.

Example:
    >>> from assay.stats import Score, SampleScore
    >>> s = [SampleScore(Score(v), "q1", e) for e, v in enumerate("CIC", 1)]
    >>> round(reduce_scores(s, "mean")[0].score.value, 4)
    0.6667
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.stats.frame import ScoreFrame
from assay.stats.reducer_registry import Reducer, get_reducer
from assay.stats.types import SampleScore, Score

__all__ = ["reduce_scores", "value_keys"]


def _common(values: list[Any]) -> Any:
    first = values[0]
    return first if all(v == first for v in values[1:]) else None


def _by_sample(scores: Sequence[SampleScore]) -> dict[Any, list[SampleScore]]:
    groups: dict[Any, list[SampleScore]] = {}
    for s in scores:
        groups.setdefault(s.sample_id, []).append(s)
    for group in groups.values():
        group.sort(key=lambda s: s.epoch)
    return groups


def value_keys(scores: Sequence[SampleScore]) -> list[Any] | None:
    """The keys of dict values (or the indices of list values); None for scalar values.

    Example:
        >>> value_keys([SampleScore(Score({"em": 1, "f1": 0.5})), SampleScore(Score(None))])
        ['em', 'f1']
    """
    keys: dict[Any, None] = {}
    kinds = set()
    for s in scores:
        v = s.score.value
        if isinstance(v, Mapping):
            kinds.add("dict")
            keys.update((k, None) for k in v)
        elif isinstance(v, (list, tuple)):
            kinds.add("list")
            keys.update((i, None) for i in range(len(v)))
        elif v is not None:
            kinds.add("scalar")
    if len(kinds) > 1:
        raise InvalidInputError(
            f"scores mix {' and '.join(sorted(kinds))} values", source="scores", field="value"
        )
    return list(keys) if kinds & {"dict", "list"} else None


def reduce_scores(
    scores: Sequence[SampleScore], reducer: str | Reducer, to_float: Any = None
) -> list[SampleScore]:
    """Reduce each sample's epochs to one :class:`SampleScore` (one per sample id, in
    order of first appearance).

    The reduced score's value is ``None`` for a failed sample; dict values are reduced key
    by key and list values index by index. ``answer``/``explanation`` are kept where equal
    across epochs, ``metadata`` and ``sample_metadata`` come from the first epoch.

    Parameters
    ----------
    scores
        The scores; those sharing a ``sample_id`` are epochs of one sample (a score
        without an id is a sample of its own).
    reducer
        A reducer name (``"mean"``, ``"pass_at_2"``) or a :class:`Reducer`.
    to_float
        Custom sentinels (:class:`~assay.stats.ValueMapping`) for the built-in reducers
        (a reducer's own ``to_float`` is used instead when it has one).

    Returns
    -------
    list of SampleScore

    Examples
    --------
    >>> s = [SampleScore(Score(v, answer="x"), "q1", e) for e, v in enumerate("CIC", 1)]
    >>> r = reduce_scores(s, "mean")[0]
    >>> round(r.score.value, 4), r.score.answer
    (0.6667, 'x')
    """
    r = get_reducer(reducer)
    if r.to_float is not None:  # the reducer's own mapping wins
        to_float = r.to_float
    # a score without an id is a sample of its own: give it a placeholder id meanwhile
    scores = [
        s if s.sample_id is not None else dataclasses.replace(s, sample_id=_placeholder(i))
        for i, s in enumerate(scores)
    ]
    groups = _by_sample(scores)
    if r.score_fn is not None:
        values = {sid: _custom(r, group) for sid, group in groups.items()}
    else:
        values = _vectorised(r, scores, groups, to_float)
    return [_reduced_score(values[sid], group) for sid, group in groups.items()]


def _vectorised(
    r: Reducer, scores: list[SampleScore], groups: dict[Any, list[SampleScore]], to_float: Any
) -> dict[Any, Any]:
    """Each sample's reduced value through the reducer's vectorised form, key by key."""
    keys = value_keys(scores)
    per_key: dict[Any, dict[Any, Any]] = {}
    for key in keys if keys is not None else [None]:
        red = r.reduce_frame(ScoreFrame.from_scores(scores, key=key, to_float=to_float))
        reduced_values = red.raw if red.raw is not None else red.values
        per_key[key] = dict(zip(red.sample_id.tolist(), [_py(v) for v in reduced_values]))
    if keys is None:
        return {sid: per_key[None].get(sid) for sid in groups}
    if keys and isinstance(keys[0], int) and _is_list(scores):
        return {sid: [per_key[k].get(sid) for k in keys] for sid in groups}
    return {sid: {k: per_key[k].get(sid) for k in keys} for sid in groups}


def _reduced_score(value: Any, group: list[SampleScore]) -> SampleScore:
    score = (
        value
        if isinstance(value, Score)
        else Score(
            value,
            answer=_common([s.score.answer for s in group]),
            explanation=_common([s.score.explanation for s in group]),
            metadata=group[0].score.metadata,
        )
    )
    sample_id = group[0].sample_id
    if isinstance(sample_id, tuple) and sample_id[:1] == ("row",):
        sample_id = None
    return SampleScore(
        score,
        sample_id=sample_id,
        epoch=group[0].epoch,
        sample_metadata=group[0].sample_metadata,
    )


def _placeholder(i: int) -> Any:
    return ("row", i)


def _is_list(scores: Sequence[SampleScore]) -> bool:
    return any(isinstance(s.score.value, (list, tuple)) for s in scores)


def _custom(r: Reducer, group: list[SampleScore]) -> Any:
    scored = [s.score for s in group if s.score.value is not None]
    if not scored:
        return None
    assert r.score_fn is not None
    return r.score_fn([s.score for s in group] if r.keep_failed else scored)


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
