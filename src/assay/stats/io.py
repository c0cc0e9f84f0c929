"""Reading sample scores: a JSONL file, or the rows of a table batch (a Parquet row group).

One row is one :class:`~assay.stats.SampleScore`: ``value`` (required; null for a failed
score), ``sample_id``, ``epoch`` (default 1), ``sample_metadata``, ``answer``,
``explanation``, ``metadata``. :func:`read_scores` reads a JSONL file (the ``assay stats``
format); :func:`frame_scores` reads a pandas batch of the same columns, where a missing
cell (null, NaN) is an absent field, except ``value``, where it is a failed score.

Example:
    >>> import pandas as pd
    >>> s = frame_scores(pd.DataFrame({"value": [1.0, None], "sample_id": [1, 2]}), source="t")
    >>> [(x.score.value, x.sample_id, x.epoch) for x in s]
    [(1.0, 1, 1), (None, 2, 1)]
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from assay.errors import InvalidInputError
from assay.stats.score import SampleScore, Score

__all__ = ["read_scores", "frame_scores", "SCORE_COLUMNS"]

SCORE_COLUMNS = (
    "value",
    "sample_id",
    "epoch",
    "sample_metadata",
    "answer",
    "explanation",
    "metadata",
)


def row_score(row: Any, *, source: str, record: Any) -> SampleScore:
    """One row (a mapping) as a SampleScore; errors name ``source``, ``record`` and the field."""
    if not isinstance(row, dict) or "value" not in row:
        raise InvalidInputError(
            "expected an object with a 'value'", source=source, record=record, field="value"
        )
    score = Score(row["value"], row.get("answer"), row.get("explanation"), row.get("metadata"))
    epoch = row.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool):
        raise InvalidInputError(
            f"must be an integer, got {epoch!r}", source=source, record=record, field="epoch"
        )
    return SampleScore(score, row.get("sample_id"), epoch, row.get("sample_metadata"))


def read_scores(path: str | Path, *, source: str | None = None) -> list[SampleScore]:
    """The scores of a JSONL file, one per non-blank line (errors name the line)."""
    src = source or str(path)
    out = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidInputError(f"invalid JSON: {e.msg}", source=src, record=i) from None
            out.append(row_score(row, source=src, record=i))
    if not out:
        raise InvalidInputError("the file holds no scores", source=src)
    return out


def _plain(v: Any) -> Any:
    """A cell as JSON would give it: numpy scalars and arrays as Python values, NaN as None."""
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "tolist"):  # numpy scalar or array (a Parquet list column)
        return _plain(v.tolist())
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def frame_scores(frame: Any, *, source: str) -> list[SampleScore]:
    """The scores of a pandas batch: one per row; a missing cell is an absent field (a
    missing ``value`` is a failed score; an ``epoch`` column with gaps holds floats, read as
    integers). Errors name the row's ``sample_id`` (or its position in the batch)."""
    if "value" not in frame.columns:
        have = ", ".join(map(str, frame.columns)) or "none"
        raise InvalidInputError(
            f"missing column (columns present: {have})", source=source, field="value"
        )
    out = []
    for i, raw in enumerate(frame.to_dict(orient="records")):
        row = {k: _plain(v) for k, v in raw.items()}
        row = {k: v for k, v in row.items() if v is not None or k == "value"}
        epoch = row.get("epoch")
        if isinstance(epoch, float) and epoch.is_integer():
            row["epoch"] = int(epoch)
        record = row.get("sample_id", f"row {i + 1} of a batch")
        out.append(row_score(row, source=source, record=record))
    return out
