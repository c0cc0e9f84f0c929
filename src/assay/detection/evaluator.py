"""Accumulating detection evaluator, and the one-call :func:`evaluate_detection`.

:class:`DetectionEvaluator` follows the evaluator contract (:mod:`assay.evaluator`):
``add()`` batches of datums, ``merge()`` in place, ``compute() -> MetricSet``,
``state()`` / ``from_state()`` as plain arrays. It keeps the columnar batches it was given
and evaluates them together, so any split into batches (or across workers, then merged)
gives exactly the result of one batch. Ties between equal scores on different datums are
broken by the order in which datums were added (COCOeval: by image id). ``coco()`` is the
COCOeval view of the same data (precision/recall arrays, 12 summary numbers).

Example:
    >>> ev = DetectionEvaluator()
    >>> gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}]
    >>> pr = [{"uid": "a", "annotations": [{"label": "cat", "score": 0.8, "box": [0, 0, 10, 9]}]}]
    >>> ms = ev.add_datums(gt, pr).compute(metrics=["mAP"])
    >>> round(ms.get("mAP", iou_threshold=0.5).value, 12)
    1.0
    >>> evaluate_detection(gt, pr, metrics=["mAR"]).get("mAR").value
    1.0
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.detection.compute import CocoEvaluation, coco_evaluate, resolve_iou_type
from assay.detection.declared import METRICS, OPTIONS
from assay.detection.filters import subset
from assay.detection.jsonl import parse_datums
from assay.detection.metrics import coco_summary, compute_metrics, matched
from assay.detection.options import max_det, thresholds
from assay.detection.params import CocoParams
from assay.detection.state import data_from_arrays, data_to_arrays
from assay.detection.tally import WHERE, ap_tally, ar_tally, slice_only
from assay.detection.types import DetectionData
from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.results import Metric, MetricSet
from assay.uncertainty.intervals import gap_bounds, interval_from, replicates_by_key
from assay.uncertainty.slices import slice_masks, slice_records
from assay.uncertainty.tally import Tally

__all__ = ["DetectionEvaluator", "evaluate_detection"]


class DetectionEvaluator(Evaluator):
    """Collects datums in batches and computes detection metrics over all of them.

    Args: the options of :func:`assay.detection.metrics.compute_metrics` (``iou_type=None``:
    the IoU type the data was read for, bbox for JSONL data; ``ci``, ``ci_method``,
    ``num_bootstrap``, ``seed``: a bootstrap interval over images on the AP and AR families;
    ``by``: image metadata fields whose every value is a slice, the AP/AR family again per
    slice with ``slice_column``, ``slice``, ``n`` and ``gap``, see :mod:`assay.uncertainty.slices`).
    They are declared once, with their rules and flags, in :data:`assay.detection.declared.OPTIONS`;
    ``self.options`` holds their clean values and ``config()`` the stored ones.
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        iou_type: str | None = None,
        iou_thresholds: Sequence[float] | None = None,
        ar_iou_thresholds: Sequence[float] = (0.5, 0.75),
        recall_score_threshold: float = 0.0,
        score_thresholds: Sequence[float] | None = None,
        max_detections: int | None = 100,
        pr_curve_iou_threshold: float = 0.5,
        pr_curve_max_examples: int = 1,
        zero_division: float | None = None,
        matching: str = "coco",
        examples_limit: int | None = None,
        examples_offset: int = 0,
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
        by: Sequence[str] = (),
    ) -> None:
        self.by = tuple(by)
        #: the options of compute_metrics: all but ``by``
        self._metric_options = {k: v for k, v in self.options.items() if k != "by"}
        self._parts: list[DetectionData]  # the batches, in the order added
        self.add_state("_parts", [], "cat", encode=_parts_arrays, decode=_parts_from_arrays)
        self._merged: tuple[int, DetectionData] | None = None  # (parts joined, their data)

    def add(self, data: DetectionData) -> DetectionEvaluator:  # type: ignore[override]
        """Add a batch (datums with their ground truths and predictions); returns ``self``."""
        if not isinstance(data, DetectionData):
            raise InvalidInputError(
                f"expected DetectionData (see load_coco, load_jsonl, parse_datums), got "
                f"{type(data).__name__}; use add_datums() for JSONL-shaped dicts",
                source="DetectionEvaluator.add",
            )
        self._check_iou_type([data])
        if data.n_datums:
            self._parts.append(data)
        return self

    def add_datums(
        self, groundtruths: list[dict[str, Any]], predictions: list[dict[str, Any]]
    ) -> DetectionEvaluator:
        """Add a batch given as datum dicts (the JSONL records of :mod:`assay.detection.io`)."""
        return self.add(parse_datums(groundtruths, predictions))

    def _check_iou_type(self, parts: list[DetectionData]) -> None:
        """Refuse batches read for another IoU type than this evaluator's (or its data's)."""
        have = {self.options["iou_type"], *(p.iou_type for p in self._parts)} - {None}
        for data in parts:
            if data.iou_type is not None and have and data.iou_type not in have:
                raise InvalidInputError(
                    f"the batch was read with iou_type={data.iou_type!r}; this evaluator "
                    f"computes {sorted(have)[0]!r}",
                    source="DetectionEvaluator.add",
                )
            have |= {data.iou_type} - {None}

    def _check_merge(self, other: DetectionEvaluator) -> None:
        self._check_iou_type(other._parts)

    @property
    def data(self) -> DetectionData:
        """All batches as one :class:`DetectionData` (datums in the order added)."""
        # parts are only ever appended, so their number says whether the cache is current
        if self._merged is None or self._merged[0] != len(self._parts):
            self._merged = (len(self._parts), _joined(self._parts))
        return self._merged[1]

    def compute(self, metrics: Sequence[str] | None = None) -> MetricSet:
        """Metric records (see :func:`assay.detection.metrics.compute_metrics`).

        Raises:
            InvalidInputError: nothing was added.
        """
        if metrics is None or self.is_empty:
            return super().compute()
        ms = self._compute(metrics)
        ms.source = self
        return ms

    def _compute(self, metrics: Sequence[str] | None = None) -> MetricSet:
        whole = compute_metrics(self.data, metrics=metrics, **self._metric_options)
        return MetricSet([*whole, *self._slices(list(whole))])

    #: the parameters after the type in the tallies' keys (:func:`record_key`)
    tally_where = WHERE

    def tally(self) -> list[Tally]:
        """The per-unit tallies (images) of the default AP and AR records
        (:mod:`assay.detection.tally`; the engine: :mod:`assay.uncertainty`)."""
        wanted = sorted(set(METRICS.defaults) & set(METRICS.sliced))
        return interval_tallies(self.data, wanted, self.options)

    def _slices(self, whole: list[Metric]) -> list[Metric]:
        """The AP/AR family again on every slice of each ``by`` column: each slice's images
        evaluated alone (COCO matches within an image, so the subset's matching is the whole
        set's restricted to it), gaps to ``whole`` and with ``ci`` their intervals (the
        whole set's replicates made once; :mod:`assay.detection.tally`)."""
        wanted = sorted({m.type for m in whole} & set(METRICS.sliced))
        if not wanted or not self.by:  # no slice: no replicates of the whole set to prepare
            return []
        data, options = self.data, self._metric_options
        opts = interval_from(options)
        base = (
            None
            if opts is None
            else replicates_by_key(interval_tallies(data, wanted, options), opts)
        )

        def part(keep: np.ndarray) -> DetectionData:
            return subset(data, datums=[u for u, k in zip(data.uids, keep) if k])

        def records(keep: np.ndarray) -> list[Metric]:
            return list(compute_metrics(part(keep), metrics=wanted, **options))

        def gaps(keep: np.ndarray) -> dict[tuple[Any, ...], tuple[float, float]]:
            assert opts is not None and base is not None
            labels = part(keep).labels
            if not labels:
                return {}
            return gap_bounds(
                interval_tallies(slice_only(data, keep, labels), wanted, options), opts, base
            )

        out: list[Metric] = []
        for column in self.by:
            masks = slice_masks(data.metadata, column, "images")
            out += slice_records(
                whole, masks, column=column, where=WHERE, records=records,
                gaps=None if opts is None else gaps,
            )  # fmt: skip
        return out

    def filter(
        self,
        *,
        datums: Sequence[Hashable] | Any = None,
        groundtruths: Any = None,
        predictions: Any = None,
        labels: Sequence[Any] | None = None,
    ) -> DetectionEvaluator:
        """A new evaluator, same options, on the data the filters keep.

        ``datums``: uids, or an expression over ``uid`` and the datum's metadata;
        ``groundtruths`` / ``predictions``: expressions over each annotation's ``uid``,
        ``label``, ``label_key``, ``score`` (predictions) and metadata (its own, then the
        datum's); ``labels``: values (any key) or ``(key, value)`` pairs. Expressions are
        pandas-query strings or ``pyarrow.compute.Expression`` (valor-lite's names
        ``datum_uid``, ``gt_label``, ``pd_label``, ``pd_score`` work too). Nothing is read
        again; computing on it gives what adding only those datums and annotations would
        (:func:`assay.detection.filters.subset`). A filter that keeps no datum gives an empty
        evaluator.

        Example:
            >>> gt = [{"uid": u, "metadata": {"site": u}, "annotations": [{"label": "cat",
            ...        "box": [0, 0, 10, 10]}]} for u in "ab"]
            >>> pr = [{"uid": "a", "annotations": [{"label": "cat", "score": 0.9,
            ...                                     "box": [0, 0, 10, 10]}]}]
            >>> ev = DetectionEvaluator().add_datums(gt, pr)
            >>> ev.compute(["mAR"]).get("mAR").value
            0.5
            >>> ev.filter(datums=["a"]).compute(["mAR"]).get("mAR").value
            1.0
            >>> ev.filter(datums='site == "a"').compute(["mAR"]).get("mAR").value
            1.0
        """
        self._require_data("filter")
        out = DetectionEvaluator(**self.config())
        part = subset(
            self.data,
            datums=datums,
            groundtruths=groundtruths,
            predictions=predictions,
            labels=labels,
        )
        if part.n_datums:
            out.add(part)
        return out

    def coco(
        self, params: CocoParams | None = None, *, all_precision: bool = True
    ) -> CocoEvaluation:
        """The COCOeval view: precision/recall arrays and the 12 summary numbers."""
        self._require_data("coco")
        iou_type = self.options["iou_type"] or self.data.iou_type or "bbox"
        return coco_evaluate(
            self.data, params or CocoParams(iou_type=iou_type), all_precision=all_precision
        )

    def coco_summary(self) -> MetricSet:
        """The 12 COCO summary numbers as ``COCOSummary`` records."""
        return coco_summary(self.coco(all_precision=False))

    def _require_data(self, what: str) -> None:
        if self.is_empty:
            raise InvalidInputError(
                "no data was added; call add() first", source=f"DetectionEvaluator.{what}"
            )


def _joined(parts: list[DetectionData]) -> DetectionData:
    return parts[0] if len(parts) == 1 else DetectionData.merge(parts, unique=False)


def _parts_arrays(parts: list[DetectionData]) -> dict[str, np.ndarray]:
    return data_to_arrays(_joined(parts)) if parts else {}


def _parts_from_arrays(state: Mapping[str, np.ndarray]) -> list[DetectionData]:
    return [data_from_arrays(state)]


def evaluate_detection(
    groundtruths: Any,
    predictions: Any = None,
    *,
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> MetricSet:
    """Detection metric records in one call.

    Args:
        groundtruths: a :class:`DetectionData` (then ``predictions`` is None), or ground-truth
            datum dicts (assay's JSONL records) with ``predictions`` the prediction datums.
        metrics: metric types (default: ``METRICS.defaults`` of
            :mod:`assay.detection.declared`: AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs,
            AR, mAR, PrecisionRecallCurve).
        options: the keyword arguments of :class:`DetectionEvaluator` (``iou_type``,
            ``iou_thresholds``, ``max_detections``, ``zero_division``, ...).

    Raises:
        InvalidInputError: bad input, or no datum at all.
    """
    ev = DetectionEvaluator(**options)
    if isinstance(groundtruths, DetectionData):
        if predictions is not None:
            raise InvalidInputError(
                "give DetectionData alone, or two lists of datums", source="predictions"
            )
        ev.add(groundtruths)
    else:
        ev.add_datums(list(groundtruths), list(predictions or []))
    return ev.compute(metrics)


def interval_tallies(
    data: DetectionData, wanted: Sequence[str], options: Mapping[str, Any]
) -> list[Tally]:
    """The tallies of the AP (COCO matching only) and AR records of the types ``wanted``
    (sliced types) on ``data`` under an evaluator's clean ``options``."""
    ious, ar_ious, scores = thresholds(options)
    need_ar = bool(set(METRICS.family("ar")) & set(wanted))
    need_ap = bool(set(METRICS.family("ap")) & set(wanted)) and options["matching"] == "coco"
    iou_type = resolve_iou_type(data, options["iou_type"])
    md = max_det(data, options["max_detections"])
    ev, chosen, all_t = matched(
        data, iou_type, ious, ar_ious if need_ar else None, md, options["matching"]
    )
    zd, out = options["zero_division"], []
    if need_ap:  # AP intervals replay COCO's accumulation only
        t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ious]
        out.append(ap_tally(ev, t_idx, ious, zd))
    if need_ar:
        ar_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ar_ious]
        out.append(ar_tally(data, chosen, ar_idx, scores, zd))
    return out
