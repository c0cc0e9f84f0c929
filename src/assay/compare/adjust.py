"""p-values adjusted for comparing several runs with one baseline.

``holm``
    Holm's step-down (family-wise error): the ``i``-th smallest of ``k`` p-values becomes
    ``max_{j <= i} min(1, (k - j + 1) p_(j))``;
``bh``
    Benjamini-Hochberg's step-up (false discovery rate): the ``i``-th smallest becomes
    ``min_{j >= i} min(1, k p_(j) / j)``;
``none``
    the p-values as they are.

NaN p-values (a comparison without a test) stay NaN and are not counted in ``k``.

Example:
    >>> adjust([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError

__all__ = ["ADJUST_METHODS", "adjust"]

ADJUST_METHODS = ("holm", "bh", "none")


def adjust(p_values: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    """The adjusted p-values, in the order given (see the module)."""
    if method not in ADJUST_METHODS:
        raise InvalidInputError(
            f"unknown adjustment {method!r}; choose one of {', '.join(ADJUST_METHODS)}",
            source="adjust",
        )
    p = np.asarray(p_values, dtype=np.float64).ravel()
    finite = ~np.isnan(p)
    if ((p[finite] < 0) | (p[finite] > 1)).any():
        raise InvalidInputError("a p-value is outside [0, 1]", source="adjust")
    out = p.copy()
    if method == "none" or not finite.any():
        return out
    q = p[finite]
    k = q.size
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    j = np.arange(1, k + 1, dtype=np.float64)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (k - j + 1) * ranked))
    else:
        adj = np.minimum.accumulate(np.minimum(1.0, k * ranked / j)[::-1])[::-1]
    back = np.empty(k)
    back[order] = adj
    out[finite] = back
    return out
