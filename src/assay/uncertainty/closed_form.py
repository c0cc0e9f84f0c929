"""Closed-form confidence intervals: Wilson's score interval of a proportion, the t interval
of a mean and DeLong's interval of a ROC AUC (:mod:`assay.uncertainty.intervals`
documents the methods and the record keys).

Example:
    >>> lo, hi = wilson(8, 10, 0.9)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.5408, 0.9314)
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["delong", "delong_interval", "t_interval", "wilson"]

F64 = NDArray[np.float64]


def _z(level: float) -> float:
    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def wilson(successes: ArrayLike, n: ArrayLike, level: float) -> tuple[F64, F64]:
    """Wilson's score interval of ``successes / n`` (elementwise; NaN where ``n == 0``).

    ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``, z the normal
    ``1 - alpha/2`` quantile.

    Example:
        >>> lo, hi = wilson(3, 4, 0.95)
        >>> round(float(lo), 6), round(float(hi), 6)
        (0.300642, 0.954413)
    """
    k = np.asarray(successes, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    z = _z(level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / nn
        den = 1.0 + z * z / nn
        center = (p + z * z / (2.0 * nn)) / den
        half = z * np.sqrt(p * (1.0 - p) / nn + z * z / (4.0 * nn * nn)) / den
    return np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)


def t_interval(mean: ArrayLike, se: ArrayLike, df: ArrayLike, level: float) -> tuple[F64, F64]:
    """``mean +- t_{1-alpha/2, df} se`` (elementwise).

    Example:
        >>> lo, hi = t_interval(0.5, 0.1, 10, 0.95)
        >>> round(float(lo), 6), round(float(hi), 6)
        (0.277186, 0.722814)
    """
    from scipy import stats as sps

    t = sps.t.ppf(1.0 - (1.0 - level) / 2.0, np.asarray(df, dtype=np.float64))
    m, s = np.asarray(mean, dtype=np.float64), np.asarray(se, dtype=np.float64)
    return m - t * s, m + t * s


def delong(pos: ArrayLike, neg: ArrayLike) -> tuple[float, float]:
    """ROC AUC and DeLong's variance from ascending-sorted positive and negative scores.

    Structural components (ties count one half): for positive ``x_i``,
    ``V10_i = #{neg < x_i} + 0.5 #{neg == x_i}`` over ``|neg|``; for negative ``y_j``,
    ``V01_j = #{pos > y_j} + 0.5 #{pos == y_j}`` over ``|pos|`` (the midrank form: each is
    a difference of midranks in the pooled and the own sample, found here by binary search
    of the sorted samples in each other, the sort the point estimate made).
    ``AUC = mean(V10)`` and ``Var = var(V10, ddof=1) / |pos| + var(V01, ddof=1) / |neg|``;
    NaN variance with fewer than two of either.

    Example:
        >>> auc, var = delong(np.array([0.35, 0.8, 0.9]), np.array([0.1, 0.4, 0.5]))
        >>> round(auc, 6), round(var, 6)
        (0.777778, 0.061728)
    """
    p = np.asarray(pos, dtype=np.float64)
    q = np.asarray(neg, dtype=np.float64)
    m, n = p.size, q.size
    if m == 0 or n == 0:
        return float("nan"), float("nan")
    # sorted queries: numpy's binary search walks the array forward (about 30 ns a query
    # at 10^6, less than a merge of the two samples with its gathers)
    v10 = (np.searchsorted(q, p, "left") + np.searchsorted(q, p, "right")) / (2.0 * n)
    v01 = (2 * m - np.searchsorted(p, q, "left") - np.searchsorted(p, q, "right")) / (2.0 * m)
    auc = float(v10.mean())
    if m < 2 or n < 2:
        return auc, float("nan")
    return auc, float(v10.var(ddof=1) / m + v01.var(ddof=1) / n)


def delong_interval(pos: ArrayLike, neg: ArrayLike, level: float) -> tuple[float, float]:
    """DeLong's normal interval ``AUC +- z sqrt(Var)``, clipped to [0, 1] (NaN if undefined).

    Example:
        >>> lo, hi = delong_interval(np.array([0.35, 0.8, 0.9]), np.array([0.1, 0.4, 0.5]), 0.95)
        >>> round(lo, 4), round(hi, 4)
        (0.2908, 1.0)
    """
    auc, var = delong(pos, neg)
    if not np.isfinite(var):
        return float("nan"), float("nan")
    half = _z(level) * math.sqrt(var)
    return max(0.0, auc - half), min(1.0, auc + half)
