"""Human labels of judged items (``--human-labels FILE``): an ``id`` column and one numeric
column per labelled metric.

A JSONL, CSV or Parquet file (:func:`~assay.io.tables.read_table`); every row names one item by
``id`` (matched by its text, so ``7`` and ``"7"`` are the same item) and gives the human's
value in ``value`` (scores with one value) or in a column named by the score key (dict-valued
scores). A missing value (null, an empty CSV cell) leaves the item unlabelled for that column;
booleans count as 0 and 1. Errors name the file, the row and the column: a missing ``id``, an
id given twice, a value that is not a number.

Example:
    >>> import pandas as pd
    >>> h = human_labels_from(pd.DataFrame({"id": [1, "b"], "value": [1.0, None]}), "h.csv")
    >>> h.ids, h.columns["value"].tolist()
    (('1', 'b'), [1.0, nan])
    >>> h.labelled("value")
    {'1': 1.0}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from assay.errors import InvalidInputError

__all__ = ["HumanLabels", "human_labels_from", "read_human_labels"]


@dataclass(frozen=True)
class HumanLabels:
    """Items' human values: ``ids`` (as text) and per column a float array (NaN: not
    labelled), read from ``source``."""

    ids: tuple[str, ...]
    columns: dict[str, NDArray[np.float64]]
    source: str

    def labelled(self, column: str) -> dict[str, float]:
        """id -> human value of the items labelled in ``column`` (none if no such column)."""
        values = self.columns.get(column)
        if values is None:
            return {}
        return {i: float(v) for i, v in zip(self.ids, values) if not np.isnan(v)}


def _number(v: object) -> float | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return np.nan
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    try:
        out = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None


def human_labels_from(df: pd.DataFrame, source: str) -> HumanLabels:
    """:class:`HumanLabels` of a table (rows numbered from 1 in errors)."""
    if "id" not in df.columns:
        have = ", ".join(map(str, df.columns)) or "none"
        raise InvalidInputError(
            f"missing column (columns present: {have})", source=source, field="id"
        )
    ids: list[str] = []
    seen: dict[str, int] = {}
    for row, v in enumerate(df["id"].tolist(), start=1):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            raise InvalidInputError("an item needs an id", source=source, record=row, field="id")
        text = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        if text in seen:
            raise InvalidInputError(
                f"id {text!r} is given twice (rows {seen[text]} and {row})",
                source=source,
                record=row,
                field="id",
            )
        seen[text] = row
        ids.append(text)
    columns = {}
    for col in (c for c in df.columns if c != "id"):
        values = [_number(v) for v in df[col].tolist()]
        bad = next((i for i, v in enumerate(values) if v is None), None)
        if bad is not None:
            raise InvalidInputError(
                f"expected a number, got {df[col].iloc[bad]!r}",
                source=source,
                record=bad + 1,
                field=str(col),
            )
        columns[str(col)] = np.array(values, dtype=np.float64)
    if not columns:
        raise InvalidInputError(
            "no label column beside id (give value, or one column per score key)", source=source
        )
    return HumanLabels(tuple(ids), columns, source)


def read_human_labels(path: str | Path) -> HumanLabels:
    """:class:`HumanLabels` of a JSONL, CSV or Parquet file."""
    from assay.io.tables import read_table

    return human_labels_from(read_table(path), str(path))
