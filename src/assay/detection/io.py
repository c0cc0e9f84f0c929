"""Detection inputs: COCO JSON (annotations + results) and assay's detection JSONL.

COCO (:func:`load_coco`) follows pycocotools' ``COCO`` / ``loadRes`` conventions exactly:
datums are the ground-truth images in ascending id order; labels are the categories in
ascending id order (label key ``"class"``, value the category name); a ground truth's
``area`` and ``iscrowd`` come from the file; a result's area is ``w * h`` of its ``bbox``
when the results carry boxes (decided by the first result), else its mask's pixel count;
polygons and uncompressed RLEs are rasterised at the image size. The data remembers the
``iou_type`` it was read for.

assay JSONL (:func:`~assay.detection.jsonl.load_jsonl`,
:func:`~assay.detection.jsonl.parse_datums`), one datum per line; see :mod:`assay.io.geometry`
for the record shape. The files are read by the shared readers of :mod:`assay.io` (the same ones
semantic segmentation uses). Bad input raises :class:`~assay.errors.InvalidInputError`
naming the file, the datum, the annotation and the field.

Example:
    >>> import json, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> gt = os.path.join(d, "gt.jsonl"); pr = os.path.join(d, "pr.jsonl")
    >>> ann = {"label": "cat", "box": [0, 0, 10, 10]}
    >>> _ = open(gt, "w").write(json.dumps({"uid": "a", "annotations": [ann]}))
    >>> _ = open(pr, "w").write(json.dumps({"uid": "a", "annotations": [{**ann, "score": 0.9}]}))
    >>> from assay.detection.jsonl import load_jsonl
    >>> data = load_jsonl(gt, pr)
    >>> data.labels, len(data.predictions)
    ([('class', 'cat')], 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.detection.jsonl import datum_record
from assay.detection.params import check_iou_type
from assay.detection.types import Annotations, DetectionData
from assay.errors import InvalidInputError
from assay.io.coco import (
    coco_categories,
    coco_images,
    read_coco_annotations,
    read_coco_results,
    result_columns,
)
from assay.io.coco_columns import AnnotationColumns
from assay.io.coco_geometry import coco_boxes, coco_rles
from assay.io.geometry import BOX, RASTER
from assay.io.jsonfiles import source_name
from assay.io.labels import DEFAULT_KEY, Label
from assay.io.masks import rle_bbox

__all__ = [
    "load_coco",
]


class _Labels:
    """The label list of a COCO dataset: categories in id order, then unknown ids seen."""

    def __init__(self, cat_ids: list[Any], names: list[str]) -> None:
        self.labels: list[Label] = [(DEFAULT_KEY, n) for n in names]
        self.ids: list[Any] = list(cat_ids)
        self.index = {c: i for i, c in enumerate(cat_ids)}
        self.kind = "str" if any(isinstance(c, str) for c in cat_ids) else "int"

    def of(self, cid: Any) -> int:
        cid = cid.item() if isinstance(cid, np.generic) else cid
        if cid not in self.index:
            # a category missing from the categories list: kept as a label of its own, so it
            # never changes COCO's numbers (no ground truth -> undefined, excluded from means)
            self.index[cid] = len(self.labels)
            self.labels.append((DEFAULT_KEY, str(cid)))
            self.ids.append(cid)
        return self.index[cid]


def _dense(ids: np.ndarray) -> tuple[int, int] | None:
    """``(lo, hi)`` of integer ids when a lookup table over ``[lo, hi]`` is cheap, else None."""
    if ids.dtype == object or len(ids) == 0:
        return None
    lo, hi = int(ids.min()), int(ids.max())
    return (lo, hi) if hi - lo <= 4 * len(ids) + (1 << 16) else None


def _datums(img_ids: np.ndarray, ids: np.ndarray, source: str) -> np.ndarray:
    """Positions of ``ids`` among the (sorted) image ids; unknown ids are an error."""
    if len(ids) == 0:
        return np.zeros(0, np.int64)
    span = _dense(ids)
    if span is not None and len(img_ids):  # one table lookup per id instead of a search
        lo, hi = span
        table = np.full(hi - lo + 1, -1, np.int64)
        inside = (img_ids >= lo) & (img_ids <= hi)
        table[img_ids[inside] - lo] = np.flatnonzero(inside)
        pos = table[ids - lo]
        bad = np.flatnonzero(pos < 0)
    else:
        pos = np.searchsorted(img_ids, ids) if len(img_ids) else np.zeros(len(ids), np.int64)
        pos_c = np.minimum(pos, max(len(img_ids) - 1, 0))
        bad = np.flatnonzero(
            (pos >= len(img_ids)) | (img_ids[pos_c] != ids) if len(img_ids) else ids == ids
        )
    if len(bad):
        i = int(bad[0])
        v = ids[i].item() if isinstance(ids[i], np.generic) else ids[i]
        raise InvalidInputError(
            f"unknown image id {v!r} (not in the ground-truth images)",
            source=source,
            record=f"annotation {i}",
            field="image_id",
        )
    return pos.astype(np.int64)


def _gt_rows(
    anns: list[dict[str, Any]], img_ids: np.ndarray, labels: _Labels, src: str
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Datum index, label index and annotation id of every ground-truth annotation."""
    for i, a in enumerate(anns):
        if "category_id" not in a:
            raise InvalidInputError(
                "annotation has no label (category_id)",
                source=src,
                record=datum_record(a.get("image_id"), a.get("id", i)),
                field="category_id",
            )
    ann_ids = [a.get("id", i + 1) for i, a in enumerate(anns)]
    bad = [
        i
        for i, v in enumerate(ann_ids)
        if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63
    ]
    if bad:
        raise InvalidInputError(
            f"id must be a 64-bit integer, got {ann_ids[bad[0]]!r}",
            source=src,
            record=f"annotation {bad[0]}",
            field="id",
        )
    if not anns:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), ann_ids
    ids = [
        {"image_id": a.get("image_id"), "category_id": a["category_id"], "score": 1.0} for a in anns
    ]
    cols = result_columns(ids, source=src, image_ids=img_ids, category_kind=labels.kind)
    lab = np.array([labels.of(c) for c in cols["category_id"]], np.int64)
    return _datums(img_ids, cols["image_id"], src), lab, ann_ids


def _label_index(labels: _Labels, cat: np.ndarray) -> np.ndarray:
    """The label of every category id (one lookup per distinct id)."""
    if len(cat) == 0:
        return np.zeros(0, np.int64)
    span = _dense(cat)
    if span is not None:  # a table over the ids instead of a sort
        lo = span[0]
        uniq = np.flatnonzero(np.bincount(cat - lo)) + lo
        table = np.zeros(span[1] - lo + 1, np.int64)
        table[uniq - lo] = [labels.of(u) for u in uniq.tolist()]
        return table[cat - lo]
    uniq, inv = np.unique(cat, return_inverse=True)
    return np.array([labels.of(u) for u in uniq.tolist()], dtype=np.int64)[inv.reshape(-1)]


def _groundtruth_columns(
    cols: AnnotationColumns, images: Any, labels: _Labels, segm: bool, src: str
) -> Annotations:
    """Ground truths from the columns of a well-formed file (no object per annotation)."""
    img_ids, heights, widths = images
    n = len(cols.image_id)
    if img_ids.dtype == object or labels.kind != "int":
        raise AssertionError("columns are read only for integer ids")  # read_coco_annotations
    d = _datums(img_ids, cols.image_id, src)
    unknown = ~np.isin(cols.category_id, np.asarray(labels.ids, np.int64))
    for c in dict.fromkeys(cols.category_id[unknown].tolist()):  # first-seen order, as dicts
        labels.of(c)
    lab = _label_index(labels, cols.category_id)

    def where(i: int) -> str:
        return datum_record(img_ids[d[i]], int(cols.ann_id[i]))

    box = coco_boxes(cols.bbox, source=src, record=where)
    area = box[:, 2] * box[:, 3]
    rles = np.empty(n, dtype=object)
    if segm and n:
        rles, area = coco_rles(cols.segmentation or [], heights[d], widths[d], source=src,
                               record=where)  # fmt: skip
    area = np.where(np.isnan(cols.area), area, cols.area)  # pycocotools reads the file's area
    kind = np.full(n, RASTER if segm else BOX, np.int8)
    return Annotations(
        d, lab, box, area, np.ones(n), cols.crowd, cols.ann_id, kind, np.empty(n, object), rles
    )


def _groundtruths(
    gt: dict[str, Any], images: Any, labels: _Labels, segm: bool, src: str
) -> Annotations:
    anns = gt["annotations"]
    if isinstance(anns, AnnotationColumns):
        return _groundtruth_columns(anns, images, labels, segm, src)
    img_ids, heights, widths = images
    d, lab, ann_ids = _gt_rows(anns, img_ids, labels, src)

    def where(i: int) -> str:
        return datum_record(img_ids[d[i]], ann_ids[i])

    n = len(anns)
    box = coco_boxes([a.get("bbox") for a in anns], source=src, record=where)
    rles = np.empty(n, dtype=object)
    area = box[:, 2] * box[:, 3]
    if segm and n:
        segms = [a.get("segmentation") for a in anns]
        rles, area = coco_rles(segms, heights[d], widths[d], source=src, record=where)
    given = [a.get("area") for a in anns]
    bad = [i for i, v in enumerate(given) if v is not None and not _is_number(v)]
    if bad:
        raise InvalidInputError(
            f"area must be a number, got {given[bad[0]]!r}",
            source=src,
            record=where(bad[0]),
            field="area",
        )
    # pycocotools needs 'area'; assay fills it from the geometry when it is missing
    area = np.array([area[i] if v is None else float(v) for i, v in enumerate(given)], np.float64)
    crowd = np.array([bool(a.get("iscrowd", 0)) for a in anns], dtype=bool)
    kind = np.full(n, RASTER if segm else BOX, np.int8)
    ids = np.asarray(ann_ids, dtype=np.int64)
    return Annotations(d, lab, box, area, np.ones(n), crowd, ids, kind, np.empty(n, object), rles)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _predictions(dt: list[Any], images: Any, labels: _Labels, segm: bool, src: str) -> Annotations:
    img_ids, heights, widths = images
    cols = result_columns(
        dt,
        source=src,
        image_ids=img_ids,
        category_kind=labels.kind,
    )
    n = len(cols["score"])
    d = _datums(img_ids, cols["image_id"], src)
    lab = _label_index(labels, cols["category_id"])
    boxes, segms = cols["bbox"], cols["segmentation"]
    use_box = n > 0 and boxes[0] is not None and len(boxes[0]) > 0  # loadRes: the first decides

    def where(i: int) -> str:
        return datum_record(img_ids[d[i]], i)

    rles = np.empty(n, dtype=object)
    area = np.zeros(n)
    if segm or not use_box:
        rles, area = coco_rles(segms, heights[d], widths[d], source=src, record=where)
    if use_box:
        box = coco_boxes(boxes, source=src, record=where, typed=cols["typed"])
        area = box[:, 2] * box[:, 3]  # loadRes: area = w * h when results carry boxes
    else:
        box = rle_bbox(list(rles)) if n else np.zeros((0, 4))
    return Annotations(
        d,
        lab,
        box,
        area,
        cols["score"],
        np.zeros(n, bool),
        np.arange(1, n + 1, dtype=np.int64),
        np.full(n, RASTER if segm else BOX, np.int8),
        np.empty(n, dtype=object),
        rles,
    )


def load_coco(groundtruths: Any, predictions: Any, *, iou_type: str = "bbox") -> DetectionData:
    """Read a COCO annotations file and a COCO results list into :class:`DetectionData`.

    Args:
        groundtruths: path to (or parsed dict of) a COCO annotations file.
        predictions: path to (or parsed list of) COCO results (``image_id``, ``category_id``,
            ``score`` and ``bbox`` and/or ``segmentation``).
        iou_type: ``"bbox"`` keeps boxes only; ``"segm"`` also reads the masks. The data
            remembers it: evaluating it with the other IoU type is an error.

    Raises:
        InvalidInputError: unknown image id, negative box size, mask size mismatch, ...
    """
    check_iou_type(iou_type)
    gsrc = source_name(groundtruths, "groundtruths")
    psrc = source_name(predictions, "predictions")
    gt = read_coco_annotations(groundtruths, columns=iou_type)
    dt = read_coco_results(predictions)
    images = coco_images(gt, source=gsrc)
    labels = _Labels(*coco_categories(gt, source=gsrc))
    segm = iou_type == "segm"
    gts = _groundtruths(gt, images, labels, segm, gsrc)
    dts = _predictions(dt, images, labels, segm, psrc)
    return DetectionData(
        list(images.ids.tolist()),
        images.heights,
        images.widths,
        labels.labels,
        gts,
        dts,
        labels.ids,
        iou_type=iou_type,
    )
