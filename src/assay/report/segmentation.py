"""Segmentation plots: IoU per class as bars, the pixel confusion matrix as a heat map."""

from __future__ import annotations

from assay.report.figures import Figure, figure, heatmap, record_bar, records, run_label
from assay.store.records import Evaluation

__all__ = ["figures"]


def _iou_figure(runs: list[Evaluation]) -> list[Figure]:
    traces = []
    for ev in runs:
        found = [m for m in records(ev, "IOU") if m.value is not None]
        if found:
            xs = [str(m.parameters.get("label_value")) for m in found]
            traces.append(record_bar(xs, found, run_label(ev)))
    if not traces:
        return []
    return [figure("IoU per class", traces, x_title="class", y_title="IoU", barmode="group")]


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
                )
            )
    return out


def figures(runs: list[Evaluation]) -> list[Figure]:
    """IoU per class, confusion matrices."""
    return _iou_figure(runs) + _confusion(runs)
