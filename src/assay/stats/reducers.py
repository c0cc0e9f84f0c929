"""Epoch reducers: several scores of one sample (one per epoch) reduced to one.

Built-ins (vectorised over all samples at once; ``value`` is the threshold at or above
which an attempt counts as correct, default 1.0; see ``spec/inspect-scoring-metrics.md``):

================  ===========================================================================
``mean``          mean of the epochs' values
``median``        median (mean of the two middle values for an even count)
``mode``          most common raw value; ties go to the value seen first (in epoch order)
``max``           largest value; the reduced value is the first raw value attaining it
``pass_at_{k}``   ``1 − C(n−c, k)/C(n, k)``, Chen et al. 2021 (needs n ≥ k scored epochs)
``pass_k_{k}``    ``C(c, k)/C(n, k)``, pass^k of Yao et al. 2024 (needs n ≥ k scored epochs)
``at_least_{k}``  1 if at least k epochs are correct, else 0
================  ===========================================================================

``n`` is the number of scored epochs of the sample (epochs whose value is ``None`` are left
out) and ``c`` how many have value ≥ ``value``. A sample with no scored epoch (or fewer
than k for ``pass_at``/``pass_k``) is *failed*: excluded from the metrics and counted in
their ``n_failed`` parameter.

Reduced scores keep ``answer`` and ``explanation`` only where they are equal across all
epochs, and take ``metadata`` (and the sample metadata) from the first epoch.

Custom reducers receive one sample's scores (scored epochs, in epoch order) and return a
:class:`~assay.stats.Score` or a value::

    @reducer
    def last():
        def reduce(scores: list[Score]) -> Score:
            return scores[-1]
        return reduce

Example:
    >>> from assay.stats import Score
    >>> get_reducer("pass_at_2")([Score("C"), Score("I"), Score("I"), Score("I")]).value
    0.5
    >>> get_reducer("mode")([Score("I"), Score("C"), Score("C")]).value
    'C'
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

from assay.errors import InvalidInputError
from assay.stats import compute
from assay.stats.types import SampleScore, Score, ScoreFrame

__all__ = [
    "EpochGroups",
    "Reducer",
    "get_reducer",
    "reduce_scores",
    "reducer",
    "registered_reducers",
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
            raise ValueError("a reducer needs exactly one of group_fn or score_fn")
        self.name = name
        self.params = dict(params or {})
        self.group_fn = group_fn
        self.score_fn = score_fn

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
            raise TypeError(f"reducer {self.name!r} has no vectorised form; use reduce_scores()")
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
    to it with that ``k`` (like ``pass_at_3``).

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
            if isinstance(inner, Reducer):
                return inner
            return Reducer(_name_with_k(reducer_name, params), params, score_fn=inner)

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


def registered_reducers() -> list[str]:
    """Names of all registered reducers (``pass_at`` etc. take a ``_<k>`` suffix)."""
    return sorted(_REGISTRY)


# ---------------------------------------------------------------------- built-ins
@reducer(name="mean")
def mean_reducer() -> Reducer:
    """Mean of the epochs' values."""

    def fn(g: EpochGroups):
        return np.add.reduceat(g.values, g.starts) / g.counts, g.all_partial(), None

    return Reducer("mean", group_fn=fn)


@reducer(name="median")
def median_reducer() -> Reducer:
    """Median of the epochs' values (mean of the two middle ones for an even count)."""

    def fn(g: EpochGroups):
        v = g.by_value
        lo = g.starts + (g.counts - 1) // 2
        hi = g.starts + g.counts // 2
        return (v[lo] + v[hi]) / 2.0, g.all_partial(), None

    return Reducer("median", group_fn=fn)


@reducer(name="max")
def max_reducer() -> Reducer:
    """Largest value; the representative is its first occurrence in epoch order."""

    def fn(g: EpochGroups):
        v = g.by_value
        top = v[g.starts + g.counts - 1]
        pos = np.arange(len(g.values))
        hit = np.where(g.values == np.repeat(top, g.counts), pos, len(pos))
        rep = np.minimum.reduceat(hit, g.starts)
        return top, g.partial[rep], rep

    return Reducer("max", group_fn=fn)


@reducer(name="mode")
def mode_reducer() -> Reducer:
    """Most common raw value (``"C"``, 1, ...); ties go to the one seen first."""

    def fn(g: EpochGroups):
        raw = g.frame.raw
        keys = raw[g.order] if raw is not None else g.values
        vcodes, _ = compute.factorize(keys)
        pos = np.arange(len(vcodes))
        o = np.lexsort((pos, vcodes, g.codes))
        sc, sv = g.codes[o], vcodes[o]
        new_run = np.ones(len(o), dtype=bool)
        new_run[1:] = (sc[1:] != sc[:-1]) | (sv[1:] != sv[:-1])
        run_start = np.flatnonzero(new_run)
        run_count = np.diff(np.append(run_start, len(o)))
        run_first = pos[o][run_start]
        run_sample = sc[run_start]
        best = np.lexsort((run_first, -run_count, run_sample))
        chosen = best[np.r_[True, run_sample[best][1:] != run_sample[best][:-1]]]
        rep = run_first[chosen]
        return g.values[rep], g.partial[rep], rep

    return Reducer("mode", group_fn=fn)


def _check_k(k: int) -> int:
    if int(k) < 1:
        raise InvalidInputError(f"k must be at least 1, got {k}", source="reducers", field="k")
    return int(k)


@reducer
def pass_at(k: int, value: float = 1.0) -> Reducer:
    """Unbiased pass@k (Chen et al. 2021): ``1 − C(n−c, k)/C(n, k)``; needs n ≥ k."""
    k = _check_k(k)

    def fn(g: EpochGroups):
        return compute.pass_at_k(g.counts, g.correct(value), k), np.zeros(g.n_samples, bool), None

    return Reducer(f"pass_at_{k}", {"k": k, "value": value}, group_fn=fn)


@reducer
def pass_k(k: int, value: float = 1.0) -> Reducer:
    """pass^k (Yao et al. 2024): ``C(c, k)/C(n, k)``, all of k attempts succeed; needs n ≥ k."""
    k = _check_k(k)

    def fn(g: EpochGroups):
        return compute.pass_hat_k(g.counts, g.correct(value), k), np.zeros(g.n_samples, bool), None

    return Reducer(f"pass_k_{k}", {"k": k, "value": value}, group_fn=fn)


@reducer
def at_least(k: int, value: float = 1.0) -> Reducer:
    """1 if at least k epochs have value ≥ ``value``, else 0."""
    k = _check_k(k)

    def fn(g: EpochGroups):
        return (g.correct(value) >= k).astype(np.float64), np.zeros(g.n_samples, bool), None

    return Reducer(f"at_least_{k}", {"k": k, "value": value}, group_fn=fn)


# ---------------------------------------------------------------------- object level
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


def _value_keys(scores: Sequence[SampleScore]) -> list[Any] | None:
    """The keys of dict values (or the indices of list values); None for scalar values."""
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


def reduce_scores(scores: Sequence[SampleScore], reducer: str | Reducer) -> list[SampleScore]:
    """Reduce each sample's epochs to one :class:`SampleScore` (one per sample id, in
    order of first appearance).

    The reduced score's value is ``None`` for a failed sample; dict values are reduced key
    by key and list values index by index. ``answer``/``explanation`` are kept where equal across epochs, ``metadata``
    and ``sample_metadata`` come from the first epoch.

    Example:
        >>> s = [SampleScore(Score(v, answer="x"), "q1", e) for e, v in enumerate("CIC", 1)]
        >>> r = reduce_scores(s, "mean")[0]
        >>> round(r.score.value, 4), r.score.answer
        (0.6667, 'x')
    """
    r = get_reducer(reducer)
    original = list(scores)
    scores = [
        s if s.sample_id is not None else dataclasses.replace(s, sample_id=("row", i))
        for i, s in enumerate(original)
    ]
    groups = _by_sample(scores)
    if r.score_fn is not None:
        values = {sid: _custom(r, group) for sid, group in groups.items()}
    else:
        keys = _value_keys(scores)
        per_key: dict[str | None, dict[Any, Any]] = {}
        for key in keys if keys is not None else [None]:
            red = r.reduce_frame(ScoreFrame.from_scores(scores, key=key))
            reduced_values = red.raw if red.raw is not None else red.values
            per_key[key] = dict(zip(red.sample_id.tolist(), [_py(v) for v in reduced_values]))
        values = {}
        for sid in groups:
            if keys is None:
                values[sid] = per_key[None].get(sid)
            elif keys and isinstance(keys[0], int) and _is_list(scores):
                values[sid] = [per_key[k].get(sid) for k in keys]
            else:
                values[sid] = {k: per_key[k].get(sid) for k in keys}
    out = []
    for sid, group in groups.items():
        v = values[sid]
        if isinstance(v, Score):
            score = v
        else:
            score = Score(
                v,
                answer=_common([s.score.answer for s in group]),
                explanation=_common([s.score.explanation for s in group]),
                metadata=group[0].score.metadata,
            )
        sample_id = group[0].sample_id
        out.append(
            SampleScore(
                score,
                sample_id=None
                if isinstance(sample_id, tuple) and sample_id[:1] == ("row",)
                else sample_id,
                epoch=group[0].epoch,
                sample_metadata=group[0].sample_metadata,
            )
        )
    return out


def _is_list(scores: Sequence[SampleScore]) -> bool:
    return any(isinstance(s.score.value, (list, tuple)) for s in scores)


def _custom(r: Reducer, group: list[SampleScore]) -> Any:
    scored = [s.score for s in group if s.score.value is not None]
    if not scored:
        return None
    assert r.score_fn is not None
    return r.score_fn(scored)


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
