"""Semantic segmentation: pixel confusion counts, per-label IoU and mIoU (pure numpy).

Label maps are integer arrays: ``0`` is background (no label), ``i > 0`` is label ``i - 1``.
The confusion matrix ``C`` has one row per ground-truth class and one column per predicted
class, index 0 being background. For label ``l`` (index ``i = l + 1``)::

    IoU_l = C[i, i] / (sum(C[i, :]) + sum(C[:, i]) - C[i, i])     (spec: |P ∩ G| / |P ∪ G|)
    mIoU  = mean of IoU_l over the labels of a label key with a defined IoU

A label with no pixel in either ground truth or prediction has an undefined IoU.

Example:
    >>> import numpy as np
    >>> C = confusion_counts(np.array([[1, 1], [0, 2]]), np.array([[1, 0], [0, 2]]), n_labels=2)
    >>> iou_from_confusion(C).tolist()
    [0.5, 1.0]
"""

from __future__ import annotations

import numpy as np

from assay.errors import UndefinedMetricError

__all__ = ["confusion_counts", "iou_from_confusion", "mean_iou", "mask_iou"]


def confusion_counts(groundtruth: np.ndarray, prediction: np.ndarray, n_labels: int) -> np.ndarray:
    """Pixel confusion counts ``(n_labels + 1, n_labels + 1)`` of two label maps (0 = background).

    Example:
        >>> confusion_counts(np.array([0, 1, 1]), np.array([1, 1, 0]), n_labels=1).tolist()
        [[0, 1], [1, 1]]
    """
    g = np.asarray(groundtruth).ravel().astype(np.int64)
    p = np.asarray(prediction).ravel().astype(np.int64)
    if g.shape != p.shape:
        raise ValueError(
            f"label maps differ in size: {np.shape(groundtruth)} vs {np.shape(prediction)}"
        )
    n = n_labels + 1
    if g.size and (g.min() < 0 or p.min() < 0 or g.max() >= n or p.max() >= n):
        raise ValueError(f"label map values must be in [0, {n_labels}]")
    return np.bincount(g * n + p, minlength=n * n).reshape(n, n)


def iou_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Per-label IoU from confusion counts; NaN where the union is empty (undefined)."""
    c = np.asarray(confusion, dtype=np.float64)
    inter = np.diag(c)[1:]
    union = c[1:, :].sum(axis=1) + c[:, 1:].sum(axis=0) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, np.nan)


def mean_iou(confusion: np.ndarray) -> float:
    """mIoU: mean of the defined per-label IoUs; raises UndefinedMetricError if none is defined.

    Example:
        >>> mean_iou(np.array([[5, 1, 0], [1, 1, 0], [0, 0, 2]]))
        0.6666666666666666
    """
    iou = iou_from_confusion(confusion)
    if not np.isfinite(iou).any():
        raise UndefinedMetricError(
            "mIOU", "requires a label present in the ground truths or predictions"
        )
    return float(np.mean(iou[np.isfinite(iou)]))


def mask_iou(groundtruth: np.ndarray, prediction: np.ndarray) -> float:
    """IoU of two boolean masks: ``|G ∩ P| / |G ∪ P|``; UndefinedMetricError if both are empty.

    Example:
        >>> mask_iou(np.array([1, 1, 0], bool), np.array([0, 1, 1], bool))
        0.3333333333333333
    """
    g = np.asarray(groundtruth, dtype=bool)
    p = np.asarray(prediction, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"masks differ in size: {g.shape} vs {p.shape}")
    union = int(np.count_nonzero(g | p))
    if union == 0:
        raise UndefinedMetricError("IOU", "requires a non-empty ground truth or prediction")
    return float(np.count_nonzero(g & p) / union)
