"""Confidence intervals of the scoring metrics, over responses (see :mod:`assay.uncertainty`).

With ``ci`` set the evaluator keeps, beside its sums, each response's (human, system) score
pair, its group labels and, with true scores, its rating summary and second human score
(:class:`ResponseUnits`, merged by concatenation). Equal responses are collapsed; a bootstrap
resample is a vector of multinomial counts over the distinct ones, and the sufficient
statistics of :class:`~assay.scoring.sufficient_stats.PairStats` of a resample are
count-weighted sums of per-pair terms: ``n = sum w``, ``sum x' = w @ (h - shift)``,
``sum y'``, ``sum x'^2``, ``sum y'^2``, ``sum x'y'``, ``sum (m - h)^2``, the exact / adjacent /
rounded agreements, the extrema over the pairs drawn, and the rounded-score histograms
``w @ onehot(rint(h))``. One :class:`PairStats` holds a chunk of resamples as its groups, and
:func:`~assay.scoring.replicates.columns` evaluates the ``eval`` formulas on all of them at
once (:mod:`assay.scoring.replicates`; never a pass over responses).

Intervals go on the ``eval`` table's R (``corr``), QWK (``wtkappa``), R2, kappa, exact and
adjacent agreement, SMD (RSMTool's default, unpooled) and RMSE, for the system score and its
rounded form, and on the same columns (DSM for SMD) of every group of the
``eval_by_<column>`` tables: the units then carry their group, a group's statistics are those
of the counts restricted to it, and DSM compares it with the same resample's whole set; and
on ``true_score_eval`` (:mod:`assay.scoring.true_score_ci`), ``consistency`` /
``degradation`` / ``consistency_by_<column>`` (:mod:`assay.scoring.consistency_ci`) and the
R^2 of ``fairness_metrics_by_<column>`` (:mod:`assay.scoring.fairness_ci`).
``ci_method="bca"`` gives the BCa interval of the same resamples (its jackknife from
:func:`~assay.scoring.replicates.loo_pairs`); any other method the percentile bootstrap
(``ci_method`` says which).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.results import Metric
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.consistency_ci import attach_consistency, attach_consistency_by
from assay.scoring.fairness_ci import attach_fairness
from assay.scoring.replicates import Pairs, collapsed, columns, loo_pairs, resampled_pairs
from assay.scoring.sufficient_stats import PairStats
from assay.scoring.true_score_ci import TRUE_CI_COLUMNS, true_intervals
from assay.uncertainty.intervals import CIOptions

__all__ = ["CI_COLUMNS", "ResponseUnits", "attach_intervals", "resampled_pairs", "true_rows"]

#: The ``eval`` columns that get an interval.
CI_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "SMD", "RMSE")

F64 = NDArray[np.float64]


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

    def codes(self) -> NDArray[np.intp] | None:
        """Each response's cluster (``0 .. G-1``, sorted labels), or None without one."""
        if self.cluster is None:
            return None
        return np.unique(self.group(self.cluster), return_inverse=True)[1].reshape(-1)

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


def _matrix(s: PairStats, cols: Sequence[str], pop: Any = None) -> F64:
    """The columns ``cols`` of every group of ``s`` (NaN where undefined), shape (g, k)."""
    found = columns(s, pop)
    return np.column_stack([found[c] for c in cols])


def _intervals(
    pairs: F64, shift: float, opts: CIOptions, codes: Any = None
) -> dict[tuple[int, str], Any]:
    """Per score form (0: as given, 1: rounded) and column, the interval parameters
    (``codes``: each response's cluster, with ``cluster``)."""
    out: dict[tuple[int, str], Any] = {}
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        drawn = collapsed(np.column_stack([pairs[:, 0], y]), codes)
        units, mult = drawn.units, drawn.mult
        x_u, y_u = units[:, 0], units[:, 1]

        prepared = Pairs(x_u, y_u, shift)

        def statistic(w: F64, pairs: Pairs = prepared) -> F64:
            return _matrix(pairs.resampled(w), CI_COLUMNS)

        def jackknife(x_u: F64 = x_u, y_u: F64 = y_u, mult: Any = mult) -> F64:
            return _matrix(loo_pairs(x_u, y_u, mult, shift), CI_COLUMNS)

        ci, method = drawn.bounds(opts, statistic, jackknife)
        for j, c in enumerate(CI_COLUMNS):
            out[(form, c)] = opts.parameters(float(ci[0, j]), float(ci[1, j]), method)
    return out


#: The ``eval_by_<column>`` columns that get an interval (DSM in place of SMD).
BY_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "DSM", "RMSE")


def _by_matrix(whole: PairStats, parts: Sequence[PairStats]) -> F64:
    """Per resample (group of ``whole``) and subgroup: the ``BY_COLUMNS``, DSM against the
    same resample's whole set; shape (b, g * k)."""
    wc = columns(whole)
    pop = (wc["h_mean"], wc["h_sd"], wc["sys_mean"], wc["sys_sd"])
    out = np.stack([_matrix(p, BY_COLUMNS, pop) for p in parts], axis=1)
    return out.reshape(out.shape[0], -1)


def grouped_intervals(
    pairs: F64,
    groups: np.ndarray,
    shift: float,
    opts: CIOptions,
    matrix: Callable[[Any, list[Any]], F64],
    codes: Any = None,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, F64, str]]]:
    """Intervals of ``matrix(whole, parts)`` (the whole set's and each group's resampled
    sums, from the same draw) per score form (0: as given, 1: rounded): the group names,
    each response's group code and ``(form, ci, method)``."""
    names, code = np.unique(groups, return_inverse=True)
    g = len(names)
    found = []
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        drawn = collapsed(np.column_stack([pairs[:, 0], y, code]), codes)
        units, mult = drawn.units, drawn.mult
        x_u, y_u, c_u = units[:, 0], units[:, 1], units[:, 2].astype(np.intp)

        prepared = [Pairs(x_u, y_u, shift)] + [Pairs(x_u, y_u, shift, c_u == j) for j in range(g)]

        def statistic(w: F64, pairs: list[Pairs] = prepared) -> F64:
            return matrix(pairs[0].resampled(w), [p.resampled(w) for p in pairs[1:]])

        def jackknife(x_u: F64 = x_u, y_u: F64 = y_u, c_u: Any = c_u, m: Any = mult) -> F64:
            parts = [loo_pairs(x_u, y_u, m, shift, keep=c_u == j) for j in range(g)]
            return matrix(loo_pairs(x_u, y_u, m, shift), parts)

        ci, method = drawn.bounds(opts, statistic, jackknife)
        found.append((form, ci, method))
    return names, code, found


def _by_intervals(
    pairs: F64, groups: np.ndarray, shift: float, opts: CIOptions, codes: Any = None
) -> dict[tuple[int, str, str], Any]:
    """Per score form, group and column of one ``eval_by`` table, the interval parameters."""
    names, _, found = grouped_intervals(pairs, groups, shift, opts, _by_matrix, codes)
    out: dict[tuple[int, str, str], Any] = {}
    for form, ci, method in found:
        ci = ci.reshape(2, len(names), len(BY_COLUMNS))
        for j, name in enumerate(names.tolist()):
            for k, c in enumerate(BY_COLUMNS):
                lo, hi = float(ci[0, j, k]), float(ci[1, j, k])
                out[(form, str(name), c)] = opts.parameters(lo, hi, method)
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
        if "smd_method" in p:  # the resampled SMD is RSMTool's default (unpooled) one
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
    group_columns: Sequence[str] = (),
) -> None:
    """Add the interval parameters to the defined ``eval``, ``eval_by_<column>`` and
    ``fairness_metrics_by_<column>`` (for ``group_columns``), ``true_score_eval`` and, with a
    second human score, ``consistency``, ``degradation`` and ``consistency_by_<column>``
    records, in place (``given``: the rater error variance, when given)."""
    pairs, codes = units.pairs(), units.codes()
    by = {
        f"eval_by_{c}": _by_intervals(pairs, units.group(c), shift, opts, codes)
        for c in group_columns
    }
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
    _apply(records, "eval", _intervals(pairs, shift, opts, codes), CI_COLUMNS, system)
    true = units.true()
    if true is not None:
        found = true_intervals(pairs, true, shift, given, opts, codes)
        _apply(records, "true_score_eval", found, TRUE_CI_COLUMNS, system)
    groups = {c: units.group(c) for c in group_columns}
    attach_fairness(records, pairs, groups, opts, codes)
    second = units.second()
    if second is not None:
        attach_consistency(records, pairs, second, system, shift, opts, codes)
        attach_consistency_by(records, pairs[:, 0], second, groups, shift, opts, codes)
