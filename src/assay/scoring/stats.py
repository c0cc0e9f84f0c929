"""Mergeable sufficient statistics for the scoring evaluation.

Every table of the evaluation is a function of a few sums per group, so batches can be
accumulated and merged (``a.merge(b)`` equals the statistics of the concatenated data) and one
vectorised pass (``np.bincount`` over group codes) serves all groups at once:

* :class:`PairStats` - per group, for a reference score ``x`` (human) and another score ``y``
  (system or second human): N, shifted sums, sums of squares and cross products, squared
  differences, exact/adjacent agreement counts, extrema, and histograms of the rounded scores
  (for SKLL kappa).
* :class:`TrueScoreStats` - the sums the general multi-rater PRMSE formula needs.
* :class:`CellStats` - per (subgroup, human score) cell: N and the sums of the error
  ``e = M - H`` to powers 1, 2 and 4, enough for the fairness OLS fits (see ``fairness.py``).

Sums are taken on values minus a fixed ``shift`` (a typical score), which keeps the one-pass
variance formulas accurate.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["PairStats", "TrueScoreStats", "CellStats", "MAX_KAPPA_CATEGORIES"]

# Beyond this many rounded categories the kappa histograms are not kept (kappa is then undefined).
MAX_KAPPA_CATEGORIES = 100_000

_SUMS = ("n", "sx", "sy", "sxx", "syy", "sxy", "sdd", "exact", "adj", "rexact")


def _align(labels_a: tuple, labels_b: tuple) -> tuple[tuple, np.ndarray, np.ndarray]:
    union = tuple(dict.fromkeys(labels_a + labels_b))
    pos = {k: i for i, k in enumerate(union)}
    return (
        union,
        np.array([pos[k] for k in labels_a], dtype=np.intp),
        np.array([pos[k] for k in labels_b], dtype=np.intp),
    )


def _scatter(values: np.ndarray, idx: np.ndarray, size: int, fill: float = 0.0) -> np.ndarray:
    out = np.full((size,) + values.shape[1:], fill, dtype=values.dtype)
    out[idx] = values
    return out


@dataclass
class PairStats:
    """Sufficient statistics of a score pair ``(x, y)`` for each of ``len(labels)`` groups.

    Example:
        >>> import numpy as np
        >>> s = PairStats.from_arrays(np.array([1., 2., 3.]), np.array([1., 2., 4.]))
        >>> int(s.n[0]), float(s.exact[0])
        (3, 2.0)
    """

    labels: tuple
    shift: float
    n: np.ndarray
    sx: np.ndarray
    sy: np.ndarray
    sxx: np.ndarray
    syy: np.ndarray
    sxy: np.ndarray
    sdd: np.ndarray
    exact: np.ndarray
    adj: np.ndarray
    rexact: np.ndarray
    xmin: np.ndarray
    xmax: np.ndarray
    ymin: np.ndarray
    ymax: np.ndarray
    hist_lo: int = 0
    hist_x: np.ndarray | None = (
        None  # (G, K) counts of rint(x) - hist_lo; None if too many categories
    )
    hist_y: np.ndarray | None = None

    @classmethod
    def from_arrays(
        cls,
        x: np.ndarray,
        y: np.ndarray,
        codes: np.ndarray | None = None,
        labels: tuple = ("All data",),
        shift: float | None = None,
    ) -> PairStats:
        """Statistics of ``x`` and ``y`` (equal-length float arrays), grouped by ``codes``."""
        g = len(labels)
        if codes is None:
            codes = np.zeros(x.size, dtype=np.intp)
        if shift is None:
            shift = float(np.rint(np.median(x[:1000]))) if x.size else 0.0
        xs = x - shift
        ys = y - shift
        d = y - x

        def bc(c, w=None, minlength=g):
            return (
                np.bincount(c, w, minlength).astype(np.float64)
                if w is not None
                else np.bincount(c, minlength=minlength)
            )

        n = bc(codes, minlength=g).astype(np.float64)
        ad = np.abs(d)
        xr = np.rint(x)
        yr = np.rint(y)
        out = cls(
            labels=tuple(labels),
            shift=float(shift),
            n=n,
            sx=bc(codes, xs, g),
            sy=bc(codes, ys, g),
            sxx=bc(codes, xs * xs, g),
            syy=bc(codes, ys * ys, g),
            sxy=bc(codes, xs * ys, g),
            sdd=bc(codes, d * d, g),
            exact=bc(codes, ad <= 0.0, g),
            adj=bc(codes, ad <= 1.0, g),
            rexact=bc(codes, xr == yr, g),
            xmin=np.full(g, np.inf),
            xmax=np.full(g, -np.inf),
            ymin=np.full(g, np.inf),
            ymax=np.full(g, -np.inf),
        )
        if g == 1:
            if x.size:
                out.xmin[0], out.xmax[0], out.ymin[0], out.ymax[0] = (
                    x.min(),
                    x.max(),
                    y.min(),
                    y.max(),
                )
        else:
            np.minimum.at(out.xmin, codes, x)
            np.maximum.at(out.xmax, codes, x)
            np.minimum.at(out.ymin, codes, y)
            np.maximum.at(out.ymax, codes, y)
        if x.size:
            lo = int(min(xr.min(), yr.min()))
            k = int(max(xr.max(), yr.max())) - lo + 1
            if k <= MAX_KAPPA_CATEGORIES:
                xi = (xr - lo).astype(np.intp)
                yi = (yr - lo).astype(np.intp)
                if g == 1:
                    out.hist_x = bc(xi, minlength=k)[None, :]
                    out.hist_y = bc(yi, minlength=k)[None, :]
                else:
                    out.hist_x = bc(codes * k + xi, minlength=g * k).reshape(g, k)
                    out.hist_y = bc(codes * k + yi, minlength=g * k).reshape(g, k)
                out.hist_lo = lo
        else:
            out.hist_x = np.zeros((g, 1), dtype=np.int64)
            out.hist_y = np.zeros((g, 1), dtype=np.int64)
        return out

    def reshift(self, shift: float) -> PairStats:
        """The same statistics with sums taken around another ``shift``."""
        a = shift - self.shift  # x - shift = (x - old) - a
        if a == 0:
            return self
        sx = self.sx - a * self.n
        sy = self.sy - a * self.n
        return replace(
            self,
            shift=float(shift),
            sx=sx,
            sy=sy,
            sxx=self.sxx - 2 * a * self.sx + a * a * self.n,
            syy=self.syy - 2 * a * self.sy + a * a * self.n,
            sxy=self.sxy - a * (self.sx + self.sy) + a * a * self.n,
        )

    def merge(self, other: PairStats) -> PairStats:
        """Statistics of both batches together (groups matched by label)."""
        other = other.reshift(self.shift)
        labels, ia, ib = _align(self.labels, other.labels)
        g = len(labels)
        kw = {}
        for name in _SUMS:
            v = _scatter(np.asarray(getattr(self, name), dtype=np.float64), ia, g)
            v[ib] += getattr(other, name)
            kw[name] = v
        kw["xmin"] = np.minimum(
            _scatter(self.xmin, ia, g, np.inf), _scatter(other.xmin, ib, g, np.inf)
        )
        kw["ymin"] = np.minimum(
            _scatter(self.ymin, ia, g, np.inf), _scatter(other.ymin, ib, g, np.inf)
        )
        kw["xmax"] = np.maximum(
            _scatter(self.xmax, ia, g, -np.inf), _scatter(other.xmax, ib, g, -np.inf)
        )
        kw["ymax"] = np.maximum(
            _scatter(self.ymax, ia, g, -np.inf), _scatter(other.ymax, ib, g, -np.inf)
        )
        hx = hy = None
        lo = 0
        if self.hist_x is not None and other.hist_x is not None:
            lo = min(self.hist_lo, other.hist_lo)
            hi = max(self.hist_lo + self.hist_x.shape[1], other.hist_lo + other.hist_x.shape[1])
            if hi - lo <= MAX_KAPPA_CATEGORIES:
                hx = np.zeros((g, hi - lo), dtype=np.int64)
                hy = np.zeros((g, hi - lo), dtype=np.int64)
                for s, idx in ((self, ia), (other, ib)):
                    o = s.hist_lo - lo
                    k = s.hist_x.shape[1]
                    hx[idx, o : o + k] += s.hist_x
                    hy[idx, o : o + k] += s.hist_y
        return PairStats(labels=labels, shift=self.shift, hist_lo=lo, hist_x=hx, hist_y=hy, **kw)

    def total(self, label: str = "All data") -> PairStats:
        """All groups pooled into one."""
        kw = {name: getattr(self, name).sum(keepdims=True) for name in _SUMS}
        return PairStats(
            labels=(label,),
            shift=self.shift,
            xmin=self.xmin.min(keepdims=True),
            xmax=self.xmax.max(keepdims=True),
            ymin=self.ymin.min(keepdims=True),
            ymax=self.ymax.max(keepdims=True),
            hist_lo=self.hist_lo,
            hist_x=None if self.hist_x is None else self.hist_x.sum(axis=0, keepdims=True),
            hist_y=None if self.hist_y is None else self.hist_y.sum(axis=0, keepdims=True),
            **kw,
        )


@dataclass
class TrueScoreStats:
    """Sums for the general multi-rater PRMSE formula (spec, "Accuracy Metrics (True score)").

    With ``c_i`` ratings of response ``i`` and their mean ``Hbar_i``: N, ``sum c_i``,
    ``sum c_i^2``, ``sum c_i (Hbar_i - shift)``, ``sum c_i (Hbar_i - shift)^2``, the pooled
    within-response sum of squares, ``sum (c_i - 1)``, ``sum c_i (Hbar_i - M_i)^2``, the
    numbers of single- and multiply-rated responses and the largest ``c_i``.

    Example:
        >>> import numpy as np
        >>> s = TrueScoreStats.from_arrays(np.array([[1., 2.], [3., np.nan]]), np.array([1.5, 3.]))
        >>> s.n, s.c, s.within, s.dof
        (2.0, 3.0, 0.5, 1.0)
    """

    shift: float = 0.0
    n: float = 0.0
    c: float = 0.0
    c2: float = 0.0
    s1: float = 0.0
    s2: float = 0.0
    within: float = 0.0
    dof: float = 0.0
    sse: float = 0.0
    n_single: int = 0
    n_multiple: int = 0
    max_raters: int = 0

    @classmethod
    def from_arrays(
        cls, ratings: np.ndarray, system: np.ndarray, shift: float | None = None
    ) -> TrueScoreStats:
        """``ratings`` is ``(N, raters)`` with NaN for missing; every row has >= 1 rating."""
        return cls.from_arrays_multi(ratings, [system], shift)[0]

    @classmethod
    def from_arrays_multi(
        cls, ratings: np.ndarray, systems: list[np.ndarray], shift: float | None = None
    ) -> list[TrueScoreStats]:
        """One :class:`TrueScoreStats` per system score array; the rating sums are computed once."""
        if ratings.shape[1] == 2 and not np.isnan(ratings[:, 0]).any():
            # the common case: a first rating everywhere, a second on some responses
            a, b = ratings[:, 0], ratings[:, 1]
            multi = ~np.isnan(b)
            c = 1.0 + multi
            means = np.where(multi, (a + np.where(multi, b, 0.0)) / c, a)
            diff = (a - b)[multi]
            within = float(np.dot(diff, diff)) / 2.0
        else:
            ok = ~np.isnan(ratings)
            c = ok.sum(axis=1).astype(np.float64)
            filled = np.where(ok, ratings, 0.0)
            means = filled.sum(axis=1) / c
            multi = c > 1
            if multi.any():
                dev = ratings[multi] - means[multi, None]
                within = float(np.nansum(dev * dev))
            else:
                within = 0.0
        if shift is None:
            shift = float(np.rint(np.median(means[:1000]))) if means.size else 0.0
        ms = means - shift
        common = dict(
            shift=float(shift),
            n=float(c.size),
            c=float(c.sum()),
            c2=float(np.dot(c, c)),
            s1=float(np.dot(c, ms)),
            s2=float(np.dot(c, ms * ms)),
            within=within,
            dof=float((c - 1).sum()),
            n_single=int(np.count_nonzero(c == 1)),
            n_multiple=int(np.count_nonzero(multi)),
            max_raters=int(c.max()) if c.size else 0,
        )
        out = []
        for system in systems:
            e = means - system
            out.append(cls(sse=float(np.dot(c, e * e)), **common))
        return out

    def merge(self, other: TrueScoreStats) -> TrueScoreStats:
        """Statistics of both batches together."""
        a = self.shift - other.shift  # other's (m - other.shift) = (m - self.shift) + a
        s1o = other.s1 - a * other.c
        s2o = other.s2 - 2 * a * other.s1 + a * a * other.c
        return TrueScoreStats(
            shift=self.shift,
            n=self.n + other.n,
            c=self.c + other.c,
            c2=self.c2 + other.c2,
            s1=self.s1 + s1o,
            s2=self.s2 + s2o,
            within=self.within + other.within,
            dof=self.dof + other.dof,
            sse=self.sse + other.sse,
            n_single=self.n_single + other.n_single,
            n_multiple=self.n_multiple + other.n_multiple,
            max_raters=max(self.max_raters, other.max_raters),
        )


@dataclass
class CellStats:
    """Per (subgroup label, human score) cell: N and sums of ``e``, ``e^2``, ``e^4`` (e = M - H).

    Example:
        >>> import numpy as np
        >>> s = CellStats.from_arrays(np.array([1., 1., 2.]), np.array([1., 2., 2.]), np.array([0, 0, 1]), ("a", "b"))
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
        import pandas as pd

        hcodes, levels = pd.factorize(human, sort=True)
        g, l_ = len(labels), len(levels)
        key = codes * l_ + hcodes
        e = system - human
        e2 = e * e

        def bc(c, w=None, minlength=0):
            return np.bincount(c, w, minlength).astype(np.float64)

        size = g * l_
        return cls(
            labels=tuple(labels),
            levels=tuple(float(v) for v in levels),
            n=bc(key, minlength=size).astype(np.float64).reshape(g, l_),
            s1=bc(key, e, size).reshape(g, l_),
            s2=bc(key, e2, size).reshape(g, l_),
            s4=bc(key, e2 * e2, size).reshape(g, l_),
        )

    def merge(self, other: CellStats) -> CellStats:
        """Statistics of both batches together (cells matched by label and human score)."""
        labels, ga, gb = _align(self.labels, other.labels)
        levels, la, lb = _align(self.levels, other.levels)
        order = np.argsort(np.array(levels, dtype=np.float64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        la, lb = rank[la], rank[lb]
        levels = tuple(levels[i] for i in order)
        out = {}
        for name in ("n", "s1", "s2", "s4"):
            v = np.zeros((len(labels), len(levels)))
            v[np.ix_(ga, la)] += getattr(self, name)
            v[np.ix_(gb, lb)] += getattr(other, name)
            out[name] = v
        return CellStats(labels=labels, levels=levels, **out)
