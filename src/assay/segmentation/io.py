"""Read semantic-segmentation JSONL into label maps.

Same record shape as detection JSONL (``uid``, ``height``, ``width``, ``annotations`` with a
label and one of ``mask_rle``, ``polygon``, ``box``); one ground-truth file and one
prediction file (scores are not needed). Each annotation is rasterised at the datum's size
(pycocotools) and painted into the label map of its label key; two annotations of the same
key covering the same pixel are an error (semantic segmentation gives a pixel one label).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from pycocotools import mask as mask_utils

from assay.detection.geometry import decode_rle
from assay.errors import InvalidInputError

__all__ = ["label_maps"]


def _raster(ann: dict[str, Any], h: int, w: int, source: str, rec: str) -> np.ndarray:
    from assay.detection.io import _geometry  # shared validation of box / polygon / mask_rle

    kind, box, _area, poly, rle = _geometry(ann, h, w, source, rec)
    if rle is None:
        if poly is not None:
            rings = [np.asarray(poly.exterior.coords).ravel().tolist()]
            m = decode_rle(mask_utils.merge(mask_utils.frPyObjects(rings, h, w))).astype(bool)
            for hole in poly.interiors:
                hm = decode_rle(
                    mask_utils.merge(
                        mask_utils.frPyObjects([np.asarray(hole.coords).ravel().tolist()], h, w)
                    )
                )
                m &= ~hm.astype(bool)
            return m
        rle = mask_utils.frPyObjects(np.array([box], dtype=np.float64), h, w)[0]
    return decode_rle(rle).astype(bool)


def label_maps(
    gt: list[dict[str, Any]],
    pr: list[dict[str, Any]],
    source: str = "groundtruths",
    psource: str = "predictions",
) -> Iterator[tuple[Any, str, list[str], np.ndarray, np.ndarray]]:
    """Yield ``(uid, label_key, labels, gt_map, pred_map)`` per datum and label key."""
    from assay.detection.io import _labels_of

    preds: dict[Any, dict[str, Any]] = {}
    for rec in pr:
        uid = rec.get("uid")
        if uid in preds:
            raise InvalidInputError(
                "datum listed twice", source=psource, record=f"datum {uid!r}", field="uid"
            )
        preds[uid] = rec
    known = {rec.get("uid") for rec in gt}
    for uid in preds:
        if uid not in known:
            raise InvalidInputError(
                "unknown datum uid (not in the ground truths)",
                source=psource,
                record=f"datum {uid!r}",
                field="uid",
            )
    for rec in gt:
        uid = rec.get("uid")
        if uid is None:
            raise InvalidInputError("datum has no uid", source=source, field="uid")
        h, w = int(rec.get("height", 0) or 0), int(rec.get("width", 0) or 0)
        if h <= 0 or w <= 0:
            raise InvalidInputError(
                "segmentation needs height and width",
                source=source,
                record=f"datum {uid!r}",
                field="height",
            )
        maps: dict[str, dict[str, Any]] = {}
        for side, r, src in (
            ("gt", rec, source),
            ("pr", preds.get(uid, {"annotations": []}), psource),
        ):
            for j, ann in enumerate(r.get("annotations", [])):
                where = f"datum {uid!r} annotation {j}"
                m = _raster(ann, h, w, src, where)
                for (key, value), _s in _labels_of(ann, src, where, prediction=False):
                    entry = maps.setdefault(
                        key,
                        {
                            "labels": [],
                            "gt": np.zeros((h, w), np.int32),
                            "pr": np.zeros((h, w), np.int32),
                        },
                    )
                    if value not in entry["labels"]:
                        entry["labels"].append(value)
                    target = entry[side]
                    if (target[m] != 0).any():
                        raise InvalidInputError(
                            f"mask overlaps another mask of label key {key!r}",
                            source=src,
                            record=where,
                            field="mask_rle",
                        )
                    target[m] = entry["labels"].index(value) + 1
        for key, e in maps.items():
            yield uid, key, e["labels"], e["gt"], e["pr"]
