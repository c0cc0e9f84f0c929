"""Classes of interchangeable datums: what the datum bootstrap draws when a family of records
needs more than its own cells (the mean over definitions; anything with sample weights).

A datum's whole contribution to every fairness record is its outcome (TP, FP, FN, TN), its
privileged bit under every definition, its group in every group column and its weight. Two
datums equal in all of these are interchangeable: a bootstrap that draws ``n`` datums and
counts them per class draws ``Multinomial(n, m / n)`` over the classes (``m`` their
multiplicities), exactly as drawing the datums. The evaluator keeps the classes with their
multiplicities (:class:`Units`); they add up across batches and merge exactly, in one
canonical (sorted) order whatever the batching. A resample's counts and weight sums of any
record family are then sums over the joint cells (a class without its weight): the class
counts, times a sparse matrix, give each joint cell's count and weight sum (:func:`joint`),
and another gives the family's cells from those (:func:`family_matrix`). Without weights the
classes are at most ``4 * 2^D`` times the groups; with continuous weights they are the datums
(the state then grows with the data).

Example:
    >>> u = Units.of_batch(np.array([0, 0, 3]), [np.array([True, True, False])],
    ...                    [(np.array(["a"]), np.array([0, 0, 0]))], np.array([2.0, 2.0, 1.0]))
    >>> u.keys.tolist(), u.weights.tolist(), u.counts.tolist()
    ([[0, 1, 0], [3, 0, 0]], [2.0, 1.0], [2, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Units", "family_matrix", "grown", "joined", "joint", "units_from_state", "units_state"]

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Units:
    """Classes of interchangeable datums: ``keys`` (k, 1 + D + T) int: the outcome (0 TP,
    1 FP, 2 FN, 3 TN), the privileged bit under each of the D definitions and the group code
    (into ``names[j]``, sorted) in each of the T group columns; ``weights`` (k,) each
    class's weight (1 for rows added without weights); ``counts`` (k,) its datums."""

    names: tuple[NDArray[np.str_], ...]
    keys: I64
    weights: F64
    counts: I64

    @classmethod
    def of_batch(
        cls,
        outcome: I64,
        masks: Sequence[NDArray[np.bool_]],
        groupings: Sequence[tuple[NDArray[np.str_], I64]],
        weights: F64 | None,
    ) -> Units:
        """The classes of one batch: each datum's outcome, privileged masks, groups (names
        and codes) and weights (None: every datum weighs 1)."""
        n = len(outcome)
        cols = [np.asarray(outcome, np.int64).reshape(n, 1)]
        cols += [np.asarray(m, np.int64).reshape(n, 1) for m in masks]
        cols += [np.asarray(c, np.int64).reshape(n, 1) for _, c in groupings]
        w = np.ones(n) if weights is None else np.asarray(weights, np.float64)
        names = tuple(np.asarray(x).astype(str) for x, _ in groupings)
        return _collect(names, np.hstack(cols), w, np.ones(n, np.int64))

    @property
    def definitions(self) -> int:
        return self.keys.shape[1] - 1 - len(self.names)

    def on(self, names: Sequence[NDArray[np.str_]]) -> Units:
        """The same classes with group codes into ``names`` (each a superset of ours)."""
        keys = self.keys.copy()
        start = 1 + self.definitions
        for j, (mine, theirs) in enumerate(zip(self.names, names)):
            keys[:, start + j] = np.searchsorted(theirs, mine)[keys[:, start + j]]
        return Units(tuple(names), keys, self.weights, self.counts)

    def __add__(self, other: Units) -> Units:
        names = tuple(np.union1d(a, b).astype(str) for a, b in zip(self.names, other.names))
        a, b = self.on(names), other.on(names)
        keys = np.concatenate([a.keys, b.keys])
        return _collect(names, keys, np.concatenate([a.weights, b.weights]),
                        np.concatenate([a.counts, b.counts]))  # fmt: skip

    def __sub__(self, other: Units) -> Units:
        """These classes without ``other``'s datums (``other`` a part of them: a slice)."""
        b = other.on(self.names)
        keys = np.concatenate([self.keys, b.keys])
        return _collect(self.names, keys, np.concatenate([self.weights, b.weights]),
                        np.concatenate([self.counts, -b.counts]))  # fmt: skip


def _collect(names: tuple[NDArray[np.str_], ...], keys: I64, weights: F64, counts: I64) -> Units:
    """Classes summed by equal key and weight (bit for bit), sorted by the key's columns then
    the weight; empty ones dropped. The key's columns are one mixed-radix code when it fits
    62 bits (its order is the columns' lexicographic order): with one weight and few codes
    the classes are a ``bincount`` of it, else one ``lexsort`` of (code, weight)."""
    w = np.ascontiguousarray(weights, dtype=np.float64) + 0.0  # -0.0 is 0.0
    bits = w.view(np.int64)  # weights >= 0: ordered as the weights
    c = np.asarray(counts, np.int64)
    if len(keys) == 0:
        return Units(names, keys.reshape(0, keys.shape[1]), w, c)
    sizes = keys.max(axis=0) + 1
    span = float(np.prod(sizes.astype(np.float64)))
    if span >= 2.0**62:  # the columns themselves, least significant first
        order = np.lexsort((bits, *(keys[:, i] for i in range(keys.shape[1] - 1, -1, -1))))
        k = keys[order]
        change = (k[1:] != k[:-1]).any(axis=1)
    else:
        code = np.zeros(len(keys), dtype=np.int64)
        for i, size in enumerate(sizes.tolist()):
            code = code * size + keys[:, i]
        if span <= 4 * len(keys) and (bits == bits[0]).all():
            total = np.rint(np.bincount(code, weights=c, minlength=int(span))).astype(np.int64)
            at = np.flatnonzero(total)
            cols = [(at // int(np.prod(sizes[i + 1 :]))) % sizes[i] for i in range(len(sizes))]
            return Units(names, np.column_stack(cols).astype(np.int64), np.full(len(at), w[0]),
                         total[at])  # fmt: skip
        order = np.lexsort((bits, code))
        change = code[order][1:] != code[order][:-1]
    change |= bits[order][1:] != bits[order][:-1]
    starts = np.flatnonzero(np.r_[True, change])
    total = np.add.reduceat(c[order], starts)
    first = order[starts[total != 0]]
    return Units(names, np.ascontiguousarray(keys[first]), w[first], total[total != 0])


def joint(units: Units) -> tuple[Any, Units]:
    """The joint cells (the classes without their weight) and the sparse map (k, 2J) from
    class counts to their counts and weight sums: a resample's statistics of every family
    are sums over joint cells, so the map from the (many) classes runs once per resample
    with two numbers per class, and the families read the (few) joint cells."""
    from scipy import sparse

    k = len(units.counts)
    new = np.r_[True, (units.keys[1:] != units.keys[:-1]).any(axis=1)] if k else np.ones(0, bool)
    cell = np.cumsum(new) - 1
    j = int(new.sum())
    rows, cols = np.r_[np.arange(k), np.arange(k)], np.r_[cell, cell + j]
    data = np.r_[np.ones(k), units.weights]
    a = sparse.csr_matrix((data, (rows, cols)), shape=(k, 2 * j))
    total = np.bincount(cell, weights=units.counts, minlength=j).astype(np.int64)
    return a, Units(units.names, units.keys[new], np.ones(j), total)


def grown(
    units: Units | None, ci: Any, outcome: I64, masked: Sequence[tuple[Any, Any]],
    groupings: Sequence[tuple[NDArray[np.str_], I64]], weights: F64 | None,
) -> Units | None:  # fmt: skip
    """``units`` with a batch's classes added (its outcomes, privileged masks with matched
    counts, groupings, weights); kept only for the datum bootstrap (``ci`` without
    ``cluster``: clusters are drawn from their own counts)."""
    if ci is None or ci.cluster:
        return None
    batch = Units.of_batch(outcome, [m for m, _ in masked], groupings, weights)
    return batch if units is None else units + batch


def joined(a: Units | None, b: Units | None, a_empty: bool) -> Units | None:
    """Two evaluators' classes merged (``b``'s evaluator holds data); None when either side
    holds data without classes (a state saved by an older version), so no interval is drawn
    from part of the data."""
    if b is None or (a is None and not a_empty):
        return None
    return b if a is None else a + b


def family_matrix(cells: I64, size: int, weighted: bool) -> Any:
    """The sparse map (2J, size or 2 size) from the counts and weight sums of J joint cells
    (:func:`joint`) to a family's flat counts and, ``weighted``, its weight sums after them:
    ``cells`` (J, r) are the family cells (in ``0 .. size - 1``) each joint cell adds to (r of
    them: one per definition for the mean)."""
    from scipy import sparse

    j, r = cells.shape
    one = sparse.csr_matrix(
        (np.ones(j * r), (np.repeat(np.arange(j), r), cells.reshape(-1))), shape=(j, size)
    )
    if weighted:
        return sparse.block_diag([one, one], format="csr")
    return sparse.vstack([one, sparse.csr_matrix((j, size))], format="csr")


def units_state(units: Units | None) -> dict[str, NDArray[Any]]:
    """Plain arrays of the classes (none when there are none)."""
    if units is None:
        return {}
    out: dict[str, NDArray[Any]] = {f"unit_names_{j}": n for j, n in enumerate(units.names)}
    return out | {"unit_keys": units.keys, "unit_weights": units.weights,
                  "unit_counts": units.counts}  # fmt: skip


def units_from_state(state: Any, tables: int) -> Units | None:
    """What :func:`units_state` packed (None when the state has no classes)."""
    if "unit_keys" not in state:
        return None
    names = tuple(np.asarray(state[f"unit_names_{j}"]).astype(str) for j in range(tables))
    keys = np.asarray(state["unit_keys"], dtype=np.int64)
    return Units(names, keys.reshape(len(keys), -1), np.asarray(state["unit_weights"], np.float64),
                 np.asarray(state["unit_counts"], np.int64))  # fmt: skip
