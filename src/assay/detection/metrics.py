"""Metric records for detection and instance segmentation.

:func:`compute_metrics` turns a :class:`~assay.detection.types.DetectionData` into
:class:`~assay.results.Metric` records:

========================  ==============================================================
type                      value
========================  ==============================================================
AP                        101-point interpolated AP of one label at one IoU threshold
APAveragedOverIOUs        mean of AP over ``iou_thresholds`` (COCO's per-class AP)
mAP                       mean AP over the labels of a label key, at one IoU threshold
mAPAveragedOverIOUs       mean of mAP over ``iou_thresholds``
AR                        mean over ``ar_iou_thresholds`` of recall counting TPs with
                          ``score >= recall_score_threshold``
mAR                       mean AR over the labels of a label key
PrecisionRecallCurve      per label key: {label: {score threshold: tp, fp, fn, precision,
                          recall, f1_score}} at ``pr_curve_iou_threshold``
DetailedPrecisionRecallCurve  as above, FPs split into hallucinations / misclassifications,
                          FNs into misclassifications / missed_detections, with examples
COCOSummary               the 12 classic COCOeval numbers (``statistic`` parameter)
========================  ==============================================================

In formulas, with detections matched to ground truths as COCO does
(:mod:`assay.detection.match`), ``n`` the label's ground truths that are not crowd regions,
and ``p(r)`` the best precision reached at recall ``r`` or beyond::

    AP    = (1/101) * sum over r in {0, 0.01, ..., 1} of p(r)
    mAP   = mean of AP over the labels of a label key
    AR    = mean over the AR IoU thresholds of TP / n
    mAR   = mean of AR over the labels of a label key

AP and mAP therefore equal pycocotools' per-class AP and AP summaries. A label without a
(non-crowd) ground truth has undefined AP and AR (value ``None``, reason in
``parameters["undefined"]``) and is left out of mAP/mAR, unless ``zero_division`` is given:
then its AP and AR are that value and they count in the means (valor-lite's rule with 0).

Example:
    >>> from assay.testing.detection import make_coco
    >>> from assay.detection.io import load_coco
    >>> data = load_coco(*make_coco(n_images=5, n_categories=3, seed=0))
    >>> ms = compute_metrics(data, metrics=["mAPAveragedOverIOUs"])
    >>> 0 <= ms.get("mAPAveragedOverIOUs", label_key="class").value <= 1
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.detection import records
from assay.detection.compute import CocoEvaluation, coco_evaluate, resolve_iou_type
from assay.detection.curves import pr_curves
from assay.detection.declared import METRIC_OPTIONS, METRICS
from assay.detection.interpolated import binned_curves, interpolated_pr_curves
from assay.detection.options import max_det, thresholds
from assay.detection.params import STAT_NAMES, CocoParams
from assay.detection.tally import WHERE, ap_tally, ar_tally
from assay.detection.thresholded import ar_records, threshold_counts, thresholded_records
from assay.detection.types import DetectionData
from assay.detection.valor_match import matching_for
from assay.errors import InvalidInputError, UndefinedMetricError
from assay.io.labels import natural_key
from assay.ratios import value_or_none
from assay.results import Metric, MetricSet
from assay.uncertainty.intervals import attach, interval_from
from assay.uncertainty.slices import record_key

__all__ = [
    "compute_metrics",
    "coco_summary",
    "average_precision",
    "ap_records",
    "label_order",
]

_ALL = ("all", 0.0, 1e5**2)


def coco_summary(ev: CocoEvaluation) -> MetricSet:
    """The 12 COCOeval summary numbers as ``COCOSummary`` records (undefined where COCO prints -1).

    Example:
        >>> from assay.testing.detection import make_coco
        >>> from assay.detection.io import load_coco
        >>> ms = coco_summary(coco_evaluate(load_coco(*make_coco(n_images=5, seed=1))))
        >>> len(ms), ms[0].parameters["statistic"]
        (12, 'AP')
    """
    return MetricSet(
        records.coco_summary_stat(
            float(v) if v > -1 else None,
            statistic=stat,
            iou=iou,
            area=area,
            max_dets=md,
            iou_type=ev.params.iou_type,
        )
        for (stat, iou, area, md), v in zip(STAT_NAMES, ev.stats())
    )


def average_precision(
    data: DetectionData,
    *,
    iou_threshold: float = 0.5,
    label: tuple[str, str] | None = None,
    iou_type: str | None = None,
    max_detections: int | None = 100,
) -> float:
    """Strict AP (101-point, COCO matching) of one label at one IoU threshold.

    Raises :class:`UndefinedMetricError` if the label has no non-crowd ground truth.
    ``label=None`` works when the data has a single label.

    Example:
        >>> from assay.testing.detection import make_coco
        >>> from assay.detection.io import load_coco
        >>> data = load_coco(*make_coco(n_images=5, n_categories=2, seed=0))
        >>> 0 <= average_precision(data, label=("class", "cat1")) <= 1
        True
    """
    if label is None:
        if len(data.labels) != 1:
            raise InvalidInputError("is required when the data has several labels", source="label")
        label = data.labels[0]
    lab = (str(label[0]), str(label[1]))
    if lab not in data.labels:
        raise InvalidInputError(f"unknown label {lab!r}", source="label")
    k = data.labels.index(lab)
    values = METRIC_OPTIONS.validate({"iou_type": iou_type, "max_detections": max_detections})
    params = CocoParams(
        iou_type=resolve_iou_type(data, values["iou_type"]),
        iou_thresholds=np.array([iou_threshold], dtype=np.float64),
        area_ranges=(("all", 0, 1e10),),
        max_dets=(max_det(data, values["max_detections"]),),
    )
    s = coco_evaluate(data, params).precision[0, :, k, 0, 0]
    if (s <= -1).any():
        raise UndefinedMetricError("AP", records.NO_GT)
    return float(np.mean(s))


def label_order(data: DetectionData) -> list[int]:
    """Label indices in natural (key, value) order (``cat2`` before ``cat10``): records come
    out in the same order however the data was batched."""
    return sorted(range(len(data.labels)), key=lambda k: natural_key(data.labels[k]))


def compute_metrics(
    data: DetectionData, *, metrics: Sequence[str] | None = None, **options: Any
) -> MetricSet:
    """Detection metrics as :class:`~assay.results.Metric` records (see the module docstring).

    Args:
        data: ground truths and predictions.
        metrics: metric types to return (default :data:`DEFAULT_METRICS`; the others only
            when asked for); :data:`assay.detection.declared.METRICS` lists them.
        options: :data:`assay.detection.declared.METRIC_OPTIONS` (those of
            :class:`~assay.detection.evaluator.DetectionEvaluator` but ``by``), checked by their
            rules:

        iou_type: ``"bbox"`` or ``"segm"``; default the IoU type the data was read for
            (bbox for data that keeps its exact geometry). A conflicting request raises.
        iou_thresholds: thresholds for AP, the averaged metrics, Counts / Precision / Recall /
            F1 / Accuracy and ConfusionMatrix (default 0.50:0.05:0.95).
        ar_iou_thresholds: thresholds AR averages over (default [0.5, 0.75]).
        recall_score_threshold: AR counts only TPs with ``score >=`` this (one threshold;
            ``score_thresholds`` gives several).
        score_thresholds: score thresholds of AR/mAR, ARAveragedOverScores, Counts, Precision,
            Recall, F1, Accuracy and ConfusionMatrix (default ``[recall_score_threshold]``).
        max_detections: detections kept per (datum, label), highest scores first (COCO's 100);
            ``None`` keeps all.
        pr_curve_iou_threshold: IoU threshold of the (detailed) precision-recall curves.
        pr_curve_max_examples: examples per observation in ``DetailedPrecisionRecallCurve``.
        zero_division: the value of a ratio whose denominator is 0 (AP/AR of a label without
            ground truths, curve precision/recall/F1); default None = undefined.
        matching: ``"coco"`` (default) or ``"valor"``: the matching rule of AR, mAR, the
            AR averages, Counts, Precision, Recall, F1, Accuracy and the interpolated curve
            (:mod:`assay.detection.valor_match`); with ``"valor"`` AP, APAveragedOverIOUs,
            mAP and mAPAveragedOverIOUs are valor-lite's too (the mean of its binned curve,
            :mod:`assay.detection.interpolated`); COCOSummary always matches as COCO.
        examples_limit, examples_offset: page the ``Examples`` records: the datums (with an
            annotation) ``offset .. offset + limit - 1`` in uid order (valor-lite's
            ``limit`` and ``offset``; default: all).
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over images on AP,
            APAveragedOverIOUs, mAP, mAPAveragedOverIOUs, AR and mAR (default ``ci=None``:
            none; any ``ci_method`` gives the bootstrap); see :mod:`assay.detection.tally`.
        cluster: an image metadata field whose values are clusters: the bootstrap draws
            whole clusters of images instead of images (``parameters.cluster``).
    """
    values = METRIC_OPTIONS.validate(options)
    wanted = list(METRICS.check(metrics))
    opts = interval_from(values)
    page = (values["examples_offset"], values["examples_limit"])
    ious, ar_ious, scores = thresholds(values)
    zero_division, matching = values["zero_division"], values["matching"]
    iou_type = resolve_iou_type(data, values["iou_type"])
    md = max_det(data, values["max_detections"])
    out: list[Metric] = []
    need_ap = any(m in wanted for m in METRICS.family("ap"))
    need_ar = any(m in wanted for m in METRICS.family("ar"))
    need_counts = any(m in wanted for m in METRICS.family("counts"))
    if need_ap or need_ar or need_counts:
        ev, chosen, all_t = matched(
            data, iou_type, ious, ar_ious if need_ar else None, md, matching
        )
        if need_ap:
            t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ious]
            if matching == "coco":
                prec = ev.precision[:, :, :, 0, 0]  # (T, R, K)
                ap = np.where((prec > -1).all(axis=1), prec.mean(axis=1), np.nan)  # (T, K)
            else:  # valor-lite's AP: the mean of its binned curve
                curve, _, n_gt = binned_curves(data, chosen)
                ap = np.where(n_gt > 0, curve.mean(axis=2), np.nan)
            ap_out = ap_records(data, ap[t_idx], ious, wanted, zero_division)
            if opts is not None and matching == "coco":
                attach(ap_out, [ap_tally(ev, t_idx, ious, zero_division)], opts, _key)
            elif opts is not None:  # the bootstrap replays COCO's accumulation only
                why = "AP intervals are computed under matching='coco' only"
                for m in ap_out:
                    if m.value is not None:
                        m.parameters.update(opts.parameters(None, None, "bootstrap", why))
            out += ap_out
        order = label_order(data)
        if need_ar:
            ar_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ar_ious]
            tp, _, fn = threshold_counts(data, chosen, ar_idx, scores)
            ar_out = ar_records(
                data, tp, fn, ar_ious, scores, order, _keys(data), wanted, zero_division
            )
            if opts is not None:
                found = ar_tally(data, chosen, ar_idx, list(scores), zero_division)
                attach(ar_out, [found], opts, _key)
            out += ar_out
        if need_counts:
            t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ious]
            counts = threshold_counts(data, chosen, t_idx, scores)
            out += thresholded_records(data, counts, ious, scores, order, wanted, zero_division)
    if "COCOSummary" in wanted:
        out += coco_summary(coco_evaluate(data, CocoParams(iou_type=iou_type), all_precision=False))
    out += _curves_and_matrices(
        data, iou_type, md, ious, scores, values["pr_curve_iou_threshold"],
        values["pr_curve_max_examples"], wanted, zero_division, matching, page,
    )  # fmt: skip
    return MetricSet(out)


def _key(m: Metric) -> tuple[Any, ...]:
    return record_key(m, WHERE)


def matched(
    data: DetectionData,
    iou_type: str,
    ious: np.ndarray,
    ar_ious: np.ndarray | None,
    md: int,
    matching: str,
) -> tuple[CocoEvaluation, Any, np.ndarray]:
    """COCO's evaluation at ``ious`` and ``ar_ious`` (all area, ``md`` detections), the
    matching the thresholded metrics use (COCO's or valor-lite's) and the thresholds."""
    all_t = ious
    if ar_ious is not None:  # distinct and sorted (np.unique would import numpy.ma: 50 ms)
        all_t = np.sort(np.concatenate([ious, ar_ious]))
        all_t = all_t[np.r_[True, all_t[1:] != all_t[:-1]]]
    params = CocoParams(iou_type=iou_type, iou_thresholds=all_t, area_ranges=(_ALL,),
                        max_dets=(md,))  # fmt: skip
    ev = coco_evaluate(data, params)
    chosen = ev.matching if matching == "coco" else matching_for(matching, data, params)
    return ev, chosen, all_t


def _keys(data: DetectionData) -> list[str]:
    return sorted({k for k, _ in data.labels}, key=natural_key)


def ap_records(
    data: DetectionData, ap: np.ndarray, ious: np.ndarray, wanted: list[str], zd: float | None
) -> list[Metric]:
    """AP per (label, threshold), its mean over thresholds, and the means over labels.

    ``ap`` is ``(T, K)`` with NaN for a label without ground truths (at every threshold).
    """
    out: list[Metric] = []
    if zd is not None:
        ap = np.where(np.isnan(ap), float(zd), ap)
    defined = ~np.isnan(ap).any(axis=0)
    order = label_order(data)
    for k in order:
        key, value = data.labels[k]
        if "AP" in wanted:
            out += [
                records.ap(
                    value_or_none(ap[ti, k]),
                    label_key=key,
                    label_value=value,
                    iou_threshold=t,
                    zero_division=zd,
                )
                for ti, t in enumerate(ious)
            ]
        if "APAveragedOverIOUs" in wanted:
            v = float(np.mean(ap[:, k])) if defined[k] else None
            out.append(
                records.ap_averaged(
                    v, label_key=key, label_value=value, iou_thresholds=ious, zero_division=zd
                )
            )
    for key in _keys(data):
        ks = [k for k in order if data.labels[k][0] == key and defined[k]]
        if "mAP" in wanted:
            out += [
                records.mean_ap(
                    float(np.mean(ap[ti, ks])) if ks else None,
                    label_key=key,
                    iou_threshold=t,
                    zero_division=zd,
                )
                for ti, t in enumerate(ious)
            ]
        if "mAPAveragedOverIOUs" in wanted:
            v = float(np.mean(ap[:, ks])) if ks else None
            out.append(
                records.mean_ap_averaged(v, label_key=key, iou_thresholds=ious, zero_division=zd)
            )
    return out


def _curves_and_matrices(
    data: DetectionData,
    iou_type: str,
    md: int,
    ious: np.ndarray,
    scores: list[float],
    pr_iou: float,
    max_examples: int,
    wanted: list[str],
    zd: float | None,
    matching: str,
    page: tuple[int, int | None],
) -> list[Metric]:
    """The precision-recall curves, confusion matrices and examples that are wanted."""
    out: list[Metric] = []
    if "PrecisionRecallCurve" in wanted or "DetailedPrecisionRecallCurve" in wanted:
        params = CocoParams(
            iou_type=iou_type,
            iou_thresholds=np.array([pr_iou], dtype=np.float64),
            area_ranges=(_ALL,),
            max_dets=(md,),
        )
        out += pr_curves(data, params, label_order(data), max_examples, wanted, zd)
    if "InterpolatedPrecisionRecallCurve" in wanted:
        params = CocoParams(iou_type=iou_type, iou_thresholds=ious, area_ranges=(_ALL,),
                            max_dets=(md,))  # fmt: skip
        out += interpolated_pr_curves(data, params, label_order(data), zd, matching)
    if "ConfusionMatrix" in wanted:
        from assay.detection.confusion import confusion_matrices

        out += confusion_matrices(data, iou_type, ious.tolist(), scores)
    if "ConfusionMatrixWithExamples" in wanted:
        from assay.detection.examples import confusion_with_examples

        out += confusion_with_examples(data, iou_type, ious.tolist(), scores)
    if "Examples" in wanted:
        from assay.detection.examples import examples

        out += examples(data, iou_type, ious.tolist(), scores, page=page)
    return out
