"""Text and LLM-judge plots: the distribution of each per-datum metric.

Per-datum records (those with ``datum_uid``: ROUGE per type, BLEU, each judge metric) are
drawn as histograms, one figure per metric (and ROUGE type), runs overlaid, when they take
at least :data:`MIN_DISTINCT` distinct values; a metric with fewer (a judge's 1-5 scale, a
faithfulness that is always 1) is a table of counts per value instead, since a histogram of
three values is three blocks that say less than their numbers. The aggregate records (mean
with its interval) are in the summary table; the calls behind the judges are in the run's
item table.
"""

from __future__ import annotations

from typing import Any

from assay.report.figures import COUNT_AXIS, Figure, figure, histogram, run_label, scalar
from assay.store.records import Evaluation

__all__ = ["figures", "tables", "MIN_DISTINCT"]

#: A per-datum metric with fewer distinct values is a table, not a histogram.
MIN_DISTINCT = 8


def _metric_name(m: object) -> str:
    p = m.parameters  # type: ignore[attr-defined]
    extra = [str(p[k]) for k in ("rouge_type", "measure") if k in p and p[k] != "fmeasure"]
    return " ".join([m.type, *extra])  # type: ignore[attr-defined]


def _values(runs: list[Evaluation]) -> dict[str, list[tuple[Evaluation, list[float]]]]:
    by: dict[str, list[tuple[Evaluation, list[float]]]] = {}
    for ev in runs:
        values: dict[str, list[float]] = {}
        for m in ev.metrics or []:
            v = scalar(m.value)
            if "datum_uid" in m.parameters and v is not None:
                values.setdefault(_metric_name(m), []).append(v)
        for name, vs in values.items():
            by.setdefault(name, []).append((ev, vs))
    return by


def _distinct(pairs: list[tuple[Evaluation, list[float]]]) -> list[float]:
    return sorted({v for _, vs in pairs for v in vs})


def figures(runs: list[Evaluation]) -> list[Figure]:
    """One histogram per per-datum metric with enough distinct values."""
    out = []
    for name, pairs in _values(runs).items():
        if len(_distinct(pairs)) < MIN_DISTINCT:
            continue
        unit = all(0.0 <= v <= 1.0 for _, vs in pairs for v in vs)
        bins = {"xbins": {"start": 0.0, "end": 1.0001, "size": 0.05}} if unit else {}
        traces = [histogram(vs, run_label(ev), **bins) for ev, vs in pairs]
        n = sum(len(vs) for _, vs in pairs)
        out.append(
            figure(
                f"{name}: distribution over datums (n = {n:,})",
                traces,
                x_title=name,
                y_title="datums",
                barmode="overlay",
                height=320,
                caption="text_hist",
                yaxis=COUNT_AXIS,
            )
        )
    return out


def tables(runs: list[Evaluation]) -> list[dict[str, Any]]:
    """One table of counts per value for the per-datum metrics with few distinct values."""
    few = [(n, p) for n, p in _values(runs).items() if len(_distinct(p)) < MIN_DISTINCT]
    if not few:
        return []
    shown = list(dict.fromkeys(ev.id for _, pairs in few for ev, _ in pairs))
    names = {ev.id: run_label(ev) for _, pairs in few for ev, _ in pairs}
    rows = []
    for name, pairs in few:
        by_run = {ev.id: vs for ev, vs in pairs}
        for v in _distinct(pairs):
            rows.append([name, v, *(by_run.get(i, []).count(v) for i in shown)])
    return [
        {
            "title": "Per-datum metrics with few distinct values: datums per value",
            "columns": ["metric", "value", *(f"datums {names[i]}" for i in shown)],
            "rows": rows,
            "caption": (
                f"How many datums got each value, per metric and run. These metrics take fewer "
                f"than {MIN_DISTINCT} distinct values here, too few for a histogram to say more "
                "than its counts: a judge on a 1-5 scale reads this way, and a metric with one "
                "value did not tell the datums apart on this data. See docs/text.md."
            ),
        }
    ]
