"""Read tabular inputs (JSONL, CSV, Parquet, pandas/polars frames) into pandas.

Errors name the file, the row and the field. Row numbers are 1-based data rows: the
JSONL line number, or the CSV line number minus the header line.

Example:
    >>> import pandas as pd
    >>> from assay.io import as_dataframe, require_columns
    >>> df = as_dataframe(pd.DataFrame({"uid": [1], "value": ["cat"]}))
    >>> require_columns(df, ["uid", "value"], source="frame")
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from assay.errors import InvalidInputError

__all__ = [
    "read_table",
    "iter_table",
    "read_jsonl",
    "as_dataframe",
    "require_columns",
    "numeric_column",
    "TABLE_SUFFIXES",
    "check_text_file",
]

TABLE_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet", ".pq")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a JSONL (``.jsonl``/``.ndjson``), JSON list, CSV or Parquet file into a DataFrame.

    The format is chosen by the file's extension. A directory or a glob is a Parquet dataset
    (:mod:`assay.io.parquet`), read whole; :func:`iter_table` streams it instead. Raises
    :class:`InvalidInputError` naming the file (and line, for malformed JSON) when it cannot be
    read.
    """
    if _is_dataset(path):
        from assay.io.parquet import iter_parquet

        parts = list(iter_parquet(path))
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    p = _existing_file(path)
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json", ".csv"):
        check_text_file(p)
    try:
        if suffix in (".jsonl", ".ndjson"):
            return pd.DataFrame.from_records(read_jsonl(p))
        if suffix == ".json":
            data = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(data, list):
                raise InvalidInputError("expected a JSON list of records", source=str(p))
            return pd.DataFrame.from_records(data)
        if suffix == ".csv":
            return pd.read_csv(p, keep_default_na=True, encoding="utf-8")
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(p)
    except InvalidInputError:
        raise
    except (
        ValueError,
        OSError,
        json.JSONDecodeError,
    ) as e:  # pragma: no cover - message passthrough
        raise InvalidInputError(f"cannot read: {e}", source=str(p)) from e
    raise InvalidInputError(
        f"unknown file type {suffix!r}; expected one of {', '.join(TABLE_SUFFIXES)}", source=str(p)
    )


def iter_table(
    path: str | Path, *, columns: list[str] | None = None, batch_rows: int | None = None
) -> Iterator[pd.DataFrame]:
    """A table in batches: a Parquet file, directory or glob one row group (or ``batch_rows``
    rows) at a time (:func:`assay.io.parquet.iter_parquet`); any other file whole, as one batch.

    Example:
        >>> import pandas as pd, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> pd.DataFrame({"x": range(5)}).to_parquet(d / "a.parquet", row_group_size=2)
        >>> [len(b) for b in iter_table(d)]
        [2, 2, 1]
    """
    p = Path(path)
    if _is_dataset(path) or p.suffix.lower() in (".parquet", ".pq"):
        from assay.io.parquet import iter_parquet

        yield from iter_parquet(path, columns=columns, batch_rows=batch_rows)
        return
    df = read_table(p)
    if columns is not None:
        require_columns(df, columns, source=str(p))
        df = df[list(columns)]
    yield df


def _is_dataset(path: str | Path) -> bool:
    """A directory or a glob pattern (a Parquet dataset), not a plain file."""
    p = Path(path)
    return p.is_dir() if p.exists() else any(c in str(path) for c in "*?[")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL file into a list of dicts (blank lines skipped).

    Raises :class:`InvalidInputError` naming the file and line for a missing file, malformed
    JSON, or a line that is not a JSON object.
    """
    p = _existing_file(path)
    check_text_file(p)
    records = []
    with p.open("rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = msgspec.json.decode(line)
            except msgspec.DecodeError as e:
                raise InvalidInputError(
                    f"malformed JSON: {e}", source=str(p), record=lineno
                ) from None
            if not isinstance(rec, dict):
                raise InvalidInputError(
                    "expected a JSON object per line", source=str(p), record=lineno
                )
            records.append(rec)
    return records


def _existing_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise InvalidInputError("file not found", source=str(p))
    if p.is_dir():
        raise InvalidInputError("is a directory, expected a file", source=str(p))
    return p


def check_text_file(path: str | Path, *, chunk_size: int = 1 << 20) -> None:
    r"""Raise naming the file and line unless it is UTF-8 text (read in chunks).

    A NUL byte means binary data or UTF-16 (whose ASCII characters carry NUL bytes); any
    other undecodable byte, another 8-bit encoding such as Latin-1.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
        >>> _ = p.write_bytes(b"uid,value\n1,caf\xe9\n")
        >>> check_text_file(p)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: .../x.csv: line 2: not UTF-8 text (byte 0xe9); ...
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(chunk_size)
            nul = chunk.find(b"\x00")
            if nul >= 0:
                where = line + chunk.count(b"\n", 0, nul)
                raise InvalidInputError(
                    "not text: a NUL byte (binary data, or UTF-16?); save it as UTF-8",
                    source=str(path),
                    record=f"line {where}",
                )
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as e:
                where = line + chunk.count(b"\n", 0, max(e.start, 0))
                bad = chunk[e.start : e.start + 1].hex() if e.start >= 0 else "?"
                raise InvalidInputError(
                    f"not UTF-8 text (byte 0x{bad}); save it as UTF-8 (Latin-1 or another "
                    "8-bit encoding?)",
                    source=str(path),
                    record=f"line {where}",
                ) from None
            if not chunk:
                return
            line += chunk.count(b"\n")


def as_dataframe(data: Any, *, source: str = "data") -> pd.DataFrame:
    """Accept a pandas or polars DataFrame, a path, or a list of dicts; return pandas."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (str, Path)):
        return read_table(data)
    if hasattr(data, "to_pandas"):  # polars, pyarrow
        return data.to_pandas()
    if isinstance(data, Iterable):
        return pd.DataFrame.from_records(list(data))
    raise InvalidInputError(f"cannot read a table from {type(data).__name__}", source=source)


def require_columns(df: pd.DataFrame, columns: Iterable[str], *, source: str) -> None:
    """Raise :class:`InvalidInputError` naming the first missing column."""
    for c in columns:
        if c not in df.columns:
            have = ", ".join(map(str, df.columns)) or "none"
            raise InvalidInputError(
                f"missing column (columns present: {have})", source=source, field=c
            )


def numeric_column(
    df: pd.DataFrame,
    column: str,
    *,
    source: str,
    lo: float | None = None,
    hi: float | None = None,
) -> np.ndarray:
    """The column as float64; raise naming the first row that is non-numeric, NaN or outside."""
    raw = df[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values)
    if lo is not None:
        bad |= values < lo
    if hi is not None:
        bad |= values > hi
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        rng = f" in [{lo}, {hi}]" if lo is not None and hi is not None else ""
        got = raw.iloc[i]
        got = got.item() if hasattr(got, "item") else got
        raise InvalidInputError(
            f"expected a number{rng}, got {got!r}", source=source, record=i + 1, field=column
        )
    return values
