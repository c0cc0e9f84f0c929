"""Prediction-powered inference of a mean (PPI++): a few human labels correct many judged items.

``n`` items carry both a human label ``y`` and a judge's score ``yhat``; ``N`` more items carry
only the judge's score ``yhat_u``. The estimate of the human mean is

    theta = lam * mean(yhat_u) + mean(y - lam * yhat)

the judge's mean on the unlabelled items, corrected by the judge's error measured on the
labelled ones (the "rectifier"). It is unbiased for any ``lam``: ``lam = 0`` is the mean of the
human labels alone, ``lam = 1`` is plain PPI (Angelopoulos et al., Science 2023). PPI++
(Angelopoulos, Duchi and Zrnic 2024) tunes ``lam`` to the value that minimises the variance,

    lam = cov(y, yhat) / ((1 + n / N) var(yhat_all))     clipped to [0, 1]

with ``cov`` over the labelled items (divided by ``n``) and ``var`` the sample variance (divided
by ``n + N - 1``) of the judge's scores on all items. The interval is the normal one,
``theta +- z sqrt(var(lam yhat_u) / N + var(y - lam yhat) / n)`` (variances divided by the
count). These are the formulas of the reference implementation (``ppi_py.ppi_mean_pointestimate``
and ``ppi_py.ppi_mean_ci``, a test dependency); two edges are assay's own: a judge that gives
every item the same score carries no information (``lam = 0``, where the reference returns NaN),
and with no unlabelled item the estimate is the labels' mean (``lam = 0``).

Items grouped in clusters (several answers of one conversation, a document's questions) are
not independent; :func:`ppi_cluster_interval` then resamples whole clusters (labelled and
unlabelled items of a drawn cluster together, by the engine's cluster bootstrap) and re-tunes
``lam`` on each resample, reading the percentile interval off the replicates. A resample that
draws no labelled item is undefined and left out (as every bootstrap of the engine leaves out
undefined resamples); one that draws no unlabelled item estimates its labels' mean.

Every function here takes frequency weights (an item drawn twice weighs 2), so the point
estimate is the one formula on the data (weights 1) and on each bootstrap resample.

Example:
    >>> y, yhat, yhat_u = [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0, 0.0]
    >>> e = ppi_mean(y, yhat, yhat_u, level=0.9)
    >>> round(e.estimate, 6), round(e.lam, 6), e.n_labeled, e.n_unlabeled
    (0.775, 0.25, 4, 5)
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.uncertainty.clusters import Clusters, resample_weights
from assay.uncertainty.intervals import percentile

__all__ = ["PPIEstimate", "power_tuned_lambda", "ppi_cluster_interval", "ppi_mean"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class PPIEstimate:
    """The PPI++ estimate of a mean, its tuned ``lam`` and (with a level) its interval."""

    estimate: float
    lam: float
    n_labeled: int
    n_unlabeled: int
    ci_low: float | None = None
    ci_high: float | None = None


def _arrays(y: ArrayLike, yhat: ArrayLike, yhat_u: ArrayLike) -> tuple[F64, F64, F64]:
    a, b, c = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (y, yhat, yhat_u))
    if a.size != b.size:
        raise InvalidInputError(
            f"{a.size} human labels but {b.size} judged scores of the labelled items",
            source="ppi",
            field="yhat",
        )
    if a.size == 0:
        raise InvalidInputError("no labelled item", source="ppi", field="y")
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()):
        raise InvalidInputError("a label or a score is not a finite number", source="ppi")
    return a, b, c


def _wmean(x: F64, w: F64) -> F64:
    """Weighted means (b,) of ``x`` (m,) under weights (b, m)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ x) / w.sum(axis=1)


def power_tuned_lambda(
    y: F64, yhat: F64, yhat_u: F64, w: F64 | None = None, w_u: F64 | None = None
) -> F64:
    """The variance-minimising ``lam`` (b,) under frequency weights (b, n) and (b, N) (one
    row of ones when omitted), clipped to ``[0, 1]``; 0 where the judge's scores do not
    vary or no item is unlabelled."""
    w = np.ones((1, y.size)) if w is None else w
    w_u = np.ones((1, yhat_u.size)) if w_u is None else w_u
    n, big_n = w.sum(axis=1), w_u.sum(axis=1)
    dy = y[None, :] - _wmean(y, w)[:, None]
    dh = yhat[None, :] - _wmean(yhat, w)[:, None]
    cov = (w * dy * dh).sum(axis=1) / n
    both = np.concatenate([yhat, yhat_u])
    w_all = np.concatenate([w, w_u], axis=1)
    d_all = both[None, :] - _wmean(both, w_all)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (w_all * d_all * d_all).sum(axis=1) / (n + big_n - 1.0)
        lam = cov / ((1.0 + n / big_n) * var)
    lam = np.where((var > 0) & (big_n > 0), lam, 0.0)
    return np.clip(lam, 0.0, 1.0)


def _estimate(y: F64, yhat: F64, yhat_u: F64, w: F64, w_u: F64, lam: F64) -> F64:
    imputed = np.where(w_u.sum(axis=1) > 0, lam * _wmean(yhat_u, w_u), 0.0)
    return imputed + _wmean(y, w) - lam * _wmean(yhat, w)


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_u: ArrayLike,
    level: float | None = None,
    lam: float | None = None,
) -> PPIEstimate:
    """The PPI++ estimate of the mean of ``y`` from labelled pairs ``(y, yhat)`` and the
    judge's scores ``yhat_u`` on unlabelled items; with ``level`` its normal interval.
    ``lam`` fixes the power-tuning parameter (default: tuned, :func:`power_tuned_lambda`).
    Proportions are means of 0/1 labels."""
    a, b, c = _arrays(y, yhat, yhat_u)
    n, big_n = a.size, c.size
    w, w_u = np.ones((1, n)), np.ones((1, big_n))
    lam_ = power_tuned_lambda(a, b, c) if lam is None else np.array([float(lam)])
    theta = float(_estimate(a, b, c, w, w_u, lam_)[0])
    lam_f = float(lam_[0])
    if level is None:
        return PPIEstimate(theta, lam_f, n, big_n)
    imputed_var = float(np.var(lam_f * c)) / big_n if big_n else 0.0
    rectifier_var = float(np.var(a - lam_f * b)) / n
    half = NormalDist().inv_cdf(0.5 + level / 2.0) * float(np.sqrt(imputed_var + rectifier_var))
    return PPIEstimate(theta, lam_f, n, big_n, theta - half, theta + half)


def ppi_cluster_interval(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_u: ArrayLike,
    clusters: ArrayLike,
    clusters_u: ArrayLike,
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> PPIEstimate:
    """The PPI++ estimate with a cluster-bootstrap percentile interval: each resample draws
    the clusters (codes ``0 .. G-1`` over the labelled ``clusters`` and unlabelled
    ``clusters_u`` items alike) with replacement, weighs every item by its cluster's draws,
    re-tunes ``lam`` and re-estimates the mean."""
    a, b, c = _arrays(y, yhat, yhat_u)
    g = np.concatenate([np.asarray(clusters), np.asarray(clusters_u)]).astype(np.intp)
    if g.size != a.size + c.size or (g.size and g.min() < 0):
        raise InvalidInputError(
            "needs one cluster code (0 .. G-1) per item", source="ppi", field="cluster"
        )
    point = ppi_mean(a, b, c)
    units = Clusters.of(np.arange(g.size), g, g.size)
    reps = []
    for wts in resample_weights(units, num_bootstrap, seed):
        w, w_u = wts[:, : a.size], wts[:, a.size :]
        lam = power_tuned_lambda(a, b, c, w, w_u)
        est = _estimate(a, b, c, w, w_u, lam)
        reps.append(np.where(w.sum(axis=1) > 0, est, np.nan))
    lo, hi = percentile(np.concatenate(reps), level)
    return PPIEstimate(point.estimate, point.lam, a.size, c.size, float(lo), float(hi))
