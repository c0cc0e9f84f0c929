"""Annotation geometry and labels of assay's JSONL records, parsed and validated.

Detection, instance segmentation and semantic segmentation share one JSONL record shape::

    {"uid": "img1", "height": 480, "width": 640, "annotations": [
        {"label": "cat", "box": [xmin, ymin, xmax, ymax]},
        {"labels": [{"key": "class", "value": "dog", "score": 0.7}], "polygon": [[[x, y], ...]]},
        {"label": "cat", "score": 0.9, "mask_rle": {"size": [480, 640], "counts": "..."}}]}

:func:`parse_geometry` reads the one geometry of an annotation (a box, a polygon with
holes, or a COCO RLE mask; its labels are read by :func:`assay.io.labels.parse_labels`),
raising
:class:`~assay.errors.InvalidInputError` naming the source, the record and the field.

Example:
    >>> g = parse_geometry({"box": [0, 0, 4, 5]}, 10, 10, source="gt.jsonl", record="datum 'a'")
    >>> g.kind == BOX, g.box, g.area
    (True, [0.0, 0.0, 4.0, 5.0], 20.0)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from assay.errors import InvalidInputError
from assay.io.masks import check_raster_size, rle_area, rle_bbox, to_rle
from assay.io.rle_counts import CorruptRLE

if TYPE_CHECKING:  # shapely loads with the first polygon: box-only runs never need it
    import shapely

__all__ = [
    "BOX",
    "POLYGON",
    "RASTER",
    "Geometry",
    "parse_geometry",
    "parse_polygon",
    "check_box",
    "datum_size",
]

BOX, POLYGON, RASTER = 0, 1, 2


class Geometry(NamedTuple):
    """One annotation's geometry: its kind, COCO box ``[x, y, w, h]``, area, and the exact
    shape (a shapely polygon, or a compressed COCO RLE dict)."""

    kind: int
    box: list[float]
    area: float
    polygon: Any
    rle: dict[str, Any] | None


def datum_size(rec: dict[str, Any], *, source: str, record: str) -> tuple[int, int]:
    """``(height, width)`` of a datum record (0 when absent), validated as integers."""
    out = []
    for f in ("height", "width"):
        v = rec.get(f, 0)
        v = 0 if v is None else v
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidInputError(
                f"must be a non-negative integer, got {v!r}", source=source, record=record, field=f
            )
        out.append(v)
    return out[0], out[1]


def check_box(x: float, y: float, w: float, h: float) -> str | None:
    """Why a COCO box ``[x, y, w, h]`` is unusable (None when it is fine): a non-finite
    number, a negative size, or a size so large that its corner or area overflows."""
    vals = (x, y, w, h, x + w, y + h, w * h)
    if not all(math.isfinite(v) for v in vals):
        return "coordinates must be finite numbers (with a finite corner and area)"
    if w < 0 or h < 0:
        return "has a negative width or height"
    return None


def parse_geometry(ann: dict[str, Any], h: int, w: int, *, source: str, record: str) -> Geometry:
    """The one geometry of a JSONL annotation (``box``, ``polygon`` or ``mask_rle``)."""
    present = [k for k in ("box", "polygon", "mask_rle") if k in ann]
    if len(present) != 1:
        raise InvalidInputError(
            "annotation needs exactly one of box, polygon, mask_rle", source=source, record=record
        )
    key = present[0]
    val = ann[key]
    if key == "box":
        return _parse_box(val, source, record)
    if key == "polygon":
        poly = parse_polygon(val, source=source, record=record)
        x0, y0, x1, y1 = poly.bounds
        return Geometry(POLYGON, [x0, y0, x1 - x0, y1 - y0], float(poly.area), poly, None)
    if not isinstance(val, dict) or "size" not in val or "counts" not in val:
        raise InvalidInputError(
            "mask_rle must be {size: [h, w], counts}",
            source=source,
            record=record,
            field="mask_rle",
        )
    check_raster_size(h, w, source=source, record=record, field="mask_rle")
    try:
        rle = to_rle(val, h, w, owner="datum")
        area = float(rle_area([rle])[0])
    except InvalidInputError as e:
        why = f"corrupt RLE: {e.reason}" if isinstance(e, CorruptRLE) else e.reason
        raise InvalidInputError(why, source=source, record=record, field="mask_rle") from None
    return Geometry(RASTER, rle_bbox([rle])[0].tolist(), area, None, rle)


def _parse_box(val: Any, source: str, record: str) -> Geometry:
    numbers = isinstance(val, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in val
    )
    if not numbers or len(val) != 4:
        raise InvalidInputError(
            f"box must be [xmin, ymin, xmax, ymax] numbers, got {val!r}",
            source=source,
            record=record,
            field="box",
        )
    xmin, ymin, xmax, ymax = (float(v) for v in val)
    if xmax < xmin or ymax < ymin:
        raise InvalidInputError(
            f"box {val} has xmax < xmin or ymax < ymin", source=source, record=record, field="box"
        )
    box = [xmin, ymin, xmax - xmin, ymax - ymin]
    why = check_box(*box)
    if why:
        raise InvalidInputError(f"box {val}: {why}", source=source, record=record, field="box")
    return Geometry(BOX, box, box[2] * box[3], None, None)


def parse_polygon(val: Any, *, source: str, record: str) -> shapely.Polygon:
    """A shapely polygon from closed rings of ``[x, y]`` points (exterior first, then holes)."""
    import shapely

    def bad(reason: str) -> InvalidInputError:
        return InvalidInputError(reason, source=source, record=record, field="polygon")

    if not isinstance(val, list) or not val:
        raise bad("polygon must be a list of rings of [x, y] points")
    if isinstance(val[0], list) and val[0] and isinstance(val[0][0], (int, float)):
        val = [val]  # a single ring given without the outer list
    rings = []
    for ring in val:
        try:
            pts = np.asarray(ring, dtype=np.float64)
        except (TypeError, ValueError):
            pts = np.zeros((0,))
        if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 4 or not np.isfinite(pts).all():
            raise bad("polygon ring must be at least 4 finite [x, y] points (closed)")
        if not np.array_equal(pts[0], pts[-1]):
            raise bad("polygon ring does not close (first point != last point)")
        rings.append(pts)
    poly = shapely.Polygon(rings[0], rings[1:])
    if not shapely.is_valid(poly):
        raise bad(f"invalid polygon: {shapely.is_valid_reason(poly)}")
    if not math.isfinite(poly.area):
        raise bad("polygon area is not finite")
    return poly
