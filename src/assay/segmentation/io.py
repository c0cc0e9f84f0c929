"""Read semantic-segmentation JSONL into label maps.

Same record shape as detection JSONL (``uid``, ``height``, ``width``, ``annotations`` with a
label and one of ``mask_rle``, ``polygon``, ``box``; see :mod:`assay.io.geometry`); one
ground-truth file and one prediction file (scores are not needed). Each annotation is
rasterised at the datum's size (pycocotools; at most
:data:`~assay.io.masks.MAX_RASTER_PIXELS` pixels) and painted into the label map of its
label key; two annotations of the same key covering the same pixel are an error (semantic
segmentation gives a pixel one label). Errors name the file that holds the problem: an
empty ground-truth file, a COCO annotations file given as ground truths, a uid listed
twice.

Example:
    >>> gt = [{"uid": "a", "height": 2, "width": 2,
    ...        "annotations": [{"label": "road", "box": [0, 0, 2, 1]}]}]
    >>> [(uid, key, labels, g.tolist()) for uid, key, labels, g, _ in label_maps(gt, [])]
    [('a', 'class', ['road'], [[1, 1], [0, 0]])]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.io.geometry import datum_size, parse_geometry
from assay.io.jsonfiles import read_json, read_jsonl_records, source_name
from assay.io.labels import parse_labels
from assay.io.masks import box_to_rle, check_raster_size, decode_rle, polygon_to_rle

__all__ = ["label_maps", "read_datums"]


def read_datums(source: Any, *, default: str) -> list[dict[str, Any]]:
    """Datum records from a JSONL path (or an iterable of dicts), naming the right file.

    A COCO annotations file is recognised and refused with a pointer to ``assay detection``.
    """
    name = source_name(source, default)
    coco = InvalidInputError(
        "is a COCO annotations file; assay segmentation reads assay JSONL (one datum per line)",
        source=name,
    )
    try:
        records = read_jsonl_records(source, name=name)
        if records and "uid" not in records[0] and "images" in records[0]:
            raise coco
        return records
    except InvalidInputError as e:
        if e is coco:
            raise
        if isinstance(source, (str, Path)):
            try:
                whole = read_json(source)
            except InvalidInputError:
                whole = None
            if isinstance(whole, dict) and "images" in whole:
                raise coco from None
        raise


def _raster(ann: dict[str, Any], h: int, w: int, source: str, rec: str) -> np.ndarray:
    g = parse_geometry(ann, h, w, source=source, record=rec)
    rle = g.rle
    if rle is None and g.polygon is not None:
        poly = g.polygon
        m = decode_rle(polygon_to_rle([np.asarray(poly.exterior.coords).ravel().tolist()], h, w))
        mask = m.astype(bool)
        for hole in poly.interiors:
            hm = decode_rle(polygon_to_rle([np.asarray(hole.coords).ravel().tolist()], h, w))
            mask &= ~hm.astype(bool)
        return mask
    if rle is None:
        rle = box_to_rle(g.box, h, w)
    return decode_rle(rle).astype(bool)


def _uid(rec: dict[str, Any], i: int, source: str) -> Any:
    uid = rec.get("uid")
    if uid is None or isinstance(uid, (bool, list, dict, float)):
        raise InvalidInputError(
            f"datum needs a string or integer uid, got {uid!r}",
            source=source,
            record=f"datum {i + 1}",
            field="uid",
        )
    return uid


def _predictions_by_uid(
    gt: list[dict[str, Any]], pr: list[dict[str, Any]], source: str, psource: str
) -> dict[Any, dict[str, Any]]:
    """The prediction record of each uid; uids are checked in both files."""
    known: set[Any] = set()
    for i, rec in enumerate(gt):
        uid = _uid(rec, i, source)
        if uid in known:
            raise InvalidInputError(
                "datum listed twice", source=source, record=f"datum {uid!r}", field="uid"
            )
        known.add(uid)
    preds: dict[Any, dict[str, Any]] = {}
    for i, rec in enumerate(pr):
        uid = _uid(rec, i, psource)
        if uid in preds:
            raise InvalidInputError(
                "datum listed twice", source=psource, record=f"datum {uid!r}", field="uid"
            )
        if uid not in known:
            raise InvalidInputError(
                "unknown datum uid (not in the ground truths)",
                source=psource,
                record=f"datum {uid!r}",
                field="uid",
            )
        preds[uid] = rec
    return preds


def label_maps(
    gt: list[dict[str, Any]],
    pr: list[dict[str, Any]],
    source: str = "groundtruths",
    psource: str = "predictions",
) -> Iterator[tuple[Any, str, list[str], np.ndarray, np.ndarray]]:
    """Yield ``(uid, label_key, labels, gt_map, pred_map)`` per datum and label key.

    Uids and datum sizes are checked before the first datum is yielded; annotations as
    they are read.
    """
    if not gt and pr:
        raise InvalidInputError(
            "holds no datum, but the predictions name datums it should hold", source=source
        )
    preds = _predictions_by_uid(gt, pr, source, psource)
    for rec in gt:
        uid = rec["uid"]
        h, w = datum_size(rec, source=source, record=f"datum {uid!r}")
        if h <= 0 or w <= 0:
            raise InvalidInputError(
                "segmentation needs height and width",
                source=source,
                record=f"datum {uid!r}",
                field="height",
            )
        check_raster_size(h, w, source=source, record=f"datum {uid!r}", field="height")
    for rec in gt:
        yield from _datum_maps(rec, preds.get(rec["uid"], {"annotations": []}), source, psource)


def _datum_maps(
    rec: dict[str, Any], pred: dict[str, Any], source: str, psource: str
) -> Iterator[tuple[Any, str, list[str], np.ndarray, np.ndarray]]:
    uid = rec["uid"]
    h, w = int(rec["height"]), int(rec["width"])
    maps: dict[str, dict[str, Any]] = {}
    for side, r, src in (("gt", rec, source), ("pr", pred, psource)):
        anns = r.get("annotations", [])
        if not isinstance(anns, list):
            raise InvalidInputError(
                "annotations must be a list",
                source=src,
                record=f"datum {uid!r}",
                field="annotations",
            )
        for j, ann in enumerate(anns):
            where = f"datum {uid!r} annotation {j}"
            if not isinstance(ann, dict):
                raise InvalidInputError("annotation must be an object", source=src, record=where)
            m = _raster(ann, h, w, src, where)
            for (key, value), _s in parse_labels(ann, source=src, record=where, prediction=False):
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
