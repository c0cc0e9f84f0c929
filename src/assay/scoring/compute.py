"""The scoring (RSMTool) evaluation metrics as plain functions: arrays in, number out.

``H`` is the human score, ``M`` the system score, ``N`` the number of responses; each
docstring states its formula. The true-score (PRMSE) functions are in
:mod:`assay.scoring.true_score`.

These functions are strict: when a metric is not defined on the data (one response, a
constant score, a zero denominator) they raise :class:`~assay.errors.UndefinedMetricError`
naming the reason. The evaluator (:func:`assay.scoring.evaluate_scoring`) reports the same
cases as records with ``value=None`` and the reason. Inputs must be finite numbers of equal
length; anything else is an :class:`~assay.errors.InvalidInputError` naming the argument and
the first bad position.

Example:
    >>> from assay.scoring import quadratic_weighted_kappa, pearson_r
    >>> round(quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 4]), 4)
    0.9167
    >>> round(pearson_r([1, 2, 3], [2, 4, 7]), 4)
    0.9934
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from assay._validation import as_1d, check_finite, check_same_length
from assay.errors import InvalidInputError, UndefinedMetricError

__all__ = [
    "score_pair",
    "agreement",
    "exact_agreement",
    "adjacent_agreement",
    "cohen_kappa",
    "quadratic_weighted_kappa",
    "pearson_r",
    "standardized_mean_difference",
    "smd_method",
    "SMD_METHODS",
    "difference_of_standardized_means",
    "mean_squared_error",
    "root_mean_squared_error",
    "r2",
    "DSM_SD_ATOL",
]

# RSMTool treats a whole-set standard deviation this close to 0 as zero in DSM.
DSM_SD_ATOL = 1e-7


def score_pair(
    human: ArrayLike, system: ArrayLike, names: tuple[str, str] = ("human", "system")
) -> tuple[np.ndarray, np.ndarray]:
    """Two finite float arrays of equal, non-zero length (the validation of every metric here).

    Example:
        >>> score_pair([1, 2], [1, float("nan")])
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: system: index 1: must be a finite number, got ...nan...
    """
    h = check_finite(as_1d(human, source=names[0], dtype=np.float64), source=names[0])
    m = check_finite(as_1d(system, source=names[1], dtype=np.float64), source=names[1])
    check_same_length(**{names[0]: h, names[1]: m})
    if h.size == 0:
        raise UndefinedMetricError("N", "requires at least one response (N >= 1)")
    return h, m


def agreement(human: ArrayLike, system: ArrayLike, tolerance: float = 0.0) -> float:
    """Percentage of responses with ``|M_i - H_i| <= tolerance`` (RSMTool ``agreement``).

    ``A = 100 * sum(w_i) / N`` with ``w_i = 1`` if ``|M_i - H_i| <= tolerance`` else 0.

    Example:
        >>> agreement([1, 2, 3, 4], [1, 3, 3, 1], tolerance=1)
        75.0
    """
    h, m = score_pair(human, system)
    return float(np.count_nonzero(np.abs(m - h) <= tolerance)) * 100.0 / h.size


def exact_agreement(human: ArrayLike, system: ArrayLike) -> float:
    """Percent exact agreement: :func:`agreement` with tolerance 0.

    Example:
        >>> exact_agreement([1, 2, 3, 4], [1, 3, 3, 1])
        50.0
    """
    return agreement(human, system, 0.0)


def adjacent_agreement(human: ArrayLike, system: ArrayLike) -> float:
    """Percent exact + adjacent agreement: :func:`agreement` with tolerance 1.

    Example:
        >>> adjacent_agreement([1, 2, 3, 4], [1, 3, 3, 1])
        75.0
    """
    return agreement(human, system, 1.0)


def _rint_int(a: np.ndarray) -> np.ndarray:
    # SKLL: int(np.round(float(y))) -> round half to even, like np.rint
    return np.rint(a).astype(np.int64)


def cohen_kappa(
    human: ArrayLike,
    system: ArrayLike,
    weights: Literal["linear", "quadratic"] | None = None,
) -> float:
    """Cohen's kappa with SKLL semantics (``skll.metrics.kappa``), as RSMTool computes it.

    Both score arrays are rounded to integers (half to even, as SKLL's ``np.round``), shifted by
    the minimum observed rating so the lowest is 0, and every category between the minimum and
    the maximum observed rating is included even when nobody used it (scikit-learn includes it
    only when given ``labels=``). With ``K`` categories, ``X`` the observed and ``m`` the
    chance-expected proportion matrices and ``w_jk`` the weights (``[j != k]`` unweighted,
    ``|j-k|`` linear, ``(j-k)^2`` quadratic)::

        kappa = 1 - sum(w * X) / sum(w * m)

    When all weights are zero (a single category) kappa is 1, as in SKLL.

    Example:
        >>> round(cohen_kappa([1, 2, 4, 4], [1, 2, 4, 2]), 4)
        0.6364
    """
    h, m = score_pair(human, system)
    hi = _rint_int(h)
    mi = _rint_int(m)
    lo = min(int(hi.min()), int(mi.min()))
    k = max(int(hi.max()), int(mi.max())) - lo + 1
    hi -= lo
    mi -= lo
    n = float(h.size)
    if weights is None:
        if k == 1:
            return 1.0
        po = np.count_nonzero(hi == mi) / n
        pe = float(np.dot(np.bincount(hi, minlength=k), np.bincount(mi, minlength=k))) / (n * n)
        return float(1.0 - (1.0 - po) / (1.0 - pe))
    if weights not in ("linear", "quadratic"):
        raise InvalidInputError(
            f"weights must be None, 'linear' or 'quadratic', got {weights!r}", source="weights"
        )
    if k * k > 50_000_000:
        raise InvalidInputError(
            f"{k} rating categories are too many for a weighted kappa matrix", source="system"
        )
    observed = np.bincount(hi * k + mi, minlength=k * k).reshape(k, k) / n
    expected = np.outer(np.bincount(hi, minlength=k), np.bincount(mi, minlength=k)) / (n * n)
    d = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
    w = d if weights == "linear" else d * d
    if not w.any():
        return 1.0
    return float(1.0 - (w * observed).sum() / (w * expected).sum())


def quadratic_weighted_kappa(human: ArrayLike, system: ArrayLike) -> float:
    """Quadratic weighted kappa for continuous scores (Haberman 2019), variances with ddof=0.

    ``QWK = 2 Cov(M, H) / (Var(H) + Var(M) + (mean(M) - mean(H))^2)``, covariance and
    variances divided by ``N``. On integer scores it equals Cohen's kappa with quadratic
    weights over the full label range. Undefined when the denominator is 0 (both score
    sets constant and equal).

    Example:
        >>> quadratic_weighted_kappa([1, 2, 3], [1, 2, 3])
        1.0
    """
    h, m = score_pair(human, system)
    hm, mm = h.mean(), m.mean()
    dh, dm = h - hm, m - mm
    num = 2.0 * float(np.dot(dh, dm)) / h.size
    den = float(np.dot(dh, dh) + np.dot(dm, dm)) / h.size + float(mm - hm) ** 2
    if den == 0.0:
        raise UndefinedMetricError("QWK", "requires Var(H) + Var(M) + (mean(M) - mean(H))^2 > 0")
    return num / den


def pearson_r(human: ArrayLike, system: ArrayLike) -> float:
    """Pearson's r (as ``scipy.stats.pearsonr``), with RSMTool's undefined cases.

    ``r = sum((H - mean H)(M - mean M)) / sqrt(sum((H - mean H)^2) sum((M - mean M)^2))``,
    computed as a dot product of normalised deviations (scipy's form). Undefined (RSMTool
    returns None) when ``N = 1`` or either score set is constant.

    Example:
        >>> pearson_r([1, 2, 3, 4], [2, 4, 6, 8])
        1.0
    """
    h, m = score_pair(human, system)
    if h.size < 2:
        raise UndefinedMetricError("PearsonR", "requires N >= 2 responses")
    if h.min() == h.max():
        raise UndefinedMetricError("PearsonR", "requires non-constant human scores (variance > 0)")
    if m.min() == m.max():
        raise UndefinedMetricError("PearsonR", "requires non-constant system scores (variance > 0)")
    dh = h - h.mean()
    dm = m - m.mean()
    r = float(np.dot(dh / np.linalg.norm(dh), dm / np.linalg.norm(dm)))
    return max(-1.0, min(1.0, r))


#: The SMD denominators RSMTool offers (``standardized_mean_difference``'s ``method``).
SMD_METHODS = ("unpooled", "pooled", "johnson", "williamson")


def smd_method(method: str) -> str:
    """An SMD method name in lower case (RSMTool accepts any case), or InvalidInputError.

    Example:
        >>> smd_method("Johnson")
        'johnson'
    """
    name = method.lower() if isinstance(method, str) else method
    if name not in SMD_METHODS:
        raise InvalidInputError(
            f"method must be 'unpooled', 'pooled', 'johnson' or 'williamson' (any case), "
            f"got {method!r}",
            source="method",
        )
    return str(name)


def _population_sd(value: float | None, name: str, method: str) -> float:
    if value is None:
        raise InvalidInputError(f"method={method!r} requires {name}", source=name)
    return float(value)


def standardized_mean_difference(
    human: ArrayLike,
    system: ArrayLike,
    method: str = "unpooled",
    *,
    population_human_sd: float | None = None,
    population_system_sd: float | None = None,
    ddof: int = 1,
) -> float:
    """Standardized mean difference ``(mean(M) - mean(H)) / denominator``.

    ``method="unpooled"`` (human-system): denominator ``sd(H)``.
    ``method="pooled"`` (human-human, pass ``H2`` as ``system``):
    ``sqrt((sd(H)^2 + sd(H2)^2) / 2)``.
    ``method="johnson"``: ``population_human_sd``.
    ``method="williamson"``: ``sqrt((population_human_sd^2 + population_system_sd^2) / 2)``.
    Sample sds divide by ``N - ddof``. Undefined when the denominator is 0 or fewer than
    ``ddof + 1`` responses enter a sample sd (RSMTool returns NaN there). The method name is
    case-insensitive (``"Johnson"``), as in RSMTool.

    Example:
        >>> standardized_mean_difference([1, 2, 3], [2, 3, 4])
        1.0
        >>> standardized_mean_difference([1, 2, 3], [2, 3, 4], "williamson",
        ...     population_human_sd=1.0, population_system_sd=1.0)
        1.0
    """
    method = smd_method(method)
    h, m = score_pair(human, system)
    if method in ("unpooled", "pooled") and h.size <= ddof:
        raise UndefinedMetricError("SMD", f"requires N > ddof = {ddof} responses")
    if method == "unpooled":
        den = float(np.std(h, ddof=ddof))
    elif method == "pooled":
        den = float(np.sqrt((np.var(h, ddof=ddof) + np.var(m, ddof=ddof)) / 2.0))
    elif method == "johnson":
        den = _population_sd(population_human_sd, "population_human_sd", method)
    else:
        hs = _population_sd(population_human_sd, "population_human_sd", method)
        ms = _population_sd(population_system_sd, "population_system_sd", method)
        den = float(np.sqrt((hs**2 + ms**2) / 2.0))
    if den == 0.0:
        raise UndefinedMetricError("SMD", f"requires a non-zero {method} standard deviation")
    return float(m.mean() - h.mean()) / den


def difference_of_standardized_means(
    human: ArrayLike,
    system: ArrayLike,
    population_human_mean: float | None = None,
    population_human_sd: float | None = None,
    population_system_mean: float | None = None,
    population_system_sd: float | None = None,
    *,
    ddof: int = 1,
) -> float:
    """DSM for a subgroup: ``mean(z_M - z_H)`` with z-scores from whole-set means and sds.

    ``z_H = (H - mean_H_all) / sd_H_all``, ``z_M = (M - mean_M_all) / sd_M_all`` where the
    population values are those of the whole evaluation set. A mean/sd pair left out is taken
    from the scores given (sd dividing by ``N - ddof``), which makes that z-score's mean 0.
    Undefined when either sd is 0 (within 1e-7, as RSMTool).

    Example:
        >>> difference_of_standardized_means([3, 4], [4, 5], 3.0, 1.0, 3.0, 1.0)
        1.0
        >>> difference_of_standardized_means([3, 4], [4, 5])
        0.0
    """
    h, m = score_pair(human, system)
    for mean, sd, who in (
        (population_human_mean, population_human_sd, "human"),
        (population_system_mean, population_system_sd, "system"),
    ):
        if (mean is None) != (sd is None):
            raise InvalidInputError(
                f"give both population_{who}_mean and population_{who}_sd, or neither",
                source=f"population_{who}_sd",
            )
    hm, hs = (
        (float(h.mean()), float(np.std(h, ddof=ddof)))
        if population_human_mean is None or population_human_sd is None
        else (float(population_human_mean), float(population_human_sd))
    )
    mm, ms = (
        (float(m.mean()), float(np.std(m, ddof=ddof)))
        if population_system_mean is None or population_system_sd is None
        else (float(population_system_mean), float(population_system_sd))
    )
    if np.isclose(hs, 0.0, atol=DSM_SD_ATOL) or np.isclose(ms, 0.0, atol=DSM_SD_ATOL):
        raise UndefinedMetricError(
            "DSM", "requires non-zero whole-set standard deviations of human and system scores"
        )
    return float(np.mean((m - mm) / ms - (h - hm) / hs))


def mean_squared_error(human: ArrayLike, system: ArrayLike) -> float:
    """``MSE(H|M) = sum((H - M)^2) / N`` (as ``sklearn.metrics.mean_squared_error``).

    Example:
        >>> mean_squared_error([1, 2, 3], [1, 2, 5])
        1.3333333333333333
    """
    h, m = score_pair(human, system)
    d = h - m
    return float(np.dot(d, d)) / h.size


def root_mean_squared_error(human: ArrayLike, system: ArrayLike) -> float:
    """``RMSE = sqrt(MSE(H|M))`` (the ``RMSE`` column of RSMTool's ``eval``).

    Example:
        >>> root_mean_squared_error([0, 0], [3, 3])
        3.0
    """
    return float(np.sqrt(mean_squared_error(human, system)))


def r2(human: ArrayLike, system: ArrayLike) -> float:
    """``R2 = 1 - sum((H - M)^2) / sum((H - mean H)^2)`` (as ``sklearn.metrics.r2_score``).

    This is ``1 - MSE(H|M) / sigma_H^2`` with both terms divided by ``N``.
    Undefined for ``N = 1`` (RSMTool returns None) and for constant human scores; there
    scikit-learn returns 1.0 or 0.0 by convention (``force_finite``) and assay does not.

    Example:
        >>> r2([1, 2, 3], [1, 2, 4])
        0.5
    """
    h, m = score_pair(human, system)
    if h.size < 2:
        raise UndefinedMetricError("R2", "requires N >= 2 responses")
    if h.min() == h.max():
        raise UndefinedMetricError("R2", "requires non-constant human scores (variance > 0)")
    d = h - m
    dh = h - h.mean()
    return 1.0 - float(np.dot(d, d)) / float(np.dot(dh, dh))
