"""The columns of a :class:`~assay.stats.ScoreFrame`, from arrays or from score objects.

:func:`arrays_columns` checks numeric arrays (finite values; sample ids, epochs and
metadata columns of the same length; default ids ``0..n-1`` and epoch 1).
:func:`scores_columns` converts :class:`~assay.stats.SampleScore` objects: each raw value
(or its ``key`` item) becomes a float through the value mapping, a ``None`` value makes
the score a failed one (its id kept apart, not a row), and a score without a sample id is
a sample of its own.

Example:
    >>> arrays_columns([1, 0], None, None, None)["sample_id"].tolist()
    [0, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay._validation import as_1d, check_finite, check_same_length
from assay.errors import InvalidInputError
from assay.stats.types import SampleScore, _item, _rec
from assay.stats.value_mapping import as_mapping, convert_values

__all__ = ["arrays_columns", "object_array", "scores_columns"]


def object_array(items: Sequence[Any]) -> np.ndarray:
    """``items`` as a 1-d object array (a list or tuple item stays one element)."""
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr


def arrays_columns(
    values: Any, sample_id: Any, epoch: Any, metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The frame's fields from numeric arrays (see :meth:`ScoreFrame.from_arrays`)."""
    v = check_finite(as_1d(values, source="values", dtype=np.float64), source="values")
    n = v.shape[0]
    sid = np.arange(n) if sample_id is None else as_1d(sample_id, source="sample_id")
    ep = (
        np.ones(n, dtype=np.int64)
        if epoch is None
        else as_1d(epoch, source="epoch", dtype=np.int64)
    )
    cols = {str(k): as_1d(col, source=f"metadata[{k!r}]") for k, col in (metadata or {}).items()}
    check_same_length(
        values=v, sample_id=sid, epoch=ep, **{f"metadata[{k!r}]": c for k, c in cols.items()}
    )
    return dict(
        values=v,
        sample_id=sid,
        epoch=ep,
        partial=np.zeros(n, dtype=bool),
        metadata_columns=cols,
    )


def scores_columns(
    scores: Sequence[SampleScore], key: str | None, partial: float, to_float: Any
) -> dict[str, Any]:
    """The frame's fields from score objects (see :meth:`ScoreFrame.from_scores`)."""
    n = len(scores)
    raws = [s.score.value for s in scores]
    if key is not None:
        for i, v in enumerate(raws):
            if not isinstance(v, (Mapping, list, tuple)) and v is not None:
                raise InvalidInputError(
                    f"score value {v!r} is not a dict or list, but other scores are",
                    record=_rec(scores[i].sample_id),
                    field="value",
                )
        raws = [_item(v, key) for v in raws]
    ok = np.fromiter((v is not None for v in raws), dtype=bool, count=n)
    raw_arr = object_array(raws)[ok]
    ids = [s.sample_id for s in scores]
    floats, part = convert_values(
        raw_arr, [x for x, k in zip(ids, ok) if k], partial, as_mapping(to_float)
    )
    if all(x is None for x in ids):
        sid = np.arange(n)
    else:  # a score without an id is a sample of its own
        sid = object_array([x if x is not None else ("row", i) for i, x in enumerate(ids)])
    ep = np.fromiter((s.epoch for s in scores), dtype=np.int64, count=n)
    meta = object_array([s.sample_metadata for s in scores])
    objs = object_array([s.score for s in scores])
    return dict(
        values=floats,
        sample_id=sid[ok],
        epoch=ep[ok],
        partial=part,
        raw=raw_arr,
        failed_ids=sid[~ok],
        metadata_rows=meta[ok],
        scores=objs[ok],
    )
