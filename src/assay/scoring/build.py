"""Turn the evaluator's sufficient statistics into table rows and Metric records, in one pass.

Every table cell becomes one record, made by a builder of :mod:`assay.scoring.records`
(parameters ``table``, ``score`` and, in by-group tables, ``group_column`` and ``group``); an
undefined cell is a record with ``value=None`` and the reason, and a row of the ``undefined``
listing. The rows are kept as plain dicts;
:class:`~assay.scoring.tables.ScoringTables` turns them into DataFrames only when asked.

Slices (``by=``, ``--by``): :func:`slice_records` gives the ``eval`` table's headline
metrics per subgroup. ``ScoringEvaluator(by=["L1"])`` keeps the per-group sufficient
statistics of ``L1`` exactly as a ``group_columns`` column does (one state, one merge: a
``by`` column that is also a group column is kept once), and :func:`slice_records` reads
them: for every value of the column, the records of the ``eval`` table's R, QWK, R2, kappa,
exact and adjacent agreement, SMD (with the evaluator's ``smd_method``) and RMSE, and DSM
(the subgroup against the whole set, as ``eval_by_<col>`` computes it), and with true scores
``PRMSE`` (``table: "true_score_eval"``; the evaluator then keeps the true-score sums per
group of the ``by`` columns, :class:`~assay.scoring.grouped_true.GroupedTrueStats`), for the
system score and its rounded form. Each carries its table (``eval``; ``true_score_eval`` for
PRMSE), ``score`` and the slice keys of :mod:`assay.uncertainty.slices`: ``slice_column``,
``slice`` (the value as text), ``n`` and ``gap`` (the slice's value minus the whole set's;
``null`` for DSM, itself a difference against the whole set). A slice too small for a
metric (one response: no R) is ``null`` with the reason. With ``ci`` each slice record gets
its interval and the gap's from the one engine
(:func:`assay.scoring.tally.attach_slices`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import numpy as np
import pandas as pd

import assay.scoring.records as records
from assay.results import Metric
from assay.scoring.batch import BatchStats
from assay.scoring.columns import (
    ALL_DATA,
    CONSISTENCY_COLUMNS,
    DEGRADATION_COLUMNS,
    DISATTENUATED_COLUMNS,
    EVAL_COLUMNS,
    METRIC_TYPES,
    SHORT_CONTINUOUS,
    SHORT_ROUNDED,
    SLICE_COLUMNS,
    TRUE_SCORE_COLUMNS,
)
from assay.scoring.metric_values import (
    Population,
    Reasons,
    Values,
    disattenuated_values,
    pair_values,
    second_score_population,
    true_values,
)
from assay.scoring.smd_options import SmdOptions
from assay.scoring.subgroup_ols import FAIRNESS_METRICS, fairness_from_cells
from assay.scoring.sufficient_stats import PairStats, TrueScoreStats
from assay.uncertainty.slices import annotate

__all__ = ["Built", "Setup", "build", "slice_records"]

Row = dict[str, Any]
#: A builder of :mod:`assay.scoring.records` with everything but ``table`` bound.
CellRecord = Callable[..., Metric]


class Setup(Protocol):
    """What the tables are made of besides the statistics: the evaluator's configuration and
    its dropped responses (:class:`~assay.scoring.evaluator.ScoringEvaluator` is one)."""

    human: str
    system: str
    human2: list[str]
    smd: SmdOptions
    group_columns: list[str]
    by: list[str]
    base_groups: dict[str, str]
    rater_error_variance: float | None
    dropped: dict[str, int]


@dataclass
class Built:
    """Everything one ``compute()`` produced: records, table rows, the undefined cells."""

    system: str
    records: list[Metric] = field(default_factory=list)
    rows: dict[str, dict[Any, Row]] = field(default_factory=dict)
    columns: dict[str, Sequence[str]] = field(default_factory=dict)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    undefined: list[dict[str, str]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    smd_column: str = "SMD"

    def emit(
        self,
        table: str,
        row: str,
        vals: Values,
        reasons: Reasons,
        columns: Sequence[str],
        record: CellRecord,
        suffix: str = "",
    ) -> Row:
        """Records for ``columns`` of one row; the row (NaN where undefined) is returned.

        ``record`` is a builder of :mod:`assay.scoring.records` with the row's place bound
        (``partial(records.cell, score=...)``); ``table`` is given to it here.
        """
        out: Row = {}
        for c in columns:
            val = vals.get(c)
            kind = METRIC_TYPES.get(c, c) + suffix
            if val is None:
                reason = reasons.get(c, records.UNDEFINED)
                self.records.append(record(kind, None, reason, table=table))
                self.undefined.append({"table": table, "row": row, "column": c, "reason": reason})
                out[c] = np.nan
            else:
                if isinstance(val, np.generic):
                    val = val.item()
                self.records.append(record(kind, val, table=table))
                out[c] = val
        return out

    def put(self, table: str, rows: dict[Any, Row], columns: Sequence[str]) -> None:
        self.rows[table] = rows
        self.columns[table] = columns
        self.order.append(table)


def _nan_none(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def build(ev: Setup, st: BatchStats) -> Built:
    """Rows and records of every table of the statistics ``st`` (of at least one response)."""
    assert st.hm is not None and st.hr is not None
    b = Built(system=ev.system, dropped=dict(ev.dropped))
    sysname, rname = ev.system, f"{ev.system}_round"
    b.smd_column = "DSM" if ev.smd.use_diff_std_means else "SMD"
    eval_columns = _named(EVAL_COLUMNS, b.smd_column)
    rows, default_smd = {}, {}
    for label, s in ((sysname, st.hm), (rname, st.hr)):
        v, r = pair_values(
            s, 0, ev.smd.smd_method, _population(ev, ev.human, label), dsm=ev.smd.use_diff_std_means
        )
        rows[label] = b.emit(
            "eval", label, v, r, eval_columns, _eval_cell(label, ev.smd.smd_method)
        )
        default_smd[label] = _default_smd(s, v, "unpooled", ev)
    b.put("eval", rows, eval_columns)
    if st.hm.hist_x is not None and st.hm.hist_y is not None:
        b.records.append(
            records.score_distribution(
                st.hm.hist_lo, st.hm.hist_x.sum(axis=0), st.hm.hist_y.sum(axis=0), score=sysname
            )
        )
    if st.hm.hist_xy is not None:
        b.records.append(
            records.confusion_matrix(st.hm.hist_lo, st.hm.hist_xy.sum(axis=0), score=sysname)
        )
    if st.hh is not None:
        # degradation compares RSMTool's default SMDs (unpooled / pooled), whatever the options
        deg_rows = {k: {**row, "SMD": default_smd[k]} for k, row in rows.items()}
        _consistency(b, st.hh, ev, deg_rows)
    if st.true is not None and st.true_r is not None:
        trows = {}
        for label, t in ((sysname, st.true), (rname, st.true_r)):
            v, r = true_values(t, ev.rater_error_variance)
            trows[label] = b.emit("true_score_eval", label, v, r, TRUE_SCORE_COLUMNS, _cell(label))
        b.put("true_score_eval", trows, TRUE_SCORE_COLUMNS)
    else:
        _no_true_scores(b, (sysname, rname))
    pop_h = (rows[sysname]["h_mean"], _nan_none(rows[sysname]["h_sd"]))
    pops: dict[str, Population] = {
        label: (*pop_h, rows[label]["sys_mean"], _nan_none(rows[label]["sys_sd"]))
        for label in (sysname, rname)
    }
    for col in ev.group_columns:
        by = st.by[col]
        _eval_by(b, col, by["hm"], by["hr"], pops)
        if "hh" in by and st.hh is not None:
            pop_hh = (pop_h[0], pop_h[1], *second_score_population(st.hh))
            _consistency_by(b, col, by["hh"], pop_hh, ev.human2[0])
        _fairness(b, col, by["cells"], ev.base_groups.get(col))
    for k, c in ev.dropped.items():
        b.records.append(records.n_dropped(c, reason=k))
    return b


def _named(columns: Sequence[str], smd_column: str) -> list[str]:
    return [c if c != "SMD" else smd_column for c in columns]


def _population(ev: Setup, x: str, y: str) -> Population:
    """The population (mean, sd) of scores ``x`` and ``y`` the evaluator was given."""
    mean, sd = ev.smd.population_means, ev.smd.population_sds
    return (mean.get(x), sd.get(x), mean.get(y), sd.get(y))


def _default_smd(s: PairStats, v: Values, method: str, ev: Setup) -> float:
    """The SMD of RSMTool's default options (NaN where undefined): ``v``'s when the
    evaluator uses them, else computed again."""
    if not ev.smd.use_diff_std_means and ev.smd.smd_method == method:
        value = v.get("SMD")
    else:
        value = pair_values(s, 0, method)[0].get("SMD")
    return float("nan") if value is None else float(value)


def _consistency(b: Built, hh: PairStats, ev: Setup, eval_rows: dict[Any, Row]) -> None:
    """``consistency`` (human-human), ``degradation`` and ``disattenuated_correlations``."""
    score = ev.human2[0]
    columns = _named(CONSISTENCY_COLUMNS, b.smd_column)
    pop = _population(ev, ev.human, score)
    v, r = pair_values(hh, 0, "pooled", pop, ("h1", "h2"), dsm=ev.smd.use_diff_std_means)
    pooled = _default_smd(hh, v, "pooled", ev)
    if v["N"] == 0:
        reason = "requires at least one double-scored response (N_2 >= 1)"
        v, r = {"N": 0}, {c: reason for c in columns[1:]}
    hh_row = b.emit("consistency", "", v, r, columns, _cell(score))
    b.put("consistency", {"": hh_row}, columns)
    hh_deg = {**hh_row, "SMD": pooled}
    deg = {}
    for label, row in eval_rows.items():
        vals: Values = {}
        reasons: Reasons = {}
        for c in DEGRADATION_COLUMNS:
            a, h = row[c], hh_deg[c]
            if a != a or h != h:
                vals[c] = None
                reasons[c] = f"requires defined human-system and human-human {c}"
            else:
                vals[c] = float(a - h)
        deg[label] = b.emit(
            "degradation", label, vals, reasons, DEGRADATION_COLUMNS, _cell(label), "Degradation"
        )
    b.put("degradation", deg, DEGRADATION_COLUMNS)
    pairs = {label: (row["corr"], hh_row["corr"]) for label, row in eval_rows.items()}
    _disattenuated(b, "disattenuated_correlations", pairs)


#: Why ``true_score_eval`` is missing with one rater (RSMTool does not write it either).
NO_TRUE_SCORES = "requires a second human score (human2) or a given rater_error_variance"


def _no_true_scores(b: Built, labels: Sequence[str]) -> None:
    """No true-score table: a note, and an undefined PRMSE record per score row."""
    for label in labels:
        b.records.append(
            records.cell("PRMSE", None, NO_TRUE_SCORES, table="true_score_eval", score=label)
        )
        b.undefined.append(
            {
                "table": "true_score_eval",
                "row": label,
                "column": "PRMSE true",
                "reason": NO_TRUE_SCORES,
            }
        )
    b.notes.append(f"true_score_eval not computed (one rater): PRMSE {NO_TRUE_SCORES}")


def _cell(score: str) -> CellRecord:
    return partial(records.cell, score=score)


def _eval_cell(score: str, smd_method: str) -> CellRecord:
    """``eval``'s records: an SMD of another method than RSMTool's default says which."""
    if smd_method == "unpooled":
        return _cell(score)

    def record(kind: str, value: Any, reason: str = records.UNDEFINED, *, table: str) -> Metric:
        method = smd_method if kind == "SMD" else None
        return records.cell(kind, value, reason, table=table, score=score, smd_method=method)

    return record


def _disattenuated(
    b: Built, table: str, pairs: dict[str, tuple[float, float]], group_column: str | None = None
) -> None:
    """Rows per score (pooled) or, given ``group_column``, per group."""
    rows = {}
    for key, (hm, hh) in pairs.items():
        vals, reasons = disattenuated_values(hm, hh)
        record = (
            _cell(key)
            if group_column is None
            else partial(
                records.disattenuated_group_cell, group_column=group_column, group=str(key)
            )
        )
        rows[key] = b.emit(table, str(key), vals, reasons, DISATTENUATED_COLUMNS, record)
    b.put(table, rows, DISATTENUATED_COLUMNS)


def _ordered(labels: tuple) -> list[tuple[int, str]]:
    """The pooled row first (as RSMTool), then the groups in label order."""
    order = sorted(range(len(labels)), key=lambda k: str(labels[k]))
    return [(0, ALL_DATA)] + [(k, str(labels[k])) for k in order]


def _eval_by(b: Built, col: str, hm: PairStats, hr: PairStats, pops: dict[str, Population]) -> None:
    """``eval_by_<col>``: the ``eval_short`` columns per group, DSM in place of SMD."""
    table = f"eval_by_{col}"
    sysname, rname = b.system, f"{b.system}_round"
    totals = {sysname: hm.total(), rname: hr.total()}
    rows = {}
    for i, g in _ordered(hm.labels):
        row: Row = {}
        for label, s, cols in ((sysname, hm, SHORT_CONTINUOUS), (rname, hr, SHORT_ROUNDED)):
            stats, j = (s, i) if g != ALL_DATA else (totals[label], 0)
            v, r = pair_values(stats, j, pop=pops[label], dsm=True)
            keep = _named(cols, "DSM")
            if label == sysname:
                keep = ["N", "h_mean", "h_sd", *keep]
            record = partial(records.group_cell, score=label, group_column=col, group=g)
            vals = b.emit(table, g, v, r, keep, record)
            for c in keep:
                row[c if c in ("N", "h_mean", "h_sd") else f"{c}.{label}"] = vals[c]
        rows[g] = row
    columns = (
        ["N", "h_mean", "h_sd"]
        + [f"{c}.{sysname}" for c in _named(SHORT_CONTINUOUS, "DSM")]
        + [f"{c}.{rname}" for c in _named(SHORT_ROUNDED, "DSM")]
    )
    b.put(table, rows, columns)


def _consistency_by(b: Built, col: str, hh: PairStats, pop: Population, score: str) -> None:
    """``consistency_by_<col>`` and ``disattenuated_correlations_by_<col>``."""
    table = f"consistency_by_{col}"
    cols = _named(CONSISTENCY_COLUMNS, "DSM")
    total = hh.total()
    rows = {}
    for i, g in _ordered(hh.labels):
        stats, j = (hh, i) if g != ALL_DATA else (total, 0)
        v, r = pair_values(stats, j, pop=pop, names=("h1", "h2"), dsm=True)
        record = partial(records.group_cell, score=score, group_column=col, group=g)
        rows[g] = b.emit(table, g, v, r, cols, record)
    b.put(table, rows, cols)
    eb = b.rows[f"eval_by_{col}"]
    pairs = {g: (eb[g][f"corr.{b.system}"], rows[g]["corr"]) for g in eb}
    _disattenuated(b, f"disattenuated_correlations_by_{col}", pairs, group_column=col)


def _fairness(b: Built, col: str, cells: Any, base_group: str | None) -> None:
    """``fairness_metrics_by_<col>``: R2 and p of OSA, OSD and CSD."""
    table_name = f"fairness_metrics_by_{col}"
    table, reasons = fairness_from_cells(cells, base_group)
    b.frames[table_name] = table
    b.columns[table_name] = list(table.columns)
    b.order.append(table_name)
    record = partial(
        records.fairness_cell,
        table=table_name,
        score=b.system,
        group_column=col,
        base_category=table["base_category"].iloc[0],
    )
    for name in FAIRNESS_METRICS:
        for row, suffix in (("R2", ""), ("sig", "PValue")):
            kind = METRIC_TYPES[name] + suffix
            reason = reasons.get((name, row))
            if reason is not None:
                b.records.append(record(kind, None, reason))
                b.undefined.append(
                    {"table": table_name, "row": row, "column": name, "reason": reason}
                )
            else:
                b.records.append(record(kind, float(table.loc[row, name])))


# ---------------------------------------------------------------- slices (by)


#: What identifies a slice record among the whole set's (its gap's reference).
SLICE_WHERE = ("table", "score", "smd_method")


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
                out.extend(annotate(cells, evals, column=col, value=value, n=n, where=SLICE_WHERE))
    return out


def _prmse_cell(t: TrueScoreStats, score: str, given: float | None) -> Metric:
    v, r = true_values(t, given)
    value = v.get("PRMSE true")
    if value is None:
        reason = r.get("PRMSE true", records.UNDEFINED)
        return records.cell("PRMSE", None, reason, table="true_score_eval", score=score)
    return records.cell("PRMSE", value, table="true_score_eval", score=score)
