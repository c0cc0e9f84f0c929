"""Reducers for panels of scores (several judges or epochs of one sample): ``collect``
(keep every value, as a list) and ``majority`` (a strict majority vote), as Inspect AI's
``collect_score`` and ``majority_score``.

Example:
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("collect")([Score("C"), Score(None), Score("I")]).value
    ['C', 'I']
    >>> get_reducer("majority")([Score("C"), Score("C"), Score("I")]).value
    'C'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from assay.errors import InvalidInputError
from assay.stats.reducer_registry import Reducer, reducer
from assay.stats.score import Score

__all__ = ["collect", "majority"]


@reducer(name="collect")
def collect() -> Reducer:
    """Keep every scored value of the sample, in epoch order, as one list.

    The values must be scalars; failed (``None``) epochs are left out, and a sample with
    none scored is failed. The lists feed metrics over raw values such as
    :func:`~assay.stats.krippendorff_alpha` (metrics over floats skip this reducer).

    Returns
    -------
    Reducer
        Named ``collect``.

    Examples
    --------
    >>> from assay.stats import Score
    >>> collect()([Score(3), Score(4)]).value
    [3, 4]
    """

    def reduce(scores: list[Score]) -> Any:
        for s in scores:
            if isinstance(s.value, (Mapping, list, tuple)):
                raise InvalidInputError(
                    f"the collect reducer needs scalar values, got {type(s.value).__name__}",
                    source="reducer 'collect'",
                    field="value",
                )
        return [s.value for s in scores]

    r = Reducer("collect", {}, score_fn=reduce)
    r.collects = True
    return r


def _vote(values: list[Any], panel: int) -> Any:
    """The value held by more than half of ``panel`` votes, else None (no majority).
    Values are compared with ``==`` (1, 1.0 and True are one value)."""
    cast = [v for v in values if v is not None]
    if not cast:
        return None
    value, count = Counter(cast).most_common(1)[0]
    return value if 2 * count > panel else None


def _per_part(scores: list[Score], panel: int) -> Any:
    first = next(s.value for s in scores if s.value is not None)
    if isinstance(first, Mapping):
        dicts = [s.value for s in scores if isinstance(s.value, Mapping)]
        return {k: _vote([d.get(k) for d in dicts], panel) for k in first}
    if isinstance(first, (list, tuple)):
        lists = [s.value for s in scores if isinstance(s.value, (list, tuple))]
        if any(len(x) != len(first) for x in lists):
            raise InvalidInputError(
                "list values of one sample differ in length", source="reducer 'majority'"
            )
        return [_vote([x[i] for x in lists], panel) for i in range(len(first))]
    return _vote([s.value for s in scores], panel)


@reducer(name="majority")
def majority() -> Reducer:
    """Strict majority: the value that more than half of the sample's scores carry.

    With P the number of scores of the sample, failed (``None``) ones included, a value
    wins when it appears more than P/2 times; otherwise there is no majority and the
    sample is failed (``None``). A failed epoch is thus a withheld vote: it does not
    lower the bar. Dict values vote key by key and list values index by index (each
    still against P). The reduced score's metadata gets ``panel``: the votes as cast.

    Returns
    -------
    Reducer
        Named ``majority``.

    Examples
    --------
    >>> from assay.stats import Score
    >>> majority()([Score("C"), Score(None), Score("I")]).value is None
    True
    >>> majority()([Score({"a": 1, "b": 0}), Score({"a": 1, "b": 1}), Score({"a": 0})]).value
    {'a': 1, 'b': None}
    """

    def reduce(scores: list[Score]) -> Score:
        value = _per_part(scores, len(scores))
        votes = [
            dict(s.value)
            if isinstance(s.value, Mapping)
            else list(s.value)
            if isinstance(s.value, (list, tuple))
            else s.value
            for s in scores
        ]
        first = scores[0]
        answers = {s.answer for s in scores}
        explanations = {s.explanation for s in scores}
        return Score(
            value,
            answer=first.answer if len(answers) == 1 else None,
            explanation=first.explanation if len(explanations) == 1 else None,
            metadata={**(first.metadata or {}), "panel": votes},
        )

    fn: Callable[[list[Score]], Score] = reduce
    r = Reducer("majority", {}, score_fn=fn)
    r.keep_failed = True
    return r
