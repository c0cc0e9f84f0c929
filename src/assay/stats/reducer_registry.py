"""Epoch reducers: the :class:`Reducer` type, the ``@reducer`` registry, the sorted view of
a frame (:class:`EpochGroups`) the vectorised built-ins work on, and reducing
:class:`~assay.stats.SampleScore` objects Inspect style (:func:`reduce_scores`: one reduced
score per sample, with dict values reduced key by key and list values index by index).

A reducer turns the scores of one sample (one per epoch) into one score. Built-ins carry
a vectorised ``group_fn`` over every sample at once; custom ones (``@reducer``) a
``score_fn`` over one sample's list of :class:`~assay.stats.Score`. Reducer names are
Inspect AI's (``"mean"``, ``"pass_at_2"``): they are values of a record's ``reducer``
parameter, not record types.

Example:
    >>> from assay.stats import Score
    >>> get_reducer("at_least_2")([Score("C"), Score("I"), Score("C")]).value
    1.0
    >>> from assay.stats import SampleScore
    >>> s = [SampleScore(Score(v), "q1", e) for e, v in enumerate("CIC", 1)]
    >>> round(reduce_scores(s, "mean")[0].score.value, 4)
    0.6667
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import assay.stats.compute as compute
from assay.errors import InvalidInputError
from assay.stats.frame import ScoreFrame
from assay.stats.metric_registry import check_spec, load_builtins
from assay.stats.score import SampleScore, Score
from assay.stats.value_mapping import ValueMapping, as_mapping

__all__ = [
    "EpochGroups",
    "Reducer",
    "get_reducer",
    "reducer",
    "reducer_factory",
    "reducer_from_spec",
    "reduce_scores",
    "registered_reducers",
    "value_keys",
]

_REGISTRY: dict[str, Callable[..., Reducer]] = {}


class EpochGroups:
    """A frame's rows sorted by sample (first appearance) and, within a sample, by epoch.

    Attributes (arrays over sorted rows unless noted):
        order: sorted position -> original row.
        values, partial: the frame's columns in sorted order.
        starts, counts: ``(G,)`` each sample's first sorted position and its row count.
    """

    def __init__(self, frame: ScoreFrame) -> None:
        self.frame = frame
        n = len(frame)
        codes, uniques = compute.factorize(frame.sample_id)
        g = len(uniques)
        if g == n and (n < 2 or bool(np.all(codes[1:] > codes[:-1]))):
            self.order = np.arange(n)
            self.counts = np.ones(n, dtype=np.int64)
        else:
            self.order = np.lexsort((np.arange(n), frame.epoch, codes))
            self.counts = np.bincount(codes, minlength=g)
        self.codes = codes[self.order]
        self.starts = np.cumsum(self.counts) - self.counts
        self.values = frame.values[self.order]
        self.partial = frame.partial[self.order]
        self.n_samples = g

    @functools.cached_property
    def by_value(self) -> np.ndarray:
        """Values sorted ascending within each sample."""
        return self.values[np.lexsort((self.values, self.codes))]

    def correct(self, value: float) -> np.ndarray:
        """``c``: per sample, how many epochs have value ≥ ``value``."""
        return (
            np.add.reduceat((self.values >= value).astype(np.int64), self.starts)
            if len(self.values)
            else np.zeros(0, np.int64)
        )

    def all_partial(self) -> np.ndarray:
        """Per sample: every epoch was the partial letter."""
        if not len(self.values):
            return np.zeros(0, dtype=bool)
        return np.logical_and.reduceat(self.partial, self.starts)


# A vectorised reducer: groups -> (values per sample, partial flag per sample,
# representative sorted position per sample or None).
GroupFn = Callable[[EpochGroups], tuple[np.ndarray, np.ndarray, "np.ndarray | None"]]


class Reducer:
    """A configured epoch reducer.

    Built-ins carry a vectorised ``group_fn``; custom ones (``@reducer``) a ``score_fn``
    over one sample's list of :class:`Score`. Calling a reducer on one sample's scores
    returns the reduced :class:`Score`, as in Inspect AI.
    """

    def __init__(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        group_fn: GroupFn | None = None,
        score_fn: Callable[[list[Score]], Any] | None = None,
    ) -> None:
        if (group_fn is None) == (score_fn is None):
            raise InvalidInputError(
                "a reducer needs exactly one of group_fn or score_fn", source=f"Reducer {name!r}"
            )
        self.name = name
        self.params = dict(params or {})
        self.group_fn = group_fn
        self.score_fn = score_fn
        self.spec: dict[str, Any] | None = None
        # score_fn also receives the failed (None) epochs (a panel vote counts them)
        self.keep_failed = False
        # the reduced value is a list of the epochs' values (metrics over floats skip it)
        self.collects = False
        # the reducer's own value mapping (None: the metric's, else the evaluation's)
        self.to_float: ValueMapping | None = None

    def __repr__(self) -> str:
        return f"Reducer({self.name!r})"

    def __call__(self, scores: Sequence[Score]) -> Score:
        if not scores:
            return Score(None)
        tagged = [SampleScore(s, sample_id=0, epoch=i + 1) for i, s in enumerate(scores)]
        return reduce_scores(tagged, self)[0].score

    def reduce_frame(self, frame: ScoreFrame) -> ScoreFrame:
        """One row per sample (vectorised reducers only); failed samples in ``failed_ids``."""
        if self.group_fn is None:
            raise InvalidInputError(
                "has no vectorised form; use reduce_scores()", source=f"reducer {self.name!r}"
            )
        groups = EpochGroups(frame)
        if groups.n_samples:
            vals, part, rep = self.group_fn(groups)
        else:
            vals, part, rep = np.zeros(0), np.zeros(0, bool), None
        keep = ~np.isnan(vals)
        first_rows = groups.order[groups.starts]
        out = frame.take(first_rows[keep])
        raw = None
        if rep is not None and frame.raw is not None:
            raw = frame.raw[groups.order[rep[keep]]]
        nan_ids = frame.sample_id[first_rows[~keep]].astype(object)
        failed = (
            pd.unique(frame.failed_ids.astype(object))
            if len(frame.failed_ids)
            else frame.failed_ids
        )
        if len(failed):
            failed = np.asarray(failed, dtype=object)[~pd.Index(failed).isin(frame.sample_id)]
        return dataclasses.replace(
            out,
            values=vals[keep].astype(np.float64),
            partial=part[keep].astype(bool),
            raw=raw,
            scores=None,
            failed_ids=np.concatenate([np.asarray(failed, dtype=object), nan_ids]),
            _cache={},
        )


def _name_with_k(name: str, params: Mapping[str, Any]) -> str:
    if "k" in params and not name.endswith(f"_{params['k']}"):
        return f"{name}_{params['k']}"
    return name


def reducer(func: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Register a reducer factory (``@reducer`` or ``@reducer(name="...")``).

    The factory returns ``reduce(scores: list[Score]) -> Score | value`` for one sample's
    scored epochs (in epoch order). If it has a ``k`` parameter, ``"<name>_<k>"`` resolves
    to it with that ``k`` (like ``pass_at_3``). A ``to_float`` parameter is the reducer's
    own value mapping (:class:`~assay.stats.ValueMapping`, its dict or a ``{text: number}``
    table): the built-in reducers convert the epochs' raw values with it instead of the
    evaluation's; it is in ``params`` (as JSON) only when given.

    Example:
        >>> @reducer
        ... def last():
        ...     return lambda scores: scores[-1]
        >>> get_reducer("last")([Score(1), Score(0)]).value
        0
    """

    def wrap(factory: Callable[..., Any]) -> Callable[..., Reducer]:
        reducer_name = name or factory.__name__
        sig = inspect.signature(factory)

        @functools.wraps(factory)
        def build(*args: Any, **kwargs: Any) -> Reducer:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            inner = factory(*bound.args, **bound.kwargs)
            params = dict(bound.arguments)
            mapping = as_mapping(params.pop("to_float", None))
            r = (
                inner
                if isinstance(inner, Reducer)
                else Reducer(_name_with_k(reducer_name, params), params, score_fn=inner)
            )
            if mapping is not None:
                r.to_float = mapping
                r.params["to_float"] = params["to_float"] = mapping.to_dict()
            if r.spec is None and _jsonable(params):
                r.spec = {"reducer": reducer_name, "params": params}
            return r

        _REGISTRY[reducer_name] = build
        return build

    if func is not None:
        return wrap(func)
    return wrap


def get_reducer(spec: str | Reducer) -> Reducer:
    """A reducer from its name (``"mean"``, ``"pass_at_3"``, ``"at_least_2"``) or itself.

    Example:
        >>> get_reducer("at_least_2").params
        {'k': 2, 'value': 1.0}
    """
    load_builtins()
    if isinstance(spec, Reducer):
        return spec
    if not isinstance(spec, str):
        raise InvalidInputError(
            f"expected a reducer name or Reducer, got {spec!r}", source="reducers"
        )
    if spec in _REGISTRY:
        try:
            return _REGISTRY[spec]()
        except TypeError:
            raise InvalidInputError(
                f"reducer {spec!r} needs a k: write it as '{spec}_<k>'", source="reducers"
            ) from None
    m = re.match(r"^(.*?)_(\d+)$", spec)
    if m and m.group(1) in _REGISTRY:
        return _REGISTRY[m.group(1)](k=int(m.group(2)))
    raise InvalidInputError(
        f"unknown reducer {spec!r}; registered: {', '.join(registered_reducers())}",
        source="reducers",
    )


def reducer_factory(name: str) -> Callable[..., Reducer] | None:
    """The registered factory ``name`` (``"mean"``, ``"at_least"``), or None.

    Example:
        >>> reducer_factory("at_least")(2, value=0.5).params
        {'k': 2, 'value': 0.5}
    """
    load_builtins()
    return _REGISTRY.get(name)


def registered_reducers() -> list[str]:
    """Names of all registered reducers (``pass_at`` etc. take a ``_<k>`` suffix).

    Example:
        >>> {"mean", "mode", "pass_at"} <= set(registered_reducers())
        True
    """
    load_builtins()
    return sorted(_REGISTRY)


def _jsonable(params: Mapping[str, Any]) -> bool:
    return all(
        v is None or isinstance(v, (str, bool, int, float)) or k == "to_float"
        for k, v in params.items()
    )


def reducer_from_spec(spec: Mapping[str, Any] | str) -> Reducer:
    """Rebuild a reducer from a name (``"pass_at_2"``) or a ``Reducer.spec``.

    Example:
        >>> from assay.stats import at_least
        >>> reducer_from_spec(at_least(2, value=0.5).spec).params
        {'k': 2, 'value': 0.5}
    """
    load_builtins()
    if isinstance(spec, str):
        return get_reducer(spec)
    check_spec(spec, "reducer")
    name = str(spec["reducer"])
    if name not in _REGISTRY:
        raise InvalidInputError(
            f"unknown reducer {name!r}; registered: {', '.join(registered_reducers())}",
            source="reducers",
        )
    return _REGISTRY[name](**dict(spec.get("params") or {}))


# ------------------------------------------------------------ reducing scores


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
