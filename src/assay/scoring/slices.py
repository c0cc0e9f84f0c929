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
(:func:`assay.scoring.tally.attach_slices`); ``bca`` applies, its jackknife leaving each
response out of the whole set and of its slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from assay.results import Metric
from assay.scoring import records
from assay.scoring.batch import BatchStats
from assay.scoring.build import Setup
from assay.scoring.columns import METRIC_TYPES
from assay.scoring.metric_values import Population, pair_values, true_values
from assay.scoring.sufficient_stats import PairStats, TrueScoreStats
from assay.scoring.tally import SLICE_COLUMNS
from assay.uncertainty.slices import annotate

__all__ = ["slice_records"]

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
