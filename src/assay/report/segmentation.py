"""Segmentation plots: IoU per class as bars, the pixel confusion matrix as a heat map."""

from __future__ import annotations

from assay.report.figures import Figure, figure, heatmap, ranked_bars, records, run_label
from assay.store.records import Evaluation

__all__ = ["figures"]


def _iou_figure(runs: list[Evaluation]) -> list[Figure]:
    series = []
    for ev in runs:
        found = [m for m in records(ev, "IOU") if m.value is not None]
        if found:
            series.append((run_label(ev), {str(m.parameters.get("label_value")): m for m in found}))
    if not series:
        return []
    return [ranked_bars(series, "IoU per class", x_title="class", y_title="IoU", caption="iou")]


def _confusion(runs: list[Evaluation]) -> list[Figure]:
    out = []
    for ev in runs:
        for m in records(ev, "ConfusionMatrix"):
            v = m.value if isinstance(m.value, dict) else {}
            if "counts" not in v or "labels" not in v:
                continue
            labels = [str(x) for x in v["labels"]]
            out.append(
                figure(
                    f"Pixel confusion matrix, {run_label(ev)}",
                    [heatmap(v["counts"], labels, labels)],
                    x_title="predicted",
                    y_title="ground truth",
                    height=max(320, 60 + 40 * len(labels)),
                    yaxis={"autorange": "reversed"},
                    caption="pixel_confusion",
                )
            )
    return out


def figures(runs: list[Evaluation]) -> list[Figure]:
    """IoU per class, confusion matrices."""
    return _iou_figure(runs) + _confusion(runs)
