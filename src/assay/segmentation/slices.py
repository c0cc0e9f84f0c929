"""Segmentation metrics per slice: the headline records again on each subgroup of an image
column.

``by=["site"]`` (CLI ``--by site``) gives, for every distinct value ``v`` of the datum
metadata field ``site``, the IOU, Precision, Recall, F1 (per label), mIOU and Accuracy (per
label key) of the images whose ``site`` is ``v`` (images without the field are in no slice),
from the per-datum counts the evaluator keeps (:class:`~assay.segmentation.datums.DatumCounts`,
no pixel read again): exactly what evaluating those images alone gives. Each record carries
``slice_column``, ``slice``, ``n`` (the slice's images that count for the record's label
key) and ``gap`` (:mod:`assay.slices`).

With ``ci`` each slice record gets its own interval (a bootstrap over the slice's images)
and the gap its interval ``gap_ci_low``, ``gap_ci_high``: every resample draws from all the
key's images (the whole set's draw, with its seed); the slice's value is read from the same
draw with the other images' counts set to 0, over the slice's own labels
(:func:`assay.segmentation.intervals.gap_intervals`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from assay.intervals import CIOptions
from assay.io.labels import natural_key
from assay.results import Metric
from assay.segmentation.datums import DatumCounts
from assay.segmentation.intervals import gap_intervals, image_units
from assay.slices import annotate, slice_masks

__all__ = ["SLICE_TYPES", "WHERE", "label_columns", "slice_records"]

SLICE_TYPES = frozenset({"IOU", "mIOU", "Precision", "Recall", "F1", "Accuracy"})

#: What identifies a record within a slice (beside its type).
WHERE = ("label_key", "label_value")


def label_columns(datums: DatumCounts, key: str, labels: Sequence[str]) -> NDArray[np.int64]:
    """The columns of ``key``'s counts (global label order, 0 background) of background and
    ``labels``, in that order."""
    known = datums.labels.get(key, [])
    return np.array([0, *[known.index(v) + 1 for v in labels]], dtype=np.int64)


def slice_records(
    datums: DatumCounts,
    by: Sequence[str],
    whole: Sequence[Metric],
    compute: Callable[[DatumCounts], list[Metric]],
    opts: CIOptions | None,
    zero_division: float | None,
) -> list[Metric]:
    """The sliced records of every column of ``by``: ``whole`` are the whole set's records
    (for the gaps), ``compute`` makes the records of some datums (intervals included)."""
    out: list[Metric] = []
    for column in by:
        for v, keep in slice_masks(datums.metadata, column, "datums"):
            part = datums.take(keep)
            recs = [m for m in compute(part) if m.type in SLICE_TYPES]
            for key in sorted(part.labels, key=natural_key):
                mine = [m for m in recs if m.parameters["label_key"] == key]
                images, rows = datums.image_rows(key)
                inside = keep[images]
                gaps = None
                if opts is not None:
                    drawn = (inside, rows, images)
                    gaps = _gaps(datums, part, key, mine, drawn, opts, zero_division)
                n = int(inside.sum())
                out += annotate(mine, whole, column=column, value=v, n=n, where=WHERE, gap_ci=gaps)
    return out


def _gaps(
    datums: DatumCounts,
    part: DatumCounts,
    key: str,
    records: list[Metric],
    units: tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.intp]],
    opts: CIOptions,
    zd: float | None,
) -> dict[tuple[str, str, str | None], tuple[float, float]]:
    """The gaps' intervals of one key of a slice, keyed as :func:`assay.slices.record_key`
    (``units``: which of the key's images are in the slice, their rows, and the images)."""
    inside, rows, images = units
    labels = sorted(datums.labels[key], key=natural_key)
    mine = sorted(part.labels[key], key=natural_key)
    found = gap_intervals(
        records,
        (labels, rows[:, :, label_columns(datums, key, labels)]),
        (mine, rows[:, :, label_columns(datums, key, mine)]),
        inside.astype(np.float64),
        opts,
        zd,
        image_units(datums.metadata, images, opts),
    )
    return {(t, key, lab): lohi for (t, lab), lohi in found.items()}
