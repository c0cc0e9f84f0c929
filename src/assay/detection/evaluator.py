"""Accumulating detection evaluator: ``add()`` batches of datums, ``merge()``, ``compute()``.

The evaluator keeps the columnar batches it was given and evaluates them together, so
splitting the data into batches (or across workers, then merging) gives exactly the
result of one batch. Ties between equal scores on different datums are broken by the order
in which datums were added.

Example:
    >>> ev = DetectionEvaluator()
    >>> gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}]
    >>> pr = [{"uid": "a", "annotations": [{"label": "cat", "score": 0.8, "box": [0, 0, 10, 9]}]}]
    >>> round(ev.add_datums(gt, pr).compute(metrics=["mAP"]).get("mAP", iou_threshold=0.5).value, 12)
    1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.detection.compute import CocoEvaluation, CocoParams, evaluate
from assay.detection.io import parse_datums
from assay.detection.metrics import coco_summary, compute_metrics
from assay.detection.types import DetectionData
from assay.results import MetricSet

__all__ = ["DetectionEvaluator"]


class DetectionEvaluator:
    """Collects datums in batches and computes detection metrics over all of them.

    Args: the options of :func:`assay.detection.metrics.compute_metrics`.
    """

    def __init__(
        self,
        *,
        iou_type: str = "bbox",
        iou_thresholds: Sequence[float] | None = None,
        ar_iou_thresholds: Sequence[float] = (0.5, 0.75),
        recall_score_threshold: float = 0.0,
        max_detections: int | None = 100,
        pr_curve_iou_threshold: float = 0.5,
        pr_curve_max_examples: int = 1,
    ) -> None:
        if iou_type not in ("bbox", "segm"):
            raise ValueError(f"iou_type must be 'bbox' or 'segm', got {iou_type!r}")
        self.options: dict[str, Any] = dict(
            iou_type=iou_type,
            iou_thresholds=iou_thresholds,
            ar_iou_thresholds=tuple(ar_iou_thresholds),
            recall_score_threshold=recall_score_threshold,
            max_detections=max_detections,
            pr_curve_iou_threshold=pr_curve_iou_threshold,
            pr_curve_max_examples=pr_curve_max_examples,
        )
        self._parts: list[DetectionData] = []
        self._merged: DetectionData | None = None

    def add(self, data: DetectionData) -> DetectionEvaluator:
        """Add a batch (datums with their ground truths and predictions)."""
        self._parts.append(data)
        self._merged = None
        return self

    def add_datums(
        self, groundtruths: list[dict[str, Any]], predictions: list[dict[str, Any]]
    ) -> DetectionEvaluator:
        """Add a batch given as datum dicts (the JSONL records of :mod:`assay.detection.io`)."""
        return self.add(parse_datums(groundtruths, predictions))

    def merge(self, other: DetectionEvaluator) -> DetectionEvaluator:
        """A new evaluator holding this one's batches followed by ``other``'s."""
        if other.options != self.options:
            raise ValueError("cannot merge evaluators with different options")
        out = DetectionEvaluator(**self.options)
        out._parts = [*self._parts, *other._parts]
        return out

    @property
    def data(self) -> DetectionData:
        """All batches as one :class:`DetectionData`."""
        if self._merged is None:
            self._merged = (
                self._parts[0] if len(self._parts) == 1 else DetectionData.merge(self._parts)
            )  # [] -> empty
        return self._merged

    def compute(self, metrics: Sequence[str] | None = None) -> MetricSet:
        """Metric records (see :func:`assay.detection.metrics.compute_metrics`)."""
        return compute_metrics(self.data, metrics=metrics, **self.options)

    def coco(self) -> CocoEvaluation:
        """COCOeval-style evaluation (precision/recall arrays and the 12 summary stats)."""
        return evaluate(self.data, CocoParams(iou_type=self.options["iou_type"]))

    def coco_summary(self) -> MetricSet:
        """The 12 COCO summary numbers as ``COCOSummary`` records."""
        return coco_summary(
            evaluate(self.data, CocoParams(iou_type=self.options["iou_type"]), all_precision=False)
        )
