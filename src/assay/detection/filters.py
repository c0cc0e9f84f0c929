"""Filters: the same evaluation on a subset of datums, annotations or labels, without reading
anything again.

:func:`subset` keeps

* the datums whose uid is listed, or for which an expression over ``uid`` (``datum_uid``) and
  the datum's metadata is true (in their original order, so ties between equal scores are
  broken as before);
* the ground truths and predictions for which the ``groundtruths`` / ``predictions``
  expression is true; their fields: ``uid``, ``label`` (also ``gt_label`` / ``pd_label``),
  ``label_key``, ``score`` (``pd_score``, predictions only), and metadata: the annotation's
  own, and the datum's for the keys the annotation does not set;
* the labels listed (a value such as ``"cat"`` matches that value under any key, a
  ``(key, value)`` pair one label).

Everything else is dropped, and so is a label whose annotations were all dropped; a datum
whose annotations are all dropped stays, and gives no record (valor-lite drops it: the
records are the same; valor-lite keeps every label, with empty records). Computing on the
subset gives exactly what loading only those datums and annotations would give. Expressions
are pandas-query strings or pyarrow Expressions (:mod:`assay.filtering`).

Example:
    >>> from assay.detection.jsonl import parse_datums
    >>> box = {"box": [0, 0, 10, 10]}
    >>> data = parse_datums(
    ...     [{"uid": "a", "annotations": [{"label": "cat", **box}, {"label": "dog", **box}]},
    ...      {"uid": "b", "annotations": [{"label": "cat", **box}]}], [])
    >>> small = subset(data, datums=["b"], labels=["cat"])
    >>> small.uids, small.labels, len(small.groundtruths)
    (['b'], [('class', 'cat')], 1)
    >>> len(subset(data, groundtruths='label == "dog"').groundtruths)
    1
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from assay.detection.types import Annotations, DetectionData
from assay.filtering import Column, FieldTable, datum_mask, evaluate, label_mask, uid_column
from assay.io.metadata import Metadata

__all__ = ["subset", "annotation_fields"]


def annotation_fields(data: DetectionData, a: Annotations, *, prediction: bool) -> FieldTable:
    """The fields of the ground truths (or predictions) ``a`` of ``data`` for a filter."""
    keys = np.asarray([k for k, _ in data.labels] or [""])
    values = np.asarray([v for _, v in data.labels] or [""])

    def uid() -> Column:
        return Column(uid_column(data.uids)[a.datum])

    def label() -> Column:
        return Column(values[a.label])

    def key() -> Column:
        return Column(keys[a.label])

    def score() -> Column:
        return Column(a.score)

    side = "pd" if prediction else "gt"
    fields = {"uid": uid, "datum_uid": uid, "label": label, f"{side}_label": label}
    fields["label_key"] = key
    if prediction:
        fields |= {"score": score, "pd_score": score}
    md: Metadata | None = None if data.metadata is None else data.metadata.take(a.datum)
    if a.metadata is not None:
        md = a.metadata if md is None else md.overlay(a.metadata)
    return FieldTable(len(a), fields, md, "predictions" if prediction else "ground truths")


def _rows_kept(
    a: Annotations, keep_datum: np.ndarray, keep_label: np.ndarray, keep_row: np.ndarray | None
) -> np.ndarray:
    rows = keep_datum[a.datum] & keep_label[a.label] if len(a) else np.zeros(0, bool)
    return rows if keep_row is None else rows & keep_row


def _take(
    a: Annotations, rows: np.ndarray, keep_datum: np.ndarray, keep_label: np.ndarray
) -> Annotations:
    out = a.take(rows)
    out.datum = (np.cumsum(keep_datum) - 1)[out.datum]
    out.label = (np.cumsum(keep_label) - 1)[out.label]
    return out


def _rows(data: DetectionData, a: Annotations, expr: Any, prediction: bool) -> np.ndarray | None:
    if expr is None:
        return None
    source = "predictions" if prediction else "groundtruths"
    return evaluate(expr, annotation_fields(data, a, prediction=prediction), source=source)


def subset(
    data: DetectionData,
    *,
    datums: Sequence[Hashable] | Any = None,
    groundtruths: Any = None,
    predictions: Any = None,
    labels: Sequence[Any] | None = None,
) -> DetectionData:
    """``data`` restricted by the filters (None keeps all; see the module docstring).

    Raises:
        InvalidInputError: a uid or label that is not in the data, an unknown field or a
            bad expression.
    """
    kd = datum_mask(data.uids, data.metadata, datums)
    kl = label_mask(data.labels, labels)
    gts, dts = data.groundtruths, data.predictions
    rows_g = _rows_kept(gts, kd, kl, _rows(data, gts, groundtruths, False))
    rows_p = _rows_kept(dts, kd, kl, _rows(data, dts, predictions, True))
    # a label whose annotations the filters all removed goes, as if never read
    had = np.zeros(len(kl), dtype=bool)
    had[gts.label] = had[dts.label] = True
    has = np.zeros(len(kl), dtype=bool)
    has[gts.label[rows_g]] = has[dts.label[rows_p]] = True
    kl &= has | ~had
    idx = np.flatnonzero(kd)
    lidx = np.flatnonzero(kl)
    return DetectionData(
        uids=[data.uids[i] for i in idx],
        heights=data.heights[idx],
        widths=data.widths[idx],
        labels=[data.labels[i] for i in lidx],
        groundtruths=_take(gts, rows_g, kd, kl),
        predictions=_take(dts, rows_p, kd, kl),
        label_ids=[data.label_ids[i] for i in lidx if i < len(data.label_ids)],
        iou_type=data.iou_type,
        metadata=None if data.metadata is None else data.metadata.take(kd),
    )
