"""Filters: the same evaluation on a subset of datums or labels, without reading anything again.

:func:`subset` keeps the datums whose uid is listed (in their original order, so ties between
equal scores are broken as before) and the labels listed (a value such as ``"cat"`` matches
that value under any key, a ``(key, value)`` pair one label); the ground truths and predictions
of every other datum or label are dropped. Computing on the subset gives exactly what loading
only those datums and annotations would give.

Example:
    >>> from assay.detection.io import parse_datums
    >>> box = {"box": [0, 0, 10, 10]}
    >>> data = parse_datums(
    ...     [{"uid": "a", "annotations": [{"label": "cat", **box}, {"label": "dog", **box}]},
    ...      {"uid": "b", "annotations": [{"label": "cat", **box}]}], [])
    >>> small = subset(data, datums=["b"], labels=["cat"])
    >>> small.uids, small.labels, len(small.groundtruths)
    (['b'], [('class', 'cat')], 1)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from assay.detection.types import Annotations, DetectionData
from assay.errors import InvalidInputError

__all__ = ["subset"]


def _datum_mask(data: DetectionData, datums: Sequence[Hashable] | None) -> np.ndarray:
    if datums is None:
        return np.ones(data.n_datums, dtype=bool)
    if isinstance(datums, (str, bytes)):
        raise InvalidInputError("must be a list of datum uids, not one string", source="datums")
    wanted = set(datums)
    known = set(data.uids)
    missing = [u for u in datums if u not in known]
    if missing:
        raise InvalidInputError(f"unknown datum uid {missing[0]!r}", source="datums")
    return np.array([u in wanted for u in data.uids], dtype=bool)


def _label_mask(data: DetectionData, labels: Sequence[Any] | None) -> np.ndarray:
    if labels is None:
        return np.ones(len(data.labels), dtype=bool)
    if isinstance(labels, (str, bytes)):
        raise InvalidInputError("must be a list of labels, not one string", source="labels")
    keep = np.zeros(len(data.labels), dtype=bool)
    for want in labels:
        hit = [
            i
            for i, (k, v) in enumerate(data.labels)
            if (tuple(want) == (k, v) if isinstance(want, (tuple, list)) else str(want) == v)
        ]
        if not hit:
            raise InvalidInputError(f"unknown label {want!r}", source="labels")
        keep[hit] = True
    return keep


def _take(a: Annotations, keep_datum: np.ndarray, keep_label: np.ndarray) -> Annotations:
    rows = keep_datum[a.datum] & keep_label[a.label] if len(a) else np.zeros(0, bool)
    out = a.take(rows)
    out.datum = (np.cumsum(keep_datum) - 1)[out.datum]
    out.label = (np.cumsum(keep_label) - 1)[out.label]
    return out


def subset(
    data: DetectionData,
    *,
    datums: Sequence[Hashable] | None = None,
    labels: Sequence[Any] | None = None,
) -> DetectionData:
    """``data`` restricted to the listed datum uids and labels (None keeps all).

    Raises:
        InvalidInputError: a uid or label that is not in the data.
    """
    kd = _datum_mask(data, datums)
    kl = _label_mask(data, labels)
    idx = np.flatnonzero(kd)
    lidx = np.flatnonzero(kl)
    return DetectionData(
        uids=[data.uids[i] for i in idx],
        heights=data.heights[idx],
        widths=data.widths[idx],
        labels=[data.labels[i] for i in lidx],
        groundtruths=_take(data.groundtruths, kd, kl),
        predictions=_take(data.predictions, kd, kl),
        label_ids=[data.label_ids[i] for i in lidx if i < len(data.label_ids)],
        iou_type=data.iou_type,
    )
