"""Automated-scoring sections, after RSMTool's rsmeval report.

Figures: the score distributions (human vs rounded system, % of responses per level, from
``ScoreDistribution``), the confusion matrix of human and rounded system scores (rsmeval's
``confMatrix``, from ``ConfusionMatrix``) and, per subgroup column, QWK / correlation / DSM
by group (from the ``eval_by_<group>`` records). Tables: ``eval_short`` and every RSMTool
table the records hold (``eval``, ``consistency``, ``degradation``,
``disattenuated_correlations``, ``true_score_eval``, ``eval_by_<group>``,
``consistency_by_<group>``, ``fairness_metrics_by_<group>``), one row per score (and group),
one column per record type, as rsmeval lays them out.
"""

from __future__ import annotations

from typing import Any

from assay.report.figures import (
    Figure,
    bar,
    figure,
    heatmap,
    record_bar,
    records,
    run_label,
    scalar,
)
from assay.report.prose import scoring_table
from assay.store.records import Evaluation

__all__ = ["figures", "tables", "Table"]

Table = dict[str, Any]
_BY_GROUP = ("QWK", "PearsonR", "DSM")


def _distribution(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for ev in runs:
        for m in records(ev, "ScoreDistribution"):
            v = m.value
            for who in ("human", "system"):
                total = sum(v[who]) or 1
                name = f"{run_label(ev)} · {who}" if len(runs) > 1 else who
                pct = [100 * c / total for c in v[who]]
                traces.append(bar([str(lv) for lv in v["levels"]], pct, name))
    if not traces:
        return []
    return [
        figure(
            "Score distributions: human and rounded system scores",
            traces,
            x_title="score",
            y_title="% of responses",
            barmode="group",
            caption="score_dist",
        )
    ]


def _confusion(runs: list[Evaluation]) -> list[Figure]:
    out = []
    for ev in runs:
        for m in records(ev, "ConfusionMatrix"):
            v = m.value if isinstance(m.value, dict) else {}
            if "levels" not in v or "counts" not in v:
                continue
            levels = [str(lv) for lv in v["levels"]]
            out.append(
                figure(
                    f"Confusion matrix: human vs rounded system score, {run_label(ev)}",
                    [heatmap(v["counts"], levels, levels)],
                    x_title="system (rounded)",
                    y_title="human",
                    height=max(320, 60 + 34 * len(levels)),
                    yaxis={"autorange": "reversed", "type": "category"},
                    xaxis={"type": "category"},
                    caption="score_confusion",
                )
            )
    return out


def _by_group(runs: list[Evaluation]) -> list[Figure]:
    out = []
    tables = sorted(
        {
            str(m.parameters["table"])
            for ev in runs
            for m in ev.metrics or []
            if str(m.parameters.get("table", "")).startswith("eval_by_")
        }
    )
    for table in tables:
        traces = []
        for ev in runs:
            for t in _BY_GROUP:
                score = _score(ev)
                found = [
                    m
                    for m in records(ev, t)
                    if m.parameters.get("table") == table
                    and m.parameters.get("score") == score
                    and scalar(m.value) is not None
                ]
                if found:
                    name = f"{run_label(ev)} · {t}" if len(runs) > 1 else t
                    xs = [str(m.parameters["group"]) for m in found]
                    traces.append(record_bar(xs, found, name))
        if traces:
            col = table.removeprefix("eval_by_")
            out.append(
                figure(
                    f"{table}: agreement and DSM by {col}",
                    traces,
                    x_title=col,
                    barmode="group",
                    caption="score_by_group",
                )
            )
    return out


def _score(ev: Evaluation) -> str | None:
    """The system score's name (the ``eval`` table's first row)."""
    for m in ev.metrics or []:
        if m.parameters.get("table") == "eval":
            return str(m.parameters.get("score"))
    return None


def _eval_short(ev: Evaluation) -> Table | None:
    """rsmeval's ``eval_short``: its selection of ``eval`` columns, in one row."""
    from assay.scoring.columns import METRIC_TYPES, SHORT_CONTINUOUS, SHORT_ROUNDED

    score = _score(ev)
    cells = {
        (m.parameters.get("score"), m.type): m.value
        for m in ev.metrics or []
        if m.parameters.get("table") == "eval"
    }
    if score is None:
        return None
    rnd = f"{score}_round"
    columns = [("N", score), ("h_mean", score), ("h_sd", score)]
    columns += [(c, score) for c in SHORT_CONTINUOUS] + [(c, rnd) for c in SHORT_ROUNDED]
    heads = [c if c in ("N", "h_mean", "h_sd") else f"{c}.{s}" for c, s in columns]
    row = [cells.get((s, METRIC_TYPES.get(c, c))) for c, s in columns]
    return {
        "title": f"eval_short ({run_label(ev)})",
        "columns": heads,
        "rows": [row],
        "caption": scoring_table("eval_short"),
    }


def tables(runs: list[Evaluation]) -> list[Table]:
    """RSMTool's tables, one per run and table name, rebuilt from the records."""
    out = []
    for ev in runs:
        short = _eval_short(ev)
        if short is not None:
            out.append(short)
        layout: dict[str, dict[tuple[str, ...], dict[str, Any]]] = {}
        columns: dict[str, list[str]] = {}
        for m in ev.metrics or []:
            table = m.parameters.get("table")
            if not table or table == "score_dist" or isinstance(m.value, dict):
                continue
            row = tuple(
                str(m.parameters[k]) for k in ("score", "group") if m.parameters.get(k) is not None
            )
            layout.setdefault(table, {}).setdefault(row, {})[m.type] = m.value
            cols = columns.setdefault(table, [])
            if m.type not in cols:
                cols.append(m.type)
        for table, rows in layout.items():
            head = ["score", "group"] if any(len(r) > 1 for r in rows) else ["score"]
            body = [[*r, *(cells.get(c) for c in columns[table])] for r, cells in rows.items()]
            out.append(
                {
                    "title": f"{table} ({run_label(ev)})",
                    "columns": head + columns[table],
                    "rows": body,
                    "caption": scoring_table(table),
                }
            )
    return out


def figures(runs: list[Evaluation]) -> list[Figure]:
    """Score distributions, the confusion matrix, agreement by group."""
    return _distribution(runs) + _confusion(runs) + _by_group(runs)
