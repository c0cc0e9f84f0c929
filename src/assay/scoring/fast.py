"""Fast construction of the grouped statistics when human scores take few distinct values.

Human scores are almost always on a small scale (1-6, or half points). Then every per-group sum
the tables need follows from sums over cells (group, human level) of the difference
``d = y - x`` alone: with ``x = x_l`` constant in a cell,

    sum y = n x_l + sum d,   sum y^2 = n x_l^2 + 2 x_l sum d + sum d^2,   sum x y = x_l sum y,

so one ``np.bincount`` per power of ``d`` over a precomputed cell key serves the score pair, the
fairness cells (``sum d^4`` too) and, through the shared arrays, the rounded system score. This
module builds :class:`~assay.scoring.stats.PairStats` and :class:`~assay.scoring.stats.CellStats`
that way; the results equal ``PairStats.from_arrays`` / ``CellStats.from_arrays`` (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.scoring.stats import MAX_KAPPA_CATEGORIES, CellStats, PairStats

__all__ = ["LevelCoded", "level_code", "grouped_pair_stats", "MAX_LEVELS"]

# Beyond this many distinct human scores the direct (per-response) path is used.
MAX_LEVELS = 4096
_MAX_JOINT = 1 << 23


@dataclass
class LevelCoded:
    """Human scores as codes into sorted distinct ``levels``."""

    codes: np.ndarray
    levels: np.ndarray


def level_code(x: np.ndarray) -> LevelCoded | None:
    """Code ``x`` by its distinct values, or None if it has more than :data:`MAX_LEVELS`."""
    if x.size == 0:
        return LevelCoded(np.zeros(0, dtype=np.intp), np.zeros(0))
    xr = np.rint(x)
    if np.array_equal(xr, x):  # integer scores: offset coding, no hashing
        lo, hi = x.min(), x.max()
        if hi - lo + 1 <= MAX_LEVELS:
            codes = (x - lo).astype(np.intp)
            present = np.flatnonzero(np.bincount(codes, minlength=int(hi - lo) + 1))
            remap = np.full(int(hi - lo) + 1, -1, dtype=np.intp)
            remap[present] = np.arange(present.size)
            return LevelCoded(remap[codes], lo + present.astype(np.float64))
    levels, codes = np.unique(x, return_inverse=True)
    if levels.size > MAX_LEVELS:
        return None
    return LevelCoded(codes.astype(np.intp), levels)


def _grouped_min_max(
    y: np.ndarray, codes: np.ndarray | None, g: int
) -> tuple[np.ndarray, np.ndarray]:
    if g == 1 or codes is None:
        if y.size == 0:
            return np.full(1, np.inf), np.full(1, -np.inf)
        return np.array([y.min()]), np.array([y.max()])
    lo = np.full(g, np.inf)
    hi = np.full(g, -np.inf)
    np.minimum.at(lo, codes, y)
    np.maximum.at(hi, codes, y)
    return lo, hi


def grouped_pair_stats(
    xl: LevelCoded,
    ys: list[np.ndarray],
    codes: np.ndarray | None,
    labels: tuple,
    shift: float,
    with_cells: bool = False,
    x: np.ndarray | None = None,
    second_is_rounded: bool = False,
) -> tuple[list[PairStats], CellStats | None]:
    """PairStats of ``(x, y)`` for each ``y`` in ``ys`` (all rounded the same, e.g. ``[m, rint(m)]``).

    ``rint(y)`` must be the same for every ``y`` in ``ys`` (true for a score and its rounding),
    since the kappa histograms are computed once. With ``with_cells`` the fairness
    :class:`CellStats` of ``(x, ys[0])`` are returned too. ``x`` (the human scores, if at hand)
    saves a gather; ``second_is_rounded`` says ``ys[1] == rint(ys[0])`` (extrema by rounding).
    """
    g = len(labels)
    nl = xl.levels.size
    ncell = g * nl
    key = xl.codes if (codes is None or g == 1) else codes * nl + xl.codes
    x_l = xl.levels
    xs_l = x_l - shift
    n_c = np.bincount(key, minlength=ncell).astype(np.float64).reshape(g, nl)
    present = n_c > 0
    bc = np.bincount

    # rounded-score histograms and rint agreement (shared by every y in ys)
    yr = np.rint(ys[0])
    xr_l = np.rint(x_l)
    hist_x = hist_y = None
    rexact = np.zeros(g)
    lo = 0
    if yr.size:
        lo = int(min(xr_l.min(), yr.min()))
        k = int(max(xr_l.max(), yr.max())) - lo + 1
        if k <= MAX_KAPPA_CATEGORIES:
            yi = (yr - lo).astype(np.intp)
            xi_l = (xr_l - lo).astype(np.intp)
            hist_x = np.zeros((g, k), dtype=np.int64)
            for j in range(nl):
                hist_x[:, xi_l[j]] += n_c[:, j].astype(np.int64)
            if ncell * k <= _MAX_JOINT:
                joint = bc(key * k + yi, minlength=ncell * k).reshape(g, nl, k)
                hist_y = joint.sum(axis=1)
                rexact = joint[:, np.arange(nl), xi_l].sum(axis=1).astype(np.float64)
            else:
                gc = np.zeros(yr.size, dtype=np.intp) if codes is None or g == 1 else codes
                hist_y = bc(gc * k + yi, minlength=g * k).reshape(g, k)
                same = yi == xi_l[xl.codes]
                rexact = bc(gc[same], minlength=g).astype(np.float64)
    else:
        hist_x = np.zeros((g, 1), dtype=np.int64)
        hist_y = np.zeros((g, 1), dtype=np.int64)
    if hist_x is None:  # too many categories: rint agreement still counts
        gc = np.zeros(yr.size, dtype=np.intp) if codes is None or g == 1 else codes
        rexact = bc(gc[yr == xr_l[xl.codes]], minlength=g).astype(np.float64)

    xmin = np.where(present, x_l[None, :], np.inf).min(axis=1, initial=np.inf)
    xmax = np.where(present, x_l[None, :], -np.inf).max(axis=1, initial=-np.inf)
    n = n_c.sum(axis=1)
    sx = n_c @ xs_l
    sxx = n_c @ (xs_l * xs_l)

    out = []
    cells = None
    first_extrema = None
    for idx, y in enumerate(ys):
        if x is None:
            x = x_l[xl.codes]
        d = y - x
        d2 = d * d
        s1 = bc(key, d, ncell).reshape(g, nl)
        s2 = bc(key, d2, ncell).reshape(g, nl)
        ad = np.abs(d)
        exact = bc(key[ad <= 0.0], minlength=ncell).reshape(g, nl).sum(axis=1).astype(np.float64)
        adj = bc(key[ad <= 1.0], minlength=ncell).reshape(g, nl).sum(axis=1).astype(np.float64)
        if with_cells and idx == 0:
            s4 = bc(key, d2 * d2, ncell).reshape(g, nl)
            cells = CellStats(
                labels=tuple(labels),
                levels=tuple(float(v) for v in x_l),
                n=n_c.copy(),
                s1=s1,
                s2=s2,
                s4=s4,
            )
        sy = sx + s1.sum(axis=1)
        syy = sxx + 2 * (s1 @ xs_l) + s2.sum(axis=1)
        sxy = sxx + s1 @ xs_l
        if idx == 1 and second_is_rounded and first_extrema is not None:
            ymin, ymax = np.rint(first_extrema[0]), np.rint(first_extrema[1])
        else:
            ymin, ymax = _grouped_min_max(y, codes, g)
            first_extrema = first_extrema or (ymin, ymax)
        out.append(
            PairStats(
                labels=tuple(labels),
                shift=float(shift),
                n=n,
                sx=sx,
                sy=sy,
                sxx=sxx,
                syy=syy,
                sxy=sxy,
                sdd=s2.sum(axis=1),
                exact=exact,
                adj=adj,
                rexact=rexact.copy(),
                xmin=xmin.astype(np.float64),
                xmax=xmax.astype(np.float64),
                ymin=ymin,
                ymax=ymax,
                hist_lo=lo,
                hist_x=None if hist_x is None else hist_x.copy(),
                hist_y=None if hist_y is None else hist_y.copy(),
            )
        )
    return out, cells
