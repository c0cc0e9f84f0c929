"""Scoring slices: the ``eval`` table's headline metrics per subgroup (``by=``, ``--by``).

``ScoringEvaluator(by=["L1"])`` keeps the per-group sufficient statistics of ``L1`` exactly as
a ``group_columns`` column does (one state, one merge: a ``by`` column that is also a group
column is kept once), and :func:`slice_records` reads them: for every value of the column,
the records of the ``eval`` table's R, QWK, R2, kappa, exact and adjacent agreement, SMD
(with the evaluator's ``smd_method``) and RMSE, and DSM (the subgroup against the whole set,
as ``eval_by_<col>`` computes it), and with true scores ``PRMSE`` (``table:
"true_score_eval"``; the evaluator then keeps the true-score sums per group of the ``by``
columns, :class:`~assay.scoring.grouped_true.GroupedTrueStats`), for the system score and its
rounded form. Each carries its table (``eval``; ``true_score_eval`` for PRMSE), ``score`` and
the slice keys of :mod:`assay.uncertainty.slices`: ``slice_column``, ``slice`` (the value as text),
``n`` and ``gap`` (the slice's value minus the whole set's; ``null`` for DSM, itself a
difference against the whole set). A slice too small for a metric (one response: no R) is
``null`` with the reason.

With ``ci`` each slice record gets its interval and the gap's (``gap_ci_low``,
``gap_ci_high``): every resample draws from all responses (their (human, system, slice)
rows collapsed), and a slice's value and the whole set's come from the same draw
(:func:`gap_intervals`); ``bca`` applies, its jackknife leaving each response out of the
whole set and of its slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

import assay.scoring.records as records
from assay.results import Metric
from assay.scoring.batch import BatchStats
from assay.scoring.build import Setup
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.intervals import ResponseUnits, grouped_intervals
from assay.scoring.metric_values import Population, pair_values, true_values
from assay.scoring.replicates import collapsed, columns
from assay.scoring.sufficient_stats import PairStats, TrueScoreStats
from assay.scoring.true_score_ci import true_jackknife, true_replicates, true_terms
from assay.uncertainty.intervals import CIOptions
from assay.uncertainty.slices import annotate

__all__ = ["SLICE_COLUMNS", "gap_intervals", "slice_records"]

#: The ``eval`` columns a slice reports (DSM: against the whole set).
SLICE_COLUMNS = ("corr", "wtkappa", "R2", "kappa", "exact_agr", "adj_agr", "SMD", "DSM", "RMSE")
F64 = NDArray[np.float64]
WHERE = ("table", "score", "smd_method")


def _slice_cells(
    s: PairStats, i: int, score: str, smd: str, pop: Population, whole: Population
) -> list[Metric]:
    """The slice's records of one score form (SMD as the ``eval`` table computes it)."""
    v, r = pair_values(s, i, smd, pop)
    vd, rd = pair_values(s, i, pop=whole, dsm=True)
    v["DSM"], r["DSM"] = vd.get("DSM"), rd.get("DSM", records.UNDEFINED)
    out = []
    for c in SLICE_COLUMNS:
        kind = METRIC_TYPES.get(c, c)
        method = smd if kind == "SMD" and smd != "unpooled" else None
        cell = partial(records.cell, table="eval", score=score, smd_method=method)
        val = v.get(c)
        out.append(
            cell(kind, None, r.get(c, records.UNDEFINED)) if val is None else cell(kind, val)
        )
    return out


def slice_records(ev: Setup, st: BatchStats, whole: Sequence[Metric]) -> list[Metric]:
    """Every slice record of the ``by`` columns of ``ev`` from the statistics ``st``
    (``whole``: the records of the whole set, for the gaps)."""
    assert st.hm is not None and st.hr is not None
    # the gaps' references; none for DSM (the eval table's, with use_diff_std_means, is
    # against the population, a slice's against the whole set)
    evals = [
        m
        for m in whole
        if m.parameters.get("table") in ("eval", "true_score_eval") and m.type != "DSM"
    ]
    out: list[Metric] = []
    for col in ev.by:
        by = st.by[col]
        forms = ((ev.system, by["hm"], st.hm), (f"{ev.system}_round", by["hr"], st.hr))
        for score, s, total in forms:
            v, _ = pair_values(total, 0)
            dsm_pop = (v["h_mean"], v.get("h_sd"), v["sys_mean"], v.get("sys_sd"))
            mean, sd = ev.smd.population_means, ev.smd.population_sds
            pop = (mean.get(ev.human), sd.get(ev.human), mean.get(score), sd.get(score))
            grouped = by.get("true" if score == ev.system else "true_r")
            true = {} if grouped is None else dict(zip(grouped.labels, grouped.stats))
            for i in sorted(range(len(s.labels)), key=lambda k: str(s.labels[k])):
                cells = _slice_cells(s, i, score, ev.smd.smd_method, pop, dsm_pop)
                if s.labels[i] in true:
                    cells.append(_prmse_cell(true[s.labels[i]], score, ev.rater_error_variance))
                value = str(s.labels[i])
                n = int(s.n[i])
                out.extend(annotate(cells, evals, column=col, value=value, n=n, where=WHERE))
    return out


def _prmse_cell(t: TrueScoreStats, score: str, given: float | None) -> Metric:
    v, r = true_values(t, given)
    value = v.get("PRMSE true")
    if value is None:
        reason = r.get("PRMSE true", records.UNDEFINED)
        return records.cell("PRMSE", None, reason, table="true_score_eval", score=score)
    return records.cell("PRMSE", value, table="true_score_eval", score=score)


def _slice_matrix(whole: PairStats, parts: Sequence[PairStats]) -> F64:
    """Per resample: every slice's :data:`SLICE_COLUMNS` (SMD unpooled), then each minus the
    same resample's whole-set value (NaN for DSM's gap); shape (b, 2 g k)."""
    wc = columns(whole)
    pop = (wc["h_mean"], wc["h_sd"], wc["sys_mean"], wc["sys_sd"])
    ref = np.column_stack(
        [np.full_like(wc["RMSE"], np.nan) if c == "DSM" else wc[c] for c in SLICE_COLUMNS]
    )
    vals = []
    for p in parts:
        pc = columns(p, pop)
        vals.append(np.column_stack([pc[c] for c in SLICE_COLUMNS]))
    v = np.stack(vals, axis=1)
    gaps = v - ref[:, None, :]
    return np.concatenate([v.reshape(v.shape[0], -1), gaps.reshape(v.shape[0], -1)], axis=1)


def gap_intervals(
    pairs: F64,
    groups: np.ndarray,
    shift: float,
    opts: CIOptions,
    true: F64 | None = None,
    given: float | None = None,
    codes: Any = None,
) -> dict[tuple[int, str, str], dict[str, Any]]:
    """Per score form, slice and column: the slice value's interval parameters and the gap's
    ``gap_ci_low``, ``gap_ci_high`` (NaN where undefined); ``true`` (the responses'
    true-score rows) adds PRMSE."""
    names, code, found = grouped_intervals(pairs, groups, shift, opts, _slice_matrix, codes)
    g, k = len(names), len(SLICE_COLUMNS)
    out: dict[tuple[int, str, str], dict[str, Any]] = {}
    for form, ci, method in found:
        _store(out, opts, ci.reshape(2, 2, g, k), method, form, names, SLICE_COLUMNS)
    if true is not None:
        _true_gaps(out, pairs, true, code, names, shift, given, opts, codes)
    return out


def _store(
    out: dict[tuple[int, str, str], dict[str, Any]],
    opts: CIOptions,
    ci: F64,
    method: str,
    form: int,
    names: np.ndarray,
    cols: Sequence[str],
) -> None:
    """``ci`` (2, 2 [value, gap], g, k) as the parameters of each slice and column."""
    for j, name in enumerate(names.tolist()):
        for c, col in enumerate(cols):
            p = opts.parameters(float(ci[0, 0, j, c]), float(ci[1, 0, j, c]), method)
            p["gap"] = (float(ci[0, 1, j, c]), float(ci[1, 1, j, c]))
            out[(form, str(name), col)] = p


def _true_gaps(
    out: dict[tuple[int, str, str], dict[str, Any]],
    pairs: F64,
    true: F64,
    code: np.ndarray,
    names: np.ndarray,
    shift: float,
    given: float | None,
    opts: CIOptions,
    codes: Any = None,
) -> None:
    """The slices' PRMSE intervals and their gaps' (the true-score sums of the same draw)."""
    g = len(names)
    for form in (0, 1):
        y = pairs[:, 1] if form == 0 else np.rint(pairs[:, 1])
        drawn = collapsed(np.column_stack([y, true, code]), codes)
        units, mult = drawn.units, drawn.mult
        y_u, t_u, c_u = units[:, 0], units[:, 1:4], units[:, 4].astype(np.intp)

        def stack(whole: F64, parts: list[F64]) -> F64:
            v = np.stack([p[:, 3] for p in parts], axis=1)
            return np.concatenate([v, v - whole[:, 3:4]], axis=1)

        terms, members = true_terms(y_u, t_u, shift), [np.flatnonzero(c_u == j) for j in range(g)]

        def statistic(w: F64, terms: F64 = terms, members: list[Any] = members) -> F64:
            parts = [true_replicates(terms, w, given, keep) for keep in members]
            return stack(true_replicates(terms, w, given), parts)

        def jackknife(y_u: F64 = y_u, t_u: F64 = t_u, c_u: Any = c_u, m: Any = mult) -> F64:
            parts = [true_jackknife(y_u, t_u, m, shift, given, c_u == j) for j in range(g)]
            return stack(true_jackknife(y_u, t_u, m, shift, given), parts)

        ci, method = drawn.bounds(opts, statistic, jackknife)
        _store(out, opts, ci.reshape(2, 2, g, 1), method, form, names, ("PRMSE",))


def attach_slice_intervals(
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
    types = {METRIC_TYPES.get(c, c): c for c in SLICE_COLUMNS} | {"PRMSE": "PRMSE"}
    forms = {system: 0, f"{system}_round": 1}
    pairs, true = units.pairs(), units.true()
    codes = units.codes()
    cache = {c: gap_intervals(pairs, units.group(c), shift, opts, true, given, codes) for c in by}
    for m in found:
        p = m.parameters
        col = types.get(m.type)
        if m.value is None or col is None or (col == "SMD" and smd_method != "unpooled"):
            continue
        got = cache[p["slice_column"]].get((forms[p["score"]], p["slice"], col))
        if got is None:
            continue
        params = dict(got)
        lo, hi = params.pop("gap")
        p.update(params)
        if p.get("gap") is not None:
            ok = bool(np.isfinite(lo) and np.isfinite(hi))
            p["gap_ci_low"], p["gap_ci_high"] = (lo, hi) if ok else (None, None)
