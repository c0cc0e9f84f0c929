"""The cluster bootstrap: whole clusters of units resampled (``cluster=COLUMN``).

A user names a metadata column whose values are clusters (a patient, a site, a camera);
each resample draws the clusters with replacement, and every unit counts as often as its
cluster was drawn. :class:`Clusters` turns the drawn cluster counts into weights of the
distinct rows of per-unit statistics, so every metric's sufficient statistics serve
unchanged (see :mod:`assay.uncertainty.tally`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.resampling import CHUNK_ELEMENTS, resample_counts
from assay.uncertainty.slices import slice_text

__all__ = ["Clusters", "cluster_codes", "collapse_by", "resample_weights"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Clusters:
    """Units resampled whole by cluster (a ``cluster`` column the user names).

    ``membership[g, r]`` counts the units of cluster ``g`` in distinct row ``r``. A
    resample draws the ``G`` clusters with replacement (counts ``k ~ Multinomial(G, 1/G)``,
    by :func:`resample_counts` over the clusters); row ``r`` then weighs
    ``sum_g k_g membership[g, r]``: every unit counts as often as its cluster was drawn,
    and per-unit statistics are summed per cluster by the same product.

    Example:
        >>> c = Clusters.of(unit=np.array([0, 0, 1, 2]), codes=np.array([0, 1, 1, 1]), rows=3)
        >>> c.weights(np.array([[2.0, 0.0], [0.0, 2.0]])).tolist()
        [[2.0, 0.0, 0.0], [2.0, 2.0, 2.0]]
    """

    membership: Any  # scipy.sparse CSR (G, m)

    @classmethod
    def of(
        cls,
        unit: ArrayLike,
        codes: ArrayLike,
        rows: int,
        weights: ArrayLike | None = None,
    ) -> Clusters:
        """From each unit's distinct row and cluster code (``0 .. G-1``); ``weights``: how
        many units each entry stands for (a compact form)."""
        from scipy import sparse

        r, g = np.asarray(unit, dtype=np.intp), np.asarray(codes, dtype=np.intp)
        w = np.ones(r.size) if weights is None else np.asarray(weights, dtype=np.float64)
        groups = int(g.max()) + 1 if g.size else 0
        return cls(sparse.csr_matrix((w, (g, r)), shape=(groups, rows)))

    @property
    def size(self) -> int:
        """The number of clusters."""
        return int(self.membership.shape[0])

    @property
    def occupied(self) -> int:
        """The number of clusters that hold a unit (a slice's codes may number clusters of
        the whole set that it does not reach)."""
        return int(np.count_nonzero(np.asarray(self.membership.sum(axis=1)).reshape(-1) > 0))

    def weights(self, counts: F64) -> F64:
        """Row weights (b, m) of cluster counts (b, G)."""
        single = self._single
        if single is not None:  # every row in one cluster: a gather, no product
            cluster, units = single
            out = np.take(counts, cluster, axis=1)
            return np.multiply(out, units, out=out)
        return np.ascontiguousarray((self.membership.T @ counts.T).T)

    @cached_property
    def _single(self) -> tuple[NDArray[np.intp], F64] | None:
        """Each row's cluster and its units there, when every row lies in one cluster (the
        rows of :func:`collapse_by`, which keeps the cluster in the row); else None."""
        csc = self.membership.tocsc()
        if not np.all(np.diff(csc.indptr) == 1):
            return None
        return csc.indices.astype(np.intp), csc.data.astype(np.float64)

    def totals(self) -> F64:
        """The data's own row weights (m,): every cluster once."""
        return np.asarray(self.membership.sum(axis=0), dtype=np.float64).reshape(-1)

    def leave_one_out(self, chunk_elements: int = CHUNK_ELEMENTS) -> Iterator[F64]:
        """Chunks of row weights (c, m) of the data without each cluster, in cluster order:
        the leave-one-cluster-out jackknife (each row of it weighs 1 in BCa's acceleration).

        Example:
            >>> c = Clusters.of(unit=np.array([0, 0, 1]), codes=np.array([0, 1, 1]), rows=2)
            >>> np.concatenate(list(c.leave_one_out())).tolist()
            [[1.0, 1.0], [1.0, 0.0]]
        """
        total = self.totals()[None, :]
        rows = max(1, chunk_elements // max(1, self.membership.shape[1]))
        for i in range(0, self.size, rows):
            yield total - self.membership[i : i + rows].toarray()


def collapse_by(rows: ArrayLike, codes: ArrayLike | None) -> tuple[np.ndarray, Any]:
    """The distinct rows of per-unit statistics and what a resample draws: their
    multiplicities, or with each unit's cluster ``codes`` (``0 .. G-1``) the
    :class:`Clusters` of the distinct (row, cluster) pairs (the rows returned without the
    code; a row shared by two clusters appears once per cluster).

    Example:
        >>> u, c = collapse_by([[1.0], [1.0], [2.0]], [0, 1, 1])
        >>> u.tolist(), c.membership.toarray().tolist()
        ([[1.0], [1.0], [2.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    """
    if codes is None:
        return collapse(rows)[:2]
    a = np.asarray(rows)
    a = a[:, None] if a.ndim == 1 else a
    g = np.asarray(codes, dtype=np.float64).reshape(-1, 1)
    uniq, counts, _ = collapse(np.column_stack([a, g]))
    m = len(uniq)
    c = Clusters.of(np.arange(m), uniq[:, -1].astype(np.intp), m, counts)
    return uniq[:, :-1], c


def cluster_codes(metadata: Any, column: str, what: str) -> NDArray[np.intp]:
    """Each unit's cluster (``0 .. G-1``, by the sorted values) from a metadata field; every
    unit must have one.

    Example:
        >>> from assay.io.metadata import metadata_from
        >>> cluster_codes(metadata_from([{"s": "b"}, {"s": "a"}, {"s": "b"}], 3), "s", "datums")
        array([1, 0, 1])
    """
    if metadata is None or column not in metadata.values:
        raise InvalidInputError(
            f"is not a metadata field of the {what} (give it as metadata)",
            source="cluster",
            field=column,
        )
    present = metadata.present[column]
    if not present.all():
        raise InvalidInputError(
            f"{int((~present).sum())} of the {what} have no value in the metadata field",
            source="cluster",
            field=column,
        )
    text = np.array([slice_text(v) for v in metadata.values[column].tolist()], dtype=object)
    return np.unique(text.astype(str), return_inverse=True)[1].reshape(-1).astype(np.intp)


def resample_weights(
    multiplicity: ArrayLike | Clusters,
    num_bootstrap: int,
    seed: int,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> Iterator[F64]:
    """Chunks (b, m) of resample weights over the distinct rows: multinomial counts
    (:func:`resample_counts`), or with :class:`Clusters` the weights of drawn clusters
    (chunks split so that no chunk holds more than ``chunk_elements`` weights)."""
    if not isinstance(multiplicity, Clusters):
        yield from resample_counts(multiplicity, num_bootstrap, seed, chunk_elements)
        return
    c = multiplicity
    rows = max(1, chunk_elements // max(1, c.membership.shape[1]))
    for counts in resample_counts(np.ones(c.size, np.int64), num_bootstrap, seed, chunk_elements):
        for i in range(0, len(counts), rows):
            yield c.weights(counts[i : i + rows])
