"""Reading text-evaluation rows: JSONL, CSV or Parquet with ``uid``, ``query``,
``prediction``, ``groundtruth`` (a string or a list of strings) and ``context`` (a list).

In CSV a list is written as a JSON array (``["a", "b"]``); a plain string cell is one
item. Empty cells are missing values.

Example:
    >>> rows = normalise_rows([{"prediction": "p", "groundtruth": ["a", "b"], "context": "c"}])
    >>> rows[0]["uid"], rows[0]["groundtruth"], rows[0]["context"]
    ('0', ['a', 'b'], ['c'])
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay._validation import show
from assay.errors import InvalidInputError

__all__ = ["TEXT_COLUMNS", "read_rows", "normalise_row", "normalise_rows", "columns_of"]

TEXT_COLUMNS = ("uid", "query", "prediction", "groundtruth", "context")
_LISTS = ("groundtruth", "context")


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _as_list(v: Any, *, source: str, record: Any, field: str) -> list[str] | None:
    if _missing(v):
        return None
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                v = json.loads(s)
            except ValueError:
                return [v]
        else:
            return [v]
    if hasattr(v, "tolist"):
        v = v.tolist()
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise InvalidInputError(
            "expected a string or a list of strings", source=source, record=record, field=field
        )
    return list(v)


def _uid(v: Any, i: int, source: str) -> str:
    """A row's uid as text: a string or a number (default: the row's position)."""
    if _missing(v):
        return str(i)
    if isinstance(v, bool) or not isinstance(v, (str, numbers.Real)):
        raise InvalidInputError(
            f"expected a string or a number, got {type(v).__name__} {show(v)}",
            source=source,
            record=i + 1,
            field="uid",
        )
    return str(v.item() if hasattr(v, "item") else v)


def normalise_row(row: Mapping[str, Any], i: int, *, source: str = "data") -> dict[str, Any]:
    """One row with strings and lists of strings; ``uid`` as text, or ``None`` when the row
    has none (its number is then its position among all rows: :func:`normalise_rows`, or the
    text evaluator for a table read in batches). ``i`` is the row's 0-based position (in
    its batch), used in messages."""
    raw = row.get("uid")
    uid = None if _missing(raw) else _uid(raw, i, source)
    d: dict[str, Any] = {"uid": uid}
    where = uid if uid is not None else str(i)
    for c in ("query", "prediction"):
        v = row.get(c)
        if not _missing(v) and not isinstance(v, str):
            raise InvalidInputError(
                f"expected a string, got {type(v).__name__}",
                source=source,
                record=where,
                field=c,
            )
        d[c] = None if _missing(v) else v
    for c in _LISTS:
        d[c] = _as_list(row.get(c), source=source, record=where, field=c)
    return d


def normalise_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "data") -> list[dict]:
    """Rows with ``uid`` (string; default the row number), strings, and lists of strings."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        d = normalise_row(row, i, source=source)
        uid = d["uid"] = str(i) if d["uid"] is None else d["uid"]
        if uid in seen:
            raise InvalidInputError("duplicate uid", source=source, record=uid, field="uid")
        seen.add(uid)
        out.append(d)
    return out


def read_rows(
    path: str | Path, *, keep: Iterable[str] = (), cluster: str | None = None
) -> tuple[list[dict[str, Any]], set[str]]:
    """Rows of a file (see the module docstring) and the set of columns it has; the
    columns named in ``keep`` (slices, ``--by``) go as they are into each row's
    ``columns`` (an unknown one is refused, naming ``--by``)."""
    from assay.io.tables import read_table

    df = read_table(path)
    if len(df) == 0:
        raise InvalidInputError("no rows", source=str(path))
    cols = {str(c) for c in df.columns}
    keep = list(keep)
    for c in keep:
        if c not in cols:
            have = ", ".join(str(x) for x in df.columns)
            flag = "--cluster" if c == cluster else "--by"
            raise InvalidInputError(f"unknown column {c!r}; {path} has: {have}", source=flag)
    records = df.to_dict(orient="records")
    rows = normalise_rows(records, source=str(path))
    for row, rec in zip(rows, records, strict=True):
        row["columns"] = {c: rec[c] for c in keep}
    return rows, cols


def columns_of(metric_fields: Iterable[str]) -> list[str]:
    """Input columns named by datum fields (``groundtruths`` -> ``groundtruth``, ...)."""
    names = {"groundtruths": "groundtruth", "contexts": "context"}
    return [names.get(f, f) for f in metric_fields]
