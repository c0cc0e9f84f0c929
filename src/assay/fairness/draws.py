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

The family's ``values`` give the replicates of every resample of a chunk at once: the
point estimate's formulas on arrays with a leading axis of resamples (the point estimate is
the one-row case), so a replicate is NaN (left out of the interval) exactly where the
point-estimate ``build`` gives ``None``. The gap of a slice's record to the whole set's is
the same with two families side by side, drawn jointly (:func:`gap_replicates`). Every
family has its ``values`` (the LLM fairness suite's too:
:func:`~assay.fairness.intervals.attach_intervals`); ``build`` (:meth:`Family.rebuilt`) is
the record-by-record reference the tests hold them to.
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
Values = Callable[[F64, F64 | None], F64]


@dataclass(frozen=True)
class Family:
    """Records built together: ``records`` (the point estimate's, they get the intervals),
    ``build(counts, sums)`` (the same records of other counts shaped ``shape`` and, when
    ``weighted``, weight sums; else None), ``cells(units)`` (each class's flat cells, (k, r)),
    ``flat(sub)`` (a sub-evaluator's flat statistics in this layout), ``groups`` (a
    group column's group names, the rows of ``shape``; None for the others) and
    ``values(counts, sums)`` (the records' values, NaN where not a number, of counts and
    sums shaped (b,) + ``shape``: shape (b, records))."""

    records: list[Metric]
    build: Build
    shape: tuple[int, ...]
    weighted: bool
    cells: Callable[[Units], I64]
    flat: Callable[[Any], F64]
    groups: NDArray[np.str_] | None = None
    values: Values | None = None

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

    def replicates(self, flat: F64) -> F64:
        """The records' values (b, records) of b resamples' flat statistics (b, width)."""
        if self.values is None:
            raise TypeError("a family without vectorised values has no replicates")
        shape = (len(flat), *self.shape)
        counts = np.rint(flat[:, : self.size]).reshape(shape)
        sums = flat[:, self.size : 2 * self.size].reshape(shape) if self.weighted else None
        return self.values(counts, sums)

    def matrix(self, cells: Units) -> Any:
        """The sparse map from the counts and weight sums of joint ``cells``
        (:func:`~assay.fairness.units.joint`) to this family's flat statistics."""
        return family_matrix(self.cells(cells), self.size, self.weighted)


def _replicates(drawn: Any, chain: Any, opts: CIOptions, row: Callable[[F64], F64]) -> F64:
    """``row`` (b, k) of every chunk of resamples' flat statistics (b, m): ``drawn``
    multiplicities (or :class:`~assay.clusters.Clusters`), mapped by the ``chain`` of sparse
    matrices (None: the draw is the flat statistics)."""
    rows = transposed(chain)
    return bootstrap(lambda w: row(mapped(rows, w)), drawn, opts.num_bootstrap, opts.seed)


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


def _interval(m: Metric, keep: Callable[[Metric], bool] | None) -> bool:
    """Whether record ``m`` gets an interval: a number (not a dict of counts) that ``keep``
    (None: every record) wants."""
    return m.value is not None and not isinstance(m.value, dict) and (keep is None or keep(m))


def attach(
    families: Sequence[Family], drawn: Any, opts: CIOptions, chain: Any = None,
    keep: Callable[[Metric], bool] | None = None,
) -> None:  # fmt: skip
    """Bootstrap intervals on every family's records, from one draw whose flat statistics are
    the families' side by side; dict-valued records (counts) and, with ``keep``, the records
    it does not want get none (nor are their replicates' percentiles taken)."""
    starts = np.cumsum([0, *(f.width for f in families)])
    want = [[j for j, m in enumerate(f.records) if _interval(m, keep)] for f in families]
    if not any(want):
        return

    def row(flat: F64) -> F64:
        parts = [f.replicates(flat[:, a : a + f.width])[:, w]
                 for f, a, w in zip(families, starts, want)]  # fmt: skip
        return np.concatenate(parts, axis=1)

    lo, hi = percentile(_replicates(drawn, chain, opts, row), opts.level)
    at = 0
    for f, w in zip(families, want):
        for j in w:
            m = f.records[j]
            m.parameters.update(opts.parameters(float(lo[at]), float(hi[at]), "bootstrap"))
            at += 1


Pair = tuple[Family, Family, list[tuple[int, int]]]


def gap_replicates(pairs: Sequence[Pair], drawn: Any, opts: CIOptions, chain: Any = None) -> F64:
    """Replicates (b, wanted) of slice-minus-whole differences: each pair is a slice's family,
    the whole set's, and the (slice record, whole record) indices wanted; the flat statistics
    are every pair's slice then whole statistics, side by side."""
    starts = np.cumsum([0, *(s.width + w.width for s, w, _ in pairs)])

    def row(flat: F64) -> F64:
        out = []
        for (s, w, want), a in zip(pairs, starts):
            mine = s.replicates(flat[:, a : a + s.width])
            theirs = w.replicates(flat[:, a + s.width : a + s.width + w.width])
            i, j = (list(x) for x in zip(*want))
            out.append(mine[:, i] - theirs[:, j])
        return np.concatenate(out, axis=1)

    return _replicates(drawn, chain, opts, row)
