"""assay's detection JSONL: one datum per line, its annotations and labels.

A datum record has a ``uid`` (text or integer, unique per file), optionally its size and
``metadata``, and ``annotations``: each a geometry (see :mod:`assay.io.geometry`), labels
(see :mod:`assay.io.labels`; a prediction's carry scores) and optionally ``iscrowd`` (ground
truths only) and ``metadata``. Every prediction datum must be a ground-truth datum. Labels
are numbered in order of first appearance over the ground truths, then the predictions.
Bad input raises :class:`~assay.errors.InvalidInputError` naming the file, the datum, the
annotation and the field.

Example:
    >>> ann = {"label": "cat", "box": [0, 0, 10, 10]}
    >>> data = parse_datums([{"uid": "a", "annotations": [ann]}],
    ...                     [{"uid": "a", "annotations": [{**ann, "score": 0.9}]}])
    >>> data.labels, data.predictions.score.tolist()
    ([('class', 'cat')], [0.9])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.detection.types import Annotations, DetectionData
from assay.errors import InvalidInputError
from assay.io.geometry import datum_size, parse_geometry
from assay.io.jsonfiles import read_jsonl_records, source_name
from assay.io.labels import Label, parse_labels
from assay.io.metadata import metadata_from_records

__all__ = ["datum_record", "load_jsonl", "parse_datums"]


def datum_record(uid: Any, ann: Any = None) -> str:
    """How a message names a datum (and one of its annotations).

    Example:
        >>> datum_record("a", 2)
        "datum 'a' annotation 2"
    """
    uid = uid.item() if isinstance(uid, np.generic) else uid
    ann = ann.item() if isinstance(ann, np.generic) else ann
    return f"datum {uid!r}" + ("" if ann is None else f" annotation {ann}")


def load_jsonl(groundtruths: Any, predictions: Any) -> DetectionData:
    """Read assay detection JSONL files (or lists of datum dicts); see the module docstring."""
    gsrc = source_name(groundtruths, "groundtruths")
    psrc = source_name(predictions, "predictions")
    return parse_datums(
        read_jsonl_records(groundtruths, name=gsrc),
        read_jsonl_records(predictions, name=psrc),
        gsrc,
        psrc,
    )


def _uid(rec: dict[str, Any], source: str, i: int) -> Any:
    if "uid" not in rec:
        raise InvalidInputError(
            "datum has no uid", source=source, record=f"datum {i + 1}", field="uid"
        )
    uid = rec["uid"]
    if isinstance(uid, bool) or not isinstance(uid, (str, int)):
        raise InvalidInputError(
            f"uid must be a string or an integer, got {uid!r}",
            source=source,
            record=f"datum {i + 1}",
            field="uid",
        )
    return uid


def parse_datums(
    gt_datums: list[dict[str, Any]],
    pr_datums: list[dict[str, Any]],
    gsrc: str = "groundtruths",
    psrc: str = "predictions",
) -> DetectionData:
    """Build :class:`DetectionData` from datum dicts (the JSONL records)."""
    if not gt_datums and pr_datums:
        raise InvalidInputError(
            "holds no datum, but the predictions name datums it should hold", source=gsrc
        )
    uids: list[Any] = []
    index: dict[Any, int] = {}
    sizes: list[tuple[int, int]] = []
    for i, rec in enumerate(gt_datums):
        uid = _uid(rec, gsrc, i)
        if uid in index:
            raise InvalidInputError(
                "datum listed twice", source=gsrc, record=datum_record(uid), field="uid"
            )
        index[uid] = len(uids)
        uids.append(uid)
        sizes.append(datum_size(rec, source=gsrc, record=datum_record(uid)))
    labels: list[Label] = []
    lindex: dict[Label, int] = {}
    rows_g, rows_p = _Rows(), _Rows()
    for rec in gt_datums:
        d = index[rec["uid"]]
        _parse_annotations(rec, d, sizes[d], gsrc, labels, lindex, rows_g, prediction=False)
    seen_p: set[Any] = set()
    for i, rec in enumerate(pr_datums):
        uid = _uid(rec, psrc, i)
        if uid not in index:
            raise InvalidInputError(
                "unknown datum uid (not in the ground truths)",
                source=psrc,
                record=datum_record(uid),
                field="uid",
            )
        if uid in seen_p:
            raise InvalidInputError(
                "datum listed twice", source=psrc, record=datum_record(uid), field="uid"
            )
        seen_p.add(uid)
        d = index[uid]
        _parse_annotations(rec, d, sizes[d], psrc, labels, lindex, rows_p, prediction=True)
    hs = np.array([s[0] for s in sizes], np.int64)
    ws = np.array([s[1] for s in sizes], np.int64)
    meta = [rec.get("metadata") for rec in gt_datums]
    md = metadata_from_records(meta, source=gsrc) if any(m is not None for m in meta) else None
    gt, pr = rows_g.build(gsrc), rows_p.build(psrc)
    return DetectionData(uids, hs, ws, labels, gt, pr, metadata=md)


_COLS = ("datum", "label", "box", "area", "score", "crowd", "ann_id", "kind", "poly", "rle", "md")


class _Rows:
    """Annotation rows collected one by one, built into :class:`Annotations` at the end."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {k: [] for k in _COLS}

    def add(self, **kw: Any) -> None:
        for k, v in kw.items():
            self.cols[k].append(v)

    def build(self, source: str) -> Annotations:
        """The rows as :class:`Annotations` (each annotation's ``metadata`` on its rows)."""
        c = self.cols
        n = len(c["datum"])
        has_md = any(m is not None for m in c["md"])
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
            metadata=metadata_from_records(c["md"], source=source) if has_md else None,
        )


def _parse_annotations(
    rec: dict[str, Any],
    d: int,
    size: tuple[int, int],
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
            "annotations must be a list",
            source=source,
            record=datum_record(uid),
            field="annotations",
        )
    for j, ann in enumerate(anns):
        where = datum_record(uid, j)
        if not isinstance(ann, dict):
            raise InvalidInputError("annotation must be an object", source=source, record=where)
        if not isinstance(ann.get("metadata") or {}, dict):
            raise InvalidInputError(
                "metadata must be an object", source=source, record=where, field="metadata"
            )
        labs = parse_labels(ann, source=source, record=where, prediction=prediction)
        g = parse_geometry(ann, *size, source=source, record=where)
        for lab, score in labs:
            if lab not in lindex:
                lindex[lab] = len(labels)
                labels.append(lab)
            rows.add(
                datum=d,
                label=lindex[lab],
                box=g.box,
                area=g.area,
                score=score,
                crowd=bool(ann.get("iscrowd", False)) and not prediction,
                ann_id=j,
                kind=g.kind,
                poly=g.polygon,
                rle=g.rle,
                md=ann.get("metadata"),
            )
