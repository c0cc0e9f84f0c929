"""Grouped statistics built from (group, human score level) cells.

Human scores are almost always on a small scale (1-6, or half points). Then every per-group
sum the tables need follows from sums over cells (group, human level) of the difference
``d = y - x`` alone. With ``x = x_l`` constant in a cell of ``n`` responses:

    sum y = n x_l + sum d,   sum y^2 = n x_l^2 + 2 x_l sum d + sum d^2,   sum x y = x_l sum y,

so one ``np.bincount`` per power of ``d`` over a precomputed cell key serves the score pair,
the fairness cells (which also need ``sum d^4``) and, through the shared arrays, the rounded
system score. :func:`grouped_pair_stats` builds :class:`~assay.scoring.sufficient_stats.PairStats`
and :class:`CellStats` that way; the results equal ``PairStats.from_arrays`` and
``CellStats.from_arrays`` on the raw responses (tested).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from assay.scoring.histograms import MAX_JOINT_CATEGORIES, MAX_KAPPA_CATEGORIES, joint_histogram
from assay.scoring.sufficient_stats import PairStats, align_labels, grouped_extrema

__all__ = ["CellStats", "LevelCoded", "level_code", "grouped_pair_stats", "MAX_LEVELS"]

# Beyond this many distinct human scores the direct (per-response) path is used.
MAX_LEVELS = 4096
_MAX_JOINT = 1 << 23
_CELL_SUMS = ("n", "s1", "s2", "s4")


@dataclass
class CellStats:
    """Per (group label, human score) cell: N and sums of ``e``, ``e^2``, ``e^4`` (``e = M - H``).

    Example:
        >>> import numpy as np
        >>> h, m = np.array([1., 1., 2.]), np.array([1., 2., 2.])
        >>> s = CellStats.from_arrays(h, m, np.array([0, 0, 1]), ("a", "b"))
        >>> s.n.tolist(), s.levels
        ([[2.0, 0.0], [0.0, 1.0]], (1.0, 2.0))
    """

    labels: tuple
    levels: tuple
    n: np.ndarray  # (G, L)
    s1: np.ndarray
    s2: np.ndarray
    s4: np.ndarray = field(repr=False)

    @classmethod
    def from_arrays(
        cls, human: np.ndarray, system: np.ndarray, codes: np.ndarray, labels: tuple
    ) -> CellStats:
        """Cells of ``codes`` (indices into ``labels``) by the distinct values of ``human``."""
        levels, hcodes = np.unique(human, return_inverse=True)
        g, nl = len(labels), len(levels)
        key = codes * nl + hcodes.reshape(-1)
        e = system - human
        e2 = e * e
        size = g * nl

        def bc(w: np.ndarray | None = None) -> np.ndarray:
            return np.bincount(key, w, size).astype(np.float64).reshape(g, nl)

        return cls(
            labels=tuple(labels),
            levels=tuple(float(v) for v in levels),
            n=bc(),
            s1=bc(e),
            s2=bc(e2),
            s4=bc(e2 * e2),
        )

    def merge(self, other: CellStats) -> CellStats:
        """Statistics of both batches together (cells matched by label and human score)."""
        labels, ga, gb = align_labels(self.labels, other.labels)
        levels, la, lb = align_labels(self.levels, other.levels)
        order = np.argsort(np.array(levels, dtype=np.float64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        la, lb = rank[la], rank[lb]
        levels = tuple(levels[i] for i in order)
        out = {}
        for name in _CELL_SUMS:
            v = np.zeros((len(labels), len(levels)))
            v[np.ix_(ga, la)] += getattr(self, name)
            v[np.ix_(gb, lb)] += getattr(other, name)
            out[name] = v
        return CellStats(labels=labels, levels=levels, **out)

    def to_state(self, prefix: str) -> dict[str, np.ndarray]:
        """The cells as plain numpy arrays under ``<prefix>.<name>`` keys."""
        out = {f"{prefix}.{name}": np.asarray(getattr(self, name)) for name in _CELL_SUMS}
        out[f"{prefix}.labels"] = np.array([str(v) for v in self.labels], dtype=str)
        out[f"{prefix}.levels"] = np.array(self.levels, dtype=np.float64)
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], prefix: str) -> CellStats:
        """Inverse of :meth:`to_state`."""
        arrays = {
            name: np.asarray(state[f"{prefix}.{name}"], dtype=np.float64) for name in _CELL_SUMS
        }
        return cls(
            labels=tuple(str(v) for v in state[f"{prefix}.labels"]),
            levels=tuple(float(v) for v in state[f"{prefix}.levels"]),
            **arrays,
        )


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
    return LevelCoded(codes.astype(np.intp).reshape(-1), levels)


@dataclass
class _Rounded:
    """Kappa histograms and rounded agreement per group (shared by a score and its rounding)."""

    lo: int
    hist_x: np.ndarray | None
    hist_y: np.ndarray | None
    rexact: np.ndarray
    hist_xy: np.ndarray | None = None


def _group_codes(codes: np.ndarray | None, g: int, size: int) -> np.ndarray:
    return np.zeros(size, dtype=np.intp) if codes is None or g == 1 else codes


def _rounded(
    xl: LevelCoded, y: np.ndarray, key: np.ndarray, n_c: np.ndarray, codes: np.ndarray | None
) -> _Rounded:
    g, nl = n_c.shape
    ncell = g * nl
    yr = np.rint(y)
    xr_l = np.rint(xl.levels)
    if not yr.size:
        z = np.zeros((g, 1), dtype=np.int64)
        return _Rounded(0, z, z.copy(), np.zeros(g))
    lo = int(min(xr_l.min(), yr.min()))
    k = int(max(xr_l.max(), yr.max())) - lo + 1
    gc = _group_codes(codes, g, yr.size)
    if k > MAX_KAPPA_CATEGORIES:  # too many categories: rint agreement still counts
        same = yr == xr_l[xl.codes]
        return _Rounded(0, None, None, np.bincount(gc[same], minlength=g).astype(np.float64))
    yi = (yr - lo).astype(np.intp)
    xi_l = (xr_l - lo).astype(np.intp)
    hist_x = np.zeros((g, k), dtype=np.int64)
    for j in range(nl):
        hist_x[:, xi_l[j]] += n_c[:, j].astype(np.int64)
    if ncell * k <= _MAX_JOINT:
        joint = np.bincount(key * k + yi, minlength=ncell * k).reshape(g, nl, k)
        rexact = joint[:, np.arange(nl), xi_l].sum(axis=1).astype(np.float64)
        hist_xy = None
        if k <= MAX_JOINT_CATEGORIES:  # human levels rounding alike share a row
            hist_xy = np.zeros((g, k, k), dtype=np.int64)
            for j in range(nl):
                hist_xy[:, xi_l[j], :] += joint[:, j, :]
        return _Rounded(lo, hist_x, joint.sum(axis=1), rexact, hist_xy)
    hist_y = np.bincount(gc * k + yi, minlength=g * k).reshape(g, k)
    same = yi == xi_l[xl.codes]
    rexact = np.bincount(gc[same], minlength=g).astype(np.float64)
    hist_xy = joint_histogram(xi_l[xl.codes], yi, gc, g, k)
    return _Rounded(lo, hist_x, hist_y, rexact, hist_xy)


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
    """PairStats of ``(x, y)`` for each ``y`` in ``ys`` (e.g. ``[m, rint(m)]``).

    ``rint(y)`` must be the same for every ``y`` in ``ys`` (true for a score and its
    rounding), since the kappa histograms are computed once. With ``with_cells`` the fairness
    :class:`CellStats` of ``(x, ys[0])`` are returned too. ``x`` (the human scores, if at hand)
    saves a gather; ``second_is_rounded`` says ``ys[1] == rint(ys[0])`` (extrema by rounding).
    """
    g = len(labels)
    nl = xl.levels.size
    ncell = g * nl
    key = xl.codes if (codes is None or g == 1) else codes * nl + xl.codes
    xs_l = xl.levels - shift
    n_c = np.bincount(key, minlength=ncell).astype(np.float64).reshape(g, nl)
    present = n_c > 0
    rounded = _rounded(xl, ys[0], key, n_c, codes)
    base = dict(
        labels=tuple(labels),
        shift=float(shift),
        n=n_c.sum(axis=1),
        sx=n_c @ xs_l,
        sxx=n_c @ (xs_l * xs_l),
        xmin=np.where(present, xl.levels[None, :], np.inf).min(axis=1, initial=np.inf),
        xmax=np.where(present, xl.levels[None, :], -np.inf).max(axis=1, initial=-np.inf),
    )
    if x is None:
        x = xl.levels[xl.codes]
    out: list[PairStats] = []
    cells = None
    for idx, y in enumerate(ys):
        d = y - x
        d2 = d * d
        s1 = np.bincount(key, d, ncell).reshape(g, nl)
        s2 = np.bincount(key, d2, ncell).reshape(g, nl)
        if with_cells and idx == 0:
            s4 = np.bincount(key, d2 * d2, ncell).reshape(g, nl)
            levels = tuple(float(v) for v in xl.levels)
            cells = CellStats(tuple(labels), levels, n_c.copy(), s1, s2, s4)
        if idx == 1 and second_is_rounded:
            ymin, ymax = np.rint(out[0].ymin), np.rint(out[0].ymax)
        else:
            ymin, ymax = grouped_extrema(y, codes, g)
        out.append(_pair_from_cells(base, key, d, s1, s2, xs_l, (g, nl), ymin, ymax, rounded))
    return out, cells


def _pair_from_cells(
    base: dict,
    key: np.ndarray,
    d: np.ndarray,
    s1: np.ndarray,
    s2: np.ndarray,
    xs_l: np.ndarray,
    shape: tuple[int, int],
    ymin: np.ndarray,
    ymax: np.ndarray,
    rounded: _Rounded,
) -> PairStats:
    g, nl = shape
    ad = np.abs(d)
    exact = np.bincount(key[ad <= 0.0], minlength=g * nl).reshape(g, nl).sum(axis=1)
    adj = np.bincount(key[ad <= 1.0], minlength=g * nl).reshape(g, nl).sum(axis=1)
    sx, sxx = base["sx"], base["sxx"]
    return PairStats(
        **base,
        sy=sx + s1.sum(axis=1),
        syy=sxx + 2 * (s1 @ xs_l) + s2.sum(axis=1),
        sxy=sxx + s1 @ xs_l,
        sdd=s2.sum(axis=1),
        exact=exact.astype(np.float64),
        adj=adj.astype(np.float64),
        rexact=rounded.rexact.copy(),
        ymin=ymin,
        ymax=ymax,
        hist_lo=rounded.lo,
        hist_x=None if rounded.hist_x is None else rounded.hist_x.copy(),
        hist_y=None if rounded.hist_y is None else rounded.hist_y.copy(),
        hist_xy=None if rounded.hist_xy is None else rounded.hist_xy.copy(),
    )
