"""The scoring tallies: what the one uncertainty engine resamples (:mod:`assay.uncertainty`).

The unit resampled is the response (its id: its position in the order added). With ``ci``
the evaluator keeps, beside its sums, each response's (human, system) score pair, its group
labels and, with true scores, its rating summary and second human score
(:class:`ResponseUnits`, merged by concatenation). :func:`tallies` turns them into one
:class:`~assay.uncertainty.tally.Tally` per bootstrap, keyed by the records'
:func:`record_key`:

* ``eval`` (per score form: the system score as given, and rounded): R (``corr``), QWK
  (``wtkappa``), R2, kappa, exact and adjacent agreement, SMD (RSMTool's default, unpooled)
  and RMSE;
* ``eval_by_<column>`` (per form): the same columns, DSM in place of SMD, for every group;
  a group's statistics are the counts restricted to it, and DSM compares it with the same
  resample's whole set;
* ``true_score_eval`` (per form): ``Variance of errors`` (none when the variance is given),
  ``True score var``, ``MSE true`` and PRMSE;
* ``consistency`` and ``degradation`` (per form; with a second human score): the second
  human score against the first (R, QWK, kappa, agreements, pooled SMD), and each
  human-system value minus the human-human one; ``consistency_by_<column>``: the same
  columns, DSM in place of SMD, for the ``All data`` row and every group;
* ``fairness_metrics_by_<column>``: the R^2 of OSA, OSD and CSD
  (:mod:`assay.scoring.fairness_fits`).

Equal responses (equal in what a tally reads, and with ``cluster`` in their cluster) share
a row. A resample is a vector of counts ``w`` over the rows; the sufficient statistics of
:class:`~assay.scoring.sufficient_stats.PairStats` of a resample are count-weighted sums of
per-pair terms: ``n = sum w``, ``sum x' = w @ (h - shift)``, ``sum y'``, ``sum x'^2``,
``sum y'^2``, ``sum x'y'``, ``sum (m - h)^2``, the exact / adjacent / rounded agreements, the
extrema over the pairs drawn, and the rounded-score histograms ``w @ onehot(rint(h))``. One
:class:`PairStats` holds a chunk of resamples as its groups, and :func:`columns` evaluates the
``eval`` formulas on all of them at once (NaN where
:func:`~assay.scoring.metric_values.pair_values` gives ``None``; never a pass over responses).
The true-score sums are ``w @`` per-response terms likewise (:func:`true_columns`). Every
tally has a jackknife (its leave-one-out sums are the totals minus one row's terms), so
``ci_method="bca"`` applies; any other method gets the percentile bootstrap.

Slices (``by``): :func:`attach_slices` puts on every slice record its interval and its gap's
(``gap_ci_low``, ``gap_ci_high``) from one tally per column and form whose resamples draw
from all responses: a slice's value and the whole set's come from the same draw (the
slice's responses kept, the others weighing nothing), and a slice's DSM standardises with
that draw's whole set. (So a slice's interval is not the one of the slice's responses
bootstrapped alone: the slice's size varies from resample to resample, as it does between
samples of the population.)

Example:
    >>> x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 3.0])
    >>> s = resampled_pairs(x, y, np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]), 2.0)
    >>> columns(s)["exact_agr"].round(4).tolist()
    [66.6667, 33.3333]
    >>> columns(loo_pairs(x, y, np.array([1, 1, 1]), 2.0))["RMSE"].round(4).tolist()
    [0.7071, 0.0, 0.7071]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError
from assay.results import Metric
from assay.scoring.columns import (
    ALL_DATA,
    CONSISTENCY_COLUMNS,
    EVAL_COLUMNS,
    METRIC_TYPES,
    SHORT_CONTINUOUS,
    SHORT_ROUNDED,
    SLICE_COLUMNS,
    TRUE_SCORE_COLUMNS,
)
from assay.scoring.compute import DSM_SD_ATOL
from assay.scoring.declared import METRICS
from assay.scoring.fairness_fits import FAIRNESS_CI_TYPES, Cells
from assay.scoring.histograms import MAX_KAPPA_CATEGORIES
from assay.scoring.sufficient_stats import PairStats
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import CIOptions, tally_intervals
from assay.uncertainty.tally import Key, Tally

__all__ = [
    "BY_COLUMNS",
    "CI_COLUMNS",
    "CONSISTENCY_CI_COLUMNS",
    "TRUE_CI_COLUMNS",
    "Pairs",
    "ResponseUnits",
    "attach_slices",
    "columns",
    "loo_pairs",
    "record_key",
    "resampled_pairs",
    "tallies",
    "true_columns",
    "true_rows",
]

F64 = NDArray[np.float64]


def _with_interval(table_columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns whose type takes an interval in the metric table, in the table's order."""
    return tuple(c for c in table_columns if METRIC_TYPES[c] in METRICS.with_interval())


def _dsm_for_smd(table_columns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("DSM" if c == "SMD" else c for c in table_columns)


#: The ``eval`` columns that get an interval.
CI_COLUMNS = _with_interval(EVAL_COLUMNS)
#: The ``eval_by_<column>`` columns that get an interval (DSM in place of SMD).
BY_COLUMNS = _dsm_for_smd(CI_COLUMNS)
#: The ``true_score_eval`` columns that get an interval.
TRUE_CI_COLUMNS = _with_interval(TRUE_SCORE_COLUMNS)
#: The columns of ``consistency`` and ``degradation`` that get an interval.
CONSISTENCY_CI_COLUMNS = _with_interval(CONSISTENCY_COLUMNS)
#: The columns of ``consistency_by_<column>`` that get an interval.
BY_CONSISTENCY_COLUMNS = _dsm_for_smd(CONSISTENCY_CI_COLUMNS)

#: Counts per chunk of resamples (16 MB): each chunk reads every unit's terms once, so with
#: many distinct responses (continuous system scores) larger chunks than the default read
#: them fewer times (10^5 responses, every table: 4.4 -> 3.5 s CPU); the counts do not
#: depend on the chunk size.
SCORING_CHUNK = 1 << 21


def _kind(column: str) -> str:
    return METRIC_TYPES.get(column, column)


def record_key(m: Metric) -> Key | None:
    """A whole-set record's key among the tallies' keys: its type, table and what names its
    row there (the score form; the group; nothing for ``consistency`` and the fairness
    tables). An SMD of another method than RSMTool's default (``smd_method``) has none."""
    p = m.parameters
    table = str(p.get("table", ""))
    if "smd_method" in p or "slice_column" in p:
        return None
    if table.startswith(("consistency_by_", "fairness_metrics_by_")) or table == "consistency":
        group = p.get("group")
        return (m.type, table, None if group is None else str(group))
    if table.startswith("eval_by_"):
        return (m.type, table, p.get("score"), str(p.get("group")))
    return (m.type, table, p.get("score"))


# ---------------------------------------------------------------- the responses


class ResponseUnits:
    """Each response's (human, system) scores and group labels, in batches; merged by
    concatenation."""

    def __init__(self, group_columns: Sequence[str] = (), cluster: str | None = None) -> None:
        self.columns = list(group_columns)
        self.cluster = cluster  # one of the columns: each response's cluster
        self.parts: list[F64] = []
        self.groups: list[dict[str, np.ndarray]] = []
        self.true_parts: list[F64] = []
        self.second_parts: list[F64] = []  # the second human score (NaN: none)

    def add(
        self,
        h: F64,
        m: F64,
        groups: Mapping[str, tuple[np.ndarray, tuple]],
        ratings: F64 | None = None,
    ) -> None:
        """A batch's responses; ``ratings`` (every human rating, NaN for missing) when the
        true-score (PRMSE) statistics are computed."""
        self.parts.append(np.column_stack([h, m]).astype(np.float64))
        labels = {c: np.array([str(v) for v in groups[c][1]], dtype=str) for c in self.columns}
        self.groups.append({c: labels[c][groups[c][0]] for c in self.columns})
        if ratings is not None:
            self.true_parts.append(true_rows(ratings))
            if ratings.shape[1] >= 2:
                self.second_parts.append(np.asarray(ratings[:, 1], dtype=np.float64))

    def merge(self, other: ResponseUnits) -> None:
        self.parts.extend(other.parts)
        self.groups.extend(other.groups)
        self.true_parts.extend(other.true_parts)
        self.second_parts.extend(other.second_parts)

    def pairs(self) -> F64:
        return np.concatenate(self.parts) if self.parts else np.empty((0, 2))

    def second(self) -> F64 | None:
        """Each response's second human score (NaN where it has none), or None."""
        return np.concatenate(self.second_parts) if self.second_parts else None

    def true(self) -> F64 | None:
        """Per response ``[c_i, Hbar_i, within_i]`` (:func:`true_rows`), or None."""
        return np.concatenate(self.true_parts) if self.true_parts else None

    def group(self, column: str) -> np.ndarray:
        """Each response's group label (text) in ``column``."""
        return np.concatenate([g[column] for g in self.groups]) if self.groups else np.array([])

    def codes(self, column: str | None = None) -> NDArray[np.intp] | None:
        """Each response's cluster (``0 .. G-1``, sorted labels) in ``column`` (default the
        evaluator's ``cluster``), or None without one."""
        column = column or self.cluster
        if column is None:
            return None
        return np.unique(self.group(column), return_inverse=True)[1].reshape(-1)

    def state(self) -> dict[str, np.ndarray]:
        out = {"ci.pairs": self.pairs()}
        out |= {f"ci.group.{i}": self.group(c) for i, c in enumerate(self.columns)}
        true = self.true()
        if true is not None:
            out["ci.true"] = true
        second = self.second()
        if second is not None:
            out["ci.second"] = second
        return out

    @classmethod
    def from_state(
        cls, state: Mapping[str, np.ndarray], columns: Sequence[str], cluster: str | None = None
    ) -> ResponseUnits:
        units = cls(columns, cluster)
        if "ci.pairs" in state:
            units.parts.append(np.asarray(state["ci.pairs"], dtype=np.float64).reshape(-1, 2))
            units.groups.append(
                {c: np.asarray(state[f"ci.group.{i}"]).astype(str) for i, c in enumerate(columns)}
            )
        if "ci.true" in state:
            units.true_parts.append(np.asarray(state["ci.true"], dtype=np.float64).reshape(-1, 3))
        if "ci.second" in state:
            units.second_parts.append(np.asarray(state["ci.second"], dtype=np.float64))
        return units


def true_rows(ratings: F64) -> F64:
    """Per response the true-score (PRMSE) statistics ``[c_i, Hbar_i, within_i]``: its
    number of ratings, their mean, and their sum of squares about it (0 with one rating).

    Example:
        >>> true_rows(np.array([[1.0, 2.0], [3.0, np.nan]])).tolist()
        [[2.0, 1.5, 0.5], [1.0, 3.0, 0.0]]
    """
    ok = ~np.isnan(ratings)
    c = ok.sum(axis=1).astype(np.float64)
    means = np.where(ok, ratings, 0.0).sum(axis=1) / c
    dev = np.where(ok, ratings - means[:, None], 0.0)
    return np.column_stack([c, means, (dev * dev).sum(axis=1)])


# ---------------------------------------------------------------- pair statistics

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


def _matrix(s: PairStats, cols: Sequence[str], pop: Any = None) -> F64:
    """The columns ``cols`` of every group of ``s`` (NaN where undefined), shape (g, k)."""
    found = columns(s, pop)
    return np.column_stack([found[c] for c in cols])


def _pop(s: PairStats) -> tuple[F64, F64, F64, F64]:
    """Per group of ``s`` its means and sds, the population of a subgroup's DSM."""
    c = columns(s)
    return (c["h_mean"], c["h_sd"], c["sys_mean"], c["sys_sd"])


# ---------------------------------------------------------------- true scores


def true_columns(sums: F64, given: float | None) -> F64:
    """The :data:`TRUE_CI_COLUMNS` of every row of ``TrueScoreStats`` sums (columns ``n, c,
    c2, s1, s2, within, dof, sse``), vectorised, with the formulas of
    :func:`~assay.scoring.metric_values.true_values` (NaN where it says None).

    The sums are over responses of per-response terms: with ``c_i`` ratings of response
    ``i``, their mean ``Hbar_i``, their sum of squares ``within_i`` about it and the system
    score ``M_i``: ``n = sum w``, ``c = w @ c_i``, ``c2 = w @ c_i^2``, ``s1 = w @ c_i (Hbar_i
    - shift)``, ``s2 = w @ c_i (Hbar_i - shift)^2``, ``within = w @ within_i``, ``dof = w @
    (c_i - 1)``, ``sse = w @ c_i (Hbar_i - M_i)^2`` (:func:`_true_terms`)."""
    n, c, c2, s1, s2, within, dof, sse = sums.T
    with np.errstate(divide="ignore", invalid="ignore"):
        se2 = np.full(n.shape, float(given)) if given is not None else within / dof
        se2 = np.where((dof > 0) | (given is not None), se2, np.nan)
        mse = (sse - n * se2) / c
        den = c - c2 / c
        vt = np.where(den > 0, (s2 - s1 * s1 / c - (n - 1) * se2) / den, np.nan)
        prmse = np.where(vt > 0, 1.0 - mse / vt, np.nan)
    return np.column_stack([se2, vt, mse, prmse])


def _true_terms(y: F64, true: F64, shift: float) -> F64:
    c, hb, within = true[:, 0], true[:, 1], true[:, 2]
    d, e = hb - shift, hb - y
    return np.column_stack([np.ones_like(c), c, c * c, c * d, c * d * d, within, c - 1, c * e * e])


def _true_loo(terms: F64, mult: ArrayLike, given: float | None, keep: Any = None) -> F64:
    """Per row: the columns with one of its responses left out (total minus its terms); with
    ``keep`` (a subgroup's rows) the subgroup's, whole when the row is outside it."""
    k = np.ones(terms.shape[0]) if keep is None else keep.astype(np.float64)
    m = np.asarray(mult, dtype=np.float64)
    return true_columns(((m * k) @ terms)[None, :] - terms * k[:, None], given)


# ---------------------------------------------------------------- the tallies


class _Maker:
    """Makes the tallies of one evaluator's responses: each collapses the columns it reads
    (and the cluster code, with ``cluster``) to distinct rows."""

    def __init__(self, units: ResponseUnits, shift: float, given: float | None) -> None:
        self.units, self.shift, self.given = units, shift, given
        self.pairs = units.pairs()
        self.cluster = units.codes()

    def form(self, form: int) -> F64:
        """The system scores of a form (0: as given, 1: rounded)."""
        return self.pairs[:, 1] if form == 0 else np.rint(self.pairs[:, 1])

    def tally(
        self,
        keys: Sequence[Key],
        rows: Callable[[], F64],
        make: Callable[[F64, NDArray[np.int64]], tuple[Callable[[F64], F64], Callable[[], F64]]],
    ) -> Tally:
        """A tally of per-response ``rows()``, made when a resample is drawn (the engine
        holds one table's rows at a time): collapsed, then ``make(units, mult)`` gives the
        values (row weights -> (b, k)) and the jackknife of the distinct rows."""
        return Tally(tuple(keys), prepare=lambda: self._ready(tuple(keys), rows(), make))

    def _ready(self, keys: tuple[Key, ...], rows: F64, make: Any) -> Tally:
        rows = np.asarray(rows, dtype=np.float64)
        rows = rows[:, None] if rows.ndim == 1 else rows
        own = self.cluster
        if own is not None:
            rows = np.column_stack([rows, own.astype(np.float64)])
        uniq, mult, unit = collapse(rows)
        uniq = uniq if own is None else uniq[:, :-1]
        values, jackknife = make(uniq, mult)
        units = self.units
        return Tally(
            keys,
            values,
            mult,
            unit=unit,
            ids=np.arange(rows.shape[0]),
            codes=lambda column: _codes(units, column),
            jackknife=jackknife,
            chunk=SCORING_CHUNK,
        )


def _codes(units: ResponseUnits, column: str) -> NDArray[np.intp]:
    """Each response's cluster in ``column`` (one the evaluator keeps per response)."""
    if column not in units.columns:
        raise InvalidInputError(
            "is not a column the evaluator keeps per response (give it as cluster)",
            source="cluster",
            field=column,
        )
    codes = units.codes(column)
    assert codes is not None
    return codes


def tallies(
    units: ResponseUnits,
    system: str,
    shift: float,
    given: float | None = None,
    group_columns: Sequence[str] = (),
) -> list[Tally]:
    """The tallies of every record that gets an interval (see the module docstring);
    ``given``: the rater error variance, when given."""
    mk = _Maker(units, shift, given)
    out: list[Tally] = []
    for form, score in ((0, system), (1, f"{system}_round")):
        out.append(_eval_tally(mk, form, score))
        out += [_eval_by_tally(mk, form, score, c) for c in group_columns]
        if units.true() is not None:
            out.append(_true_tally(mk, form, score))
        if units.second() is not None:
            out.append(_consistency_tally(mk, form, score))
    out += [_fairness_tally(mk, c) for c in group_columns]
    if units.second() is not None:
        out += [_consistency_by_tally(mk, c) for c in group_columns]
    return out


def _eval_tally(mk: _Maker, form: int, score: str) -> Tally:
    keys = [(_kind(c), "eval", score) for c in CI_COLUMNS]
    shift = mk.shift

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        pairs = Pairs(u[:, 0], u[:, 1], shift)
        return (
            lambda w: _matrix(pairs.resampled(w), CI_COLUMNS),
            lambda: _matrix(loo_pairs(u[:, 0], u[:, 1], mult, shift), CI_COLUMNS),
        )

    return mk.tally(keys, lambda: np.column_stack([mk.pairs[:, 0], mk.form(form)]), make)


def _by_matrix(cols: Sequence[str], whole: PairStats, parts: Sequence[PairStats]) -> F64:
    """Per resample (group of ``whole``) and subgroup: the columns ``cols``, DSM against the
    same resample's whole set; shape (b, g * k)."""
    pop = _pop(whole)
    out = np.stack([_matrix(p, cols, pop) for p in parts], axis=1)
    return out.reshape(out.shape[0], -1)


def _grouped(
    mk: _Maker,
    form: int,
    labels: np.ndarray,
    keys: Callable[[list[str]], list[Key]],
    matrix: Callable[[PairStats, list[PairStats]], F64],
) -> Tally:
    """A tally of ``matrix(whole, parts)`` (the whole set's and each group's resampled sums,
    from the same draw) of one score form; ``keys(names)`` its keys."""
    names, code = np.unique(labels, return_inverse=True)
    g, shift = len(names), mk.shift

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        x, y, c = u[:, 0], u[:, 1], u[:, 2].astype(np.intp)
        prepared = [Pairs(x, y, shift)] + [Pairs(x, y, shift, c == j) for j in range(g)]

        def values(w: F64) -> F64:
            return matrix(prepared[0].resampled(w), [p.resampled(w) for p in prepared[1:]])

        def jackknife() -> F64:
            parts = [loo_pairs(x, y, mult, shift, keep=c == j) for j in range(g)]
            return matrix(loo_pairs(x, y, mult, shift), parts)

        return values, jackknife

    def rows() -> F64:
        return np.column_stack([mk.pairs[:, 0], mk.form(form), code.reshape(-1)])

    return mk.tally(keys([str(v) for v in names.tolist()]), rows, make)


def _eval_by_tally(mk: _Maker, form: int, score: str, column: str) -> Tally:
    """``eval_by_<column>``: of the :data:`BY_COLUMNS`, those the table has for the form
    (RSMTool's short columns: R, QWK, R2, DSM, RMSE as given; kappa, the agreements and DSM
    rounded)."""
    table = f"eval_by_{column}"
    short = SHORT_CONTINUOUS if form == 0 else SHORT_ROUNDED
    cols = [c for c in BY_COLUMNS if c in short or (c == "DSM" and "SMD" in short)]

    def keys(names: list[str]) -> list[Key]:
        return [(_kind(c), table, score, name) for name in names for c in cols]

    return _grouped(mk, form, mk.units.group(column), keys, partial(_by_matrix, cols))


def _true_tally(mk: _Maker, form: int, score: str) -> Tally:
    true = mk.units.true()
    assert true is not None
    shift, given = mk.shift, mk.given
    cols = [j for j, c in enumerate(TRUE_CI_COLUMNS) if given is None or j > 0]
    keys = [(_kind(TRUE_CI_COLUMNS[j]), "true_score_eval", score) for j in cols]

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        terms = _true_terms(u[:, 0], u[:, 1:], shift)
        return (
            lambda w: true_columns(w @ terms, given)[:, cols],
            lambda: _true_loo(terms, mult, given)[:, cols],
        )

    return mk.tally(keys, lambda: np.column_stack([mk.form(form), true]), make)


def _consistency_rows(hm: PairStats, hh: PairStats) -> F64:
    """Per resample: the consistency columns, then the degradation columns; (b, 2 k)."""
    a, c = columns(hm), columns(hh)
    human_human = np.column_stack(
        [c["SMD_pooled"] if k == "SMD" else c[k] for k in CONSISTENCY_CI_COLUMNS]
    )
    human_system = np.column_stack([a[k] for k in CONSISTENCY_CI_COLUMNS])
    return np.concatenate([human_human, human_system - human_human], axis=1)


def _consistency_tally(mk: _Maker, form: int, score: str) -> Tally:
    """``consistency`` (form 0 only: it has no system score) and ``degradation``: a
    response is its (human, system, second human) scores, the second missing on
    single-scored responses; the human-human statistics are the counts restricted to the
    double-scored responses, from the same draw."""
    second = mk.units.second()
    assert second is not None
    k, shift = len(CONSISTENCY_CI_COLUMNS), mk.shift
    cols = list(range(2 * k)) if form == 0 else list(range(k, 2 * k))
    keys: list[Key] = [(_kind(c), "consistency", None) for c in CONSISTENCY_CI_COLUMNS]
    keys += [(_kind(c) + "Degradation", "degradation", score) for c in CONSISTENCY_CI_COLUMNS]
    has = ~np.isnan(second)

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        h, m, two, h2 = u[:, 0], u[:, 1], u[:, 2] > 0, u[:, 3]
        first, hh = Pairs(h, m, shift), Pairs(h, h2, shift, two)
        return (
            lambda w: _consistency_rows(first.resampled(w), hh.resampled(w))[:, cols],
            lambda: _consistency_rows(
                loo_pairs(h, m, mult, shift), loo_pairs(h, h2, mult, shift, keep=two)
            )[:, cols],
        )

    def rows() -> F64:
        return np.column_stack([mk.pairs[:, 0], mk.form(form), has, np.where(has, second, 0.0)])

    return mk.tally([keys[j] for j in cols], rows, make)


def _consistency_by_rows(first: PairStats, hh: PairStats, parts: list[PairStats]) -> F64:
    """Per resample: the ``All data`` row, then each group's; (b, (1 + g) k)."""
    a, c = columns(first), columns(hh)
    pop = (a["h_mean"], a["h_sd"], c["sys_mean"], c["sys_sd"])
    found = [columns(s, pop) for s in [hh, *parts]]
    return np.column_stack([f[k] for f in found for k in BY_CONSISTENCY_COLUMNS])


def _consistency_by_tally(mk: _Maker, column: str) -> Tally:
    """``consistency_by_<column>``: a group's human-human statistics are the counts
    restricted to its double-scored responses, and its DSM standardises with the same
    resample's whole-set mean and sd of the first human score (all responses) and of the
    second (the double-scored ones), as the table does."""
    second = mk.units.second()
    assert second is not None
    names, code = np.unique(mk.units.group(column), return_inverse=True)
    table, shift = f"consistency_by_{column}", mk.shift
    keys = [
        (_kind(c), table, group)
        for group in [ALL_DATA, *(str(v) for v in names.tolist())]
        for c in BY_CONSISTENCY_COLUMNS
    ]
    has = ~np.isnan(second)

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        x, two, h2, c = u[:, 0], u[:, 1] > 0, u[:, 2], u[:, 3].astype(np.intp)
        ins = [two & (c == j) for j in range(len(names))]
        whole, hh = Pairs(x, x, shift), Pairs(x, h2, shift, two)
        in_groups = [Pairs(x, h2, shift, k) for k in ins]

        def values(w: F64) -> F64:
            parts = [p.resampled(w) for p in in_groups]
            return _consistency_by_rows(whole.resampled(w), hh.resampled(w), parts)

        def jackknife() -> F64:
            parts = [loo_pairs(x, h2, mult, shift, keep=k) for k in ins]
            first, both = loo_pairs(x, x, mult, shift), loo_pairs(x, h2, mult, shift, keep=two)
            return _consistency_by_rows(first, both, parts)

        return values, jackknife

    def rows() -> F64:
        return np.column_stack([mk.pairs[:, 0], has, np.where(has, second, 0.0), code.reshape(-1)])

    return mk.tally(keys, rows, make)


def _fairness_tally(mk: _Maker, column: str) -> Tally:
    """``fairness_metrics_by_<column>``: the R^2 of OSA, OSD and CSD from the resampled
    cell sums (:class:`~assay.scoring.fairness_fits.Cells`)."""
    names, group = np.unique(mk.units.group(column), return_inverse=True)
    table = f"fairness_metrics_by_{column}"
    keys = [(kind, table, None) for kind in FAIRNESS_CI_TYPES]

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        cells = Cells(u[:, 0], u[:, 1] - u[:, 0], u[:, 2].astype(np.intp), len(names))
        return cells.statistic, lambda: cells.jackknife(mult)

    return mk.tally(keys, lambda: np.column_stack([mk.pairs, group.reshape(-1)]), make)


# ---------------------------------------------------------------- slices


def _slice_matrix(whole: PairStats, parts: Sequence[PairStats]) -> F64:
    """Per resample: every slice's :data:`SLICE_COLUMNS` (SMD unpooled), then each minus the
    same resample's whole-set value (NaN for DSM's gap); shape (b, 2 g k)."""
    wc = columns(whole)
    pop = (wc["h_mean"], wc["h_sd"], wc["sys_mean"], wc["sys_sd"])
    ref = np.column_stack(
        [np.full_like(wc["RMSE"], np.nan) if c == "DSM" else wc[c] for c in SLICE_COLUMNS]
    )
    v = np.stack([_matrix(p, SLICE_COLUMNS, pop) for p in parts], axis=1)
    gaps = v - ref[:, None, :]
    return np.concatenate([v.reshape(v.shape[0], -1), gaps.reshape(v.shape[0], -1)], axis=1)


def _slice_keys(score: str, cols: Sequence[str]) -> Callable[[list[str]], list[Key]]:
    """The keys of a slice tally's columns: each slice's values, then their gaps."""

    def keys(names: list[str]) -> list[Key]:
        return [(what, score, name, c) for what in ("slice", "gap") for name in names for c in cols]

    return keys


def _true_slice_tally(mk: _Maker, form: int, score: str, labels: np.ndarray) -> Tally:
    """The slices' PRMSE and their gaps (the true-score sums of the same draw)."""
    true = mk.units.true()
    assert true is not None
    names, code = np.unique(labels, return_inverse=True)
    g, shift, given = len(names), mk.shift, mk.given

    def stack(whole: F64, parts: list[F64]) -> F64:
        v = np.stack([p[:, 3] for p in parts], axis=1)
        return np.concatenate([v, v - whole[:, 3:4]], axis=1)

    def make(u: F64, mult: NDArray[np.int64]) -> Any:
        terms, c = _true_terms(u[:, 0], u[:, 1:4], shift), u[:, 4].astype(np.intp)
        members = [np.flatnonzero(c == j) for j in range(g)]

        def values(w: F64) -> F64:
            parts = [true_columns(w[:, k] @ terms[k], given) for k in members]
            return stack(true_columns(w @ terms, given), parts)

        def jackknife() -> F64:
            parts = [_true_loo(terms, mult, given, c == j) for j in range(g)]
            return stack(_true_loo(terms, mult, given), parts)

        return values, jackknife

    def rows() -> F64:
        return np.column_stack([mk.form(form), true, code.reshape(-1)])

    return mk.tally(_slice_keys(score, ("PRMSE",))([str(v) for v in names.tolist()]), rows, make)


def slice_tallies(
    units: ResponseUnits, system: str, shift: float, column: str, given: float | None = None
) -> list[Tally]:
    """The tallies of the slices of ``column``: per score form, each slice's
    :data:`SLICE_COLUMNS` and PRMSE (with true scores) and their gaps, keyed ``("slice" or
    "gap", score, slice, column)``."""
    mk = _Maker(units, shift, given)
    labels = units.group(column)
    out = []
    for form, score in ((0, system), (1, f"{system}_round")):
        keys = _slice_keys(score, SLICE_COLUMNS)
        out.append(_grouped(mk, form, labels, keys, _slice_matrix))
        if units.true() is not None:
            out.append(_true_slice_tally(mk, form, score, labels))
    return out


def attach_slices(
    found: list[Metric],
    units: ResponseUnits,
    by: Sequence[str],
    system: str,
    shift: float,
    opts: CIOptions,
    smd_method: str,
    given: float | None = None,
) -> None:
    """Add the intervals (and the gaps') to the defined slice records, in place. An SMD of
    another method than ``unpooled`` gets none (the resampled SMD is the unpooled one)."""
    types = {_kind(c): c for c in SLICE_COLUMNS} | {"PRMSE": "PRMSE"}
    cache: dict[str, dict[Key, dict[str, Any]]] = {}
    for column in by:
        cache[column] = {}
        for t in slice_tallies(units, system, shift, column, given):
            cache[column] |= tally_intervals(t, opts)
    for m in found:
        p = m.parameters
        col = types.get(m.type)
        if m.value is None or col is None or (col == "SMD" and smd_method != "unpooled"):
            continue
        got = cache[p["slice_column"]].get(("slice", p["score"], p["slice"], col))
        if got is None:
            continue
        gap = cache[p["slice_column"]][("gap", p["score"], p["slice"], col)]
        p.update(got)
        if p.get("gap") is not None:
            p["gap_ci_low"], p["gap_ci_high"] = gap["ci_low"], gap["ci_high"]
