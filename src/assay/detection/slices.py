"""Detection metrics per slice: the AP/AR family again on each subgroup of an image column.

``by=["camera"]`` (CLI ``--by camera``) gives, for every distinct value ``v`` of the image
metadata field ``camera``, the AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs, AR and mAR
records of the images whose ``camera`` is ``v`` (images without the field are in no slice),
exactly what evaluating those images alone gives (COCO matches within an image, so the
subset's matching is the whole set's restricted to it), with ``slice_column``, ``slice``,
``n`` (images) and ``gap`` (:mod:`assay.slices`).

With ``ci`` each slice record gets its own interval (a bootstrap over the slice's images)
and the gap its interval ``gap_ci_low``, ``gap_ci_high``: every resample draws from all
images (the whole set's draw, with its seed), and the slice's value comes from the same
draw with the other images weighing nothing: the replicates of
:mod:`assay.detection.intervals` run on the whole set's images with only the slice's
annotations kept (every image stays, so the draws are the same; the slice's labels only, as
when its images are evaluated alone, also under ``zero_division``). The whole set's
replicates are computed once for all slices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.detection.compute import resolve_iou_type
from assay.detection.filters import subset
from assay.detection.intervals import (
    ap_record_values,
    ap_replicates,
    ar_column,
    ar_replicates,
    canon_labels,
)
from assay.detection.metrics import compute_metrics, matched
from assay.detection.options import check_options, check_score_thresholds, max_det
from assay.detection.types import DetectionData
from assay.intervals import config_options, percentile
from assay.results import Metric
from assay.slices import annotate, record_key, slice_masks

__all__ = ["SLICE_TYPES", "SLICE_WHERE", "slice_records"]

#: The record types computed again per slice (``by``), and what identifies a record.
SLICE_TYPES = frozenset({"AP", "APAveragedOverIOUs", "mAP", "mAPAveragedOverIOUs", "AR", "mAR"})
SLICE_WHERE = ("label_key", "label_value", "iou_threshold", "score_threshold")

Gaps = dict[tuple[Any, ...], tuple[float, float]]


def slice_records(
    data: DetectionData, by: Sequence[str], whole: Sequence[Metric], options: dict[str, Any]
) -> list[Metric]:
    """The sliced records of every column of ``by`` (``whole``: the whole set's records,
    ``options``: the evaluator's, intervals included)."""
    out: list[Metric] = []
    wanted = sorted({m.type for m in whole} & SLICE_TYPES)
    if not wanted or not by:  # no slice: no replicates of the whole set to prepare
        return out
    gaps = _GapIntervals(data, options, wanted) if config_options(options) else None
    for column in by:
        for v, keep in slice_masks(data.metadata, column, "images"):
            part = subset(data, datums=[u for u, k in zip(data.uids, keep) if k])
            recs = list(compute_metrics(part, metrics=wanted, **options))
            found = None if gaps is None else gaps(keep, part, recs)
            n = int(keep.sum())
            out += annotate(
                recs, whole, column=column, value=v, n=n, where=SLICE_WHERE, gap_ci=found
            )
    return out


def _only(data: DetectionData, keep: NDArray[np.bool_], labels: list[Any]) -> DetectionData:
    """``data`` with only the annotations of the images ``keep`` and the ``labels`` (the
    slice's): every image stays, so a resample draws the same counts for them, and the
    others weigh nothing."""
    g, p = data.groundtruths, data.predictions
    kept = replace(data, groundtruths=g.take(keep[g.datum]), predictions=p.take(keep[p.datum]))
    return subset(kept, labels=labels)


class _GapIntervals:
    """The whole set's replicates, once; then per slice the gaps' bootstrap intervals."""

    def __init__(self, data: DetectionData, options: dict[str, Any], wanted: list[str]) -> None:
        opts = config_options(options)
        assert opts is not None
        self.opts, self.data, self.options = opts, data, options
        self.ious, self.ar_ious, _ = check_options(
            iou_thresholds=options["iou_thresholds"],
            ar_iou_thresholds=options["ar_iou_thresholds"],
            recall_score_threshold=options["recall_score_threshold"],
            pr_curve_iou_threshold=options["pr_curve_iou_threshold"],
            pr_curve_max_examples=options["pr_curve_max_examples"],
            zero_division=options["zero_division"],
            metrics=wanted,
            score_thresholds=options["score_thresholds"],
        )
        self.scores = list(
            check_score_thresholds(options["score_thresholds"], options["recall_score_threshold"])
        )
        self.need_ar = bool({"AR", "mAR"} & set(wanted))
        self.need_ap = bool(set(wanted) - {"AR", "mAR"}) and options["matching"] == "coco"
        self.whole = self._replicates(data)

    def _replicates(self, data: DetectionData) -> tuple[Any, Any]:
        """The AP replicates (B, T, K) and the AR ones (B, S K + S keys) of ``data``, each
        with its labels in canonical order (None where not wanted)."""
        o = self.options
        iou_type = resolve_iou_type(data, o["iou_type"])
        md = max_det(data, o["max_detections"])
        ar_ious = self.ar_ious if self.need_ar else None
        ev, chosen, all_t = matched(data, iou_type, self.ious, ar_ious, md, o["matching"])
        zd, ap, ar = o["zero_division"], None, None
        if self.need_ap:  # AP intervals replay COCO's accumulation only
            t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in self.ious]
            canon = canon_labels(data)
            reps = ap_replicates(ev, t_idx, self.opts, zd)[:, :, canon]
            ap = (reps, [data.labels[k] for k in canon])
        if self.need_ar:
            ar_idx = [int(np.flatnonzero(all_t == t)[0]) for t in self.ar_ious]
            ar = ar_replicates(data, chosen, ar_idx, self.scores, self.opts, zd)
        return ap, ar

    def __call__(self, keep: NDArray[np.bool_], part: DetectionData, recs: list[Metric]) -> Gaps:
        """Gap intervals of the slice ``keep`` (``part`` the slice's data, ``recs`` its
        records), keyed as :func:`assay.slices.record_key` with :data:`SLICE_WHERE`."""
        if not part.labels:
            return {}
        (ap_w, ar_w), (ap_s, ar_s) = (
            self.whole,
            self._replicates(_only(self.data, keep, part.labels)),
        )
        gaps: list[tuple[Metric, Any]] = []
        if ap_w is not None and ap_s is not None:
            mine = {id(m): v for m, v in ap_record_values(recs, ap_s[0], ap_s[1], self.ious)}
            for m, v in ap_record_values(recs, ap_w[0], ap_w[1], self.ious):
                gaps.append((m, mine[id(m)] - v))
        if ar_w is not None and ar_s is not None:
            for m in recs:
                c_w, c_s = ar_column(m, ar_w[1], self.scores), ar_column(m, ar_s[1], self.scores)
                if c_w is not None and c_s is not None:
                    gaps.append((m, ar_s[0][:, c_s] - ar_w[0][:, c_w]))
        out: Gaps = {}
        for m, g in gaps:
            lo, hi = percentile(g, self.opts.level)
            out[record_key(m, SLICE_WHERE)] = (float(lo), float(hi))
        return out
