"""COCO JSON: an annotations file (images, categories, annotations) and a results list.

Read as pycocotools' ``COCO`` and ``loadRes`` read them, but validated: every image and
category has an ``id`` (all integers or all strings, never mixed), sizes are non-negative
integers, a result's ``image_id`` and ``category_id`` have the type of the ground truth's
ids (``"1"`` is not image ``1``), boxes are finite with a finite corner and area, and masks
are checked run by run (:mod:`assay.io.masks`; boxes and masks in
:mod:`assay.io.coco_geometry`, re-exported here). Errors name the file, the record
(``image 3``, ``annotation 17`` = the position in the list) and the field.

Well-formed files take a fast path: msgspec decodes them straight into columns
(:mod:`assay.io.coco_columns`); anything else is read as plain JSON and validated here.

Example:
    >>> gt = {"images": [{"id": 1, "height": 4, "width": 4}], "annotations": [],
    ...       "categories": [{"id": 1, "name": "cat"}]}
    >>> images = coco_images(gt, source="gt.json")
    >>> images.ids.tolist(), images.heights.tolist()
    ([1], [4])
    >>> result_columns([{"image_id": "1", "category_id": 1, "score": 0.5, "bbox": [0, 0, 1, 1]}],
    ...     source="dt.json", image_ids=images.ids)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: dt.json: annotation 0: field 'image_id': ... is a string; ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.coco_columns import (
    ResultColumns,
    decode_annotations,
    decode_results,
    is_result_struct,
    struct_columns,
)
from assay.io.jsonfiles import read_bytes, read_json

__all__ = [
    "CocoImages",
    "read_coco_annotations",
    "coco_images",
    "coco_categories",
    "read_coco_results",
    "result_columns",
    "id_kind",
]


class CocoImages(NamedTuple):
    """The images of an annotations file in ascending id order, with their sizes."""

    ids: NDArray[Any]
    heights: NDArray[np.int64]
    widths: NDArray[np.int64]


def id_kind(v: Any) -> str | None:
    """``"int"`` or ``"str"`` for a usable COCO id, None otherwise (bools, floats, ...)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return "int"
    return "str" if isinstance(v, str) else None


def read_coco_annotations(source: Any, *, columns: str | None = None) -> dict[str, Any]:
    """A COCO annotations object (``images``, ``annotations`` lists), from a path or a dict.

    ``columns="bbox"`` or ``"segm"``: when the file is a well-formed COCO file (integer image
    and category ids, every annotation with an integer ``image_id`` and ``category_id`` and a
    4-number ``bbox``), its annotations are decoded by msgspec straight into columns
    (:class:`~assay.io.coco_columns.AnnotationColumns`; with ``"bbox"`` the segmentations
    are skipped unparsed).
    Anything else is read as plain JSON and validated record by record (the precise errors).
    """
    name = str(source) if isinstance(source, (str, Path)) else "groundtruths"
    if columns is not None and isinstance(source, (str, Path)):
        raw = read_bytes(source)
        fast = decode_annotations(raw, segm=columns == "segm") if raw.isascii() else None
        if fast is not None:
            return fast
        source = raw
    gt = read_json(source, name=name)
    if not isinstance(gt, dict) or "images" not in gt or "annotations" not in gt:
        hint = " (this looks like assay JSONL or a results list)" if isinstance(gt, list) else ""
        raise InvalidInputError(
            f"expected a COCO annotations object with 'images' and 'annotations'{hint}", source=name
        )
    for f in ("images", "annotations", "categories"):
        if not isinstance(gt.get(f, []), list):
            raise InvalidInputError("must be a list", source=name, field=f)
        for i, x in enumerate(gt.get(f, [])):
            if not isinstance(x, dict):
                raise InvalidInputError(
                    "must be a JSON object", source=name, record=f"{f[:-1]} {i}", field=f
                )
    return gt


def _ids(items: list[dict[str, Any]], what: str, source: str) -> tuple[list[Any], str]:
    kinds = set()
    for i, x in enumerate(items):
        if "id" not in x:
            raise InvalidInputError(
                f"{what} has no id", source=source, record=f"{what} {i}", field="id"
            )
        k = id_kind(x["id"])
        if k is None:
            raise InvalidInputError(
                f"id must be an integer or a string, got {x['id']!r}",
                source=source,
                record=f"{what} {i}",
                field="id",
            )
        kinds.add(k)
        if len(kinds) > 1:
            raise InvalidInputError(
                f"{what} ids mix integers and strings (first mixed: {x['id']!r})",
                source=source,
                record=f"{what} {i}",
                field="id",
            )
    ids = [x["id"] for x in items]
    if len(set(ids)) != len(ids):
        dup = next(v for v in ids if ids.count(v) > 1)
        raise InvalidInputError(f"duplicate {what} id {dup!r}", source=source, field="id")
    return ids, (kinds.pop() if kinds else "int")


def coco_images(gt: dict[str, Any], *, source: str) -> CocoImages:
    """Image ids (ascending) and sizes (0 when absent), validated."""
    images = gt["images"]
    ids, _kind = _ids(images, "image", source)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    sizes = np.zeros((2, len(ids)), np.int64)
    for j, i in enumerate(order):
        for r, f in enumerate(("height", "width")):
            v = images[i].get(f, 0)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidInputError(
                    f"must be a non-negative integer, got {v!r}",
                    source=source,
                    record=f"image {i}",
                    field=f,
                )
            sizes[r, j] = v
    arr = _id_array([ids[i] for i in order], _kind, source=source, field="id")
    return CocoImages(arr, sizes[0], sizes[1])


def coco_categories(gt: dict[str, Any], *, source: str) -> tuple[list[Any], list[str]]:
    """Category ids (ascending) and names (the ids as text when names repeat or are missing)."""
    cats = gt.get("categories", [])
    ids, _ = _ids(cats, "category", source)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    cat_ids = [ids[i] for i in order]
    names = [str(cats[i].get("name", cats[i]["id"])) for i in order]
    if len(set(names)) != len(names):
        names = [str(c) for c in cat_ids]
    return cat_ids, names


def read_coco_results(source: Any) -> list[Any] | ResultColumns:
    """A COCO results list: from a file, :class:`~assay.io.coco_columns.ResultColumns` when
    every result has integer ids, a finite score and a box (or none has a box), else typed
    structs; dicts as given otherwise.

    A ``{"annotations": [...]}`` object is accepted too (its annotations are the results).
    """
    name = str(source) if isinstance(source, (str, Path)) else "predictions"
    if isinstance(source, (str, Path)):
        raw = read_bytes(source)
        if not raw.isascii():
            read_json(raw, name=name)  # names an encoding problem (or malformed JSON)
        dt = decode_results(raw, name) if raw.lstrip()[:1] == b"[" else read_json(raw, name=name)
    else:
        dt = source
    if isinstance(dt, ResultColumns):
        return dt
    if isinstance(dt, dict) and "images" in dt:
        raise InvalidInputError(
            "expected a JSON list of COCO results, got a COCO annotations file", source=name
        )
    if isinstance(dt, dict) and isinstance(dt.get("annotations"), list):
        dt = dt["annotations"]
    if not isinstance(dt, list):
        raise InvalidInputError("expected a JSON list of COCO results", source=name)
    return dt


def _typed_ids(values: list[Any], kind: str, *, source: str, field: str, what: str) -> NDArray[Any]:
    """The ids as an array, each of the ground truth's id type (``bool`` is not ``int``)."""
    want = int if kind == "int" else str
    if set(map(type, values)) <= {want}:  # the common case, checked at C speed
        return _id_array(values, kind, source=source, field=field)
    for i, v in enumerate(values):
        k = id_kind(v)
        if k != kind:
            shown = (
                "missing" if v is None else f"{v!r} is {'a string' if k == 'str' else 'not usable'}"
            )
            raise InvalidInputError(
                f"{shown}; the ground-truth {what} ids are "
                f"{'integers' if kind == 'int' else 'strings'}",
                source=source,
                record=f"annotation {i}",
                field=field,
            )
    return _id_array(values, kind, source=source, field=field)


def _id_array(values: list[Any], kind: str, *, source: str, field: str) -> NDArray[Any]:
    if kind == "str":
        return np.array(values, dtype=object)
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        i = next(i for i, v in enumerate(values) if not -(2**63) <= v < 2**63)
        raise InvalidInputError(
            f"id {values[i]} does not fit in 64 bits",
            source=source,
            record=f"annotation {i}",
            field=field,
        ) from None


def result_columns(
    dt: list[Any],
    *,
    source: str,
    image_ids: NDArray[Any],
    category_kind: str = "int",
) -> dict[str, Any]:
    """Columns of a results list (structs or dicts): image_id, category_id, score, bbox,
    segmentation. Ids must have the ground truth's id types; scores must be finite."""
    n = len(dt)
    img_kind = "str" if image_ids.dtype == object else "int"
    if isinstance(dt, ResultColumns):
        # integer ids: usable only if the ground truth's are too (else the first is wrong)
        _typed_ids(dt.image_id[:1].tolist(), img_kind, source=source, field="image_id",
                   what="image")  # fmt: skip
        _typed_ids(dt.category_id[:1].tolist(), category_kind, source=source,
                   field="category_id", what="category")  # fmt: skip
        return {
            "typed": True,
            "image_id": dt.image_id,
            "category_id": dt.category_id,
            "score": dt.score,
            "bbox": [None] * n if dt.bbox is None else dt.bbox,
            "segmentation": [None] * n if dt.segmentation is None else dt.segmentation,
        }
    typed = bool(n) and is_result_struct(dt[0])
    if typed:
        img, cat, score, bbox, seg = struct_columns(dt)
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
        bad = [
            i
            for i, a in enumerate(dt)
            if not isinstance(a.get("score"), (int, float)) or isinstance(a.get("score"), bool)
        ]
        if bad:
            raise InvalidInputError(
                f"missing or non-numeric score {dt[bad[0]].get('score')!r}",
                source=source,
                record=f"annotation {bad[0]}",
                field="score",
            )
        score = np.array([a["score"] for a in dt], dtype=np.float64)
        bbox = [a.get("bbox") for a in dt]
        seg = [a.get("segmentation") for a in dt]
    if n and not np.isfinite(score).all():
        i = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InvalidInputError(
            f"score must be finite, got {score[i]}",
            source=source,
            record=f"annotation {i}",
            field="score",
        )
    return {
        "typed": typed,
        "image_id": _typed_ids(img, img_kind, source=source, field="image_id", what="image"),
        "category_id": _typed_ids(
            cat, category_kind, source=source, field="category_id", what="category"
        ),
        "score": score,
        "bbox": bbox,
        "segmentation": seg,
    }
