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
from assay.errors import InvalidInputError
from assay.results import Metric

__all__ = ["SLICE_TYPES", "slice_records", "slice_text"]

SLICE_TYPES = frozenset({"Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC"})

_WHERE = ("label_key", "label_value", "score_threshold", "hardmax")


def slice_text(v: Any) -> str:
    """A slice value as text: ``3`` for 3.0, ``"x"`` for "x"."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v.item() if isinstance(v, np.generic) else v)


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


def _threshold(m: Metric) -> Any:
    return m.parameters.get("score_threshold")


def _key(m: Metric) -> tuple[Any, ...]:
    return (m.type, *(m.parameters.get(k) for k in _WHERE))


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
    (with ``ci``) gives the gaps' intervals from a block and a slice mask."""
    md = b.metadata
    if md is None or column not in md.values:
        raise InvalidInputError(
            f"is not a datum metadata field of label key {b.key!r} (give it as metadata, "
            "e.g. with metadata_columns)",
            source="by",
            field=column,
        )
    values, present = md.values[column], md.present[column]
    text = np.array([slice_text(v) for v in values.tolist()], dtype=object)
    base = {_key(m): m.value for m in whole if m.type in SLICE_TYPES}
    out: list[Metric] = []
    for v in sorted(set(text[present].tolist())):
        keep = present & (text == v)
        intervals = {} if gap_ci is None else gap_ci(b, keep)
        for m in compute(_take(b, keep)):
            if m.type not in SLICE_TYPES:
                continue
            ref = base.get(_key(m))
            gap = None if m.value is None or ref is None else float(m.value - ref)
            extra = {"slice_column": column, "slice": v, "n": int(keep.sum()), "gap": gap}
            lohi = intervals.get((m.type, m.parameters.get("label_value"), _threshold(m)))
            if gap is not None and lohi is not None:
                ok = all(np.isfinite(lohi))
                extra["gap_ci_low"], extra["gap_ci_high"] = lohi if ok else (None, None)
            params = {k: x for k, x in m.parameters.items() if k != "undefined"} | extra
            if m.value is None:
                params["undefined"] = m.parameters.get("undefined")
            out.append(Metric(m.type, m.value, params))
    return out
