"""Detection metrics per slice: the AP/AR family again on each subgroup of an image column.

``by=["camera"]`` (CLI ``--by camera``) gives, for every distinct value ``v`` of the image
metadata field ``camera``, the AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs, AR and mAR
records of the images whose ``camera`` is ``v`` (images without the field are in no slice),
exactly what evaluating those images alone gives (COCO matches within an image, so the
subset's matching is the whole set's restricted to it), with ``slice_column``, ``slice``,
``n`` (images) and ``gap`` (:mod:`assay.slices`).

With ``ci`` each slice record gets its own interval (a bootstrap over the slice's images)
and the gap its interval ``gap_ci_low``, ``gap_ci_high``: every resample draws from all
images (the whole set's draw, with its seed), and the slice's value is read from the same
draw with the other images' counts set to 0, ``w * inside``; the AP/AR statistics are the
per-image ones of :mod:`assay.detection.intervals`, so no image is matched again. A label
the slice has no annotation of is not in the slice (as when its images are evaluated alone):
its resampled slice AP/AR is left out of the slice's means, also under ``zero_division``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.detection.compute import resolve_iou_type
from assay.detection.filters import subset
from assay.detection.intervals import (
    ap_record_values,
    ap_statistic,
    ar_column,
    ar_statistic,
    canon_labels,
    image_order,
)
from assay.detection.metrics import compute_metrics, matched
from assay.detection.options import check_options, check_score_thresholds, max_det
from assay.detection.types import DetectionData
from assay.intervals import bootstrap, config_options, percentile
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
    if not wanted:
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


class _GapIntervals:
    """The whole set's matching, once; then per slice the gaps' bootstrap intervals."""

    def __init__(self, data: DetectionData, options: dict[str, Any], wanted: list[str]) -> None:
        opts = config_options(options)
        assert opts is not None
        self.opts, self.data, self.zd = opts, data, options["zero_division"]
        self.ious, ar_ious, _ = check_options(
            iou_thresholds=options["iou_thresholds"],
            ar_iou_thresholds=options["ar_iou_thresholds"],
            recall_score_threshold=options["recall_score_threshold"],
            pr_curve_iou_threshold=options["pr_curve_iou_threshold"],
            pr_curve_max_examples=options["pr_curve_max_examples"],
            zero_division=self.zd,
            metrics=wanted,
            score_thresholds=options["score_thresholds"],
        )
        self.scores = list(
            check_score_thresholds(options["score_thresholds"], options["recall_score_threshold"])
        )
        need_ar = bool({"AR", "mAR"} & set(wanted))
        iou_type = resolve_iou_type(data, options["iou_type"])
        md = max_det(data, options["max_detections"])
        ev, chosen, all_t = matched(
            data, iou_type, self.ious, ar_ious if need_ar else None, md, options["matching"]
        )
        self.canon = canon_labels(data)
        self.labels = [data.labels[k] for k in self.canon]
        self.col = image_order(data)
        self.ap = None
        if options["matching"] == "coco":  # AP intervals replay COCO's accumulation only
            t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in self.ious]
            self.ap = ap_statistic(ev, t_idx, self.zd)
        self.ar = None
        if need_ar:
            ar_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ar_ious]
            self.ar = ar_statistic(data, chosen, ar_idx, self.scores, self.zd)

    def __call__(self, keep: NDArray[np.bool_], part: DetectionData, recs: list[Metric]) -> Gaps:
        """Gap intervals of the slice ``keep`` (``part`` the slice's data, ``recs`` its
        records), keyed as :func:`assay.slices.record_key` with :data:`SLICE_WHERE`."""
        inside = np.zeros(self.data.n_datums)
        inside[self.col[keep]] = 1.0
        present = np.isin(np.arange(len(self.labels)), [self.labels.index(x) for x in part.labels])
        T, K = len(self.ious), len(self.labels)
        ap, ar = self.ap, self.ar

        def statistic(w: Any) -> Any:
            cols = []
            if ap is not None:
                whole = ap(w).reshape(-1, T, len(self.canon))[:, :, self.canon]
                part_ = ap(w * inside).reshape(-1, T, len(self.canon))[:, :, self.canon]
                part_[:, :, ~present] = np.nan
                cols += [whole.reshape(len(w), -1), part_.reshape(len(w), -1)]
            if ar is not None:
                cols += [ar(w), ar(w * inside, present)]
            return np.concatenate(cols, axis=1)

        ones = np.ones(self.data.n_datums, dtype=np.int64)
        reps = bootstrap(statistic, ones, self.opts.num_bootstrap, self.opts.seed)
        gaps: list[tuple[Metric, Any]] = []
        at = 0
        if ap is not None:
            whole, sl = reps[:, : T * K].reshape(-1, T, K), reps[:, T * K : 2 * T * K]
            at = 2 * T * K
            sliced = ap_record_values(recs, sl.reshape(-1, T, K), self.labels, self.ious)
            mine = {id(m): v for m, v in sliced}
            for m, v in ap_record_values(recs, whole, self.labels, self.ious):
                gaps.append((m, mine[id(m)] - v))
        if ar is not None:
            width = (reps.shape[1] - at) // 2
            whole, sl = reps[:, at : at + width], reps[:, at + width :]
            for m in recs:
                c = ar_column(m, self.labels, self.scores)
                if c is not None:
                    gaps.append((m, sl[:, c] - whole[:, c]))
        out: Gaps = {}
        for m, g in gaps:
            lo, hi = percentile(g, self.opts.level)
            out[record_key(m, SLICE_WHERE)] = (float(lo), float(hi))
        return out
