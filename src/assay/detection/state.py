""":class:`DetectionData` as plain numpy arrays and back (for ``Evaluator.state()``).

Numeric columns travel as they are. Everything else is packed into arrays that need no
pickle: uids, labels and label ids as JSON text (0-d string arrays); polygons as WKB and
RLE counts as bytes, each concatenated into one ``uint8`` buffer with offsets; RLE sizes
as an ``(n, 2)`` int array.

Example:
    >>> import numpy as np
    >>> from assay.detection.types import Annotations
    >>> gt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 2, 2]])
    >>> data = DetectionData(["a"], np.array([4]), np.array([4]), [("class", "cat")], gt,
    ...                      Annotations.empty())
    >>> back = data_from_arrays(data_to_arrays(data))
    >>> back.uids, back.labels, back.groundtruths.box.tolist()
    (['a'], [('class', 'cat')], [[0.0, 0.0, 2.0, 2.0]])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.detection.types import Annotations, DetectionData
from assay.io.geometry import POLYGON, RASTER
from assay.io.metadata import Metadata

__all__ = ["data_to_arrays", "data_from_arrays"]

_NUMERIC = ("datum", "label", "box", "area", "score", "crowd", "ann_id", "kind")


def _pack(chunks: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=offsets[1:])
    return np.frombuffer(b"".join(chunks), dtype=np.uint8).copy(), offsets


def _unpack(buf: np.ndarray, offsets: np.ndarray) -> list[bytes]:
    raw = buf.tobytes()
    return [raw[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def _counts_bytes(c: Any) -> bytes:
    """Compressed RLE counts as bytes (a file's counts are kept as the text read)."""
    return c.encode() if isinstance(c, str) else bytes(c)


def _annotations_to_arrays(a: Annotations, prefix: str) -> dict[str, np.ndarray]:
    out = {f"{prefix}{f}": np.asarray(getattr(a, f)) for f in _NUMERIC}
    poly_rows = np.flatnonzero(a.kind == POLYGON)
    rle_rows = np.flatnonzero(a.kind == RASTER)
    wkb: list[bytes] = []
    if len(poly_rows):
        import shapely  # only data with polygons needs it

        wkb = list(shapely.to_wkb(a.polygons[poly_rows]))
    out[f"{prefix}poly_buf"], out[f"{prefix}poly_off"] = _pack(wkb)
    counts = [_counts_bytes(a.rles[i]["counts"]) for i in rle_rows]
    out[f"{prefix}rle_buf"], out[f"{prefix}rle_off"] = _pack(counts)
    sizes = [[int(v) for v in a.rles[i]["size"]] for i in rle_rows]
    out[f"{prefix}rle_size"] = np.asarray(sizes, dtype=np.int64).reshape(-1, 2)
    return out | _metadata_to(a.metadata, f"{prefix}md_")


def _annotations_from_arrays(s: Mapping[str, np.ndarray], prefix: str) -> Annotations:
    cols: dict[str, Any] = {f: np.asarray(s[f"{prefix}{f}"]) for f in _NUMERIC}
    cols["box"] = cols["box"].reshape(-1, 4).astype(np.float64)
    cols["crowd"] = cols["crowd"].astype(bool)
    n = len(cols["datum"])
    polygons = np.empty(n, dtype=object)
    rles = np.empty(n, dtype=object)
    poly_rows = np.flatnonzero(cols["kind"] == POLYGON)
    if len(poly_rows):
        import shapely  # only data with polygons needs it

        polygons[poly_rows] = shapely.from_wkb(
            _unpack(s[f"{prefix}poly_buf"], s[f"{prefix}poly_off"])
        )
    rle_rows = np.flatnonzero(cols["kind"] == RASTER)
    counts = _unpack(s[f"{prefix}rle_buf"], s[f"{prefix}rle_off"])
    for i, c, size in zip(rle_rows, counts, s[f"{prefix}rle_size"].tolist()):
        rles[i] = {"size": size, "counts": c}
    md = _metadata_from(s, f"{prefix}md_", n)
    return Annotations(polygons=polygons, rles=rles, **cols, metadata=md)


def _metadata_to(md: Metadata | None, prefix: str) -> dict[str, np.ndarray]:
    return {} if md is None else md.to_arrays(prefix)


def _metadata_from(s: Mapping[str, np.ndarray], prefix: str, n: int) -> Metadata | None:
    return Metadata.from_arrays(s, prefix, n) if f"{prefix}names" in s else None


def data_to_arrays(data: DetectionData) -> dict[str, np.ndarray]:
    """All of ``data`` as plain numpy arrays (no object dtype)."""
    meta = {
        "uids": data.uids,
        "labels": [list(x) for x in data.labels],
        "label_ids": list(data.label_ids),
        "iou_type": data.iou_type,
    }
    return {
        "meta": np.array(json.dumps(meta)),
        "heights": np.asarray(data.heights, dtype=np.int64),
        "widths": np.asarray(data.widths, dtype=np.int64),
        **_annotations_to_arrays(data.groundtruths, "gt_"),
        **_annotations_to_arrays(data.predictions, "dt_"),
        **_metadata_to(data.metadata, "md_"),
    }


def data_from_arrays(s: Mapping[str, np.ndarray]) -> DetectionData:
    """The :class:`DetectionData` that :func:`data_to_arrays` packed."""
    meta = json.loads(str(np.asarray(s["meta"])[()]))
    return DetectionData(
        uids=list(meta["uids"]),
        heights=np.asarray(s["heights"], dtype=np.int64),
        widths=np.asarray(s["widths"], dtype=np.int64),
        labels=[(str(k), str(v)) for k, v in meta["labels"]],
        groundtruths=_annotations_from_arrays(s, "gt_"),
        predictions=_annotations_from_arrays(s, "dt_"),
        label_ids=list(meta["label_ids"]),
        iou_type=meta["iou_type"],
        metadata=_metadata_from(s, "md_", len(meta["uids"])),
    )
