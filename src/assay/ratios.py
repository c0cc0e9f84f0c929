"""One kernel for every ratio of counts: precision, recall, F1, IoU, rates.

Every domain (classification, detection, segmentation, fairness) computes its ratios of
counts here, so the zero-denominator rule is written once:

* ``zero_division=None`` (the default): an entry whose denominator is 0 is *undefined*,
  returned as NaN; evaluators turn NaN into a ``value=None`` record with the reason, and
  strict functions raise :class:`~assay.errors.UndefinedMetricError`.
* ``zero_division=z``: that entry is ``z`` (scikit-learn's and valor-lite's 0.0 is
  ``zero_division=0``).

Formulas (per entry, counts broadcast elementwise)::

    precision = TP / (TP + FP)
    recall    = TP / (TP + FN)
    F1        = 2 TP / (2 TP + FP + FN)

F1 in strict mode is undefined wherever precision or recall is (the harmonic mean of an
undefined number); with ``zero_division`` it follows scikit-learn: ``2TP / (2TP + FP + FN)``,
and ``z`` only when TP = FP = FN = 0.

Example:
    >>> import numpy as np
    >>> p, r, f = precision_recall_f1(np.array([3, 0]), np.array([1, 0]), np.array([1, 2]))
    >>> p.tolist(), r.tolist(), f.tolist()
    ([0.75, nan], [0.75, 0.0], [0.75, nan])
    >>> precision_recall_f1([0], [0], [2], zero_division=0)[2].tolist()
    [0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import UndefinedMetricError

__all__ = ["divide", "precision_recall_f1", "f1_from_counts", "ratio", "value_or_none"]


def divide(
    num: ArrayLike, den: ArrayLike, zero_division: float | None = None
) -> NDArray[np.float64]:
    """``num / den`` elementwise; where ``den == 0``: ``zero_division``, or NaN when None.

    Example:
        >>> divide([1, 1], [2, 0]).tolist()
        [0.5, nan]
        >>> divide([1, 1], [2, 0], zero_division=1.0).tolist()
        [0.5, 1.0]
    """
    n = np.asarray(num, dtype=np.float64)
    d = np.asarray(den, dtype=np.float64)
    n, d = np.broadcast_arrays(n, d)
    fill = np.nan if zero_division is None else float(zero_division)
    out = np.full(n.shape, fill, dtype=np.float64)
    np.divide(n, d, out=out, where=d != 0)
    return out


def f1_from_counts(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, zero_division: float | None = None
) -> NDArray[np.float64]:
    """F1 = 2TP / (2TP + FP + FN) elementwise, with the module's zero-division rule.

    Example:
        >>> f1_from_counts([3], [1], [1]).tolist()
        [0.75]
        >>> f1_from_counts([0], [0], [1]).tolist()
        [nan]
    """
    t = np.asarray(tp, dtype=np.float64)
    p = np.asarray(fp, dtype=np.float64)
    n = np.asarray(fn, dtype=np.float64)
    out = divide(2 * t, 2 * t + p + n, zero_division)
    if zero_division is None:
        out = np.where((t + p == 0) | (t + n == 0), np.nan, out)
    return out


def precision_recall_f1(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, zero_division: float | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Precision, recall and F1 from counts, elementwise (see the module docstring)."""
    t = np.asarray(tp, dtype=np.float64)
    p = np.asarray(fp, dtype=np.float64)
    n = np.asarray(fn, dtype=np.float64)
    return (
        divide(t, t + p, zero_division),
        divide(t, t + n, zero_division),
        f1_from_counts(t, p, n, zero_division),
    )


def ratio(
    num: float, den: float, *, metric: str, requires: str, zero_division: float | None = None
) -> float:
    """Scalar ``num / den`` for the strict functions: raises when ``den == 0`` and no
    ``zero_division`` is given.

    Example:
        >>> ratio(3, 4, metric="Precision", requires="TP + FP > 0")
        0.75
        >>> ratio(0, 0, metric="Precision", requires="TP + FP > 0")
        Traceback (most recent call last):
        ...
        assay.errors.UndefinedMetricError: Precision is undefined: requires TP + FP > 0
    """
    v = float(divide(num, den, zero_division))
    if np.isnan(v):
        raise UndefinedMetricError(metric, f"requires {requires}")
    return v


def value_or_none(x: Any) -> float | None:
    """A float, or None for NaN: how an evaluator turns a kernel entry into a record value.

    Example:
        >>> value_or_none(np.float64(0.5)), value_or_none(np.nan)
        (0.5, None)
    """
    f = float(x)
    return None if np.isnan(f) else f
