"""Columnar containers for detection / instance-segmentation inputs.

A :class:`DetectionData` holds every datum (image) once and the ground truths and
predictions as parallel numpy columns (:class:`Annotations`), one row per
(annotation, label). Geometry is kept three ways:

* ``box``: the axis-aligned box of every row as COCO ``[x, y, w, h]`` (float64);
* ``kind``: ``BOX``, ``POLYGON`` or ``RASTER`` per row;
* ``polygons`` (shapely geometries, for ``POLYGON`` rows) and ``rles`` (COCO RLE dicts,
  for ``RASTER`` rows), object arrays with ``None`` elsewhere.

Loaders (:mod:`assay.detection.io`) build these; :mod:`assay.detection.compute` only reads
them. Example:

    >>> import numpy as np
    >>> from assay.detection.types import Annotations
    >>> a = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]])
    >>> float(a.area[0]), len(a)
    (100.0, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.io.geometry import BOX, POLYGON, RASTER
from assay.io.labels import Label
from assay.io.metadata import Metadata

__all__ = [
    "Annotations",
    "DetectionData",
]

KIND_NAMES = {BOX: "box", POLYGON: "polygon", RASTER: "raster"}


def _obj(n: int, values: Any = None) -> np.ndarray:
    out = np.empty(n, dtype=object)
    if values is not None:
        out[:] = list(values)
    return out


@dataclass
class Annotations:
    """Ground truths or predictions, one row per (annotation, label), as numpy columns.

    Attributes:
        datum: int index into :attr:`DetectionData.uids`.
        label: int index into :attr:`DetectionData.labels`.
        box: ``(n, 4)`` float64 COCO boxes ``[x, y, w, h]``.
        area: float64 area used for COCO area ranges.
        score: float64 confidence (1.0 for ground truths).
        crowd: bool, COCO ``iscrowd`` (ground truths only; a crowd region is ignored).
        ann_id: int64 source annotation id (COCO id, or position in the datum).
        kind: int8 geometry kind (BOX / POLYGON / RASTER).
        polygons, rles: object arrays, the exact geometry for POLYGON / RASTER rows.
        metadata: the annotations' metadata (one row per row), or ``None``.
    """

    datum: np.ndarray
    label: np.ndarray
    box: np.ndarray
    area: np.ndarray
    score: np.ndarray
    crowd: np.ndarray
    ann_id: np.ndarray
    kind: np.ndarray
    polygons: np.ndarray
    rles: np.ndarray
    metadata: Metadata | None = None

    def __len__(self) -> int:
        return int(self.datum.shape[0])

    @classmethod
    def empty(cls) -> Annotations:
        return cls.boxes(datum=[], label=[], box=np.zeros((0, 4)))

    @classmethod
    def boxes(
        cls,
        *,
        datum: Any,
        label: Any,
        box: Any,
        score: Any = None,
        crowd: Any = None,
        area: Any = None,
        ann_id: Any = None,
    ) -> Annotations:
        """Annotations that are all boxes (``box`` in COCO ``[x, y, w, h]``)."""
        datum = np.asarray(datum, dtype=np.int64)
        n = datum.shape[0]
        box = np.asarray(box, dtype=np.float64).reshape(n, 4)
        return cls(
            datum=datum,
            label=np.asarray(label, dtype=np.int64).reshape(n),
            box=box,
            area=box[:, 2] * box[:, 3] if area is None else np.asarray(area, dtype=np.float64),
            score=np.ones(n) if score is None else np.asarray(score, dtype=np.float64),
            crowd=np.zeros(n, bool) if crowd is None else np.asarray(crowd, dtype=bool),
            ann_id=np.arange(1, n + 1, dtype=np.int64)
            if ann_id is None
            else np.asarray(ann_id, np.int64),
            kind=np.full(n, BOX, dtype=np.int8),
            polygons=_obj(n),
            rles=_obj(n),
        )

    def take(self, index: np.ndarray | slice) -> Annotations:
        """Rows ``index`` (an int or bool array), as a new :class:`Annotations`."""
        md = None if self.metadata is None else self.metadata.take(index)
        return Annotations(**{f: getattr(self, f)[index] for f in _FIELDS}, metadata=md)

    @staticmethod
    def concat(parts: list[Annotations]) -> Annotations:
        """Row-wise concatenation (datum/label indices must already be global)."""
        if not parts:
            return Annotations.empty()
        cols = {f: np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS}
        return Annotations(**cols, metadata=join_metadata([(len(p), p.metadata) for p in parts]))


def join_metadata(parts: list[tuple[int, Metadata | None]]) -> Metadata | None:
    """Metadata of row blocks in order (``(rows, metadata or None)`` each); None if none has."""
    if all(md is None for _, md in parts):
        return None
    return Metadata.concat([Metadata(n) if md is None else md for n, md in parts])


_FIELDS = ("datum", "label", "box", "area", "score", "crowd", "ann_id", "kind", "polygons", "rles")


@dataclass
class DetectionData:
    """Datums, labels, ground truths and predictions of one evaluation.

    Attributes:
        uids: datum uids (any hashable; COCO image ids), in evaluation order. Ties between
            equal scores on different datums are broken by this order, as COCOeval does
            with sorted image ids.
        heights, widths: int64 image sizes (0 when unknown; rasters need them).
        labels: ``(key, value)`` pairs; ``label`` columns index this list.
        groundtruths, predictions: :class:`Annotations`.
        label_ids: optional source ids of the labels (COCO category ids).
        iou_type: the IoU type the data was read for (``"bbox"`` keeps boxes only, ``"segm"``
            region geometry), or None when the data holds its exact geometry (assay JSONL)
            and can be evaluated either way.
        metadata: the datums' metadata (one row per datum), or ``None``.
    """

    uids: list[Any]
    heights: np.ndarray
    widths: np.ndarray
    labels: list[Label]
    groundtruths: Annotations
    predictions: Annotations
    label_ids: list[Any] = field(default_factory=list)
    iou_type: str | None = None
    metadata: Metadata | None = None

    @property
    def n_datums(self) -> int:
        return len(self.uids)

    @staticmethod
    def merge(parts: list[DetectionData], *, unique: bool = True) -> DetectionData:
        """Concatenate datasets in order; labels are unified by ``(key, value)``.

        With ``unique`` a datum uid that occurs in several parts is an error (each datum is
        added once); without, the parts' datums are kept apart even when uids repeat. Parts
        read for different IoU types cannot be merged.
        """
        kinds = {p.iou_type for p in parts if p.iou_type is not None}
        if len(kinds) > 1:
            raise InvalidInputError(
                f"cannot combine data read for different IoU types {sorted(kinds)}",
                source="iou_type",
            )
        labels: list[Label] = []
        label_ids: list[Any] = []
        index: dict[Label, int] = {}
        uids: list[Any] = []
        seen: set[Any] = set()
        gts: list[Annotations] = []
        dts: list[Annotations] = []
        hs: list[np.ndarray] = []
        ws: list[np.ndarray] = []
        for p in parts:
            remap = np.empty(len(p.labels), dtype=np.int64)
            for i, lab in enumerate(p.labels):
                if lab not in index:
                    index[lab] = len(labels)
                    labels.append(lab)
                    label_ids.append(p.label_ids[i] if i < len(p.label_ids) else None)
                remap[i] = index[lab]
            for u in p.uids if unique else ():
                if u in seen:
                    raise InvalidInputError(
                        "datum added twice", source="DetectionData", record=f"datum {u!r}"
                    )
                seen.add(u)
            offset = len(uids)
            uids.extend(p.uids)
            hs.append(p.heights)
            ws.append(p.widths)
            for src, dst in ((p.groundtruths, gts), (p.predictions, dts)):
                a = src.take(slice(None))
                a.datum = a.datum + offset
                a.label = remap[a.label] if len(a) else a.label
                dst.append(a)
        return DetectionData(
            uids=uids,
            heights=np.concatenate(hs) if hs else np.zeros(0, np.int64),
            widths=np.concatenate(ws) if ws else np.zeros(0, np.int64),
            labels=labels,
            groundtruths=Annotations.concat(gts),
            predictions=Annotations.concat(dts),
            label_ids=label_ids,
            iou_type=kinds.pop() if kinds else None,
            metadata=join_metadata([(p.n_datums, p.metadata) for p in parts]),
        )
