"""Confidence intervals of the scoring metrics, over responses (see :mod:`assay.intervals`).

With ``ci`` set the evaluator keeps, beside its sums, each response's (human, system) score
pair (:class:`ResponseUnits`, merged by concatenation). Equal pairs are collapsed; a bootstrap
resample is a vector of multinomial counts over the distinct pairs, and the sufficient
statistics of :class:`~assay.scoring.sufficient_stats.PairStats` of a resample are
count-weighted sums of per-pair terms: ``n = sum w``, ``sum x' = w @ (h - shift)``,
``sum y'``, ``sum x'^2``, ``sum y'^2``, ``sum x'y'``, ``sum (m - h)^2``, the exact / adjacent /
rounded agreements, the extrema over the pairs drawn, and the rounded-score histograms
``w @ onehot(rint(h))``. One :class:`PairStats` holds a chunk of resamples as its groups, so
the ``eval`` formulas of :func:`~assay.scoring.metric_values.pair_values` serve them
unchanged (a loop over resamples on sums, never over responses).

Intervals go on the ``eval`` table's R (``corr``), QWK (``wtkappa``), R2, kappa, exact and
adjacent agreement, SMD and RMSE, for the system score and its rounded form, and on the same
columns (DSM for SMD) of every group of the ``eval_by_<column>`` tables: the units then carry
their group, a group's statistics are those of the counts restricted to it, and DSM compares
it with the same resample's whole set. Every method asked gives the percentile bootstrap
here (``ci_method`` says so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.intervals import CIOptions, collapse
from assay.results import Metric
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.metric_values import pair_values
from assay.scoring.sufficient_stats import MAX_KAPPA_CATEGORIES, PairStats
from assay.scoring.true_score_ci import TRUE_CI_COLUMNS, true_intervals

__all__ = ["CI_COLUMNS", "ResponseUnits", "attach_intervals", "resampled_pairs", "true_rows"]

#: The ``eval`` columns that get an interval.
CI_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "SMD", "RMSE")

F64 = NDArray[np.float64]


class ResponseUnits:
    """Each response's (human, system) scores and group labels, in batches; merged by
    concatenation."""

    def __init__(self, group_columns: Sequence[str] = ()) -> None:
        self.columns = list(group_columns)
        self.parts: list[F64] = []
        self.groups: list[dict[str, np.ndarray]] = []
        self.true_parts: list[F64] = []

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

    def merge(self, other: ResponseUnits) -> None:
        self.parts.extend(other.parts)
        self.groups.extend(other.groups)
        self.true_parts.extend(other.true_parts)

    def pairs(self) -> F64:
        return np.concatenate(self.parts) if self.parts else np.empty((0, 2))

    def true(self) -> F64 | None:
        """Per response ``[c_i, Hbar_i, within_i]`` (:func:`true_rows`), or None."""
        return np.concatenate(self.true_parts) if self.true_parts else None

    def group(self, column: str) -> np.ndarray:
        """Each response's group label (text) in ``column``."""
        return np.concatenate([g[column] for g in self.groups]) if self.groups else np.array([])

    def state(self) -> dict[str, np.ndarray]:
        out = {"ci.pairs": self.pairs()}
        out |= {f"ci.group.{i}": self.group(c) for i, c in enumerate(self.columns)}
        true = self.true()
        if true is not None:
            out["ci.true"] = true
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], columns: Sequence[str]) -> ResponseUnits:
        units = cls(columns)
        if "ci.pairs" in state:
            units.parts.append(np.asarray(state["ci.pairs"], dtype=np.float64).reshape(-1, 2))
            units.groups.append(
                {c: np.asarray(state[f"ci.group.{i}"]).astype(str) for i, c in enumerate(columns)}
            )
        if "ci.true" in state:
            units.true_parts.append(np.asarray(state["ci.true"], dtype=np.float64).reshape(-1, 3))
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


def _hist(v: F64, lo: int, k: int) -> F64:
    onehot = np.zeros((v.size, k))
    onehot[np.arange(v.size), (v - lo).astype(np.int64)] = 1.0
    return onehot


def resampled_pairs(x: F64, y: F64, w: F64, shift: float) -> PairStats:
    """:class:`PairStats` whose group ``i`` is the resample with counts ``w[i]`` over the
    distinct pairs ``(x, y)``."""
    xs, ys, d = x - shift, y - shift, y - x
    xr, yr = np.rint(x), np.rint(y)
    drawn = w > 0
    lo = int(min(xr.min(), yr.min()))
    k = int(max(xr.max(), yr.max())) - lo + 1
    hx = hy = None
    if k <= MAX_KAPPA_CATEGORIES and k * x.size <= 1 << 24:
        hx, hy = w @ _hist(xr, lo, k), w @ _hist(yr, lo, k)
    terms = np.column_stack(
        [np.ones_like(x), xs, ys, xs * xs, ys * ys, xs * ys, d * d]
        + [np.abs(d) <= 0.0, np.abs(d) <= 1.0, xr == yr]
    )
    sums = w @ terms
    names = ("n", "sx", "sy", "sxx", "syy", "sxy", "sdd", "exact", "adj", "rexact")
    return PairStats(
        labels=tuple(range(w.shape[0])),
        shift=shift,
        **{name: sums[:, i] for i, name in enumerate(names)},
        xmin=np.where(drawn, x, np.inf).min(axis=1),
        xmax=np.where(drawn, x, -np.inf).max(axis=1),
        ymin=np.where(drawn, y, np.inf).min(axis=1),
        ymax=np.where(drawn, y, -np.inf).max(axis=1),
        hist_lo=lo,
        hist_x=hx,
        hist_y=hy,
    )


def _replicates(x: F64, y: F64, w: F64, shift: float) -> F64:
    s = resampled_pairs(x, y, w, shift)
    out = np.full((w.shape[0], len(CI_COLUMNS)), np.nan)
    for i in range(w.shape[0]):
        v, _ = pair_values(s, i)
        out[i] = [np.nan if v.get(c) is None else v[c] for c in CI_COLUMNS]
    return out


def _intervals(pairs: F64, shift: float, opts: CIOptions) -> dict[tuple[int, str], Any]:
    """Per score form (0: as given, 1: rounded) and column, the interval parameters."""
    out: dict[tuple[int, str], Any] = {}
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        units, mult, _ = collapse(np.column_stack([pairs[:, 0], y]))
        x_u, y_u = units[:, 0], units[:, 1]

        def statistic(w: F64, x_u: F64 = x_u, y_u: F64 = y_u) -> F64:
            return _replicates(x_u, y_u, w, shift)

        ci = opts.bootstrap_interval(statistic, mult)
        for j, c in enumerate(CI_COLUMNS):
            out[(form, c)] = opts.parameters(float(ci[0, j]), float(ci[1, j]), "bootstrap")
    return out


#: The ``eval_by_<column>`` columns that get an interval (DSM in place of SMD).
BY_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "DSM", "RMSE")


def _by_replicates(x: F64, y: F64, code: NDArray[np.intp], g: int, w: F64, shift: float) -> F64:
    """Per resample and group: the ``BY_COLUMNS`` (DSM against the resample's whole set)."""
    whole = resampled_pairs(x, y, w, shift)
    parts = [resampled_pairs(x, y, w * (code == j), shift) for j in range(g)]
    out = np.full((w.shape[0], g, len(BY_COLUMNS)), np.nan)
    for i in range(w.shape[0]):
        v, _ = pair_values(whole, i)
        pop = (v["h_mean"], v.get("h_sd"), v["sys_mean"], v.get("sys_sd"))
        for j, s in enumerate(parts):
            if s.n[i] == 0:
                continue
            vj, _ = pair_values(s, i, pop=pop, dsm=True)
            out[i, j] = [np.nan if vj.get(c) is None else vj[c] for c in BY_COLUMNS]
    return out.reshape(w.shape[0], -1)


def _by_intervals(
    pairs: F64, groups: np.ndarray, shift: float, opts: CIOptions
) -> dict[tuple[int, str, str], Any]:
    """Per score form, group and column of one ``eval_by`` table, the interval parameters."""
    names, code = np.unique(groups, return_inverse=True)
    out: dict[tuple[int, str, str], Any] = {}
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        units, mult, _ = collapse(np.column_stack([pairs[:, 0], y, code]))
        x_u, y_u, c_u = units[:, 0], units[:, 1], units[:, 2].astype(np.intp)

        def statistic(w: F64, x_u: F64 = x_u, y_u: F64 = y_u, c_u: Any = c_u) -> F64:
            return _by_replicates(x_u, y_u, c_u, len(names), w, shift)

        ci = opts.bootstrap_interval(statistic, mult).reshape(2, len(names), len(BY_COLUMNS))
        for j, name in enumerate(names.tolist()):
            for k, c in enumerate(BY_COLUMNS):
                lo, hi = float(ci[0, j, k]), float(ci[1, j, k])
                out[(form, str(name), c)] = opts.parameters(lo, hi, "bootstrap")
    return out


def _apply(
    records: list[Metric],
    table: str,
    found: Mapping[tuple, Any],
    columns: Sequence[str],
    system: str,
) -> None:
    """Add ``found[(form, column)]`` to the defined records of ``table``, in place."""
    types = {METRIC_TYPES.get(c, c): c for c in columns}
    forms = {system: 0, f"{system}_round": 1}
    for m in records:
        p = m.parameters
        if m.value is None or p.get("table") != table or m.type not in types:
            continue
        key = (forms.get(p.get("score", "")), types[m.type])
        if key in found:
            p.update(found[key])


def attach_intervals(
    records: list[Metric],
    units: ResponseUnits,
    system: str,
    shift: float,
    opts: CIOptions,
    given: float | None = None,
) -> None:
    """Add the interval parameters to the defined ``eval``, ``eval_by_<column>`` and
    ``true_score_eval`` records, in place (``given``: the rater error variance, when given)."""
    pairs = units.pairs()
    by = {f"eval_by_{c}": _by_intervals(pairs, units.group(c), shift, opts) for c in units.columns}
    by_types = {METRIC_TYPES.get(c, c): c for c in BY_COLUMNS}
    forms_by = {system: 0, f"{system}_round": 1}
    for m in records:
        p = m.parameters
        found_by = by.get(p.get("table", ""))
        if m.value is None or found_by is None or m.type not in by_types:
            continue
        key = (forms_by.get(p.get("score", "")), str(p.get("group")), by_types[m.type])
        if key in found_by:
            p.update(found_by[key])
    _apply(records, "eval", _intervals(pairs, shift, opts), CI_COLUMNS, system)
    true = units.true()
    if true is not None:
        found = true_intervals(pairs, true, shift, given, opts)
        _apply(records, "true_score_eval", found, TRUE_CI_COLUMNS, system)
