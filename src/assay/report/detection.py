"""Detection plots: AP per class as bars, PR curves per IoU threshold.

AP bars use ``APAveragedOverIOUs`` (COCO's AP@[.50:.95]) when the run has it, else ``AP`` at
IoU 0.5. PR curves come from ``InterpolatedPrecisionRecallCurve`` (COCO's 101 recall points):
one figure with the class-averaged curve at each IoU threshold (what COCO's PR plots show)
and one with each class at IoU 0.5; without those records, from ``PrecisionRecallCurve``
(one point per score threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.report.classification import pr_figures
from assay.report.figures import (
    DASHES,
    WIDE_PALETTE,
    Figure,
    figure,
    line,
    ranked_bars,
    records,
    run_label,
)
from assay.store.records import Evaluation

__all__ = ["figures", "ap_figure", "interpolated_figures"]

_RECALL = [i / 100 for i in range(101)]


def ap_figure(runs: list[Evaluation]) -> Figure | None:
    series = []
    title = "AP per class"
    for ev in runs:
        found = records(ev, "APAveragedOverIOUs")
        what = "AP@[.50:.95]"
        if not found:
            found = records(ev, "AP", lambda m: m.parameters.get("iou_threshold") == 0.5)
            what = "AP@.50"
        found = [m for m in found if m.value is not None]
        if found:
            title = f"{what} per class"
            series.append((run_label(ev), {str(m.parameters.get("label_value")): m for m in found}))
    if not series:
        return None
    return ranked_bars(series, title, x_title="class", y_title="AP", caption="ap_per_class")


def _curves(ev: Evaluation) -> dict[float, dict[str, list[Any]]]:
    out: dict[float, dict[str, list[Any]]] = {}
    for m in records(ev, "InterpolatedPrecisionRecallCurve", lambda m: m.value is not None):
        p = m.value.get("precisions") if isinstance(m.value, dict) else None
        if p:
            iou = float(m.parameters["iou_threshold"])
            out.setdefault(iou, {})[str(m.parameters.get("label_value"))] = p
    return out


def interpolated_figures(runs: list[Evaluation]) -> list[Figure]:
    """The class-averaged curve per IoU threshold (one colour per threshold, one dash per
    run; COCO's 0.5, 0.75 and 0.95 drawn, the others in the legend), and the curve per
    class at IoU 0.5 (one colour per class, one dash per run; the best and worst classes
    drawn when there are many)."""
    per_iou, per_class = [], []
    all_curves = [_curves(ev) for ev in runs]
    # the best and worst classes are drawn, the others wait in the legend
    shown = _shown_classes([c.get(0.5, {}) for c in all_curves])
    coco = (0.5, 0.75, 0.95)  # drawn first, in the first colours
    ious = sorted(
        {iou for c in all_curves for iou in c}, key=lambda i: (round(i, 2) not in coco, i)
    )
    labels = sorted(
        {lb for c in all_curves for lb in (c.get(0.5) or {})},
        key=lambda lb: -sum(_area(c.get(0.5, {}).get(lb, [])) for c in all_curves),
    )
    for r, (ev, curves) in enumerate(zip(runs, all_curves)):
        prefix = f"{run_label(ev)} · " if len(runs) > 1 else ""
        dash = DASHES[r % len(DASHES)]
        for iou, by_label in sorted(curves.items()):
            mean = [
                sum(c[i] for c in by_label.values()) / len(by_label) for i in range(len(_RECALL))
            ]
            color = WIDE_PALETTE[ious.index(iou) % len(WIDE_PALETTE)]
            trace = line(_RECALL, mean, f"{prefix}IoU {iou:g}", line={"color": color, "dash": dash})
            if len(ious) > 3 and round(iou, 2) not in (0.5, 0.75, 0.95):
                trace["visible"] = "legendonly"
            per_iou.append(trace)
        first = curves.get(0.5) or (curves[min(curves)] if curves else {})
        for label in labels:
            if label not in first:
                continue
            color = WIDE_PALETTE[labels.index(label) % len(WIDE_PALETTE)]
            trace = line(_RECALL, first[label], f"{prefix}{label}",
                         line={"color": color, "dash": dash})  # fmt: skip
            if label not in shown:
                trace["visible"] = "legendonly"
            per_class.append(trace)
    hidden = any(t.get("visible") == "legendonly" for t in per_class)
    out = []
    axes: dict[str, Any] = {"xaxis": {"range": [0, 1.02]}, "yaxis": {"range": [0, 1.02]}}
    if per_iou:
        out.append(
            figure(
                "PR curves per IoU threshold (mean over classes)",
                per_iou,
                x_title="recall",
                y_title="precision",
                caption="pr_per_iou",
                **axes,
            )
        )
    if per_class:
        out.append(
            figure(
                "PR curve per class at IoU 0.5"
                + (f" (best and worst {len(shown) // 2} drawn; the legend has all)" * hidden),
                per_class,
                x_title="recall",
                y_title="precision",
                caption="pr_per_class",
                wide=hidden,
                **axes,
            )
        )
    return out


def _area(p: Sequence[float | None]) -> float:
    return float(sum(x for x in p if x is not None))


def _shown_classes(curves: list[dict[str, list[float]]], k: int = 4) -> set[str]:
    """The ``k`` classes with the largest and the ``k`` with the smallest area under their
    curve (mean over the runs); all of them when there are at most ``3 k``."""
    area: dict[str, list[float]] = {}
    for by_label in curves:
        for label, p in by_label.items():
            area.setdefault(label, []).append(_area(p))
    order = sorted(area, key=lambda c: -sum(area[c]) / len(area[c]))
    return set(order) if len(order) <= 3 * k else set(order[:k] + order[-k:])


def figures(runs: list[Evaluation]) -> list[Figure]:
    """AP per class, PR curves per IoU threshold and per class."""
    ap = ap_figure(runs)
    curves = interpolated_figures(runs) or pr_figures(runs, "PR curve")
    return ([ap] if ap else []) + curves
