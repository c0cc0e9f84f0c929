"""Semantic segmentation: pixel confusion counts, per-label IoU, precision, recall, mIoU.

Label maps are integer arrays: ``0`` is background (no label), ``i > 0`` is label ``i - 1``.
The confusion matrix ``C`` has one row per ground-truth class and one column per predicted
class, index 0 being background. For label ``l`` (index ``i = l + 1``), with
``TP = C[i, i]``, ``FP = (column i) - TP`` and ``FN = (row i) - TP`` (pixels)::

    IoU_l       = TP / (TP + FP + FN)        (the predicted and true regions'
                                              intersection over their union)
    Precision_l = TP / (TP + FP)     Recall_l = TP / (TP + FN)     F1_l = 2TP / (2TP + FP + FN)
    mIoU        = mean of IoU_l over the labels of a label key with a defined IoU

A ratio whose denominator is 0 (a label with no pixel in either map for IoU) is undefined
(NaN here, ``None`` in records), or ``zero_division`` when given (:mod:`assay.ratios`).

Example:
    >>> import numpy as np
    >>> C = pixel_confusion(np.array([[1, 1], [0, 2]]), np.array([[1, 0], [0, 2]]), n_labels=2)
    >>> iou_from_confusion(C).tolist()
    [0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.ratios import divide, precision_recall_f1

__all__ = [
    "pixel_confusion",
    "iou_from_confusion",
    "prf_from_confusion",
    "mean_iou",
    "mask_iou",
    "accuracy_from_confusion",
    "cell_iou_from_confusion",
]


def pixel_confusion(
    groundtruth: ArrayLike, prediction: ArrayLike, n_labels: int
) -> NDArray[np.int64]:
    """Pixel confusion counts ``(n_labels + 1, n_labels + 1)`` of two label maps (0 = background).

    Example:
        >>> pixel_confusion(np.array([0, 1, 1]), np.array([1, 1, 0]), n_labels=1).tolist()
        [[0, 1], [1, 1]]
    """
    g0, p0 = np.asarray(groundtruth), np.asarray(prediction)
    if g0.shape != p0.shape:
        raise InvalidInputError(
            f"label maps differ in size: {g0.shape} vs {p0.shape}", source="prediction"
        )
    for name, a in (("groundtruth", g0), ("prediction", p0)):
        if a.size and a.dtype.kind not in "iub":
            raise InvalidInputError(f"label map must hold integers, got {a.dtype}", source=name)
    g, p = g0.ravel().astype(np.int64), p0.ravel().astype(np.int64)
    n = n_labels + 1
    for name, a in (("groundtruth", g), ("prediction", p)):
        bad = (a < 0) | (a >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(
                f"label map values must be in [0, {n_labels}], got {int(a[i])}",
                source=name,
                record=f"pixel {i}",
            )
    return np.bincount(g * n + p, minlength=n * n).reshape(n, n)


def _counts(
    confusion: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    c = np.asarray(confusion, dtype=np.float64)
    tp = np.diag(c)[1:]
    return tp, c[:, 1:].sum(axis=0) - tp, c[1:, :].sum(axis=1) - tp


def iou_from_confusion(
    confusion: ArrayLike, zero_division: float | None = None
) -> NDArray[np.float64]:
    """Per-label IoU ``TP / (TP + FP + FN)``; NaN (or ``zero_division``) where it is 0 / 0."""
    tp, fp, fn = _counts(confusion)
    return divide(tp, tp + fp + fn, zero_division)


def prf_from_confusion(
    confusion: ArrayLike, zero_division: float | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-label pixel precision, recall and F1 (the ratio kernel's zero-division rule).

    Example:
        >>> p, r, f = prf_from_confusion(np.array([[5, 1, 0], [1, 1, 0], [0, 0, 2]]))
        >>> p.tolist(), r.tolist()
        ([0.5, 1.0], [0.5, 1.0])
    """
    return precision_recall_f1(*_counts(confusion), zero_division)


def accuracy_from_confusion(confusion: ArrayLike, zero_division: float | None = None) -> float:
    """Pixel accuracy: the pixels whose class (background included) is right, over all pixels.

    ``Accuracy = trace(C) / sum(C)``; NaN (or ``zero_division``) when there is no pixel.

    Example:
        >>> accuracy_from_confusion(np.array([[5, 1, 0], [1, 1, 0], [0, 0, 2]]))
        0.8
    """
    c = np.asarray(confusion, dtype=np.float64)
    return float(divide(np.trace(c), c.sum(), zero_division))


def cell_iou_from_confusion(
    confusion: ArrayLike, zero_division: float | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """IoU of every (true label, predicted label) cell, and the unmatched ratios.

    With ``G_g`` the pixels whose true class is label ``g`` and ``P_p`` those predicted as ``p``
    (background rows and columns counted), the cell ``(g, p)`` is the IoU of the two regions,
    ``C[g, p] / (|G_g| + |P_p| - C[g, p])``; the diagonal is the per-label IoU. The unmatched
    ratios are the share of a label's predicted pixels that are background in the ground truth
    (``C[0, p] / |P_p|``) and of its true pixels predicted as background (``C[g, 0] / |G_g|``).
    A zero denominator gives NaN (or ``zero_division``).

    Returns ``(iou (n, n), unmatched_prediction_ratio (n,), unmatched_ground_truth_ratio (n,))``
    over the labels (background left out).

    Example:
        >>> iou, upd, ugt = cell_iou_from_confusion(np.array([[5, 1, 0], [1, 1, 0], [0, 0, 2]]))
        >>> iou.tolist(), upd.tolist(), ugt.tolist()
        ([[0.3333333333333333, 0.0], [0.0, 1.0]], [0.5, 0.0], [0.5, 0.0])
    """
    c = np.asarray(confusion, dtype=np.float64)
    gt = c[1:, :].sum(axis=1)
    pd = c[:, 1:].sum(axis=0)
    inter = c[1:, 1:]
    iou = divide(inter, gt[:, None] + pd[None, :] - inter, zero_division)
    return iou, divide(c[0, 1:], pd, zero_division), divide(c[1:, 0], gt, zero_division)


def mean_iou(confusion: ArrayLike, zero_division: float | None = None) -> float:
    """mIoU: mean of the defined per-label IoUs; raises UndefinedMetricError if none is defined.

    Example:
        >>> mean_iou(np.array([[5, 1, 0], [1, 1, 0], [0, 0, 2]]))
        0.6666666666666666
    """
    iou = iou_from_confusion(confusion, zero_division)
    if not np.isfinite(iou).any():
        raise UndefinedMetricError(
            "mIOU", "requires a label present in the ground truths or predictions"
        )
    return float(np.mean(iou[np.isfinite(iou)]))


def mask_iou(groundtruth: Any, prediction: Any) -> float:
    """IoU of two boolean masks: ``|G ∩ P| / |G ∪ P|``; UndefinedMetricError if both are empty.

    Example:
        >>> mask_iou(np.array([1, 1, 0], bool), np.array([0, 1, 1], bool))
        0.3333333333333333
    """
    g = np.asarray(groundtruth, dtype=bool)
    p = np.asarray(prediction, dtype=bool)
    if g.shape != p.shape:
        raise InvalidInputError(
            f"masks differ in size: {g.shape} vs {p.shape}", source="prediction"
        )
    union = int(np.count_nonzero(g | p))
    if union == 0:
        raise UndefinedMetricError("IOU", "requires a non-empty ground truth or prediction")
    return float(np.count_nonzero(g & p) / union)
