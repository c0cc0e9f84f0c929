"""The fairness regressions' R^2 of many resamples at once (``fairness_metrics_by_<column>``).

The headline values of RSMTool's additional fairness analyses are their R^2: overall score
accuracy (OSA, the adjusted R^2 of OLS ``e^2 ~ group``), overall score difference (OSD,
``e ~ group``) and conditional score difference (CSD, adjusted R^2 of ``e ~ group + C(H)``
minus that of ``e ~ C(H)``), ``e = M - H``. Each gets an interval over responses; the
p-values (``...PValue``) are tests, not estimates, and get none.

This module holds the formulas; the intervals come from the one engine through the scoring
tally (:mod:`assay.scoring.tally`). Sufficient statistics: every regressor is categorical,
so each fit is a function of the per-cell sums (cell = group x human score) ``n``, ``sum
e``, ``sum e^2`` and ``sum e^4`` (:class:`~assay.scoring.level_stats.CellStats`). Responses
collapse to their distinct (human, system, group) rows; a resample's cell sums are its
counts times a sparse (rows x 4 cells) matrix of ``[1, e, e^2, e^4]`` placed in each row's
cell, for a chunk of resamples at once. From the sums, with ``k`` non-empty groups:

* OSA and OSD are one-way fits: the residual sum of squares is the within-group one,
  ``sum_g (S2_g - S1_g^2 / n_g)`` (of ``e^2`` for OSA, from ``S4`` and ``S2``), ``k - 1``
  model degrees of freedom.
* CSD: the null model ``e ~ C(H)`` leaves the within-level sum of squares. Absorbing the
  levels (Frisch-Waugh-Lovell), the group effects are fitted from the reduced normal
  equations of the two-way additive layout, ``A = diag(n_g) - N diag(1 / n_l) N'`` and
  ``v = S1_g - N (S1_l / n_l)`` (``N`` the group x level counts): the full model explains
  ``v' A^+ v`` more, with ``rank A = k - c`` extra degrees of freedom (``c`` the connected
  components of the bipartite graph of groups and the levels they share, found by boolean
  matrix products; usually 1). ``A^+`` comes from ``A``'s eigenvectors, keeping exactly
  ``rank A`` of them. All groups enter (the reference group changes only coefficients).

The formulas, thresholds and undefined cases are those of
:func:`~assay.scoring.subgroup_ols.fairness_from_cells` (a resample where a value is undefined
is left out). ``ci_method="bca"`` applies: the jackknife's cell sums are the totals minus one
row's terms (with ``cluster``, minus one cluster's). Tested against a loop refitting numpy
least squares on every resample materialised as responses.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.scoring.columns import METRIC_TYPES
from assay.scoring.declared import METRICS
from assay.scoring.subgroup_ols import _ZERO_REL, FAIRNESS_METRICS
from assay.uncertainty.resampling import CHUNK_ELEMENTS

__all__ = ["FAIRNESS_CI_TYPES", "Cells", "fairness_r2"]

F64 = NDArray[np.float64]

#: The record types that get an interval (the R^2 of OSA, OSD, CSD: those of the fairness
#: models whose type takes one in the metric table).
FAIRNESS_CI_TYPES = tuple(
    METRIC_TYPES[name] for name in FAIRNESS_METRICS if METRIC_TYPES[name] in METRICS.with_interval()
)


def _adjusted(nobs: F64, ssr: F64, tss: F64, df_resid: F64) -> F64:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (nobs - 1.0) / df_resid * ssr / tss


def _within(s1: F64, s2: F64, n: F64, axis: int | tuple[int, ...]) -> F64:
    """Sum over ``axis`` of each non-empty cell's sum of squares about its mean."""
    ok = n > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        own = np.where(ok, s2 - s1 * s1 / np.where(ok, n, 1.0), 0.0)
    return np.clip(own, 0.0, None).sum(axis=axis)


def _oneway(ng: F64, s1: F64, s2: F64, nobs: F64, scale: F64) -> F64:
    """Adjusted R^2 of ``y ~ group`` from per-group ``n``, ``sum y``, ``sum y^2`` (b, G)."""
    within = _within(s1, s2, ng, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(ng > 0, s1 / np.where(ng > 0, ng, 1.0), 0.0)
        grand = s1.sum(-1) / nobs
    tss = (ng * (means - grand[:, None]) ** 2).sum(-1) + within
    df_resid = nobs - (ng > 0).sum(-1)
    r2 = _adjusted(nobs, within, tss, df_resid)
    return np.where((tss <= _ZERO_REL * scale) | (df_resid <= 0), np.nan, r2)


def _components(n: F64) -> NDArray[np.int64]:
    """Connected components of the non-empty groups linked by shared levels, per resample."""
    g = n.shape[1]
    present = (n > 0).astype(np.float64)
    reach = np.einsum("bgl,bkl->bgk", present, present) > 0
    for _ in range(max(1, int(np.ceil(np.log2(max(g, 2)))))):
        reach = np.matmul(reach.astype(np.float64), reach.astype(np.float64)) > 0
    first = np.argmax(reach, axis=-1) == np.arange(g)[None, :]
    return (first & (n.sum(-1) > 0)).sum(-1)


def _group_effects(n: F64, s1: F64) -> tuple[F64, F64]:
    """What the group effects explain beyond the levels (``v' A^+ v``) and their rank."""
    nl = n.sum(1)
    inv = np.where(nl > 0, 1.0 / np.where(nl > 0, nl, 1.0), 0.0)
    ng = n.sum(-1)
    a = -np.einsum("bgl,bl,bkl->bgk", n, inv, n)
    a[:, np.arange(n.shape[1]), np.arange(n.shape[1])] += ng
    v = s1.sum(-1) - np.einsum("bgl,bl->bg", n, s1.sum(1) * inv)
    rank = (ng > 0).sum(-1) - _components(n)
    eig, vec = np.linalg.eigh(a)  # ascending: the last ``rank`` are the non-zero ones
    proj = np.einsum("bgk,bg->bk", vec, v)
    keep = np.arange(n.shape[1])[None, :] >= (n.shape[1] - rank)[:, None]
    explained = np.where(keep, proj * proj / np.where(keep, eig, 1.0), 0.0).sum(-1)
    return explained, rank.astype(np.float64)


def _csd(n: F64, s1: F64, s2: F64, nobs: F64) -> F64:
    """CSD: adjusted R^2 of ``e ~ group + C(H)`` minus that of ``e ~ C(H)``."""
    nl, s1l, s2l = n.sum(1), s1.sum(1), s2.sum(1)
    tss = s2l.sum(-1) - s1l.sum(-1) ** 2 / nobs
    null_ssr = _within(s1l, s2l, nl, -1)
    null_df = nobs - (nl > 0).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cell_mean = np.where(n > 0, s1 / np.where(n > 0, n, 1.0), 0.0)
        level_mean = np.where(nl > 0, s1l / np.where(nl > 0, nl, 1.0), 0.0)
    between = (n * (cell_mean - level_mean[:, None, :]) ** 2).sum((1, 2))
    explained, rank = _group_effects(n, s1)
    full_ssr = _within(s1, s2, n, (1, 2)) + np.clip(between - explained, 0.0, None)
    full_df = null_df - rank
    groups = (n.sum(-1) > 0).sum(-1)
    diff = _adjusted(nobs, full_ssr, tss, full_df) - _adjusted(nobs, null_ssr, tss, null_df)
    value = np.where(groups > 1, diff, 0.0)
    bad = (tss <= _ZERO_REL * s2l.sum(-1)) | (full_df <= 0)
    return np.where(bad, np.nan, value)


def fairness_r2(n: F64, s1: F64, s2: F64, s4: F64) -> F64:
    """OSA, OSD and CSD (columns) of cell sums (b, G, L): per resample ``b``, per group and
    human score level, the count and the sums of ``e``, ``e^2``, ``e^4``; NaN where
    :func:`~assay.scoring.subgroup_ols.fairness_from_cells` reports the R^2 undefined.

    Example:
        >>> h = np.array([1., 2, 3, 1, 2, 3, 2, 3]); e = np.array([0, 0, 0, 1, 1, 1, .5, 0])
        >>> g = np.array([0, 0, 0, 1, 1, 1, 0, 1]); cell = g * 3 + (h - 1).astype(int)
        >>> sums = [np.bincount(cell, e**k, 6).reshape(1, 2, 3) for k in (0, 1, 2, 4)]
        >>> fairness_r2(*sums).round(4).tolist()  # as fairness_analyses(h, h + e, g)
        [[0.4664, 0.3636, 0.6479]]
    """
    nobs = n.sum((1, 2))
    ng = n.sum(-1)
    s1g, s2g, s4g = s1.sum(-1), s2.sum(-1), s4.sum(-1)
    out = np.column_stack(
        [
            _oneway(ng, s2g, s4g, nobs, s4g.sum(-1)),
            _oneway(ng, s1g, s2g, nobs, s2g.sum(-1)),
            _csd(n, s1, s2, nobs),
        ]
    )
    few = nobs - (ng > 0).sum(-1) <= 0  # as many groups as responses: nothing is defined
    return np.where(few[:, None], np.nan, out)


class Cells:
    """The distinct (human, system, group) rows' cell terms: a sparse (m, 4 G L) matrix."""

    def __init__(self, h: F64, e: F64, group: NDArray[np.intp], groups: int) -> None:
        from scipy import sparse

        levels, level = np.unique(h, return_inverse=True)
        self.shape = (groups, levels.size)
        size = groups * levels.size
        cell = group * levels.size + level.reshape(-1)
        rows = np.repeat(np.arange(h.size), 4)
        cols = (cell[:, None] + size * np.arange(4)[None, :]).reshape(-1)
        vals = np.column_stack([np.ones_like(e), e, e * e, e**4]).reshape(-1)
        self.terms = sparse.csr_matrix((vals, (rows, cols)), shape=(h.size, 4 * size))

    def statistic(self, w: F64) -> F64:
        """OSA, OSD, CSD of each row of weights ``w`` (b, m) over the distinct rows."""
        sums = np.asarray((self.terms.T @ np.asarray(w, dtype=np.float64).T).T)
        return self._r2(sums)

    def _r2(self, sums: F64) -> F64:
        parts = sums.reshape(sums.shape[0], 4, *self.shape)
        return fairness_r2(parts[:, 0], parts[:, 1], parts[:, 2], parts[:, 3])

    def jackknife(self, mult: ArrayLike) -> F64:
        """The statistic of the data less one draw of each distinct row (m, 3)."""
        return np.concatenate(list(self._leave_one_out(np.asarray(mult, dtype=np.float64))))

    def _leave_one_out(self, mult: F64) -> Iterator[F64]:
        total = np.asarray(self.terms.T @ mult).reshape(1, -1)
        rows = max(1, CHUNK_ELEMENTS // self.terms.shape[1])
        for i in range(0, self.terms.shape[0], rows):
            yield self._r2(total - self.terms[i : i + rows].toarray())
