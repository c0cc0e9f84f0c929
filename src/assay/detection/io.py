"""Readers: COCO JSON (annotations file + results list) and assay's detection JSONL.

COCO (``load_coco``) follows pycocotools' ``COCO`` / ``loadRes`` conventions exactly:
datums are the ground-truth images in ascending id order; labels are the categories in
ascending id order (label key ``"class"``, value the category name); a ground truth's
``area`` and ``iscrowd`` come from the file; a result's area is ``w * h`` of its ``bbox``
when the results carry boxes, else the pixel count of its mask; polygons and uncompressed
RLEs are rasterised with ``pycocotools.mask`` at the image size.

assay JSONL (``load_jsonl``), one datum per line::

    {"uid": "img1", "height": 480, "width": 640, "annotations": [
        {"label": "cat", "box": [xmin, ymin, xmax, ymax]},
        {"labels": [{"key": "class", "value": "dog", "score": 0.7}], "polygon": [[[x, y], ...], [hole...]]},
        {"label": "cat", "score": 0.9, "mask_rle": {"size": [480, 640], "counts": "..."}},
        {"label": "person", "box": [...], "iscrowd": true}]}

A label is a string (key ``"class"``), ``{"key", "value"}``, or a list of them under
``labels``; a prediction's score is ``score`` on the annotation or on each label.

Bad input raises :class:`~assay.errors.InvalidInputError` naming the file, the datum, the
annotation and the field. Example:

    >>> import json, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> gt = os.path.join(d, "gt.jsonl"); pr = os.path.join(d, "pr.jsonl")
    >>> _ = open(gt, "w").write(json.dumps({"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}))
    >>> _ = open(pr, "w").write(json.dumps({"uid": "a", "annotations": [{"label": "cat", "score": 0.9, "box": [0, 0, 10, 10]}]}))
    >>> data = load_jsonl(gt, pr)
    >>> data.labels, len(data.predictions)
    ([('class', 'cat')], 1)
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import re
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import shapely
from pycocotools import mask as mask_utils

from assay.detection.geometry import polygon_to_rle, rle_area, rle_bbox
from assay.detection.types import BOX, POLYGON, RASTER, Annotations, DetectionData, Label
from assay.errors import InvalidInputError
from assay.io.tables import read_jsonl

__all__ = ["load_coco", "load_jsonl", "parse_datums", "read_json"]

DEFAULT_KEY = "class"


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic GC while decoding: millions of fresh containers would trigger it
    over and over (halves the decode time of a COCO-scale results file)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_json(source: str | Path | bytes | Any, *, name: str = "input") -> Any:
    """Parse a JSON file (or bytes) with msgspec; an already-parsed object is returned as is."""
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, (str, Path)):
        p = Path(source)
        if not p.exists():
            raise InvalidInputError("file not found", source=str(p))
        raw, name = p.read_bytes(), str(p)
    else:
        return source
    try:
        with _no_gc():
            return msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise InvalidInputError(f"malformed JSON: {e}", source=name) from None


def _src(source: Any, default: str) -> str:
    return str(source) if isinstance(source, (str, Path)) else default


def _rec(uid: Any, ann: Any = None) -> str:
    uid = uid.item() if isinstance(uid, np.generic) else uid
    ann = ann.item() if isinstance(ann, np.generic) else ann
    return f"datum {uid!r}" + ("" if ann is None else f" annotation {ann}")


# --------------------------------------------------------------------------------------- COCO


def load_coco(groundtruths: Any, predictions: Any, *, iou_type: str = "bbox") -> DetectionData:
    """Read a COCO annotations file and a COCO results list into :class:`DetectionData`.

    Args:
        groundtruths: path to (or parsed dict of) a COCO annotations file.
        predictions: path to (or parsed list of) COCO results (``image_id``, ``category_id``,
            ``score`` and ``bbox`` and/or ``segmentation``).
        iou_type: ``"bbox"`` keeps boxes only; ``"segm"`` also decodes masks (RLE).

    Raises:
        InvalidInputError: unknown image id, negative box size, mask size mismatch, ...
    """
    gsrc, psrc = _src(groundtruths, "groundtruths"), _src(predictions, "predictions")
    gt = read_json(groundtruths)
    dt = _load_results(predictions)
    if not isinstance(gt, dict) or "images" not in gt or "annotations" not in gt:
        raise InvalidInputError(
            "expected a COCO annotations object with 'images' and 'annotations'", source=gsrc
        )
    if isinstance(dt, dict) and "annotations" in dt:
        dt = dt["annotations"]
    if not isinstance(dt, list):
        raise InvalidInputError("expected a JSON list of COCO results", source=psrc)
    segm = iou_type == "segm"
    if iou_type not in ("bbox", "segm"):
        raise InvalidInputError(f"iou_type must be 'bbox' or 'segm', got {iou_type!r}", source=psrc)

    images = sorted(gt["images"], key=lambda im: im["id"])
    img_ids = np.array([im["id"] for im in images])
    if len(np.unique(img_ids)) != len(img_ids):
        raise InvalidInputError("duplicate image id", source=gsrc, field="images")
    heights = np.array([int(im.get("height", 0)) for im in images], dtype=np.int64)
    widths = np.array([int(im.get("width", 0)) for im in images], dtype=np.int64)
    cats = sorted(gt.get("categories", []), key=lambda c: c["id"])
    cat_ids = [c["id"] for c in cats]
    names = [str(c.get("name", c["id"])) for c in cats]
    if len(set(names)) != len(names):
        names = [str(c) for c in cat_ids]
    cat_index = {c: i for i, c in enumerate(cat_ids)}
    labels: list[Label] = [(DEFAULT_KEY, n) for n in names]
    label_ids: list[Any] = list(cat_ids)

    def cat_of(cid: Any) -> int:
        if cid not in cat_index:
            # a category missing from the categories list: kept as a label of its own, so it
            # never changes COCO's numbers (no ground truth -> undefined, excluded from means)
            cat_index[cid] = len(labels)
            labels.append((DEFAULT_KEY, str(cid)))
            label_ids.append(cid)
        return cat_index[cid]

    def datum_of(ids: np.ndarray, source: str, anns: list[dict]) -> np.ndarray:
        if len(ids) == 0:
            return np.zeros(0, np.int64)
        pos = np.searchsorted(img_ids, ids)
        pos_c = np.minimum(pos, len(img_ids) - 1) if len(img_ids) else pos
        bad = (
            np.flatnonzero((pos >= len(img_ids)) | (img_ids[pos_c] != ids))
            if len(img_ids)
            else np.arange(len(ids))
        )
        if len(bad):
            i = int(bad[0])
            raise InvalidInputError(
                f"unknown image id {ids[i].item() if hasattr(ids[i], 'item') else ids[i]!r} (not in the ground-truth images)",
                source=source,
                record=f"annotation {i}",
                field="image_id",
            )
        return pos.astype(np.int64)

    # ground truths
    ganns = gt["annotations"]
    for i, a in enumerate(ganns):
        if "category_id" not in a:
            raise InvalidInputError(
                "annotation has no label (category_id)",
                source=gsrc,
                record=_rec(a.get("image_id"), a.get("id", i)),
                field="category_id",
            )
    g_img = datum_of(np.array([a.get("image_id") for a in ganns]), gsrc, ganns)
    g_lab = np.array([cat_of(a["category_id"]) for a in ganns], dtype=np.int64)
    g_crowd = np.array([bool(a.get("iscrowd", 0)) for a in ganns], dtype=bool)
    g_id = np.array([a.get("id", i + 1) for i, a in enumerate(ganns)], dtype=np.int64)
    g_box = _boxes(
        [a.get("bbox") for a in ganns], gsrc, ganns, img_ids[g_img] if len(ganns) else []
    )
    g_rles = np.empty(len(ganns), dtype=object)
    g_kind = np.full(len(ganns), BOX, np.int8)
    if segm:
        for i, a in enumerate(ganns):
            d = int(g_img[i])
            g_rles[i] = _coco_rle(
                a.get("segmentation"),
                int(heights[d]),
                int(widths[d]),
                gsrc,
                img_ids[d],
                a.get("id", i),
            )
        g_kind[:] = RASTER
    has_area = np.array(["area" in a for a in ganns], dtype=bool)
    g_area = np.array([float(a.get("area", 0.0)) for a in ganns], dtype=np.float64)
    if not has_area.all():
        # pycocotools needs 'area'; assay fills it from the geometry
        miss = np.flatnonzero(~has_area)
        g_area[miss] = rle_area(list(g_rles[miss])) if segm else g_box[miss, 2] * g_box[miss, 3]

    # predictions
    cols = _result_columns(dt, psrc)
    n = len(cols["score"])
    d_img = datum_of(cols["image_id"], psrc, dt)
    cat_arr = cols["category_id"]
    uniq, inv = np.unique(cat_arr, return_inverse=True) if n else (cat_arr, np.zeros(0, np.int64))
    d_lab = (
        np.array([cat_of(u.item() if hasattr(u, "item") else u) for u in uniq], dtype=np.int64)[inv]
        if n
        else np.zeros(0, np.int64)
    )
    d_score = cols["score"]
    if n and not np.isfinite(d_score).all():
        i = int(np.flatnonzero(~np.isfinite(d_score))[0])
        raise InvalidInputError(
            "score must be finite", source=psrc, record=_rec(cols["image_id"][i], i), field="score"
        )
    boxes, segms = cols["bbox"], cols["segmentation"]
    use_box = (
        n > 0 and boxes[0] is not None and len(boxes[0]) > 0
    )  # loadRes: decided by the first result
    d_rles = np.empty(n, dtype=object)
    d_kind = np.full(n, BOX, np.int8)
    if segm or not use_box:
        for i in range(n):
            d = int(d_img[i])
            d_rles[i] = _coco_rle(segms[i], int(heights[d]), int(widths[d]), psrc, img_ids[d], i)
        d_kind[:] = RASTER
    if use_box:
        d_box = _boxes(boxes, psrc, None, img_ids[d_img])
        d_area = d_box[:, 2] * d_box[:, 3]  # loadRes: area = w * h when results carry boxes
    else:
        d_box = rle_bbox(list(d_rles)) if n else np.zeros((0, 4))
        d_area = rle_area(list(d_rles)) if n else np.zeros(0)
    del cols, boxes, segms
    if not segm:
        d_kind[:] = BOX
        g_kind[:] = BOX

    gts = Annotations(
        g_img,
        g_lab,
        g_box,
        g_area,
        np.ones(len(ganns)),
        g_crowd,
        g_id,
        g_kind,
        np.empty(len(ganns), dtype=object),
        g_rles,
    )
    dts = Annotations(
        d_img,
        d_lab,
        d_box,
        d_area,
        d_score,
        np.zeros(n, bool),
        np.arange(1, n + 1, dtype=np.int64),
        d_kind,
        np.empty(n, dtype=object),
        d_rles,
    )
    return DetectionData(list(img_ids.tolist()), heights, widths, labels, gts, dts, label_ids)


class _Result(msgspec.Struct, gc=False):
    """One COCO result, decoded by msgspec straight from the JSON bytes (no dict per result)."""

    image_id: int | str
    category_id: int | str
    score: float
    bbox: tuple[float, float, float, float] | None = None
    segmentation: Any = None


_RESULTS = msgspec.json.Decoder(list[_Result])


def _load_results(source: Any) -> Any:
    """A results list: typed msgspec decoding for a file holding a JSON list, else as given."""
    if not isinstance(source, (str, Path)):
        return source
    path = Path(source)
    if not path.exists():
        raise InvalidInputError("file not found", source=str(path))
    raw = path.read_bytes()
    if raw.lstrip()[:1] != b"[":
        return read_json(raw, name=str(path))
    try:
        with _no_gc():
            return _RESULTS.decode(raw)
    except msgspec.ValidationError as e:
        m = re.search(r"\$\[(\d+)\](?:\.(\w+))?", str(e))
        rec = f"annotation {m.group(1)}" if m else None
        field = m.group(2) if m and m.group(2) else None
        if (
            field == "bbox"
        ):  # e.g. an empty or short bbox: the generic path reports or accepts it as COCO does
            return read_json(raw, name=str(path))
        reason = str(e).split(" - at ")[0]
        if "missing required field" in reason:
            field = reason.split("`")[1] if "`" in reason else field
            reason = "missing required field" + (" (label)" if field == "category_id" else "")
        raise InvalidInputError(reason, source=str(path), record=rec, field=field) from None
    except msgspec.DecodeError as e:
        raise InvalidInputError(f"malformed JSON: {e}", source=str(path)) from None


def _result_columns(dt: list[Any], source: str) -> dict[str, Any]:
    """Columns of a COCO results list (msgspec structs or dicts)."""
    n = len(dt)
    if n and isinstance(dt[0], _Result):
        img = list(map(attrgetter("image_id"), dt))
        cat = list(map(attrgetter("category_id"), dt))
        score = np.fromiter(map(attrgetter("score"), dt), dtype=np.float64, count=n)
        bbox = list(map(attrgetter("bbox"), dt))
        seg = list(map(attrgetter("segmentation"), dt))
    else:
        for i, a in enumerate(dt):
            if not isinstance(a, dict) or "category_id" not in a:
                raise InvalidInputError(
                    "detection has no label (category_id)",
                    source=source,
                    record=f"annotation {i}",
                    field="category_id",
                )
        img = [a.get("image_id") for a in dt]
        cat = [a["category_id"] for a in dt]
        try:
            score = np.fromiter((a["score"] for a in dt), dtype=np.float64, count=n)
        except (KeyError, TypeError, ValueError):
            i = next(i for i, a in enumerate(dt) if not isinstance(a.get("score"), (int, float)))
            raise InvalidInputError(
                "missing or non-numeric score",
                source=source,
                record=_rec(dt[i].get("image_id"), i),
                field="score",
            ) from None
        bbox = [a.get("bbox") for a in dt]
        seg = [a.get("segmentation") for a in dt]
    return {
        "image_id": _id_array(img),
        "category_id": _id_array(cat),
        "score": score,
        "bbox": bbox,
        "segmentation": seg,
    }


def _id_array(ids: list[Any]) -> np.ndarray:
    try:
        return np.array(ids, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.array(ids, dtype=object)


def _boxes(boxes: list[Any], source: str, anns: list[dict] | None, img: Any) -> np.ndarray:
    n = len(boxes)
    try:
        if n and set(map(len, boxes)) != {4}:
            raise ValueError
        flat = np.fromiter(itertools.chain.from_iterable(boxes), dtype=np.float64, count=4 * n)
        arr = flat.reshape(n, 4)
    except (TypeError, ValueError):
        i = next(i for i, b in enumerate(boxes) if not isinstance(b, (list, tuple)) or len(b) != 4)
        raise InvalidInputError(
            "bbox must be [x, y, width, height]",
            source=source,
            record=_rec(img[i], i if anns is None else anns[i].get("id", i)),
            field="bbox",
        ) from None
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1) | (arr[:, 2] < 0) | (arr[:, 3] < 0))
    if len(bad):
        i = int(bad[0])
        raise InvalidInputError(
            f"bbox {boxes[i]} has a negative or non-finite size",
            source=source,
            record=_rec(img[i], i if anns is None else anns[i].get("id", i)),
            field="bbox",
        )
    return arr


def _coco_rle(segm: Any, h: int, w: int, source: str, uid: Any, ann: Any) -> dict[str, Any]:
    rec = _rec(uid, ann)
    if segm is None:
        raise InvalidInputError(
            "missing segmentation", source=source, record=rec, field="segmentation"
        )
    if isinstance(segm, list):
        if not segm or any(not isinstance(p, list) or len(p) < 6 or len(p) % 2 for p in segm):
            raise InvalidInputError(
                "polygon must be lists of at least 3 (x, y) points",
                source=source,
                record=rec,
                field="segmentation",
            )
        return polygon_to_rle(segm, h, w)
    if not isinstance(segm, dict) or "counts" not in segm or "size" not in segm:
        raise InvalidInputError(
            "segmentation must be polygons or an RLE {size, counts}",
            source=source,
            record=rec,
            field="segmentation",
        )
    if list(segm["size"]) != [h, w]:
        raise InvalidInputError(
            f"mask size {list(segm['size'])} differs from the image size {[h, w]}",
            source=source,
            record=rec,
            field="segmentation",
        )
    if isinstance(segm["counts"], list):
        return mask_utils.frPyObjects(segm, h, w)
    counts = segm["counts"]
    return {"size": [h, w], "counts": counts.encode() if isinstance(counts, str) else counts}


# --------------------------------------------------------------------------------------- JSONL


def _read_jsonl(source: Any, name: str) -> list[dict[str, Any]]:
    """Datum dicts from a JSONL path, or the given iterable of dicts as is."""
    return read_jsonl(source) if isinstance(source, (str, Path)) else list(source)


def load_jsonl(groundtruths: Any, predictions: Any) -> DetectionData:
    """Read assay detection JSONL files (or lists of datum dicts); see the module docstring."""
    gsrc, psrc = _src(groundtruths, "groundtruths"), _src(predictions, "predictions")
    return parse_datums(_read_jsonl(groundtruths, gsrc), _read_jsonl(predictions, psrc), gsrc, psrc)


def parse_datums(
    gt_datums: list[dict[str, Any]],
    pr_datums: list[dict[str, Any]],
    gsrc: str = "groundtruths",
    psrc: str = "predictions",
) -> DetectionData:
    """Build :class:`DetectionData` from datum dicts (the JSONL records)."""
    uids: list[Any] = []
    index: dict[Any, int] = {}
    hs: list[int] = []
    ws: list[int] = []
    for rec in gt_datums:
        if "uid" not in rec:
            raise InvalidInputError(
                "datum has no uid", source=gsrc, record=f"datum {len(uids) + 1}", field="uid"
            )
        uid = rec["uid"]
        if uid in index:
            raise InvalidInputError(
                "datum listed twice", source=gsrc, record=_rec(uid), field="uid"
            )
        index[uid] = len(uids)
        uids.append(uid)
        hs.append(int(rec.get("height", 0) or 0))
        ws.append(int(rec.get("width", 0) or 0))
    labels: list[Label] = []
    lindex: dict[Label, int] = {}
    rows_g = _Rows()
    rows_p = _Rows()
    for rec in gt_datums:
        d = index[rec["uid"]]
        _parse_annotations(rec, d, hs[d], ws[d], gsrc, labels, lindex, rows_g, prediction=False)
    seen_p: set[Any] = set()
    for rec in pr_datums:
        uid = rec.get("uid")
        if uid not in index:
            raise InvalidInputError(
                "unknown datum uid (not in the ground truths)",
                source=psrc,
                record=_rec(uid),
                field="uid",
            )
        if uid in seen_p:
            raise InvalidInputError(
                "datum listed twice", source=psrc, record=_rec(uid), field="uid"
            )
        seen_p.add(uid)
        d = index[uid]
        _parse_annotations(rec, d, hs[d], ws[d], psrc, labels, lindex, rows_p, prediction=True)
    return DetectionData(
        uids, np.array(hs, np.int64), np.array(ws, np.int64), labels, rows_g.build(), rows_p.build()
    )


class _Rows:
    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "datum",
                "label",
                "box",
                "area",
                "score",
                "crowd",
                "ann_id",
                "kind",
                "poly",
                "rle",
            )
        }

    def add(self, **kw: Any) -> None:
        for k, v in kw.items():
            self.cols[k].append(v)

    def build(self) -> Annotations:
        c = self.cols
        n = len(c["datum"])
        poly = np.empty(n, dtype=object)
        poly[:] = c["poly"] if n else []
        rle = np.empty(n, dtype=object)
        rle[:] = c["rle"] if n else []
        return Annotations(
            datum=np.array(c["datum"], np.int64),
            label=np.array(c["label"], np.int64),
            box=np.array(c["box"], np.float64).reshape(n, 4),
            area=np.array(c["area"], np.float64),
            score=np.array(c["score"], np.float64),
            crowd=np.array(c["crowd"], bool),
            ann_id=np.array(c["ann_id"], np.int64),
            kind=np.array(c["kind"], np.int8),
            polygons=poly,
            rles=rle,
        )


def _labels_of(
    ann: dict[str, Any], source: str, rec: str, prediction: bool
) -> list[tuple[Label, float]]:
    raw = ann.get("labels", ann.get("label"))
    if raw is None or raw == [] or raw == "":
        raise InvalidInputError(
            "annotation has no label", source=source, record=rec, field="labels"
        )
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for it in items:
        score = ann.get("score")
        if isinstance(it, str):
            lab: Label = (DEFAULT_KEY, it)
        elif isinstance(it, dict) and "value" in it:
            lab = (str(it.get("key", DEFAULT_KEY)), str(it["value"]))
            score = it.get("score", score)
        else:
            raise InvalidInputError(f"bad label {it!r}", source=source, record=rec, field="labels")
        if prediction:
            if (
                not isinstance(score, (int, float))
                or isinstance(score, bool)
                or not math.isfinite(score)
            ):
                raise InvalidInputError(
                    "prediction needs a finite numeric score",
                    source=source,
                    record=rec,
                    field="score",
                )
            score = float(score)
        else:
            score = 1.0
        out.append((lab, score))
    return out


def _parse_annotations(
    rec: dict[str, Any],
    d: int,
    h: int,
    w: int,
    source: str,
    labels: list[Label],
    lindex: dict[Label, int],
    rows: _Rows,
    *,
    prediction: bool,
) -> None:
    uid = rec["uid"]
    anns = rec.get("annotations", [])
    if not isinstance(anns, list):
        raise InvalidInputError(
            "annotations must be a list", source=source, record=_rec(uid), field="annotations"
        )
    for j, ann in enumerate(anns):
        rec_s = _rec(uid, j)
        if not isinstance(ann, dict):
            raise InvalidInputError("annotation must be an object", source=source, record=rec_s)
        labs = _labels_of(ann, source, rec_s, prediction)
        kind, box, area, poly, rle = _geometry(ann, h, w, source, rec_s)
        for lab, score in labs:
            if lab not in lindex:
                lindex[lab] = len(labels)
                labels.append(lab)
            rows.add(
                datum=d,
                label=lindex[lab],
                box=box,
                area=area,
                score=score,
                crowd=bool(ann.get("iscrowd", False)) and not prediction,
                ann_id=j,
                kind=kind,
                poly=poly,
                rle=rle,
            )


def _geometry(ann: dict[str, Any], h: int, w: int, source: str, rec: str):
    present = [k for k in ("box", "polygon", "mask_rle") if k in ann]
    if len(present) != 1:
        raise InvalidInputError(
            "annotation needs exactly one of box, polygon, mask_rle", source=source, record=rec
        )
    key = present[0]
    val = ann[key]
    if key == "box":
        try:
            xmin, ymin, xmax, ymax = (float(v) for v in val)
        except (TypeError, ValueError):
            raise InvalidInputError(
                "box must be [xmin, ymin, xmax, ymax]", source=source, record=rec, field="box"
            ) from None
        if not all(math.isfinite(v) for v in (xmin, ymin, xmax, ymax)):
            raise InvalidInputError(
                "box coordinates must be finite", source=source, record=rec, field="box"
            )
        if xmax < xmin or ymax < ymin:
            raise InvalidInputError(
                f"box {val} has xmax < xmin or ymax < ymin", source=source, record=rec, field="box"
            )
        box = [xmin, ymin, xmax - xmin, ymax - ymin]
        return BOX, box, box[2] * box[3], None, None
    if key == "polygon":
        poly = _polygon(val, source, rec)
        x0, y0, x1, y1 = poly.bounds
        return POLYGON, [x0, y0, x1 - x0, y1 - y0], float(poly.area), poly, None
    if not isinstance(val, dict) or "size" not in val or "counts" not in val:
        raise InvalidInputError(
            "mask_rle must be {size: [h, w], counts}", source=source, record=rec, field="mask_rle"
        )
    if list(val["size"]) != [h, w]:
        raise InvalidInputError(
            f"mask size {list(val['size'])} differs from the datum's size {[h, w]}",
            source=source,
            record=rec,
            field="mask_rle",
        )
    try:
        if isinstance(val["counts"], list):
            rle = mask_utils.frPyObjects(val, h, w)
        else:
            c = val["counts"]
            rle = {"size": [h, w], "counts": c.encode() if isinstance(c, str) else c}
        area = float(mask_utils.area(rle))
        box = [float(v) for v in mask_utils.toBbox(rle)]
    except Exception as e:  # pycocotools raises plain exceptions on corrupt RLE
        raise InvalidInputError(
            f"cannot decode RLE: {e}", source=source, record=rec, field="mask_rle"
        ) from None
    return RASTER, box, area, None, rle


def _polygon(val: Any, source: str, rec: str) -> shapely.Polygon:
    if not isinstance(val, list) or not val:
        raise InvalidInputError(
            "polygon must be a list of rings of [x, y] points",
            source=source,
            record=rec,
            field="polygon",
        )
    if isinstance(val[0], list) and val[0] and isinstance(val[0][0], (int, float)):
        val = [val]  # a single ring given without the outer list
    rings = []
    for ring in val:
        try:
            pts = np.asarray(ring, dtype=np.float64)
        except (TypeError, ValueError):
            pts = np.zeros((0,))
        if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 4 or not np.isfinite(pts).all():
            raise InvalidInputError(
                "polygon ring must be at least 4 finite [x, y] points (closed)",
                source=source,
                record=rec,
                field="polygon",
            )
        if not np.array_equal(pts[0], pts[-1]):
            raise InvalidInputError(
                "polygon ring does not close (first point != last point)",
                source=source,
                record=rec,
                field="polygon",
            )
        rings.append(pts)
    poly = shapely.Polygon(rings[0], rings[1:])
    if not shapely.is_valid(poly):
        raise InvalidInputError(
            f"invalid polygon: {shapely.is_valid_reason(poly)}",
            source=source,
            record=rec,
            field="polygon",
        )
    return poly
