"""The cluster bootstrap of the fairness metrics (``cluster=COLUMN``, CLI ``--cluster``).

With ``cluster`` naming a column of the table (a patient, a site, a school), every resample
draws the clusters with replacement and every row counts as often as its cluster was drawn.
The evaluator keeps, per cluster, the same counts it keeps for the whole set (a sub-evaluator
fed the cluster's rows, with the cluster's slices when ``by`` is given): a cluster's cells
(a definition's (4, 2) counts, a group column's (k, 4) counts, the overall four) are then one
row of :class:`assay.clusters.Clusters`, and a resample's counts are the drawn clusters'
cells summed, so the record builders of the point estimate run on them as in the datum
bootstrap (:mod:`assay.fairness.intervals`). Every row must have a cluster.

Example:
    >>> import numpy as np
    >>> from assay.fairness import FairnessEvaluator
    >>> ev = FairnessEvaluator(["sex=F"], ci=0.9, num_bootstrap=50, cluster="site")
    >>> ev = ev.add_arrays([1, 0, 1, 1], [1, 0, 0, 1],
    ...     {"sex": ["F", "M", "F", "M"], "site": ["a", "a", "b", "b"]})
    >>> spd = ev.compute()[0]
    >>> spd.parameters["cluster"], spd.parameters["ci_method"]
    ('site', 'bootstrap')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay.clusters import Clusters
from assay.errors import InvalidInputError
from assay.fairness.group_table import GroupTable
from assay.fairness.group_text import group_column_values
from assay.slices import slice_text

__all__ = ["aligned", "cluster_rows", "membership", "restrict"]

Masked = list[tuple[NDArray[np.bool_], NDArray[np.int64]]]
Groupings = list[tuple[NDArray[np.str_], NDArray[np.int64]]]


def cluster_rows(
    values: Mapping[str, ArrayLike], column: str, n: int, source: str | None
) -> list[tuple[str, NDArray[np.intp]]]:
    """``(cluster, rows)`` of a batch (clusters as text, sorted; rows as indices, found by
    one sort, not one comparison per cluster); every row must have one."""
    v = group_column_values(values, column, n, source)
    missing = np.asarray(pd.isna(v), dtype=bool)
    if missing.any():
        raise InvalidInputError(
            "missing value (every row needs a cluster)",
            source=source or "cluster",
            record=int(np.flatnonzero(missing)[0]) + 1,
            field=column,
        )
    text = np.array([slice_text(x) for x in np.asarray(v).tolist()], dtype=str)
    names, code = np.unique(text, return_inverse=True)
    order = np.argsort(code.reshape(-1), kind="stable")
    cuts = np.cumsum(np.bincount(code.reshape(-1), minlength=len(names)))[:-1]
    return list(zip(names.tolist(), np.split(order, cuts)))


def restrict(masked: Masked, groupings: Groupings, rows: NDArray[Any]) -> tuple[Any, Any]:
    """A batch's privileged masks and groupings on some of its ``rows`` (a slice's, a
    cluster's; a mask or indices): the groups are those the rows have."""
    parts = [(m[rows], np.zeros_like(k)) for m, k in masked]
    within = []
    for names, codes in groupings:
        present, inv = np.unique(codes[rows], return_inverse=True)
        within.append((names[present], inv.reshape(-1)))
    return parts, within


def aligned(part: GroupTable, whole: GroupTable) -> NDArray[np.int64]:
    """``part``'s counts placed at its groups' rows of ``whole`` (its groups are among them)."""
    out = np.zeros_like(whole.counts)
    out[np.searchsorted(whole.names, part.names)] = part.counts
    return out


def membership(subs: Mapping[str, Any], cells: Callable[[Any], NDArray[Any]]) -> Clusters:
    """:class:`Clusters` whose row ``g`` is the ``cells`` of cluster ``g``'s sub-evaluator
    (clusters in sorted order), flattened."""
    from scipy import sparse

    rows = [np.asarray(cells(subs[v]), dtype=np.float64).ravel() for v in sorted(subs)]
    return Clusters(sparse.csr_matrix(np.stack(rows)))
