"""True-score accuracy (PRMSE) with any number of ratings per response.

The human ratings of response ``i`` are ``H_i1 .. H_ic_i`` (``c_i >= 1``), their mean
``Hbar_i``; ``c = sum c_i`` is the number of ratings, ``Hbar`` the mean of all ratings and
``M_i`` the system score. The rater error variance pools the within-response variances,
the true-score variance and the mean squared error against the true score correct the
observed ones for it::

    sigma_e^2 = sum_i sum_j (H_ij - Hbar_i)^2 / sum_i (c_i - 1)
    sigma_T^2 = (sum_i c_i (Hbar_i - Hbar)^2 - (N - 1) sigma_e^2) / (c - sum_i c_i^2 / c)
    MSE(T|M)  = (sum_i c_i (Hbar_i - M_i)^2 - N sigma_e^2) / c
    PRMSE     = 1 - MSE(T|M) / sigma_T^2

With two ratings on every response these reduce to ``sigma_e^2 = sum (H - H2)^2 / (2 N)``,
``MSE(T|M) = MSE(Hbar|M) - sigma_e^2 / 2`` and ``sigma_T^2 = var(Hbar) - sigma_e^2 / 2``.

Example:
    >>> round(prmse_true([2, 2, 4], [[1, 2], [3, 3], [4, 5]]), 4)
    0.84
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from assay._validation import as_1d, check_finite, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError

__all__ = [
    "as_ratings_matrix",
    "rater_error_variance",
    "true_score_variance",
    "mse_true",
    "prmse_true",
]


def _system(system: ArrayLike, ratings: np.ndarray) -> np.ndarray:
    m = check_finite(as_1d(system, source="system", dtype=np.float64), source="system")
    check_same_length(human_scores=ratings, system=m)  # a row per response
    return m


def as_ratings_matrix(
    human_scores: ArrayLike | Sequence[ArrayLike], source: str = "human_scores"
) -> np.ndarray:
    """Ratings as a float matrix ``(n_responses, n_raters)``; NaN marks a missing rating.

    A 1-D array is one rating per response. Every response needs at least one rating.

    Example:
        >>> as_ratings_matrix([[1, 2], [3, float("nan")]]).shape
        (2, 2)
    """
    try:
        a = np.asarray(human_scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(
            "expected numbers (NaN marks a missing rating)", source=source
        ) from None
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise InvalidInputError(
            f"expected a 1-D or 2-D array of ratings, got shape {a.shape}", source=source
        )
    if np.isinf(a).any():
        i = int(np.flatnonzero(np.isinf(a).any(axis=1))[0])
        raise InvalidInputError(
            "ratings must be finite (NaN marks a missing rating)",
            source=source,
            record=f"index {i}",
        )
    if a.shape[0] == 0:
        raise UndefinedMetricError("PRMSE", "requires at least one response")
    none = np.isnan(a).all(axis=1)
    if none.any():
        raise InvalidInputError(
            "response has no rating (need at least one per response)",
            source=source,
            record=f"index {int(np.flatnonzero(none)[0])}",
        )
    return a


def _ratings_summary(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Per response: number of ratings c_i, mean rating, and the pooled within-response SS."""
    ok = ~np.isnan(a)
    c = ok.sum(axis=1).astype(np.float64)
    filled = np.where(ok, a, 0.0)
    means = filled.sum(axis=1) / c
    dev = np.where(ok, a - means[:, None], 0.0)
    within = float((dev * dev).sum())
    return c, means, within


def rater_error_variance(human_scores: ArrayLike) -> float:
    """Variance of rater errors, pooled over responses with 2+ ratings .

    ``V_i = sum_j (H_ij - mean_i)^2 / (c_i - 1)``;
    ``sigma_e^2 = sum_i V_i (c_i - 1) / sum_i (c_i - 1)``.
    With two ratings everywhere this is ``sum (H - H2)^2 / (2 N_2)``. Undefined when no
    response has two or more ratings.

    Example:
        >>> rater_error_variance([[1, 2], [3, 3], [4, float("nan")]])
        0.25
    """
    a = as_ratings_matrix(human_scores)
    c, _, within = _ratings_summary(a)
    dof = float((c - 1).sum())
    if dof == 0:
        raise UndefinedMetricError(
            "RaterErrorVariance", "requires at least one response with two or more ratings"
        )
    return within / dof


def _error_variance(a: np.ndarray, c: np.ndarray, within: float, given: float | None) -> float:
    if given is not None:
        g = float(given)
        if not np.isfinite(g) or g < 0:
            raise InvalidInputError(
                f"rater error variance must be a finite number >= 0, got {given!r}",
                source="rater_error_variance",
            )
        return g
    dof = float((c - 1).sum())
    if dof == 0:
        raise UndefinedMetricError(
            "PRMSE",
            "requires at least one response with two or more ratings, "
            "or a given rater_error_variance",
        )
    return within / dof


def true_score_variance(
    human_scores: ArrayLike, rater_error_variance: float | None = None
) -> float:
    """Estimated true-score variance ``sigma_T^2`` (general multi-rater formula).

    ``sigma_T^2 = (sum_i c_i (mean_i - mean)^2 - (N - 1) sigma_e^2) / (c - sum_i c_i^2 / c)``
    where ``c = sum_i c_i`` is the number of ratings and ``mean`` the mean of all ratings.
    Undefined when the denominator is 0 (one response).

    Example:
        >>> true_score_variance([[1, 2], [3, 4]], 0.5)
        1.75
    """
    a = as_ratings_matrix(human_scores)
    c, means, within = _ratings_summary(a)
    se2 = _error_variance(a, c, within, rater_error_variance)
    return _true_var(c, means, se2)


def _true_var(c: np.ndarray, means: np.ndarray, se2: float) -> float:
    ctot = float(c.sum())
    grand = float(np.dot(c, means)) / ctot
    den = ctot - float(np.dot(c, c)) / ctot
    if den == 0:
        raise UndefinedMetricError("TrueScoreVariance", "requires at least two responses")
    d = means - grand
    return (float(np.dot(c, d * d)) - (c.size - 1) * se2) / den


def mse_true(
    system: ArrayLike, human_scores: ArrayLike, rater_error_variance: float | None = None
) -> float:
    """``MSE(T|M) = (sum_i c_i (mean_i - M_i)^2 - N sigma_e^2) / c`` .

    Example:
        >>> mse_true([1.5, 3.5], [[1, 2], [3, 4]], 0.5)
        -0.25
    """
    a = as_ratings_matrix(human_scores)
    m = _system(system, a)
    c, means, within = _ratings_summary(a)
    se2 = _error_variance(a, c, within, rater_error_variance)
    d = means - m
    return (float(np.dot(c, d * d)) - m.size * se2) / float(c.sum())


def prmse_true(
    system: ArrayLike, human_scores: ArrayLike, rater_error_variance: float | None = None
) -> float:
    """PRMSE against the true score: ``1 - MSE(T|M) / sigma_T^2`` (general multi-rater formula).

    ``human_scores`` is ``(n_responses, n_raters)`` with NaN for missing ratings (any number
    of ratings >= 1 per response), or 1-D together with ``rater_error_variance`` estimated
    elsewhere. With two ratings everywhere this equals the closed forms
    ``MSE(T|M) = MSE(Hbar|M) - sigma_e^2 / 2`` and ``sigma_T^2 = var(Hbar) - sigma_e^2 / 2``.
    Undefined when sigma_e^2 cannot be estimated (no response has two ratings and none is
    given) or when the estimated true-score variance is not positive.

    Example:
        >>> round(prmse_true([2, 2, 4], [[1, 2], [3, 3], [4, 5]]), 4)
        0.84
    """
    a = as_ratings_matrix(human_scores)
    m = _system(system, a)
    c, means, within = _ratings_summary(a)
    se2 = _error_variance(a, c, within, rater_error_variance)
    vt = _true_var(c, means, se2)
    if vt <= 0:
        raise UndefinedMetricError(
            "PRMSE", f"requires a positive estimated true-score variance, got {vt:.6g}"
        )
    d = means - m
    mse = (float(np.dot(c, d * d)) - m.size * se2) / float(c.sum())
    return 1.0 - mse / vt
