"""Pairwise-judging plots: win rates, consistency, Bradley-Terry ratings with intervals.

Win rates (``WinRateWithTie``, ``WinRateWithoutTie`` and the debiased ``WinRate``) are bars
per model against each opponent, 0.5 marked; ``ConsistencyRate`` and ``ExtractionRate`` are
bars per run; ``BradleyTerryRating`` is one bar per model with its bootstrap interval; a
length-controlled win rate with its interval when present. Slice records (``--by``) are
left out: the figures show the whole set. The types are the families of the pairwise table
(:mod:`assay.llm.pairwise.declared`).
"""

from __future__ import annotations

from collections.abc import Callable

from assay.llm.pairwise.declared import METRICS
from assay.report.figures import Figure, bar, figure, hline, run_label
from assay.report.figures import records as _all_records
from assay.results import Metric
from assay.store.records import Evaluation

__all__ = ["figures"]


def records(ev: Evaluation, t: str, where: Callable[[Metric], bool] | None = None) -> list:
    """The run's whole-set records of one type (no slice record)."""
    return _all_records(
        ev, t, lambda m: "slice_column" not in m.parameters and (where is None or where(m))
    )


#: The records of a type a plot shows, where not all: of ``WinRate``, the debiased one
#: (model against opponent over both orders), not the two countings against the reference.
_SHOWN: dict[str, Callable[[Metric], bool]] = {
    "WinRate": lambda m: m.parameters.get("counting") == "debiased",
}


def _wins(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for ev in runs:
        for t in (*METRICS.family("win_rates"), *METRICS.family("length_controlled")):
            found = [m for m in records(ev, t, _SHOWN.get(t)) if m.value is not None]
            if not found:
                continue
            xs = [f"{m.parameters.get('model')} vs {m.parameters.get('opponent')}" for m in found]
            low = [m.parameters.get("ci_low") for m in found]
            high = [m.parameters.get("ci_high") for m in found]
            has = any(v is not None for v in low)
            name = f"{run_label(ev)} · {t}" if len(runs) > 1 else t
            traces.append(
                bar(
                    xs,
                    [m.value for m in found],
                    name,
                    low=low if has else None,
                    high=high if has else None,
                )
            )
    if not traces:
        return []
    return [
        figure(
            "Win rates (0.5: as good as the opponent)",
            traces,
            y_title="win rate",
            barmode="group",
            shapes=[hline(0.5)],
            yaxis={"range": [0, 1.02]},
            caption="win_rates",
        )
    ]


def _rates(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for t in METRICS.family("rates"):
        xs, ys = [], []
        for ev in runs:
            for m in records(ev, t, lambda m: m.value is not None):
                xs.append(run_label(ev))
                ys.append(m.value)
        if xs:
            traces.append(bar(xs, ys, t))
    if not traces:
        return []
    return [
        figure(
            "Judge consistency (same verdict in both orders) and extraction",
            traces,
            y_title="rate",
            barmode="group",
            yaxis={"range": [0, 1.02]},
            caption="judge_consistency",
        )
    ]


def _ratings(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for ev in runs:
        found = sorted(
            (m for t in METRICS.family("ratings") for m in records(ev, t) if m.value is not None),
            key=lambda m: -m.value,
        )
        if found:
            traces.append(
                bar(
                    [str(m.parameters.get("model")) for m in found],
                    [m.value for m in found],
                    run_label(ev),
                    low=[m.parameters.get("ci_low") for m in found],
                    high=[m.parameters.get("ci_high") for m in found],
                )
            )
            traces[-1].update(type="scatter", mode="markers", marker={"size": 11})
    if not traces:
        return []
    return [
        figure(
            "Bradley-Terry ratings with bootstrap intervals",
            traces,
            x_title="model",
            y_title="rating",
            caption="bt_ratings",
        )
    ]


def figures(runs: list[Evaluation]) -> list[Figure]:
    """Win rates, consistency, ratings."""
    return _wins(runs) + _rates(runs) + _ratings(runs)
