"""Epoch reducers: several scores of one sample (one per epoch) reduced to one.

Built-ins (vectorised over all samples at once; ``value`` is the threshold at or above
which an attempt counts as correct, default 1.0):

================  ===========================================================================
``mean``          mean of the epochs' values
``median``        median (mean of the two middle values for an even count)
``mode``          most common raw value; ties go to the value seen first (in epoch order)
``max``           largest value; the reduced value is the first raw value attaining it
``pass_at_{k}``   ``1 − C(n−c, k)/C(n, k)``, Chen et al. 2021 (needs n ≥ k scored epochs)
``pass_k_{k}``    ``C(c, k)/C(n, k)``, pass^k of Yao et al. 2024 (needs n ≥ k scored epochs)
``at_least_{k}``  1 if at least k epochs are correct, else 0
================  ===========================================================================

Every built-in but ``mode`` (which counts raw values) takes ``to_float=``, as Inspect AI's
reducers take ``value_to_float``: the reducer's own value mapping, used to convert the
epochs instead of the metric's or the evaluation's.

``n`` is the number of scored epochs of the sample (epochs whose value is ``None`` are left
out) and ``c`` how many have value ≥ ``value``. A sample with no scored epoch (or fewer
than k for ``pass_at``/``pass_k``) is *failed*: excluded from the metrics and counted in
their ``n_failed`` parameter.

Reduced scores keep ``answer`` and ``explanation`` only where they are equal across all
epochs, and take ``metadata`` (and the sample metadata) from the first epoch.

The :class:`Reducer` type, the ``@reducer`` registry and :func:`reduce_scores` are in
:mod:`assay.stats.reducer_registry` (public from :mod:`assay.stats`). Custom reducers receive one
sample's scores (scored epochs, in epoch order) and return a :class:`~assay.stats.Score` or
a value::

    @reducer
    def last():
        def reduce(scores: list[Score]) -> Score:
            return scores[-1]
        return reduce

Example:
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("pass_at_2")([Score("C"), Score("I"), Score("I"), Score("I")]).value
    0.5
    >>> get_reducer("mode")([Score("I"), Score("C"), Score("C")]).value
    'C'
"""

from __future__ import annotations

from typing import Any

import numpy as np

import assay.stats.compute as compute
from assay.errors import InvalidInputError
from assay.stats.reducer_registry import (
    EpochGroups,
    Reducer,
    reducer,
)

__all__ = [
    "at_least",
    "max_score",
    "mean_score",
    "median_score",
    "mode_score",
    "pass_at",
    "pass_k",
]

Reduced = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


@reducer(name="mean")
def mean_reducer(to_float: Any = None) -> Reducer:
    """Mean of the epochs' values: ``Σ_e y_e / n`` over a sample's n scored epochs.

    Examples
    --------
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("mean")([Score("C"), Score("I"), Score("P")]).value
    0.5
    """

    def fn(g: EpochGroups) -> Reduced:
        return np.add.reduceat(g.values, g.starts) / g.counts, g.all_partial(), None

    return Reducer("mean", group_fn=fn)


@reducer(name="median")
def median_reducer(to_float: Any = None) -> Reducer:
    """Median of the epochs' values (mean of the two middle ones for an even count).

    Examples
    --------
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("median")([Score(0.0), Score(1.0), Score(0.5), Score(1.0)]).value
    0.75
    """

    def fn(g: EpochGroups) -> Reduced:
        v = g.by_value
        lo = g.starts + (g.counts - 1) // 2
        hi = g.starts + g.counts // 2
        return (v[lo] + v[hi]) / 2.0, g.all_partial(), None

    return Reducer("median", group_fn=fn)


@reducer(name="max")
def max_reducer(to_float: Any = None) -> Reducer:
    """Largest value; the reduced raw value is its first occurrence in epoch order.

    Examples
    --------
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("max")([Score("I"), Score("yes"), Score("C")]).value
    'yes'
    """

    def fn(g: EpochGroups) -> Reduced:
        v = g.by_value
        top = v[g.starts + g.counts - 1]
        pos = np.arange(len(g.values))
        hit = np.where(g.values == np.repeat(top, g.counts), pos, len(pos))
        rep = np.minimum.reduceat(hit, g.starts)
        return top, g.partial[rep], rep

    return Reducer("max", group_fn=fn)


@reducer(name="mode")
def mode_reducer() -> Reducer:
    """Most common raw value (``"C"``, 1, ...); ties go to the one seen first.

    Examples
    --------
    >>> from assay.stats import Score, get_reducer
    >>> get_reducer("mode")([Score("I"), Score("C"), Score("C"), Score("I")]).value
    'I'
    """

    def fn(g: EpochGroups) -> Reduced:
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
def pass_at(k: int, value: float = 1.0, to_float: Any = None) -> Reducer:
    """Unbiased pass@k (Chen et al. 2021): the chance that at least one of k attempts
    drawn without replacement from the n scored epochs is correct,
    ``1 − C(n−c, k)/C(n, k)`` with c the epochs whose value is ≥ ``value``.

    Parameters
    ----------
    k
        Attempts per draw (≥ 1); a sample with fewer than k scored epochs is failed.
    value
        The threshold at or above which an epoch counts as correct.

    Examples
    --------
    >>> from assay.stats import Score
    >>> pass_at(2)([Score("C"), Score("I"), Score("I"), Score("I")]).value
    0.5
    """
    k = _check_k(k)

    def fn(g: EpochGroups) -> Reduced:
        return compute.pass_at_k(g.counts, g.correct(value), k), np.zeros(g.n_samples, bool), None

    return Reducer(f"pass_at_{k}", {"k": k, "value": value}, group_fn=fn)


@reducer
def pass_k(k: int, value: float = 1.0, to_float: Any = None) -> Reducer:
    """pass^k (Yao et al. 2024): the chance that all of k attempts drawn without
    replacement are correct, ``C(c, k)/C(n, k)``; needs n ≥ k scored epochs.

    Examples
    --------
    >>> from assay.stats import Score
    >>> round(pass_k(2)([Score("C"), Score("C"), Score("I")]).value, 6)
    0.333333
    """
    k = _check_k(k)

    def fn(g: EpochGroups) -> Reduced:
        return compute.pass_hat_k(g.counts, g.correct(value), k), np.zeros(g.n_samples, bool), None

    return Reducer(f"pass_k_{k}", {"k": k, "value": value}, group_fn=fn)


@reducer
def at_least(k: int, value: float = 1.0, to_float: Any = None) -> Reducer:
    """1 if at least k epochs have value ≥ ``value``, else 0.

    Examples
    --------
    >>> from assay.stats import Score
    >>> at_least(2)([Score("C"), Score("I"), Score("C")]).value, at_least(3)([Score("C")]).value
    (1.0, 0.0)
    """
    k = _check_k(k)

    def fn(g: EpochGroups) -> Reduced:
        return (g.correct(value) >= k).astype(np.float64), np.zeros(g.n_samples, bool), None

    return Reducer(f"at_least_{k}", {"k": k, "value": value}, group_fn=fn)


# Inspect AI's names of the factories (their keyword is ``value_to_float``; here ``to_float``)
mean_score = mean_reducer
median_score = median_reducer
max_score = max_reducer
mode_score = mode_reducer
