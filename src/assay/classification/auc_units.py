"""The ROC AUC bootstrap's units and its per-resample kernel (see :mod:`assay.uncertainty`).

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

When the classes alternate (continuous scores: no tie across the labels, no slice) they are
the runs of one label in score order, found without keys (:func:`binary_units`), and laid
out in pairs (a negative run and the positive run above it) in blocks of 16 side by side
(:func:`paired`): a resample's running sum is then 15 additions of whole rows and one
cumulative sum over the blocks' totals, instead of numpy's serial cumulative sum over every
negative class (:func:`_paired_auc`; the same integers, so the same AUC).

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

__all__ = ["AucPlan", "as_index", "auc", "binary_units", "paired"]

F64 = NDArray[np.float64]
Index = slice | NDArray[np.intp]
_BLOCK = 16  # pairs per block of the paired layout


@dataclass(frozen=True)
class AucPlan:
    """One label's AUC over resampled units: its negative and positive units in score order
    (columns of the counts), and per positive unit ``lo`` / ``hi`` (indices into the running
    sum of negatives, see the module); ``hi`` is ``None`` when no positive ties a negative.

    ``block > 0``: the paired layout (see :func:`paired`): ``neg`` and ``pos`` hold the pairs'
    negative and positive units, pair ``r`` at ``(r % block) * (R / block) + r // block`` of
    ``R`` pairs; ``lo`` and ``hi`` are unused.
    """

    neg: Index
    pos: Index
    lo: Index
    hi: Index | None
    block: int = 0


def as_index(a: NDArray[np.intp]) -> Index:
    """``a`` as a slice when it is a run of consecutive integers (a view, not a gather)."""
    if a.size == 0:
        return slice(0, 0)
    if a.size == 1 or bool((np.diff(a) == 1).all()):
        return slice(int(a[0]), int(a[0]) + a.size)
    return np.asarray(a, dtype=np.intp)


def auc(w: F64, plan: AucPlan) -> F64:
    """The ROC AUC of each resample (rows of ``w``); NaN without both labels."""
    if plan.block:
        return _paired_auc(w, plan)
    wn, wp = w[:, plan.neg], w[:, plan.pos]
    run = np.zeros((w.shape[0], wn.shape[1] + 1))
    np.cumsum(wn, axis=1, out=run[:, 1:])
    below = run[:, plan.lo]
    if plan.hi is not None:
        below = 0.5 * (below + run[:, plan.hi])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ij,ij->i", wp, below) / (wp.sum(axis=1) * run[:, -1])


def _paired_auc(w: F64, plan: AucPlan) -> F64:
    """:func:`auc` on the paired layout: ``U = sum_r P_r N_<=r``. The running sum inside
    each block of ``L`` consecutive pairs is ``L - 1`` additions of whole rows (the layout
    puts a block's ``k``-th pairs side by side), then one cumulative sum over the blocks'
    totals carries the negatives of the blocks before: ``1 / L`` as many serial
    additions as one running sum over every negative (numpy's cumulative sum is serial, about 2 ns
    an entry; whole-row additions are not), and the same integers."""
    b, k = w.shape[0], plan.block
    wn = w[:, plan.neg].reshape(b, k, -1)
    wp = w[:, plan.pos].reshape(b, k, -1)
    run = np.empty_like(wn)
    run[:, 0] = wn[:, 0]
    for i in range(1, k):
        np.add(run[:, i - 1], wn[:, i], out=run[:, i])
    total = run[:, -1]  # (b, blocks): each block's negatives
    carry = np.cumsum(total, axis=1)
    negatives = carry[:, -1].copy()
    carry -= total  # the negatives of the blocks before
    per_block = wp.sum(axis=1)
    u = np.einsum("bkr,bkr->b", wp, run) + np.einsum("br,br->b", per_block, carry)
    with np.errstate(invalid="ignore", divide="ignore"):
        return u / (per_block.sum(axis=1) * negatives)


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
    change = p[1:] != p[:-1]
    if not inside.any() and not (change & (s[1:] == s[:-1])).any():
        return _runs(order, p, change, weight)
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
    return paired(plan, mult, unit, np.concatenate(flags))


def _runs(
    order: NDArray[np.intp],
    p: NDArray[np.bool_],
    change: NDArray[np.bool_],
    weight: NDArray[np.int64],
) -> tuple[AucPlan, NDArray[np.int64], NDArray[np.intp], NDArray[np.bool_]]:
    """:func:`binary_units` without a slice and without a tie across the labels: the
    classes are the runs of one label in score order (``p``, the labels in that order;
    ``change``, where they change), so no keys are needed."""
    start = np.flatnonzero(np.concatenate(([True], change)))
    label = p[start]
    neg, pos = np.flatnonzero(~label), np.flatnonzero(label)
    cls = np.empty(start.size, dtype=np.intp)  # each run's class
    cls[neg], cls[pos] = np.arange(neg.size), neg.size + np.arange(pos.size)
    if (weight == 1).all():  # no gather of the weights in score order
        runs = np.diff(np.append(start, p.size))
    else:
        runs = np.add.reduceat(weight[order], start).astype(np.int64)
    lo = pos - np.arange(pos.size)  # the negative runs below each positive run
    plan = AucPlan(slice(0, neg.size), slice(neg.size, start.size), as_index(lo), None)
    mult = np.concatenate([runs[neg], runs[pos]])
    plan, mult, cls, flag = paired(plan, mult, cls, np.zeros(start.size, dtype=bool))
    unit = np.empty(p.size, dtype=np.intp)
    unit[order] = cls[np.cumsum(np.concatenate(([0], change)))]
    return plan, mult, unit, flag


def paired(
    plan: AucPlan, mult: NDArray[np.int64], unit: NDArray[np.intp], flag: NDArray[np.bool_]
) -> tuple[AucPlan, NDArray[np.int64], NDArray[np.intp], NDArray[np.bool_]]:
    """The units laid out for :func:`_paired_auc` when the classes alternate (continuous
    scores: positive unit ``j`` has ``j + a`` negative units below it, no ties); else
    unchanged. Pair ``r`` is the negative unit ``r - 1 + a`` and the positive unit ``r``
    (units of multiplicity 0 where there is none, and to fill the last block), so positive
    ``r`` sees the negatives of pairs ``0 .. r``.

    Example:
        >>> plan, mult, unit, _ = binary_units(
        ...     np.array([0.1, 0.2, 0.3, 0.5, 0.9]), np.array([0, 1, 0, 0, 1], bool),
        ...     np.ones(5, np.int64), np.zeros(5, bool))
        >>> plan.block, int(mult.sum()), float(auc(mult[None, :].astype(float), plan)[0])
        (16, 5, 0.6666666666666666)
    """
    lo, mn = plan.lo, plan.neg.stop if isinstance(plan.neg, slice) else 0
    mp = mult.size - mn
    if plan.hi is not None or not isinstance(lo, slice) or lo.start not in (0, 1) or mp == 0:
        return plan, mult, unit, flag
    a = int(lo.start)
    pairs = max(mn + 1 - a, mp)
    cols = -(-pairs // _BLOCK)
    size = cols * _BLOCK

    def place(r: NDArray[np.intp]) -> NDArray[np.intp]:
        return (r % _BLOCK) * cols + r // _BLOCK

    new = np.concatenate([place(np.arange(mn) + 1 - a), size + place(np.arange(mp))])
    m2, f2 = np.zeros(2 * size, dtype=np.int64), np.zeros(2 * size, dtype=bool)
    m2[new], f2[new] = mult, flag
    return AucPlan(slice(0, size), slice(size, 2 * size), lo, None, _BLOCK), m2, new[unit], f2


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
