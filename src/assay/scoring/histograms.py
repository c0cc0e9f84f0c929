"""Histograms of rounded scores: the kappa marginals and their joint table (confusion matrix).

Example:
    >>> import numpy as np
    >>> lo, hx, hy = kappa_histograms(np.array([1., 2.]), np.array([2., 2.]), np.zeros(2, int), 1)
    >>> lo, hx.tolist(), hy.tolist()
    (1, [[1, 1]], [[0, 2]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_KAPPA_CATEGORIES", "MAX_JOINT_CATEGORIES", "kappa_histograms", "joint_histogram"]

# Beyond this many rounded categories the kappa histograms are not kept (kappa is then undefined).
MAX_KAPPA_CATEGORIES = 100_000
#: Beyond this many rounded categories the joint histogram (confusion matrix) is not kept.
MAX_JOINT_CATEGORIES = 64


def kappa_histograms(
    xr: np.ndarray, yr: np.ndarray, codes: np.ndarray, g: int
) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """Per-group counts of the rounded scores over one shared category range.

    Returns ``(lo, hist_x, hist_y)``: column ``k`` counts the value ``lo + k``. Both
    histograms are None when the range has more than :data:`MAX_KAPPA_CATEGORIES` values.
    """
    if xr.size == 0:
        return 0, np.zeros((g, 1), dtype=np.int64), np.zeros((g, 1), dtype=np.int64)
    lo = int(min(xr.min(), yr.min()))
    k = int(max(xr.max(), yr.max())) - lo + 1
    if k > MAX_KAPPA_CATEGORIES:
        return 0, None, None
    xi = (xr - lo).astype(np.intp)
    yi = (yr - lo).astype(np.intp)
    if g == 1:
        return lo, np.bincount(xi, minlength=k)[None, :], np.bincount(yi, minlength=k)[None, :]
    hx = np.bincount(codes * k + xi, minlength=g * k).reshape(g, k)
    hy = np.bincount(codes * k + yi, minlength=g * k).reshape(g, k)
    return lo, hx, hy


def joint_histogram(
    xi: np.ndarray, yi: np.ndarray, codes: np.ndarray | None, g: int, k: int
) -> np.ndarray | None:
    """Per-group counts (G, K, K) of the category pairs ``(xi, yi)``; None if ``k`` is too big.

    Example:
        >>> joint_histogram(np.array([0, 1, 1]), np.array([0, 1, 0]), None, 1, 2).tolist()
        [[[1, 0], [1, 1]]]
    """
    if k > MAX_JOINT_CATEGORIES:
        return None
    key = xi * k + yi if codes is None or g == 1 else (codes * k + xi) * k + yi
    return np.bincount(key, minlength=g * k * k).reshape(g, k, k).astype(np.int64)
