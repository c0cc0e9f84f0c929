"""The one engine of the fairness bootstrap: families of records rebuilt from resampled
counts (and weight sums).

A :class:`Family` is a group of records that the point-estimate code builds from one array
of counts (a definition's (4, 2) cells, the (D, 4, 2) cells of all definitions for their
mean, a group column's (k, 4) table, the overall four) and, with sample weights, the weight
sums of the same cells. Its flat statistics are the counts, then the sums. A resample gives
every family's flat statistics from what it draws:

* the family's own cells (``drawn`` their counts, no ``chain``): the unweighted datum bootstrap;
* classes of interchangeable datums (:class:`~assay.fairness.units.Units`; ``drawn`` their
  multiplicities, a ``chain`` of sparse matrices from class counts to flat statistics): the
  mean over definitions and everything weighted;
* clusters (:class:`~assay.clusters.Clusters` of each cluster's flat statistics, no chain;
  :func:`assay.fairness.clusters.membership`).

For each resample the family's ``build`` (the point-estimate code) runs on the resampled
statistics; its records, in order, give the replicates (a loop over resamples on a few
numbers, never over datums). The gap of a slice's record to the whole set's is the same with
two families side by side, drawn jointly (:func:`gap_replicates`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.fairness.units import Units, family_matrix, joint
from assay.intervals import CIOptions, bootstrap, percentile
from assay.results import Metric

__all__ = ["Family", "attach", "gap_replicates", "mapped", "stacked", "transposed"]

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
Build = Callable[[I64, F64 | None], list[Metric]]


@dataclass(frozen=True)
class Family:
    """Records built together: ``records`` (the point estimate's, they get the intervals),
    ``build(counts, sums)`` (the same records of other counts shaped ``shape`` and, when
    ``weighted``, weight sums; else None), ``cells(units)`` (each class's flat cells, (k, r)),
    ``flat(sub)`` (a sub-evaluator's flat statistics in this layout) and ``groups`` (a
    group column's group names, the rows of ``shape``; None for the others)."""

    records: list[Metric]
    build: Build
    shape: tuple[int, ...]
    weighted: bool
    cells: Callable[[Units], I64]
    flat: Callable[[Any], F64]
    groups: NDArray[np.str_] | None = None

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def width(self) -> int:
        return self.size * (2 if self.weighted else 1)

    def rebuilt(self, flat: F64) -> list[Metric]:
        """The records of one resample's flat statistics."""
        counts = np.rint(flat[: self.size]).astype(np.int64).reshape(self.shape)
        sums = flat[self.size : 2 * self.size].reshape(self.shape) if self.weighted else None
        return self.build(counts, sums)

    def matrix(self, cells: Units) -> Any:
        """The sparse map from the counts and weight sums of joint ``cells``
        (:func:`~assay.fairness.units.joint`) to this family's flat statistics."""
        return family_matrix(self.cells(cells), self.size, self.weighted)


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan


def _replicates(
    drawn: Any, chain: Any, opts: CIOptions, row: Callable[[F64], list[float]], k: int
) -> F64:
    """``row`` (k values) of every resample's flat statistics: ``drawn`` multiplicities (or
    :class:`~assay.clusters.Clusters`), mapped by the ``chain`` of sparse matrices
    (None: the draw is the flat statistics)."""

    rows = transposed(chain)

    def statistic(w: F64) -> F64:
        flat = mapped(rows, w)
        out = np.full((len(flat), k), np.nan)
        for i, f in enumerate(flat):
            out[i] = row(f)
        return out

    return bootstrap(statistic, drawn, opts.num_bootstrap, opts.seed)


def transposed(chain: Sequence[Any] | None) -> list[Any]:
    """A ``chain`` of sparse matrices transposed, row-major (a product with them is faster)."""
    return [m.T.tocsr() for m in chain or ()]


def mapped(rows: Sequence[Any], w: F64) -> F64:
    """Resample weights (b, m) through a :func:`transposed` chain: the flat statistics."""
    for m in rows:
        w = np.asarray((m @ w.T).T)
    return w


def stacked(families: Sequence[Family], units: Units) -> list[Any]:
    """The chain from class counts to the families' flat statistics side by side (one draw of
    the classes serves them all): to the joint cells' counts and sums, then to the families'."""
    from scipy import sparse

    a, cells = joint(units)
    return [a, sparse.hstack([f.matrix(cells) for f in families], format="csr")]


def attach(families: Sequence[Family], drawn: Any, opts: CIOptions, chain: Any = None) -> None:
    """Bootstrap intervals on every family's records, from one draw whose flat statistics are
    the families' side by side; dict-valued records (counts) get none."""
    starts = np.cumsum([0, *(f.width for f in families)])
    sizes = [len(f.records) for f in families]

    def row(flat: F64) -> list[float]:
        out: list[float] = []
        for f, a in zip(families, starts):
            out += [_number(m.value) for m in f.rebuilt(flat[a : a + f.width])]
        return out

    reps = _replicates(drawn, chain, opts, row, sum(sizes))
    lo, hi = percentile(reps, opts.level)
    at = 0
    for f, k in zip(families, sizes):
        for j, m in enumerate(f.records):
            if m.value is not None and not isinstance(m.value, dict):
                m.parameters.update(
                    opts.parameters(float(lo[at + j]), float(hi[at + j]), "bootstrap")
                )
        at += k


Pair = tuple[Family, Family, list[tuple[int, int]]]


def gap_replicates(pairs: Sequence[Pair], drawn: Any, opts: CIOptions, chain: Any = None) -> F64:
    """Replicates (b, wanted) of slice-minus-whole differences: each pair is a slice's family,
    the whole set's, and the (slice record, whole record) indices wanted; the flat statistics
    are every pair's slice then whole statistics, side by side."""
    starts = np.cumsum([0, *(s.width + w.width for s, w, _ in pairs)])

    def row(flat: F64) -> list[float]:
        out: list[float] = []
        for (s, w, want), a in zip(pairs, starts):
            mine = s.rebuilt(flat[a : a + s.width])
            theirs = w.rebuilt(flat[a + s.width : a + s.width + w.width])
            out += [_number(mine[i].value) - _number(theirs[j].value) for i, j in want]
        return out

    return _replicates(drawn, chain, opts, row, sum(len(p[2]) for p in pairs))
