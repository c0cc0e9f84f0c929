"""Detection plots: AP per class as bars, PR curves per IoU threshold.

AP bars use ``APAveragedOverIOUs`` (COCO's AP@[.50:.95]) when the run has it, else ``AP`` at
IoU 0.5. PR curves come from ``InterpolatedPrecisionRecallCurve`` (COCO's 101 recall points):
one figure with the class-averaged curve at each IoU threshold (what COCO's PR plots show)
and one with each class at IoU 0.5; without those records, from ``PrecisionRecallCurve``
(one point per score threshold).
"""

from __future__ import annotations

from typing import Any

from assay.report.classification import pr_figures
from assay.report.figures import Figure, figure, line, record_bar, records, run_label
from assay.store.records import Evaluation

__all__ = ["figures", "ap_figure", "interpolated_figures"]

_RECALL = [i / 100 for i in range(101)]


def ap_figure(runs: list[Evaluation]) -> Figure | None:
    traces = []
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
            xs = [str(m.parameters.get("label_value")) for m in found]
            traces.append(record_bar(xs, found, run_label(ev)))
    if not traces:
        return None
    return figure(title, traces, x_title="class", y_title="AP", barmode="group")


def _curves(ev: Evaluation) -> dict[float, dict[str, list[Any]]]:
    out: dict[float, dict[str, list[Any]]] = {}
    for m in records(ev, "InterpolatedPrecisionRecallCurve", lambda m: m.value is not None):
        p = m.value.get("precisions") if isinstance(m.value, dict) else None
        if p:
            iou = float(m.parameters["iou_threshold"])
            out.setdefault(iou, {})[str(m.parameters.get("label_value"))] = p
    return out


def interpolated_figures(runs: list[Evaluation]) -> list[Figure]:
    per_iou, per_class = [], []
    for ev in runs:
        curves = _curves(ev)
        prefix = f"{run_label(ev)} · " if len(runs) > 1 else ""
        for iou, by_label in sorted(curves.items()):
            mean = [
                sum(c[i] for c in by_label.values()) / len(by_label) for i in range(len(_RECALL))
            ]
            per_iou.append(line(_RECALL, mean, f"{prefix}IoU {iou:g}"))
        first = curves.get(0.5) or (curves[min(curves)] if curves else {})
        for label, p in first.items():
            per_class.append(line(_RECALL, p, f"{prefix}{label}"))
    out = []
    axes: dict[str, Any] = {"xaxis": {"range": [0, 1.02]}, "yaxis": {"range": [0, 1.02]}}
    if per_iou:
        out.append(
            figure(
                "PR curves per IoU threshold (mean over classes, 101-point interpolated)",
                per_iou,
                x_title="recall",
                y_title="precision",
                **axes,
            )
        )
    if per_class:
        out.append(
            figure(
                "PR curve per class at IoU 0.5",
                per_class,
                x_title="recall",
                y_title="precision",
                **axes,
            )
        )
    return out


def figures(runs: list[Evaluation]) -> list[Figure]:
    """AP per class, PR curves per IoU threshold and per class."""
    ap = ap_figure(runs)
    curves = interpolated_figures(runs) or pr_figures(runs, "PR curve")
    return ([ap] if ap else []) + curves
