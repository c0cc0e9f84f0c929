"""Turn the evaluator's sufficient statistics into table rows and Metric records, in one pass.

Every table cell becomes one record, made by a builder of :mod:`assay.scoring.records`
(parameters ``table``, ``score`` and, in by-group tables, ``group_column`` and ``group``); an
undefined cell is a record with ``value=None`` and the reason, and a row of the ``undefined``
listing. The rows are kept as plain dicts;
:class:`~assay.scoring.tables.ScoringTables` turns them into DataFrames only when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from assay.results import Metric
from assay.scoring import records
from assay.scoring.columns import (
    ALL_DATA,
    CONSISTENCY_COLUMNS,
    DEGRADATION_COLUMNS,
    DISATTENUATED_COLUMNS,
    EVAL_COLUMNS,
    METRIC_TYPES,
    SHORT_CONTINUOUS,
    SHORT_ROUNDED,
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
from assay.scoring.subgroup_ols import FAIRNESS_METRICS, fairness_from_cells
from assay.scoring.sufficient_stats import PairStats

if TYPE_CHECKING:
    from assay.scoring.evaluator import ScoringEvaluator

__all__ = ["Built", "build"]

Row = dict[str, Any]
#: A builder of :mod:`assay.scoring.records` with everything but ``table`` bound.
CellRecord = Callable[..., Metric]


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


def _with_dsm(columns: Sequence[str]) -> list[str]:
    return [c if c != "SMD" else "DSM" for c in columns]


def _nan_none(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def build(ev: ScoringEvaluator) -> Built:
    """Rows and records of every table of a non-empty evaluator."""
    st = ev._stats
    assert st is not None and st.hm is not None and st.hr is not None
    b = Built(system=ev.system, dropped=dict(ev.dropped))
    sysname, rname = ev.system, f"{ev.system}_round"
    rows = {
        label: b.emit("eval", label, *pair_values(s, 0), EVAL_COLUMNS, _cell(label))
        for label, s in ((sysname, st.hm), (rname, st.hr))
    }
    b.put("eval", rows, EVAL_COLUMNS)
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
        _consistency(b, st.hh, ev.human2[0], rows)
    if st.true is not None and st.true_r is not None:
        trows = {}
        for label, t in ((sysname, st.true), (rname, st.true_r)):
            v, r = true_values(t, ev.rater_error_variance)
            trows[label] = b.emit("true_score_eval", label, v, r, TRUE_SCORE_COLUMNS, _cell(label))
        b.put("true_score_eval", trows, TRUE_SCORE_COLUMNS)
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


def _consistency(b: Built, hh: PairStats, score: str, eval_rows: dict[Any, Row]) -> None:
    """``consistency`` (human-human), ``degradation`` and ``disattenuated_correlations``."""
    v, r = pair_values(hh, 0, smd="pooled", names=("h1", "h2"))
    if v["N"] == 0:
        reason = "requires at least one double-scored response (N_2 >= 1)"
        v, r = {"N": 0}, {c: reason for c in CONSISTENCY_COLUMNS[1:]}
    hh_row = b.emit("consistency", "", v, r, CONSISTENCY_COLUMNS, _cell(score))
    b.put("consistency", {"": hh_row}, CONSISTENCY_COLUMNS)
    deg = {}
    for label, row in eval_rows.items():
        vals: Values = {}
        reasons: Reasons = {}
        for c in DEGRADATION_COLUMNS:
            a, h = row[c], hh_row[c]
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


def _cell(score: str) -> CellRecord:
    return partial(records.cell, score=score)


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
            v, r = pair_values(stats, j, pop=pops[label])
            keep = _with_dsm(cols)
            if label == sysname:
                keep = ["N", "h_mean", "h_sd", *keep]
            record = partial(records.group_cell, score=label, group_column=col, group=g)
            vals = b.emit(table, g, v, r, keep, record)
            for c in keep:
                row[c if c in ("N", "h_mean", "h_sd") else f"{c}.{label}"] = vals[c]
        rows[g] = row
    columns = (
        ["N", "h_mean", "h_sd"]
        + [f"{c}.{sysname}" for c in _with_dsm(SHORT_CONTINUOUS)]
        + [f"{c}.{rname}" for c in _with_dsm(SHORT_ROUNDED)]
    )
    b.put(table, rows, columns)


def _consistency_by(b: Built, col: str, hh: PairStats, pop: Population, score: str) -> None:
    """``consistency_by_<col>`` and ``disattenuated_correlations_by_<col>``."""
    table = f"consistency_by_{col}"
    cols = _with_dsm(CONSISTENCY_COLUMNS)
    total = hh.total()
    rows = {}
    for i, g in _ordered(hh.labels):
        stats, j = (hh, i) if g != ALL_DATA else (total, 0)
        v, r = pair_values(stats, j, pop=pop, names=("h1", "h2"))
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
