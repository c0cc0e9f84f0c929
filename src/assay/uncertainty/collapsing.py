"""Collapsing per-unit statistics to their distinct rows (the units a bootstrap draws).

:func:`collapse` gives what ``np.unique(rows, axis=0, return_inverse=True,
return_counts=True)`` gives (the distinct rows in lexicographic order, their counts, each
row's distinct row), without its sort of whole rows (a sort of 10^6 two-column float rows
takes about a second). Each numeric column gets a code instead (an integer column of small
range its offset from the minimum, any other column its place among its sorted distinct
values), the codes of a row make one integer in the same lexicographic order, and the
distinct integers are counted (``np.bincount`` when they are few, else a 1-D sort). Rows
with NaN and non-numeric rows take ``np.unique``'s own path, whose conventions for those
differ. A negative zero is counted with zero, as ``np.unique`` counts it, and its row reads
``0.0`` (``np.unique`` shows whichever of the two its sort put first).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["collapse"]

_MAX_CODES = 2**62


def collapse(
    rows: ArrayLike, weights: ArrayLike | None = None
) -> tuple[np.ndarray, NDArray[np.int64], NDArray[np.intp]]:
    """The distinct rows of per-unit statistics, their multiplicities and each unit's row.

    ``weights``: how many units each row stands for (a compact form), one by default.

    Example:
        >>> u, m, inv = collapse([[1, 0], [0, 1], [1, 0]])
        >>> u.tolist(), m.tolist(), inv.tolist()
        ([[0, 1], [1, 0]], [1, 2], [1, 0, 1])
        >>> collapse([[1, 0], [0, 1], [1, 0]], weights=[2, 1, 3])[1].tolist()
        [1, 5]
    """
    a = np.asarray(rows)
    if a.ndim == 1:
        a = a[:, None]
    found = _by_codes(a)
    if found is None:
        uniq, inverse, counts = np.unique(a, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    else:
        uniq, inverse, counts = found
    if weights is not None:
        w = np.asarray(weights, dtype=np.int64)
        counts = np.bincount(inverse, weights=w, minlength=len(uniq)).round()
    return uniq, counts.astype(np.int64), inverse


def _column_code(col: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A column's distinct values (a superset, sorted) and each entry's place among them."""
    n = len(col)
    if col.dtype.kind in "biu":
        lo, hi = int(col.min()), int(col.max())
        if hi - lo <= max(n, 1 << 16):
            values = np.arange(lo, hi + 1).astype(col.dtype)
            return values, col.astype(np.int64) - lo
        values = np.unique(col)
    else:
        if np.isnan(col).any():
            return None
        values = np.unique(col) + 0.0  # -0.0 counts with 0.0 (as in np.unique) and reads 0.0
    return values, np.searchsorted(values, col).astype(np.int64)


def _by_codes(a: np.ndarray) -> tuple[np.ndarray, NDArray[np.intp], np.ndarray] | None:
    """``np.unique(a, axis=0)``'s rows, inverse and counts from one integer per row, or None
    where that path does not apply."""
    n, k = a.shape
    if a.dtype.kind not in "biuf" or n == 0 or k == 0:
        return None
    columns, code, size = [], np.zeros(n, dtype=np.int64), 1
    for j in range(k):
        found = _column_code(a[:, j])
        if found is None or size * len(found[0]) >= _MAX_CODES:
            return None
        columns.append(found[0])
        code *= len(found[0])
        code += found[1]
        size *= len(found[0])
    if size <= 4 * n + (1 << 16):
        all_counts = np.bincount(code, minlength=size)
        distinct = np.flatnonzero(all_counts)
        counts = all_counts[distinct]
        lookup = np.empty(size, dtype=np.intp)
        lookup[distinct] = np.arange(len(distinct))
        inverse = lookup[code]
    else:
        distinct, inverse, counts = np.unique(code, return_inverse=True, return_counts=True)
    uniq = np.empty((len(distinct), k), dtype=a.dtype)
    rest = distinct.astype(np.int64)
    for j in range(k - 1, -1, -1):
        rest, place = np.divmod(rest, len(columns[j]))
        uniq[:, j] = columns[j][place]
    return uniq, inverse.astype(np.intp, copy=False), counts
