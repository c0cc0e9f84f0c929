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
adjacent agreement, SMD and RMSE, for the system score and its rounded form; every method
asked gives the percentile bootstrap here (``ci_method`` says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.intervals import CIOptions, collapse
from assay.results import Metric
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.metric_values import pair_values
from assay.scoring.sufficient_stats import MAX_KAPPA_CATEGORIES, PairStats

__all__ = ["CI_COLUMNS", "ResponseUnits", "attach_intervals", "resampled_pairs"]

#: The ``eval`` columns that get an interval.
CI_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "SMD", "RMSE")

F64 = NDArray[np.float64]


class ResponseUnits:
    """Each response's (human, system) scores, in batches; merged by concatenation."""

    def __init__(self) -> None:
        self.parts: list[F64] = []

    def add(self, h: F64, m: F64) -> None:
        self.parts.append(np.column_stack([h, m]).astype(np.float64))

    def merge(self, other: ResponseUnits) -> None:
        self.parts.extend(other.parts)

    def pairs(self) -> F64:
        return np.concatenate(self.parts) if self.parts else np.empty((0, 2))

    def state(self) -> dict[str, np.ndarray]:
        return {"ci.pairs": self.pairs()}

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray]) -> ResponseUnits:
        units = cls()
        if "ci.pairs" in state:
            units.parts.append(np.asarray(state["ci.pairs"], dtype=np.float64).reshape(-1, 2))
        return units


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


def attach_intervals(
    records: list[Metric], units: ResponseUnits, system: str, shift: float, opts: CIOptions
) -> None:
    """Add the interval parameters to the defined ``eval`` records, in place."""
    found = _intervals(units.pairs(), shift, opts)
    types = {METRIC_TYPES.get(c, c): c for c in CI_COLUMNS}
    forms = {system: 0, f"{system}_round": 1}
    for m in records:
        p = m.parameters
        if m.value is None or p.get("table") != "eval" or m.type not in types:
            continue
        if p.get("score") in forms:
            p.update(found[(forms[p["score"]], types[m.type])])
