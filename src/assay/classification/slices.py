"""Metrics per slice: the headline records computed on each subgroup of a datum column.

``by=["site"]`` (CLI ``--by site``) gives, for every distinct value ``v`` of the datum
metadata field ``site``, the Precision, Recall, F1, Accuracy, ROCAUC and mROCAUC records of
the datums whose ``site`` is ``v`` (datums without the field are in no slice), with these
parameters after the metric's own:

``slice_column``, ``slice``
    the column and the value (as text; numbers in their shortest form);
``n``
    the datums in the slice;
``gap``
    the slice's value minus the whole set's (``None`` when either is undefined).

A slice too small for a metric (one class only, for a ROC AUC) gives ``value: null`` with
the reason, as the whole set would. The slices come from the evaluator's own per-datum data
(no input is read again) and are exactly what evaluating that subgroup alone gives; with
``ci`` each slice record gets its own interval (bootstrap over the slice's datums) and the
gap its bootstrap interval ``gap_ci_low``, ``gap_ci_high``: every resample draws from all
datums, and the slice's value and the whole set's come from the same draw
(:func:`assay.classification.intervals.gap_intervals`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from assay.classification.types import KeyBlock
from assay.results import Metric
from assay.slices import annotate, slice_masks

__all__ = ["SLICE_TYPES", "slice_records"]

SLICE_TYPES = frozenset({"Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC"})

#: What identifies a record within a slice (beside its type): its gap is to the whole
#: set's record with the same values.
WHERE = ("label_key", "label_value", "score_threshold")


def _take(b: KeyBlock, keep: np.ndarray) -> KeyBlock:
    """The datums ``keep`` of ``b`` (a bool mask), uids kept (positions when none were given)."""
    assert b.metadata is not None
    return replace(
        b,
        uids=b.uid_array()[keep],
        gt=b.gt[keep],
        scores=b.scores[:, keep],
        metadata=b.metadata.take(keep),
    )


def slice_records(
    b: KeyBlock,
    column: str,
    whole: Sequence[Metric],
    compute: Callable[[KeyBlock], list[Metric]],
    gap_ci: Callable[[KeyBlock, np.ndarray], dict[tuple[Any, ...], tuple[float, float]]]
    | None = None,
) -> list[Metric]:
    """The headline records of every slice of ``column`` in block ``b``; ``whole`` are the
    whole block's records (for the gaps), ``compute`` makes a block's records and ``gap_ci``
    (with ``ci``) gives the gaps' intervals from a block and a slice mask, keyed by
    ``(type, label_value, score_threshold)``."""
    out: list[Metric] = []
    for v, keep in slice_masks(b.metadata, column, f"datums of label key {b.key!r}"):
        recs = [m for m in compute(_take(b, keep)) if m.type in SLICE_TYPES]
        found = {} if gap_ci is None else gap_ci(b, keep)
        cis = {(t, b.key, lab, th): lohi for (t, lab, th), lohi in found.items()}
        out += annotate(
            recs, whole, column=column, value=v, n=int(keep.sum()), where=WHERE, gap_ci=cis
        )
    return out
