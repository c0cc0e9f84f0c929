"""Streaming semantic-segmentation evaluator: confusion counts per label key, mergeable.

``add()`` takes datums (label maps or JSONL-style annotations), adds their pixel confusion
counts, and forgets the pixels; ``merge()`` adds two evaluators' counts (labels unified by
name); ``compute()`` returns IOU per label, mIOU per label key and the ConfusionMatrix.

Example:
    >>> import numpy as np
    >>> ev = SegmentationEvaluator()
    >>> _ = ev.add_label_maps("img1", np.array([[1, 0]]), np.array([[1, 1]]), labels=["road"])
    >>> ev.compute().get("IOU", label_value="road").value
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.results import Metric, MetricSet, undefined
from assay.segmentation.compute import confusion_counts, iou_from_confusion

__all__ = ["SegmentationEvaluator", "BACKGROUND"]

BACKGROUND = "(background)"


class SegmentationEvaluator:
    """Accumulates pixel confusion counts per label key."""

    def __init__(self) -> None:
        self._labels: dict[str, list[str]] = {}  # key -> label values (global index order)
        self._counts: dict[str, np.ndarray] = {}  # key -> (n + 1, n + 1) int64
        self.n_datums = 0

    def _grow(self, key: str, values: Sequence[str]) -> np.ndarray:
        labels = self._labels.setdefault(key, [])
        for v in values:
            if v not in labels:
                labels.append(v)
        n = len(labels) + 1
        old = self._counts.get(key, np.zeros((1, 1), np.int64))
        if old.shape[0] != n:
            new = np.zeros((n, n), np.int64)
            new[: old.shape[0], : old.shape[1]] = old
            self._counts[key] = new
        return np.array([0, *[labels.index(v) + 1 for v in values]], dtype=np.int64)

    def add_label_maps(
        self,
        uid: Any,
        groundtruth: np.ndarray,
        prediction: np.ndarray,
        *,
        labels: Sequence[str],
        key: str = "class",
    ) -> SegmentationEvaluator:
        """Add one datum as two label maps (0 = background, i = ``labels[i - 1]``)."""
        from assay.errors import InvalidInputError

        g, p = np.asarray(groundtruth), np.asarray(prediction)
        if g.shape != p.shape:
            raise InvalidInputError(
                f"prediction size {p.shape} differs from the ground truth's {g.shape}",
                record=f"datum {uid!r}",
                field="prediction",
            )
        try:
            local = confusion_counts(g, p, len(labels))
        except ValueError as e:
            raise InvalidInputError(str(e), record=f"datum {uid!r}") from None
        to_global = self._grow(key, list(labels))
        gi = np.repeat(to_global, len(to_global))
        pi = np.tile(to_global, len(to_global))
        np.add.at(self._counts[key], (gi, pi), local.ravel())
        self.n_datums += 1
        return self

    def add(
        self,
        datums: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str = "data",
        psource: str = "predictions",
    ) -> SegmentationEvaluator:
        """Add datums given as JSONL records (see :func:`assay.segmentation.io.label_maps`)."""
        from assay.segmentation.io import label_maps

        for uid, key, labels, g, p in label_maps(datums, predictions, source, psource):
            self.add_label_maps(uid, g, p, labels=labels, key=key)
        return self

    def merge(self, other: SegmentationEvaluator) -> SegmentationEvaluator:
        """A new evaluator with the counts of both."""
        out = SegmentationEvaluator()
        for ev in (self, other):
            for key, labels in ev._labels.items():
                to_global = out._grow(key, labels)
                gi = np.repeat(to_global, len(to_global))
                pi = np.tile(to_global, len(to_global))
                np.add.at(out._counts[key], (gi, pi), ev._counts[key].ravel())
            out.n_datums += ev.n_datums
        return out

    def confusion(self, key: str = "class") -> tuple[list[str], np.ndarray]:
        """``(labels, counts)`` for a label key; row/column 0 of ``counts`` is background."""
        return list(self._labels.get(key, [])), self._counts.get(
            key, np.zeros((1, 1), np.int64)
        ).copy()

    def compute(self) -> MetricSet:
        """IOU per label, mIOU per label key, ConfusionMatrix per label key."""
        out: list[Metric] = []
        for key in sorted(self._labels):
            labels, c = self.confusion(key)
            iou = iou_from_confusion(c)
            for v, x in zip(labels, iou):
                p = {"label_key": key, "label_value": v}
                out.append(
                    Metric("IOU", float(x), p)
                    if np.isfinite(x)
                    else undefined("IOU", "requires the label in a ground truth or prediction", **p)
                )
            ok = np.isfinite(iou)
            p = {"label_key": key}
            out.append(
                Metric("mIOU", float(np.mean(iou[ok])), p)
                if ok.any()
                else undefined(
                    "mIOU", "requires a label present in the ground truths or predictions", **p
                )
            )
            out.append(
                Metric(
                    "ConfusionMatrix",
                    {
                        "labels": [BACKGROUND, *labels],
                        "counts": c.tolist(),
                        "rows": "ground truth",
                        "columns": "prediction",
                    },
                    dict(p),
                )
            )
        return MetricSet(out)
