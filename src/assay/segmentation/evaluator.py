"""Streaming semantic-segmentation evaluator, and the one-call :func:`evaluate_segmentation`.

:class:`SegmentationEvaluator` follows the evaluator contract (:mod:`assay.evaluator`).
``add()`` takes datums (JSONL-style records, or label maps through ``add_label_maps``),
adds their pixel confusion counts and forgets the pixels; a batch with a bad record
changes nothing. ``merge()`` adds another evaluator's counts in place (labels unified by
name); ``compute()`` returns, per label, IOU, Precision, Recall and F1, and per label key
mIOU, Accuracy and the ConfusionMatrix, labels in natural order (``cat2`` before ``cat10``).

Example:
    >>> import numpy as np
    >>> ev = SegmentationEvaluator()
    >>> _ = ev.add_label_maps("img1", np.array([[1, 0]]), np.array([[1, 1]]), labels=["road"])
    >>> ev.compute().get("IOU", label_value="road").value
    0.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.evaluator import Evaluator
from assay.io.labels import natural_key
from assay.io.metadata import metadata_from_records
from assay.ratios import value_or_none
from assay.results import Metric, MetricSet
from assay.segmentation import records
from assay.segmentation.compute import (
    accuracy_from_confusion,
    cell_iou_from_confusion,
    iou_from_confusion,
    pixel_confusion,
    prf_from_confusion,
)
from assay.segmentation.datums import DatumCounts
from assay.segmentation.declared import METRICS, OPTIONS
from assay.segmentation.tally import WHERE, gap_tally, key_tally
from assay.uncertainty.intervals import attach, gap_bounds, interval_from
from assay.uncertainty.slices import annotate, record_key, slice_masks
from assay.uncertainty.tally import Tally

__all__ = ["SegmentationEvaluator", "BACKGROUND", "evaluate_segmentation"]

BACKGROUND = "(background)"
_Local = tuple[Any, str, list[str], np.ndarray]  # (uid, label key, labels, local counts)


class SegmentationEvaluator(Evaluator):
    """Accumulates pixel confusion counts per label key.

    Args:
        zero_division: the value of a ratio whose denominator is 0 (IoU of a label with no
            pixel anywhere, precision, recall, F1); default None = undefined.
        by: datum metadata fields whose every value is a slice: IOU, mIOU, Precision, Recall,
            F1 and Accuracy again per slice, with ``slice_column``, ``slice``, ``n``, ``gap``
            and, with ``ci``, the gap's interval (:mod:`assay.uncertainty.slices`).
        ci, ci_method, num_bootstrap, seed: a bootstrap interval over images on IOU, mIOU,
            Precision, Recall, F1 and Accuracy (default ``ci=None``: none; the evaluator then
            each image's per-label pixel counts come from the per-datum counts it keeps anyway,
            :mod:`assay.segmentation.tally`).
        cluster: a datum metadata field whose values are clusters: the bootstrap draws whole
            clusters of images instead of images (``parameters.cluster``).
    """

    OPTIONS = OPTIONS
    METRICS = METRICS

    def __init__(
        self,
        *,
        zero_division: float | None = None,
        by: Sequence[str] = (),
        ci: float | None = None,
        ci_method: str = "bootstrap",
        num_bootstrap: int = 1000,
        seed: int = 0,
        cluster: str | None = None,
    ) -> None:
        self.ci = interval_from(self.options)
        self.zero_division = zero_division
        self.by = tuple(by)
        self._datums: DatumCounts  # per-datum counts: filter() and exact merges
        self.add_state(
            "_datums",
            DatumCounts(),
            "cat",
            encode=DatumCounts.to_arrays,
            decode=DatumCounts.from_arrays,
        )

    @property
    def n_datums(self) -> int:
        """Datums added (a datum added per label key through ``add_label_maps`` counts once
        per call)."""
        return self._datums.n_datums

    @staticmethod
    def _local(uid: Any, g: Any, p: Any, labels: Sequence[str]) -> np.ndarray:
        g, p = np.asarray(g), np.asarray(p)
        if g.shape != p.shape:
            raise InvalidInputError(
                f"prediction size {p.shape} differs from the ground truth's {g.shape}",
                record=f"datum {uid!r}",
                field="prediction",
            )
        try:
            return pixel_confusion(g, p, len(labels))
        except InvalidInputError as e:
            raise InvalidInputError(e.reason, source=e.source, record=f"datum {uid!r}") from None

    def add_label_maps(
        self,
        uid: Any,
        groundtruth: Any,
        prediction: Any,
        *,
        labels: Sequence[str],
        key: str = "class",
        metadata: Mapping[str, Any] | None = None,
    ) -> SegmentationEvaluator:
        """Add one datum as two label maps (0 = background, i = ``labels[i - 1]``);
        ``metadata``: scalars that ``filter(datums=...)`` expressions can name."""
        labels = [str(v) for v in labels]
        if len(set(labels)) != len(labels):
            raise InvalidInputError(
                "labels must be distinct", source="labels", record=f"datum {uid!r}"
            )
        local = self._local(uid, groundtruth, prediction, labels)
        md = metadata_from_records([metadata], source="metadata")
        self._datums.add_block(self._datums.add_datum(uid, md), key, labels, local)
        return self

    def add(  # type: ignore[override]
        self,
        datums: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str = "groundtruths",
        psource: str = "predictions",
    ) -> SegmentationEvaluator:
        """Add datums given as JSONL records (see :func:`assay.segmentation.io.label_maps`).

        The whole batch is read before anything is counted: a bad record changes nothing.
        """
        from assay.segmentation.io import label_maps

        locals_: list[tuple[Any, str, list[str], np.ndarray]] = []
        for uid, key, labels, g, p in label_maps(datums, predictions, source, psource):
            locals_.append((uid, key, labels, self._local(uid, g, p, labels)))
        md = metadata_from_records([r.get("metadata") for r in datums], source=source)
        index = {r["uid"]: self._datums.add_datum(r["uid"]) for r in datums}
        self._datums._add_metadata(md)
        for uid, key, labels, local in locals_:
            self._datums.add_block(index[uid], key, labels, local)
        return self

    def filter(
        self, *, datums: Any = None, labels: Sequence[Any] | None = None
    ) -> SegmentationEvaluator:
        """A new evaluator (same options) on the datums and labels kept; nothing is read again.

        ``datums``: uids, or an expression over ``uid`` (``datum_uid``) and the datums'
        metadata (a pandas-query string or a ``pyarrow.compute.Expression``, as in
        classification and detection: :mod:`assay.filtering`); ``labels``: values (under any
        key) or ``(key, value)`` pairs. A dropped label's pixels become background on both
        sides, as if its annotations had not been given; a datum left without an annotation
        of a key no longer counts for that key (:mod:`assay.segmentation.datums`). Computing
        on the result equals computing on that input alone; if nothing is kept it is empty.

        Example:
            >>> ev = SegmentationEvaluator()
            >>> _ = ev.add_label_maps("a", np.array([[1, 2]]), np.array([[1, 1]]),
            ...                       labels=["road", "car"], metadata={"site": "x"})
            >>> _ = ev.add_label_maps("b", np.array([[1, 1]]), np.array([[1, 1]]),
            ...                       labels=["road"], metadata={"site": "y"})
            >>> ev.compute().get("IOU", label_value="road").value
            0.75
            >>> ev.filter(datums='site == "x"').compute().get("IOU", label_value="road").value
            0.5
            >>> ev.filter(labels=["road"]).compute().get("Accuracy").value
            0.75
        """
        out = SegmentationEvaluator(**self.config())
        out._datums = self._datums.subset(datums=datums, labels=labels)
        return out

    def confusion(self, key: str = "class") -> tuple[list[str], np.ndarray]:
        """``(labels, counts)`` for a label key, labels in natural order; row/column 0 of
        ``counts`` is background."""
        labels = self._datums.labels.get(key, [])
        counts = self._datums.matrix(key)
        order = sorted(range(len(labels)), key=lambda i: natural_key(labels[i]))
        idx = np.array([0, *[i + 1 for i in order]], dtype=np.int64)
        return [labels[i] for i in order], counts[np.ix_(idx, idx)].copy()

    def _compute(self) -> MetricSet:
        out: list[Metric] = []
        zd = self.zero_division
        for key in sorted(self._datums.labels, key=natural_key):
            labels, c = self.confusion(key)
            iou = iou_from_confusion(c, zd)
            ratios = {
                "IOU": iou,
                **dict(zip(("Precision", "Recall", "F1"), prf_from_confusion(c, zd))),
            }
            for i, v in enumerate(labels):
                for name, arr in ratios.items():
                    x = value_or_none(arr[i])
                    out.append(
                        records.per_label(name, x, label_key=key, label_value=v, zero_division=zd)
                    )
            ok = ~np.isnan(iou)
            miou = float(np.mean(iou[ok])) if ok.any() else None
            out.append(records.mean_iou(miou, label_key=key, zero_division=zd))
            acc = value_or_none(accuracy_from_confusion(c, zd))
            out.append(records.accuracy(acc, label_key=key, zero_division=zd))
            cm = _confusion_value(labels, c, zd)
            out.append(records.confusion_matrix(cm, label_key=key, zero_division=zd))
            if self.ci is not None:
                attach(out, [key_tally(self._datums, key, labels, zd)], self.ci, self._key)
        whole = list(out)
        for column in self.by:
            out += self._slices(column, whole)
        return MetricSet(out)

    @staticmethod
    def _key(m: Metric) -> tuple[Any, ...]:
        return record_key(m, WHERE)

    def _slices(self, column: str, whole: list[Metric]) -> list[Metric]:
        """The records of every slice of ``column`` (each slice's datums evaluated alone,
        intervals included), by label key, with ``n`` the key's images in the slice, the
        gaps to ``whole`` and with ``ci`` their intervals."""
        out: list[Metric] = []
        datums, zd = self._datums, self.zero_division
        for v, keep in slice_masks(datums.metadata, column, "datums"):
            part = datums.take(keep)
            recs = [m for m in self._alone(part) if m.type in METRICS.sliced]
            for key in sorted(part.labels, key=natural_key):
                mine = [m for m in recs if m.parameters["label_key"] == key]
                images, _ = datums.image_rows(key)
                gaps = None
                if self.ci is not None:
                    gaps = gap_bounds([gap_tally(datums, part, key, keep, zd)], self.ci)
                n = int(keep[images].sum())
                out += annotate(mine, whole, column=column, value=v, n=n, where=WHERE, gap_ci=gaps)
        return out

    #: the parameters after the type in the tallies' keys (:func:`record_key`)
    tally_where = WHERE

    def tally(self) -> list[Tally]:
        """The per-unit tallies of the records that carry intervals, one per label key
        (:mod:`assay.segmentation.tally`; the engine: :mod:`assay.uncertainty`)."""
        keys = sorted(self._datums.labels, key=natural_key)
        return [key_tally(self._datums, k, None, self.zero_division) for k in keys]

    def _alone(self, datums: DatumCounts) -> list[Metric]:
        """The records of ``datums`` (a slice's) evaluated alone, intervals included."""
        ev = SegmentationEvaluator(**{k: v for k, v in self.config().items() if k != "by"})
        ev._datums = datums
        return list(ev._compute())


def _confusion_value(labels: list[str], c: np.ndarray, zd: float | None) -> dict[str, Any]:
    """The pixel counts, and valor-lite's view of them: IoU per (true, predicted) label cell
    and the unmatched ratios (see :func:`assay.segmentation.compute.cell_iou_from_confusion`)."""
    iou, upd, ugt = cell_iou_from_confusion(c, zd)
    return {
        "labels": [BACKGROUND, *labels],
        "counts": c.tolist(),
        "rows": "ground truth",
        "columns": "prediction",
        "confusion_matrix": {
            g: {p: {"iou": value_or_none(iou[i, j])} for j, p in enumerate(labels)}
            for i, g in enumerate(labels)
        },
        "unmatched_predictions": {
            v: {"ratio": value_or_none(upd[i])} for i, v in enumerate(labels)
        },
        "unmatched_ground_truths": {
            v: {"ratio": value_or_none(ugt[i])} for i, v in enumerate(labels)
        },
    }


def evaluate_segmentation(
    groundtruths: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    zero_division: float | None = None,
    by: Sequence[str] = (),
    **interval: Any,
) -> MetricSet:
    """Semantic-segmentation records in one call, from JSONL-style datum records.

    Args:
        groundtruths, predictions: datum records (``uid``, ``height``, ``width``,
            ``annotations``), as in :mod:`assay.segmentation.io`.
        metrics: a subset of IOU, mIOU, Precision, Recall, F1, Accuracy, ConfusionMatrix
            (default all).
        zero_division: see :class:`SegmentationEvaluator`.
        by: datum metadata fields to slice by (see :class:`SegmentationEvaluator`).
        interval: ``ci``, ``ci_method``, ``num_bootstrap``, ``seed`` (see
            :class:`SegmentationEvaluator`).

    Raises:
        InvalidInputError: bad input, or no datum at all.

    Example:
        >>> road = {"label": "road", "box": [0, 0, 1, 1]}
        >>> gt = [{"uid": "a", "height": 1, "width": 2, "annotations": [road]}]
        >>> pr = [{"uid": "a", "annotations": [{"label": "road", "box": [0, 0, 2, 1]}]}]
        >>> evaluate_segmentation(gt, pr, metrics=["IOU"]).get("IOU").value
        0.5
    """
    wanted = METRICS.check(metrics)
    ev = SegmentationEvaluator(zero_division=zero_division, by=by, **interval)
    ms = ev.add(groundtruths, predictions).compute()
    return MetricSet(m for m in ms if m.type in wanted)
