"""COCO-exact evaluation of a whole dataset: rank, match, accumulate.

The semantics are those of pycocotools ``COCOeval`` (``evaluate`` + ``accumulate`` +
``summarize``), reproduced operation for operation where floating point matters, but
without its per-image Python loops: every datum is handled at once.

* ranking (:mod:`assay.detection.rank`): per (datum, label) by descending score, stable,
  the first ``max_dets[-1]`` kept; a dense score rank and two packed integer sorts;
* matching (:mod:`assay.detection.match`): greedy, highest IoU ``>= t`` first, closed form
  for the groups where no detection has two candidate ground truths, rank steps for the
  rest, identical to COCOeval's loop;
* accumulation (:mod:`assay.detection.accumulate`): precision at the 101 recall points and
  recall, per (threshold, label, area range, max detections), from the matches only.

:func:`coco_evaluate` returns a :class:`CocoEvaluation` (COCOeval's arrays and its 12
summary numbers). The metric records are built by :func:`assay.detection.compute_metrics`
or :class:`assay.detection.DetectionEvaluator`, whose ``coco()`` is this same view.

Example:
    >>> import numpy as np
    >>> from assay.detection.types import Annotations, DetectionData
    >>> gt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]])
    >>> dt = Annotations.boxes(datum=[0, 0], label=[0, 0], box=[[0, 0, 10, 10], [50, 50, 5, 5]],
    ...                        score=[0.9, 0.8])
    >>> data = DetectionData([1], np.array([100]), np.array([100]), [("class", "a")], gt, dt)
    >>> round(float(coco_evaluate(data).stats()[0]), 6)
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.detection.accumulate import accumulate, summarize
from assay.detection.match import Matching, match
from assay.detection.params import (
    CocoParams,
)
from assay.detection.types import DetectionData
from assay.errors import InvalidInputError

__all__ = [
    "CocoEvaluation",
    "coco_evaluate",
    "resolve_iou_type",
]


@dataclass
class CocoEvaluation:
    """What :func:`coco_evaluate` computed: parameters, matching, precision and recall.

    Attributes:
        precision: ``(T, R, K, A, M)`` interpolated precision (COCOeval ``eval["precision"]``).
        recall: ``(T, K, A, M)`` recall (COCOeval ``eval["recall"]``); ``-1`` = undefined.
    """

    data: DetectionData
    params: CocoParams
    matching: Matching
    precision: np.ndarray
    recall: np.ndarray

    def stats(self) -> np.ndarray:
        """The 12 COCO summary numbers, as COCOeval ``stats``."""
        return summarize(self.precision, self.recall, self.params)

    def per_label_ap(self, area: str = "all", max_det: int | None = None) -> np.ndarray:
        """AP averaged over IoU thresholds per label (``-1`` where undefined), COCO style."""
        a = [x[0] for x in self.params.area_ranges].index(area)
        mi = (
            len(self.params.max_dets) - 1
            if max_det is None
            else self.params.max_dets.index(max_det)
        )
        p = self.precision[:, :, :, a, mi]
        out = np.full(p.shape[2], -1.0)
        for k in range(p.shape[2]):
            s = p[:, :, k]
            if (s > -1).any():
                out[k] = float(np.mean(s[s > -1]))
        return out


def resolve_iou_type(data: DetectionData, requested: str | None) -> str:
    """The IoU type to evaluate ``data`` with: the request, else the data's own, else bbox.

    Data read with an IoU type (``load_coco(..., iou_type="segm")``) remembers it; asking
    for the other one is an error, never a silent switch to boxes.
    """
    own = data.iou_type
    if requested is not None and own is not None and requested != own:
        raise InvalidInputError(
            f"the data was loaded with iou_type={own!r}; cannot evaluate it as {requested!r} "
            f"(load it again with iou_type={requested!r})",
            source="iou_type",
        )
    return requested or own or "bbox"


def coco_evaluate(
    data: DetectionData, params: CocoParams | None = None, *, all_precision: bool = True
) -> CocoEvaluation:
    """Match and accumulate: COCOeval's arrays and 12 summary numbers.

    Args:
        data: ground truths and predictions.
        params: evaluation parameters (default: COCO's, with the data's IoU type).
        all_precision: ``False`` skips the precision arrays of the smaller max-dets (COCO's
            summary never reads them); the 12 summary numbers are unchanged.

    Raises:
        InvalidInputError: ``params.iou_type`` differs from the IoU type the data was read with.

    Example:
        >>> from assay.detection.types import Annotations
        >>> empty = Annotations.empty()
        >>> ev = coco_evaluate(DetectionData([1], np.array([0]), np.array([0]), [("class", "a")],
        ...                                  empty, empty))
        >>> ev.stats().tolist() == [-1.0] * 12
        True
    """
    if params is None:
        params = CocoParams(iou_type=resolve_iou_type(data, None))
    else:
        resolve_iou_type(data, params.iou_type)
    m = match(data, params)
    precision, recall = accumulate(data, m, params, all_precision=all_precision)
    return CocoEvaluation(data, params, m, precision, recall)
