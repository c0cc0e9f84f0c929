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

__all__ = ["CI_COLUMNS", "ResponseUnits", "attach_intervals", "resampled_pairs"]

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

    def add(self, h: F64, m: F64, groups: Mapping[str, tuple[np.ndarray, tuple]]) -> None:
        self.parts.append(np.column_stack([h, m]).astype(np.float64))
        labels = {c: np.array([str(v) for v in groups[c][1]], dtype=str) for c in self.columns}
        self.groups.append({c: labels[c][groups[c][0]] for c in self.columns})

    def merge(self, other: ResponseUnits) -> None:
        self.parts.extend(other.parts)
        self.groups.extend(other.groups)

    def pairs(self) -> F64:
        return np.concatenate(self.parts) if self.parts else np.empty((0, 2))

    def group(self, column: str) -> np.ndarray:
        """Each response's group label (text) in ``column``."""
        return np.concatenate([g[column] for g in self.groups]) if self.groups else np.array([])

    def state(self) -> dict[str, np.ndarray]:
        out = {"ci.pairs": self.pairs()}
        out |= {f"ci.group.{i}": self.group(c) for i, c in enumerate(self.columns)}
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray], columns: Sequence[str]) -> ResponseUnits:
        units = cls(columns)
        if "ci.pairs" in state:
            units.parts.append(np.asarray(state["ci.pairs"], dtype=np.float64).reshape(-1, 2))
            units.groups.append(
                {c: np.asarray(state[f"ci.group.{i}"]).astype(str) for i, c in enumerate(columns)}
            )
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


def attach_intervals(
    records: list[Metric], units: ResponseUnits, system: str, shift: float, opts: CIOptions
) -> None:
    """Add the interval parameters to the defined ``eval`` and ``eval_by_<column>`` records,
    in place."""
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
    found = _intervals(pairs, shift, opts)
    types = {METRIC_TYPES.get(c, c): c for c in CI_COLUMNS}
    forms = {system: 0, f"{system}_round": 1}
    for m in records:
        p = m.parameters
        if m.value is None or p.get("table") != "eval" or m.type not in types:
            continue
        if p.get("score") in forms:
            p.update(found[(forms[p["score"]], types[m.type])])
