"""valor-lite's ``Examples`` and ``ConfusionMatrixWithExamples`` for detection.

Both come from the pairs the confusion matrix chooses (:mod:`assay.detection.confusion`): at
IoU threshold ``t`` and score threshold ``s`` a chosen pair counts when its IoU is ``>= t``
and its score ``>= s``. A counted pair with equal labels is a true positive; with different
labels (a misclassification) its prediction is a false positive and its ground truth a false
negative. Ground truths in no counted pair are false negatives (*unmatched ground truths*),
predictions scoring ``>= s`` in no counted pair false positives (*unmatched predictions*).

* ``Examples``: one record per datum (with at least one annotation) and threshold pair
  (parameters ``datum_uid``, ``iou_threshold``, ``score_threshold``), for all of them or a
  page of them in uid order (``examples_offset``, ``examples_limit``),
  ``{datum_id, true_positives: [[ground truth id, prediction id]], false_positives:
  [prediction id], false_negatives: [ground truth id]}``.
* ``ConfusionMatrixWithExamples``: per label key and threshold pair, the confusion matrix with
  every cell ``{count, examples: [{datum_id, ground_truth_id, prediction_id}]}`` and the
  unmatched entries ``{count, examples: [{datum_id, prediction_id | ground_truth_id}]}``.

Identifiers are the annotation ids (COCO ids; in assay JSONL the position in the datum, from
0) and datum uids; lists are in datum, then annotation order.

Example:
    >>> from assay.detection.jsonl import parse_datums
    >>> gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}]
    >>> pr = [{"uid": "a", "annotations": [{"label": "dog", "score": 0.9, "box": [0, 0, 10, 9]}]}]
    >>> (rec,) = examples(parse_datums(gt, pr), "bbox", [0.5], [0.5])
    >>> rec.value
    {'datum_id': 'a', 'true_positives': [], 'false_positives': [0], 'false_negatives': [0]}
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np

from assay.detection.confusion import chosen_pairs, counted, live_predictions
from assay.detection.records import threshold
from assay.detection.types import DetectionData
from assay.io.labels import natural_key
from assay.results import Metric

__all__ = ["examples", "confusion_with_examples"]


def _params(t: float, s: float, **extra: Any) -> dict[str, Any]:
    return {**extra, "iou_threshold": threshold(t), "score_threshold": float(s)}


def examples(
    data: DetectionData,
    iou_type: str,
    iou_thresholds: Sequence[float],
    score_thresholds: Sequence[float],
    *,
    page: tuple[int, int | None] = (0, None),
) -> list[Metric]:
    """``Examples`` records: per datum and threshold pair, its TP pairs, FPs and FNs.

    ``page``: ``(offset, limit)`` over the datums with an annotation in uid order (so a page
    does not depend on the order batches were added or merged); no page: datum order.
    """
    gts, dts = data.groundtruths, data.predictions
    pd, pg, iou = chosen_pairs(data, iou_type)
    gt_rows = np.flatnonzero(~gts.crowd)
    has = np.zeros(data.n_datums, dtype=bool)
    has[gts.datum[gt_rows]] = True
    has[dts.datum] = True
    offset, limit = page
    shown = np.flatnonzero(has)
    if offset or limit is not None:  # a page: in uid order, whatever the order of adding
        shown = shown[_uid_order([data.uids[d] for d in shown])]
        shown = shown[offset : None if limit is None else offset + limit]
    out: list[Metric] = []
    for t, s in product(iou_thresholds, score_thresholds):
        ok = counted(data, iou, pd, t, s)
        same = gts.label[pg] == dts.label[pd]
        tp_pd, tp_gt = pd[ok & same], pg[ok & same]
        pd_used = np.zeros(len(dts), dtype=bool)
        pd_used[tp_pd] = True
        gt_used = np.zeros(len(gts), dtype=bool)
        gt_used[tp_gt] = True
        fp = np.flatnonzero(live_predictions(data, s) & ~pd_used)
        fp = fp[np.argsort(dts.datum[fp], kind="stable")]  # rows need not be in datum order
        fn = gt_rows[~gt_used[gt_rows]]
        fn = fn[np.argsort(gts.datum[fn], kind="stable")]
        o = np.lexsort((tp_gt, dts.datum[tp_pd]))
        tp_pd, tp_gt = tp_pd[o], tp_gt[o]
        tp_at = np.searchsorted(dts.datum[tp_pd], np.arange(data.n_datums + 1))
        fp_at = np.searchsorted(dts.datum[fp], np.arange(data.n_datums + 1))
        fn_at = np.searchsorted(gts.datum[fn], np.arange(data.n_datums + 1))
        for d in shown:
            a, b = tp_at[d], tp_at[d + 1]
            value = {
                "datum_id": data.uids[d],
                "true_positives": [
                    [int(gts.ann_id[g]), int(dts.ann_id[p])] for g, p in zip(tp_gt[a:b], tp_pd[a:b])
                ],
                "false_positives": dts.ann_id[fp[fp_at[d] : fp_at[d + 1]]].tolist(),
                "false_negatives": gts.ann_id[fn[fn_at[d] : fn_at[d + 1]]].tolist(),
            }
            out.append(Metric("Examples", value, _params(t, s, datum_uid=data.uids[d])))
    return out


def _uid_order(uids: list[Any]) -> np.ndarray:
    """Positions that sort ``uids`` (numbers numerically, text as text; mixed: as text)."""
    u = np.asarray(uids)
    if u.dtype.kind not in "iuU":
        u = np.asarray([str(x) for x in uids])
    return np.argsort(u, kind="stable")


def _cell(count_rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"count": len(count_rows), "examples": count_rows}


def _matrix_with_examples(
    data: DetectionData,
    ks: list[int],
    cells: dict[tuple[int, int], list[dict[str, Any]]],
    fp: np.ndarray,
    fn: np.ndarray,
) -> dict[str, Any]:
    """The value of one ``ConfusionMatrixWithExamples`` record over the labels ``ks`` (of one
    key, named by their values): every (truth, prediction) cell, and the unmatched
    predictions ``fp`` and ground truths ``fn`` per label, each with its count and examples."""
    gts, dts = data.groundtruths, data.predictions
    name = {k: data.labels[k][1] for k in ks}
    uid = data.uids
    return {
        "confusion_matrix": {
            name[kg]: {name[kp]: _cell(cells.get((kg, kp), [])) for kp in ks} for kg in ks
        },
        "unmatched_predictions": {
            name[k]: _cell(
                [
                    {"datum_id": uid[dts.datum[r]], "prediction_id": int(dts.ann_id[r])}
                    for r in fp[dts.label[fp] == k]
                ]
            )
            for k in ks
        },
        "unmatched_ground_truths": {
            name[k]: _cell(
                [
                    {
                        "datum_id": uid[gts.datum[r]],
                        "ground_truth_id": int(gts.ann_id[r]),
                    }
                    for r in fn[gts.label[fn] == k]
                ]
            )
            for k in ks
        },
    }


def confusion_with_examples(
    data: DetectionData,
    iou_type: str,
    iou_thresholds: Sequence[float],
    score_thresholds: Sequence[float],
) -> list[Metric]:
    """``ConfusionMatrixWithExamples`` records, one per (label key, IoU, score threshold)."""
    gts, dts = data.groundtruths, data.predictions
    pd, pg, iou = chosen_pairs(data, iou_type)
    o = np.lexsort((pd, pg, gts.datum[pg]))
    pd, pg, iou = pd[o], pg[o], iou[o]
    gt_rows = np.flatnonzero(~gts.crowd)
    uid = data.uids
    out: list[Metric] = []
    for key in sorted({k for k, _ in data.labels}, key=natural_key):
        ks = sorted(
            (k for k, lab in enumerate(data.labels) if lab[0] == key),
            key=lambda k: natural_key(data.labels[k]),
        )
        for t, s in product(iou_thresholds, score_thresholds):
            ok = counted(data, iou, pd, t, s) & np.isin(gts.label[pg], ks)
            cells: dict[tuple[int, int], list[dict[str, Any]]] = {}
            for g, p in zip(pg[ok].tolist(), pd[ok].tolist()):
                cells.setdefault((int(gts.label[g]), int(dts.label[p])), []).append(
                    {
                        "datum_id": uid[gts.datum[g]],
                        "ground_truth_id": int(gts.ann_id[g]),
                        "prediction_id": int(dts.ann_id[p]),
                    }
                )
            gt_used = np.zeros(len(gts), dtype=bool)
            gt_used[pg[ok]] = True
            pd_used = np.zeros(len(dts), dtype=bool)
            pd_used[pd[ok]] = True
            fn = gt_rows[~gt_used[gt_rows] & np.isin(gts.label[gt_rows], ks)]
            fp = np.flatnonzero(live_predictions(data, s) & ~pd_used & np.isin(dts.label, ks))
            fn = fn[np.lexsort((fn, gts.datum[fn]))]
            fp = fp[np.lexsort((fp, dts.datum[fp]))]
            value = _matrix_with_examples(data, ks, cells, fp, fn)
            params = _params(t, s, label_key=key)
            out.append(Metric("ConfusionMatrixWithExamples", value, params))
    return out
