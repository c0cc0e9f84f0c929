"""Mergeable sufficient statistics of the scoring evaluation.

Every number in the scoring tables is a function of a few sums per group, so batches can be
accumulated and merged (``a.merge(b)`` holds exactly the sums of the concatenated data) and one
vectorised pass (``np.bincount`` over group codes) serves every group at once:

* :class:`PairStats`: per group, for a reference score ``x`` (the human score) and another
  score ``y`` (the system score or a second human score): the count N, sums of ``x``, ``y``,
  ``x^2``, ``y^2``, ``x y`` and ``(y - x)^2``, how many pairs agree exactly, within 1, and
  after rounding, the extrema, and histograms of the rounded scores (for Cohen's kappa), and
  on scales of at most :data:`MAX_JOINT_CATEGORIES` values their joint histogram (the
  confusion matrix of the rounded scores, RSMTool's ``confMatrix``).
* :class:`TrueScoreStats`: the sums behind the multi-rater true-score formulas (PRMSE).

Sums of powers are taken on ``value - shift`` for a fixed ``shift`` near a typical score, so
the one-pass variance ``(sum v^2 - (sum v)^2 / N) / (N - 1)`` keeps its precision. Both classes
turn into plain numpy arrays (:meth:`PairStats.to_state`) and back, for the evaluator's
``state()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from assay.scoring.histograms import (
    MAX_JOINT_CATEGORIES,
    MAX_KAPPA_CATEGORIES,
    joint_histogram,
    kappa_histograms,
)

__all__ = [
    "PairStats",
    "TrueScoreStats",
]

_SUMS = ("n", "sx", "sy", "sxx", "syy", "sxy", "sdd", "exact", "adj", "rexact")
_EXTREMA = ("xmin", "xmax", "ymin", "ymax")


def align_labels(labels_a: tuple, labels_b: tuple) -> tuple[tuple, np.ndarray, np.ndarray]:
    """The union of two label tuples and where each side's labels sit in it."""
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


def _sums(codes: np.ndarray, w: np.ndarray, g: int) -> np.ndarray:
    return np.bincount(codes, w, g).astype(np.float64)


def grouped_extrema(
    y: np.ndarray, codes: np.ndarray | None, g: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-group minimum and maximum of ``y`` (``+inf``/``-inf`` for an empty group)."""
    if g == 1 or codes is None:
        if y.size == 0:
            return np.full(1, np.inf), np.full(1, -np.inf)
        return np.array([y.min()]), np.array([y.max()])
    lo = np.full(g, np.inf)
    hi = np.full(g, -np.inf)
    np.minimum.at(lo, codes, y)
    np.maximum.at(hi, codes, y)
    return lo, hi


def _histograms_joined(
    a: PairStats, b: PairStats, ia: np.ndarray, ib: np.ndarray, g: int
) -> tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Both sides' rounded-score histograms (``hist_lo``, ``hist_x``, ``hist_y``,
    ``hist_xy``) on the union of their category ranges, added, with groups ``ia`` and ``ib``
    of ``g``; none beyond :data:`MAX_KAPPA_CATEGORIES` categories (no joint one beyond
    :data:`MAX_JOINT_CATEGORIES`) or where either side has none."""
    if a.hist_x is None or b.hist_x is None:
        return 0, None, None, None
    lo = min(a.hist_lo, b.hist_lo)
    k = max(a.hist_lo + a.hist_x.shape[1], b.hist_lo + b.hist_x.shape[1]) - lo
    if k > MAX_KAPPA_CATEGORIES:
        return 0, None, None, None
    hx = np.zeros((g, k), dtype=np.int64)
    hy = np.zeros((g, k), dtype=np.int64)
    joint = a.hist_xy is not None and b.hist_xy is not None and k <= MAX_JOINT_CATEGORIES
    hxy = np.zeros((g, k, k), dtype=np.int64) if joint else None
    for s, idx in ((a, ia), (b, ib)):
        assert s.hist_x is not None and s.hist_y is not None
        o = s.hist_lo - lo
        span = slice(o, o + s.hist_x.shape[1])
        hx[idx, span] += s.hist_x
        hy[idx, span] += s.hist_y
        if hxy is not None and s.hist_xy is not None:
            m = s.hist_xy.shape[1]
            hxy[idx, o : o + m, o : o + m] += s.hist_xy
    return lo, hx, hy, hxy


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
    # (G, K) counts of rint(x) - hist_lo and rint(y) - hist_lo; None if too many categories
    hist_x: np.ndarray | None = None
    hist_y: np.ndarray | None = None
    # (G, K, K) counts of the pairs (rint(x) - hist_lo, rint(y) - hist_lo); None beyond
    # MAX_JOINT_CATEGORIES categories
    hist_xy: np.ndarray | None = None

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
        ad = np.abs(d)
        xr = np.rint(x)
        yr = np.rint(y)
        xmin, xmax = grouped_extrema(x, codes, g)
        ymin, ymax = grouped_extrema(y, codes, g)
        lo, hx, hy = kappa_histograms(xr, yr, codes, g)
        hxy = None
        if hx is not None and xr.size:
            k = hx.shape[1]
            xi, yi = (xr - lo).astype(np.intp), (yr - lo).astype(np.intp)
            hxy = joint_histogram(xi, yi, codes, g, k)
        return cls(
            labels=tuple(labels),
            shift=float(shift),
            n=np.bincount(codes, minlength=g).astype(np.float64),
            sx=_sums(codes, xs, g),
            sy=_sums(codes, ys, g),
            sxx=_sums(codes, xs * xs, g),
            syy=_sums(codes, ys * ys, g),
            sxy=_sums(codes, xs * ys, g),
            sdd=_sums(codes, d * d, g),
            exact=_sums(codes, ad <= 0.0, g),
            adj=_sums(codes, ad <= 1.0, g),
            rexact=_sums(codes, xr == yr, g),
            xmin=xmin,
            xmax=xmax,
            ymin=ymin,
            ymax=ymax,
            hist_lo=lo,
            hist_x=hx,
            hist_y=hy,
            hist_xy=hxy,
        )

    def reshift(self, shift: float) -> PairStats:
        """The same statistics with sums taken around another ``shift``."""
        a = shift - self.shift  # x - shift = (x - old) - a
        if a == 0:
            return self
        return replace(
            self,
            shift=float(shift),
            sx=self.sx - a * self.n,
            sy=self.sy - a * self.n,
            sxx=self.sxx - 2 * a * self.sx + a * a * self.n,
            syy=self.syy - 2 * a * self.sy + a * a * self.n,
            sxy=self.sxy - a * (self.sx + self.sy) + a * a * self.n,
        )

    def merge(self, other: PairStats) -> PairStats:
        """Statistics of both batches together (groups matched by label)."""
        other = other.reshift(self.shift)
        labels, ia, ib = align_labels(self.labels, other.labels)
        g = len(labels)
        kw: dict[str, Any] = {}
        for name in _SUMS:
            v = _scatter(np.asarray(getattr(self, name), dtype=np.float64), ia, g)
            v[ib] += getattr(other, name)
            kw[name] = v
        for name, fill, pick in (
            ("xmin", np.inf, np.minimum),
            ("ymin", np.inf, np.minimum),
            ("xmax", -np.inf, np.maximum),
            ("ymax", -np.inf, np.maximum),
        ):
            a = _scatter(getattr(self, name), ia, g, fill)
            kw[name] = pick(a, _scatter(getattr(other, name), ib, g, fill))
        hists = _histograms_joined(self, other, ia, ib, g)
        kw["hist_lo"], kw["hist_x"], kw["hist_y"], kw["hist_xy"] = hists
        return PairStats(labels=labels, shift=self.shift, **kw)

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
            hist_xy=None if self.hist_xy is None else self.hist_xy.sum(axis=0, keepdims=True),
            **kw,
        )

    def to_state(self, prefix: str) -> dict[str, np.ndarray]:
        """The statistics as plain numpy arrays under ``<prefix>.<name>`` keys."""
        out = {f"{prefix}.{name}": np.asarray(getattr(self, name)) for name in _SUMS + _EXTREMA}
        out[f"{prefix}.labels"] = np.array([str(v) for v in self.labels], dtype=str)
        out[f"{prefix}.shift"] = np.array(self.shift)
        out[f"{prefix}.hist_lo"] = np.array(self.hist_lo)
        if self.hist_x is not None and self.hist_y is not None:
            out[f"{prefix}.hist_x"] = self.hist_x
            out[f"{prefix}.hist_y"] = self.hist_y
        if self.hist_xy is not None:
            out[f"{prefix}.hist_xy"] = self.hist_xy
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], prefix: str) -> PairStats:
        """Inverse of :meth:`to_state`."""
        kw: dict[str, Any] = {
            name: np.asarray(state[f"{prefix}.{name}"], dtype=np.float64)
            for name in _SUMS + _EXTREMA
        }
        hx = state.get(f"{prefix}.hist_x")
        hy = state.get(f"{prefix}.hist_y")
        hxy = state.get(f"{prefix}.hist_xy")
        return cls(
            labels=tuple(str(v) for v in state[f"{prefix}.labels"]),
            shift=float(state[f"{prefix}.shift"]),
            hist_lo=int(state[f"{prefix}.hist_lo"]),
            hist_x=None if hx is None else np.asarray(hx, dtype=np.int64),
            hist_y=None if hy is None else np.asarray(hy, dtype=np.int64),
            hist_xy=None if hxy is None else np.asarray(hxy, dtype=np.int64),
            **kw,
        )


@dataclass
class TrueScoreStats:
    """Sums for the multi-rater true-score (PRMSE) formulas.

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
        c, means, within, multi = _rating_sums(ratings)
        if shift is None:
            shift = float(np.rint(np.median(means[:1000]))) if means.size else 0.0
        ms = means - shift
        common: dict[str, Any] = dict(
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
        return TrueScoreStats(
            shift=self.shift,
            n=self.n + other.n,
            c=self.c + other.c,
            c2=self.c2 + other.c2,
            s1=self.s1 + (other.s1 - a * other.c),
            s2=self.s2 + (other.s2 - 2 * a * other.s1 + a * a * other.c),
            within=self.within + other.within,
            dof=self.dof + other.dof,
            sse=self.sse + other.sse,
            n_single=self.n_single + other.n_single,
            n_multiple=self.n_multiple + other.n_multiple,
            max_raters=max(self.max_raters, other.max_raters),
        )

    def to_state(self, prefix: str) -> dict[str, np.ndarray]:
        """The sums as one float array under ``<prefix>``."""
        return {prefix: np.array([float(getattr(self, f.name)) for f in fields(self)])}

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], prefix: str) -> TrueScoreStats:
        """Inverse of :meth:`to_state`."""
        values = np.asarray(state[prefix], dtype=np.float64)
        kw: dict[str, Any] = {
            f.name: (int(v) if f.type == "int" else float(v)) for f, v in zip(fields(cls), values)
        }
        return cls(**kw)


def _rating_sums(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Per response: number of ratings, mean rating; the pooled within SS; multiply rated."""
    if ratings.shape[1] == 2 and not np.isnan(ratings[:, 0]).any():
        # the common case: a first rating everywhere, a second on some responses
        a, b = ratings[:, 0], ratings[:, 1]
        multi = ~np.isnan(b)
        c = 1.0 + multi
        means = np.where(multi, (a + np.where(multi, b, 0.0)) / c, a)
        diff = (a - b)[multi]
        return c, means, float(np.dot(diff, diff)) / 2.0, multi
    ok = ~np.isnan(ratings)
    c = ok.sum(axis=1).astype(np.float64)
    means = np.where(ok, ratings, 0.0).sum(axis=1) / c
    multi = c > 1
    within = 0.0
    if multi.any():
        dev = ratings[multi] - means[multi, None]
        within = float(np.nansum(dev * dev))
    return c, means, within, multi
