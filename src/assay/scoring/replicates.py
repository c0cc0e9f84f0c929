"""The scoring metrics of many resamples at once, from the distinct (human, system) pairs.

A bootstrap resample is a vector of counts ``w`` over the distinct pairs; its
:class:`~assay.scoring.sufficient_stats.PairStats` sums are ``w @ terms`` (one row of per-pair
terms per distinct pair), its extrema those of the pairs drawn and its rounded-score
histograms ``w @ onehot``. The jackknife of the BCa interval leaves one response out: its
sums are the total minus that pair's terms (:func:`loo_pairs`), so every leave-one-out
statistic comes from one subtraction, with no loop over responses. One ``PairStats`` holds
all the resamples (or all the leave-one-out sets) as its groups, and :func:`columns` gives
the interval columns of every group at once, vectorised, with the formulas of
:func:`~assay.scoring.metric_values.pair_values` (NaN where those give ``None``).

Example:
    >>> x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 3.0])
    >>> s = resampled_pairs(x, y, np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]), 2.0)
    >>> columns(s)["exact_agr"].round(4).tolist()
    [66.6667, 33.3333]
    >>> columns(loo_pairs(x, y, np.array([1, 1, 1]), 2.0))["RMSE"].round(4).tolist()
    [0.7071, 0.0, 0.7071]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.scoring.compute import DSM_SD_ATOL
from assay.scoring.sufficient_stats import MAX_KAPPA_CATEGORIES, PairStats
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import CIOptions, tally_bounds
from assay.uncertainty.tally import Tally

__all__ = ["Collapsed", "Pairs", "collapsed", "columns", "loo_pairs", "resampled_pairs"]

F64 = NDArray[np.float64]
_SUMS = ("n", "sx", "sy", "sxx", "syy", "sxy", "sdd", "exact", "adj", "rexact")


def _terms(x: F64, y: F64, shift: float) -> F64:
    xs, ys, d = x - shift, y - shift, y - x
    return np.column_stack(
        [np.ones_like(x), xs, ys, xs * xs, ys * ys, xs * ys, d * d]
        + [np.abs(d) <= 0.0, np.abs(d) <= 1.0, np.rint(x) == np.rint(y)]
    )


def _onehots(x: F64, y: F64) -> tuple[int, F64 | None, F64 | None]:
    """The rounded scores' one-hot rows (None beyond the kappa categories)."""
    xr, yr = np.rint(x), np.rint(y)
    lo = int(min(xr.min(), yr.min()))
    k = int(max(xr.max(), yr.max())) - lo + 1
    if k > MAX_KAPPA_CATEGORIES or k * x.size > 1 << 24:
        return lo, None, None
    ox, oy = np.zeros((x.size, k)), np.zeros((x.size, k))
    ox[np.arange(x.size), (xr - lo).astype(np.int64)] = 1.0
    oy[np.arange(y.size), (yr - lo).astype(np.int64)] = 1.0
    return lo, ox, oy


def _stats(
    sums: F64, extrema: list[F64], lo: int, hx: F64 | None, hy: F64 | None, shift: float
) -> PairStats:
    xmin, xmax, ymin, ymax = extrema
    return PairStats(
        labels=tuple(range(sums.shape[0])),
        shift=shift,
        **{name: sums[:, i] for i, name in enumerate(_SUMS)},
        xmin=xmin,
        xmax=xmax,
        ymin=ymin,
        ymax=ymax,
        hist_lo=lo,
        hist_x=hx,
        hist_y=hy,
    )


#: How many of the smallest (largest) values are looked at for a resample's extremes
#: before all of them: a resample misses all of them with probability about e^-CANDIDATES.
CANDIDATES = 32


def _drawn_min(v: F64, order: NDArray[np.intp], w: F64) -> F64:
    """Per row of ``w``: the smallest ``v`` among the units drawn (``w > 0``; inf when none),
    from the first units of ``order`` (``v`` ascending), every unit only for the rare row
    that drew none of those."""
    if v.size == 0:
        return np.full(w.shape[0], np.inf)
    cand = order[:CANDIDATES]
    hit = w[:, cand] > 0
    found = hit.any(axis=1)
    out = v[cand[hit.argmax(axis=1)]]
    if not found.all():
        rest = ~found
        out[rest] = np.where(w[rest] > 0, v, np.inf).min(axis=1, initial=np.inf)
    return out


class Pairs:
    """The distinct (human, system) pairs of a bootstrap, prepared once for every chunk of
    resamples: the per-pair terms and one-hot rows as one matrix (a resample's sums are one
    product), and the orders that find a resample's extremes. ``keep`` restricts the pairs
    to a subgroup (a resample's counts outside it are ignored); the one-hot categories are
    the whole set's either way."""

    def __init__(self, x: F64, y: F64, shift: float, keep: NDArray[np.bool_] | None = None):
        lo, ox, oy = _onehots(x, y)
        parts = [_terms(x, y, shift)] + ([] if ox is None or oy is None else [ox, oy])
        self.idx = None if keep is None else np.flatnonzero(keep)
        sub = slice(None) if self.idx is None else self.idx
        self.x, self.y, self.shift, self.lo = x[sub], y[sub], shift, lo
        self.k = 0 if ox is None else ox.shape[1]
        self.matrix = np.hstack(parts)[sub]
        self.orders = [np.argsort(v, kind="stable") for v in (self.x, -self.x, self.y, -self.y)]

    def resampled(self, w: F64) -> PairStats:
        """:class:`PairStats` whose group ``i`` is the resample with counts ``w[i]`` over
        the distinct pairs (over every pair, not only the kept ones)."""
        if self.idx is not None:
            w = w[:, self.idx]
        both = w @ self.matrix
        sums, k = both[:, : len(_SUMS)], self.k
        hx = None if k == 0 else both[:, len(_SUMS) : len(_SUMS) + k]
        hy = None if k == 0 else both[:, len(_SUMS) + k :]
        ox, oy = self.orders[0:2], self.orders[2:4]
        extrema = [
            _drawn_min(self.x, ox[0], w),
            -_drawn_min(-self.x, ox[1], w),
            _drawn_min(self.y, oy[0], w),
            -_drawn_min(-self.y, oy[1], w),
        ]
        return _stats(sums, extrema, self.lo, hx, hy, self.shift)


def resampled_pairs(x: F64, y: F64, w: F64, shift: float) -> PairStats:
    """:class:`PairStats` whose group ``i`` is the resample with counts ``w[i]`` over the
    distinct pairs ``(x, y)`` (:class:`Pairs` prepares the pairs once for many calls)."""
    return Pairs(x, y, shift).resampled(w)


def _loo_min(v: F64, mult: F64, keep: NDArray[np.bool_]) -> F64:
    """Per unit ``j``: the smallest ``v`` left when one draw of ``j`` is removed (when
    ``keep[j]``; else the smallest of all), over the units with ``mult > 0``."""
    present = mult > 0
    vmin = float(np.min(v, where=present, initial=np.inf))
    at_min = float(mult[present & (v == vmin)].sum())
    second = float(np.min(v, where=present & (v > vmin), initial=np.inf))
    return np.where(keep & (v == vmin) & (at_min == 1.0), second, vmin)


def loo_pairs(
    x: F64, y: F64, mult: ArrayLike, shift: float, keep: NDArray[np.bool_] | None = None
) -> PairStats:
    """:class:`PairStats` whose group ``j`` is the data (``mult`` draws of each distinct
    pair) less one draw of pair ``j``: the sums are the total minus pair ``j``'s terms.
    With ``keep`` (a mask of the pairs in a subgroup) the statistics are the subgroup's,
    and a pair outside it leaves the subgroup whole."""
    m = np.asarray(mult, dtype=np.float64)
    k = np.ones(x.size, dtype=bool) if keep is None else keep
    mk = m * k
    kf = k.astype(np.float64)[:, None]
    terms = _terms(x, y, shift)
    lo, ox, oy = _onehots(x, y)
    hx = None if ox is None else (mk @ ox)[None, :] - ox * kf
    hy = None if oy is None else (mk @ oy)[None, :] - oy * kf
    extrema = [_loo_min(x, mk, k), -_loo_min(-x, mk, k), _loo_min(y, mk, k), -_loo_min(-y, mk, k)]
    return _stats((mk @ terms)[None, :] - terms * kf, extrema, lo, hx, hy, shift)


def columns(s: PairStats, pop: tuple[F64, F64, F64, F64] | None = None) -> dict[str, F64]:
    """Per group of ``s``: ``corr``, ``wtkappa``, ``R2``, ``kappa``, ``exact_agr``,
    ``adj_agr``, ``SMD`` (unpooled), ``SMD_pooled``, ``RMSE``, the means and sds
    (``h_mean``, ``sys_mean``, ``h_sd``, ``sys_sd``) and, given ``pop`` (per group: the
    whole-set mean and sd of each score), ``DSM``; NaN where
    :func:`~assay.scoring.metric_values.pair_values` says None."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n = s.n
        mx, my = s.shift + s.sx / n, s.shift + s.sy / n
        cx, cy = s.xmin == s.xmax, s.ymin == s.ymax
        ssx = np.where(cx, 0.0, np.maximum(s.sxx - s.sx**2 / n, 0.0))
        ssy = np.where(cy, 0.0, np.maximum(s.syy - s.sy**2 / n, 0.0))
        sxy = np.where(cx | cy, 0.0, s.sxy - s.sx * s.sy / n)
        two = n >= 2
        vx, vy = np.where(two, ssx / (n - 1), np.nan), np.where(two, ssy / (n - 1), np.nan)
        out = {"h_mean": mx, "sys_mean": my, "h_sd": np.sqrt(vx), "sys_sd": np.sqrt(vy)}
        out["corr"] = np.where(cx | cy, np.nan, np.clip(sxy / np.sqrt(ssx * ssy), -1.0, 1.0))
        out["R2"] = np.where(cx, np.nan, 1.0 - s.sdd / ssx)
        den = ssx / n + ssy / n + (my - mx) ** 2
        out["wtkappa"] = np.where(den == 0, np.nan, 2.0 * sxy / n / den)
        out["kappa"] = _kappa(s, n)
        out["exact_agr"], out["adj_agr"] = s.exact * 100.0 / n, s.adj * 100.0 / n
        out["RMSE"] = np.sqrt(s.sdd / n)
        sd_x, sd_p = np.sqrt(vx), np.sqrt((vx + vy) / 2.0)
        out["SMD"] = np.where(sd_x == 0, np.nan, (my - mx) / sd_x)
        out["SMD_pooled"] = np.where(sd_p == 0, np.nan, (my - mx) / sd_p)
        if pop is not None:
            pmx, psx, pmy, psy = pop
            bad = ~(np.abs(psx) > DSM_SD_ATOL) | ~(np.abs(psy) > DSM_SD_ATOL)
            out["DSM"] = np.where(bad, np.nan, (my - pmy) / psy - (mx - pmx) / psx)
    for c in ("corr", "R2", "SMD", "SMD_pooled", "h_sd", "sys_sd"):
        out[c] = np.where(two, out[c], np.nan)
    empty = n == 0
    return {c: np.where(empty, np.nan, v) for c, v in out.items()}


def _kappa(s: PairStats, n: F64) -> F64:
    if s.hist_x is None or s.hist_y is None:
        return np.full(n.shape, np.nan)
    pe_num = np.einsum("ik,ik->i", s.hist_x, s.hist_y)
    one = pe_num == np.rint(n) ** 2  # one category only: SKLL returns 1
    k = 1.0 - (1.0 - s.rexact / n) / (1.0 - pe_num / (n * n))
    return np.where(one, 1.0, k)


#: Counts per chunk of resamples (16 MB): each chunk reads every unit's terms once, so with
#: many distinct responses (continuous system scores) larger chunks than the default read
#: them fewer times (10^5 responses, every table: 4.4 -> 3.5 s CPU); the counts do not
#: depend on the chunk size.
SCORING_CHUNK = 1 << 21


@dataclass(frozen=True)
class Collapsed:
    """Responses collapsed for a bootstrap: the distinct rows of their per-response
    statistics (``units``), how many responses each stands for (``mult``) and, with a
    ``cluster``, each row's cluster (``clusters``: the cluster is part of the row, so a row
    shared by two clusters appears once per cluster)."""

    units: np.ndarray
    mult: NDArray[np.int64]
    clusters: NDArray[np.intp] | None = None

    def bounds(
        self, opts: CIOptions, values: Callable[[F64], F64], jackknife: Callable[[], F64]
    ) -> tuple[F64, str]:
        """The interval (2, k) of ``values`` (row weights (b, rows) -> (b, k)) and its method,
        from the one engine (:func:`~assay.uncertainty.intervals.tally_bounds`): BCa with
        ``jackknife()`` (the values leaving one response out) when asked; with a cluster,
        whole clusters drawn and BCa's jackknife leaving one cluster out."""
        found = self.clusters
        tally = Tally(
            (),  # the caller reads the columns by position
            values,
            self.mult,
            unit_weight=None if found is None else self.mult,
            codes=None if found is None else (lambda column: found),
            jackknife=jackknife,
            chunk=SCORING_CHUNK,
        )
        return tally_bounds(tally, opts)


def collapsed(rows: ArrayLike, codes: ArrayLike | None = None) -> Collapsed:
    """:class:`Collapsed` responses of per-response ``rows`` (``codes``: each response's
    cluster, ``0 .. G-1``, with a ``cluster``).

    Example:
        >>> c = collapsed(np.array([[1.0], [1.0], [2.0]]), np.array([0, 1, 1]))
        >>> c.units.ravel().tolist(), c.mult.tolist(), c.clusters.tolist()
        ([1.0, 1.0, 2.0], [1, 1, 1], [0, 1, 1])
    """
    if codes is None:
        units, mult, _ = collapse(rows)
        return Collapsed(units, mult)
    a = np.asarray(rows)
    a = a[:, None] if a.ndim == 1 else a
    g = np.asarray(codes, dtype=np.float64).reshape(-1, 1)
    uniq, mult, _ = collapse(np.column_stack([a, g]))
    return Collapsed(uniq[:, :-1], mult, uniq[:, -1].astype(np.intp))
