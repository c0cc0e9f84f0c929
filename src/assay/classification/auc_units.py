"""The ROC AUC bootstrap's units and its per-resample kernel (see :mod:`assay.intervals`).

A resample gives every unit a count ``w``. Per label, with the negative units in score order
and the running sum ``N_<=i`` of their counts (a leading 0), the resampled Mann-Whitney count
is ::

    U = sum_p w_p (N[lo_p] + N[hi_p]) / 2        AUC = U / (P N)

``lo_p`` (``hi_p``) the number of negative units scoring below (at or below) positive unit
``p``: each positive-negative pair counts 1 when the positive scores higher and 1/2 when
tied, as the trapezoidal area does. One cumulative sum and one dot product per resample.

Which datums can share a unit: two datums of the same label are interchangeable for every
resampled AUC when the same datums of the other label score below them and at or below them
(the ordering among themselves never counts). :func:`binary_units` therefore collapses a
binary problem to these classes: every run of one label between two scores of the other
becomes one unit (continuous scores: about one unit per label change in the sorted order,
not per datum; rounded scores: a tie group's positives and negatives). Drawing
``Multinomial(n, m / n)`` over the classes is exactly the per-datum bootstrap summed over
each class, so nothing is approximated.

Example:
    >>> plan, mult, unit, flag = binary_units(
    ...     np.array([0.1, 0.2, 0.3, 0.4, 0.4, 0.9]), np.array([0, 0, 1, 1, 0, 1], bool),
    ...     np.ones(6, np.int64), np.zeros(6, bool))
    >>> mult.tolist(), unit.tolist()
    ([2, 1, 1, 1, 1], [0, 0, 2, 3, 1, 4])
    >>> float(auc(mult[None, :].astype(float), plan)[0])  # 2 + 2 + 0.5 + 2 + 2 + 1 of 9
    0.8333333333333334
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["AucPlan", "as_index", "auc", "binary_units"]

F64 = NDArray[np.float64]
Index = slice | NDArray[np.intp]


@dataclass(frozen=True)
class AucPlan:
    """One label's AUC over resampled units: its negative and positive units in score order
    (columns of the counts), and per positive unit ``lo`` / ``hi`` (indices into the running
    sum of negatives, see the module); ``hi`` is ``None`` when no positive ties a negative."""

    neg: Index
    pos: Index
    lo: Index
    hi: Index | None


def as_index(a: NDArray[np.intp]) -> Index:
    """``a`` as a slice when it is a run of consecutive integers (a view, not a gather)."""
    if a.size == 0:
        return slice(0, 0)
    if a.size == 1 or bool((np.diff(a) == 1).all()):
        return slice(int(a[0]), int(a[0]) + a.size)
    return np.asarray(a, dtype=np.intp)


def auc(w: F64, plan: AucPlan) -> F64:
    """The ROC AUC of each resample (rows of ``w``); NaN without both labels."""
    wn, wp = w[:, plan.neg], w[:, plan.pos]
    run = np.zeros((w.shape[0], wn.shape[1] + 1))
    np.cumsum(wn, axis=1, out=run[:, 1:])
    below = run[:, plan.lo]
    if plan.hi is not None:
        below = 0.5 * (below + run[:, plan.hi])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ij,ij->i", wp, below) / (wp.sum(axis=1) * run[:, -1])


def binary_units(
    score: F64, pos: NDArray[np.bool_], weight: NDArray[np.int64], inside: NDArray[np.bool_]
) -> tuple[AucPlan, NDArray[np.int64], NDArray[np.intp], NDArray[np.bool_]]:
    """The classes of interchangeable datums of a binary problem (see the module), ordered
    negatives then positives, each by score; ``inside`` (a slice) is part of the class.

    Returns the positive label's plan, the classes' multiplicities (sums of ``weight``),
    each datum's class and whether the class is inside.
    """
    n = score.size
    order = np.argsort(score)  # ties in any order: the classes do not depend on it
    s, p = score[order], pos[order]
    first = np.concatenate(([True], s[1:] != s[:-1]))
    start, group = np.flatnonzero(first), np.cumsum(first) - 1
    end = np.append(start[1:], n)
    unit = np.empty(n, dtype=np.intp)
    keys: list[NDArray[np.int64]] = []
    mults: list[NDArray[np.floating] | NDArray[np.integer]] = []
    flags: list[NDArray[np.bool_]] = []
    ends: list[NDArray[np.int64]] = []
    for side in (False, True):
        other = (p != side).astype(np.int64)
        run = np.concatenate(([0], np.cumsum(other)))
        below, at_or_below = run[start][group], run[end][group]  # other-label datums
        mine = np.flatnonzero(p == side)
        key = (below[mine] * (n + 1) + at_or_below[mine]) * 2 + inside[order[mine]]
        uniq, inv, last = _classes(key)
        unit[order[mine]] = inv + (keys[0].size if keys else 0)
        keys.append(uniq)
        mults.append(np.bincount(inv, weights=weight[order[mine]], minlength=uniq.size))
        flags.append(uniq % 2 == 1)
        ends.append(np.maximum.accumulate(last) if last.size else last)
    neg_end, (nk, pk) = ends[0], keys
    lo = np.searchsorted(neg_end, pk // 2 // (n + 1), "right")
    hi = np.searchsorted(neg_end, pk // 2 % (n + 1), "right")
    mn = nk.size
    plan = AucPlan(
        slice(0, mn), slice(mn, mn + pk.size), as_index(lo), None if (lo == hi).all() else hi
    )
    mult = np.concatenate(mults).round().astype(np.int64)
    return plan, mult, unit, np.concatenate(flags)


def _classes(
    key: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.intp], NDArray[np.int64]]:
    """The distinct keys (sorted), each datum's class, and per class one past the position
    of its last datum. Keys in score order are sorted unless a slice mask interleaves them:
    then runs, in one pass; else a sort."""
    if key.size == 0:
        return key, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int64)
    if bool((key[1:] >= key[:-1]).all()):
        new = np.concatenate(([True], key[1:] != key[:-1]))
        inv = np.cumsum(new) - 1
        last = np.append(np.flatnonzero(new)[1:], key.size).astype(np.int64)
        return key[new], inv.astype(np.intp), last
    uniq, inv = np.unique(key, return_inverse=True)
    last = np.zeros(uniq.size, dtype=np.int64)
    np.maximum.at(last, inv, np.arange(1, key.size + 1))
    return uniq, inv.astype(np.intp), last
