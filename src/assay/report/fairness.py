"""Fairness plots: each metric per definition, with the fair value and the usual band marked.

Differences (SPD, AOD, EOD, demographic parity and equalized odds differences) are fair at
0, and commonly read as acceptable within +-0.1; ratios (disparate impact, the parity and
odds ratios) are fair at 1, with the four-fifths rule's band 0.8-1.25. Per-group rates
(selection rate, TPR, FPR, accuracy by group) are grouped bars. The LLM fairness suite's
records have the same types, plus the counterfactual change rate.
"""

from __future__ import annotations

from typing import Any

from assay.fairness.declared import METRICS
from assay.report.figures import (
    Figure,
    Markup,
    band,
    esc_plot,
    figure,
    hline,
    label_of,
    record_bar,
    records,
    run_label,
)
from assay.store.records import Evaluation

__all__ = ["figures", "DIFFERENCES", "RATIOS"]

_COMPARED = (*METRICS.family("definition"), *METRICS.family("aggregate"))
#: Difference metrics: fair at 0, the usual band +-0.1.
DIFFERENCES = tuple(t for t in _COMPARED if METRICS[t].ideal == 0.0)
#: Ratio metrics: fair at 1, the four-fifths rule's band 0.8-1.25.
RATIOS = tuple(t for t in _COMPARED if METRICS[t].ideal == 1.0)
_RATES = METRICS.family("rates")
_DEFINITION = ("group_column", "privileged", "control", "method", "agg")


def _definition_figure(
    runs: list[Evaluation],
    types: tuple[str, ...],
    title: str,
    fair: float,
    lo: float,
    hi: float,
    caption: str,
) -> Figure | None:
    traces = []
    for ev in runs:
        xs, found = [], []
        for t in types:
            for m in records(ev, t, lambda m: "group" not in m.parameters):
                if m.value is None or "average_over" in m.parameters:
                    continue
                short = METRICS[t].label
                xs.append(Markup(f"{esc_plot(short)}<br>{esc_plot(label_of(m, _DEFINITION))}"))
                found.append(m)
        if xs:
            traces.append(record_bar(xs, found, run_label(ev)))
    if not traces:
        return None
    # the band is drawn inside a wider range, so a bar inside it reads as inside
    ends: list[float] = [lo, hi]
    for trace in traces:
        err: dict[str, Any] = trace.get("error_y", {})
        ups = err.get("array") or [None] * len(trace["y"])
        downs = err.get("arrayminus") or [None] * len(trace["y"])
        for v, up, down in zip(trace["y"], ups, downs):
            ends += [v] + ([v + up] if up is not None else []) + ([v - down] if down else [])
    ends.append(0.0)  # a bar is read from its base: 0 stays in view
    pad = 0.15 * (max(ends) - min(ends))
    low = min(ends) - pad if min(ends) < 0 else 0.0
    return figure(
        title,
        traces,
        y_title="value",
        barmode="group",
        shapes=[band(lo, hi), hline(fair)],
        height=420,
        caption=caption,
        wide=sum(len(t["x"]) for t in traces) > 4,
        yaxis={"range": [low, max(ends) + pad]},
    )


def _text(v: object) -> str:
    """A group or group column as text; crossed ones (lists) joined with " × "."""
    return " × ".join(map(str, v)) if isinstance(v, list) else str(v)


def _rates_figure(runs: list[Evaluation]) -> list[Figure]:
    """Per-group rates, one figure per group column (and control level)."""
    out = []
    by: dict[str, list[tuple[Evaluation, str, list[Any]]]] = {}
    for ev in runs:
        for t in _RATES:
            for m in records(ev, t, lambda m: "group" in m.parameters and m.value is not None):
                col = _text(m.parameters.get("group_column"))
                if "control" in m.parameters:
                    col += f", control {_text(m.parameters['control'])}"
                pairs = by.setdefault(col, [])
                if not pairs or pairs[-1][:2] != (ev, t):
                    pairs.append((ev, t, []))
                pairs[-1][2].append(m)
    for col, pairs in by.items():
        traces = []
        for ev, t, found in pairs:
            name = f"{run_label(ev)} · {t}" if len(runs) > 1 else t
            xs = [_text(m.parameters["group"]) for m in found]
            traces.append(record_bar(xs, found, name))
        out.append(
            figure(
                f"Rates by group ({col})",
                traces,
                y_title="rate",
                barmode="group",
                caption="fair_rates",
            )
        )
    return out


def _counterfactual(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for ev in runs:
        found = records(ev, "CounterfactualChangeRate", lambda m: m.value is not None)
        if found:
            xs = [str(m.parameters.get("group", "all")) for m in found]
            traces.append(record_bar(xs, found, run_label(ev)))
    if not traces:
        return []
    return [
        figure(
            "Counterfactual change rate (answer changed when the group is swapped)",
            traces,
            x_title="group",
            y_title="share of answers changed",
            barmode="group",
            shapes=[hline(0.0)],
            caption="counterfactual",
        )
    ]


def figures(runs: list[Evaluation]) -> list[Figure]:
    """Differences, ratios, rates by group, counterfactual change rates."""
    out = [
        _definition_figure(
            runs,
            DIFFERENCES,
            "Fairness differences (fair: 0; band +-0.1)",
            0.0,
            -0.1,
            0.1,
            "fair_differences",
        ),
        _definition_figure(
            runs,
            RATIOS,
            "Fairness ratios (fair: 1; band 0.8-1.25)",
            1.0,
            0.8,
            1.25,
            "fair_ratios",
        ),
    ]
    return [f for f in out if f is not None] + _rates_figure(runs) + _counterfactual(runs)
