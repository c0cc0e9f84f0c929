"""Parquet datasets: a file, a directory of files or a glob, read one row group at a time.

A Parquet *dataset* is a ``.parquet`` file, a directory of them (searched recursively, in
sorted path order; Spark's ``_SUCCESS`` and hidden files skipped) or a glob
(``"logs/2026-*/part-*.parquet"``). :func:`iter_parquet` reads it one row group at a time
(``pyarrow.parquet.ParquetFile.read_row_group``) and yields each as a pandas DataFrame, so
memory holds one row group, never the dataset; a large row group can be cut further with
``batch_rows``. Hive partition directories (``year=2026/``) are read as plain folders: their
values are not added as columns.

Example:
    >>> import pandas as pd, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"x": range(20)}).to_parquet(d / "part-0.parquet", row_group_size=6)
    >>> [len(b) for b in iter_parquet(d)]
    [6, 6, 6, 2]
    >>> [len(b) for b in iter_parquet(str(d / "*.parquet"), batch_rows=4)]
    [4, 2, 4, 2, 4, 2, 2]
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from assay.errors import InvalidInputError

__all__ = [
    "PARQUET_SUFFIXES",
    "is_parquet_dataset",
    "parquet_files",
    "iter_parquet",
    "read_row_group",
    "row_groups",
    "schema_frame",
]

PARQUET_SUFFIXES = (".parquet", ".pq")
_GLOB_CHARS = frozenset("*?[")


def is_parquet_dataset(path: str | Path) -> bool:
    """True for a directory, a glob pattern, or a file with a Parquet suffix."""
    p = Path(path)
    if p.exists():
        return p.is_dir() or p.suffix.lower() in PARQUET_SUFFIXES
    return bool(_GLOB_CHARS & set(str(path)))


def parquet_files(path: str | Path) -> list[Path]:
    """The Parquet files of a dataset, in sorted path order.

    Raises :class:`InvalidInputError` naming the path when it names no Parquet file.
    """
    text = str(path)
    p = Path(text)
    if _GLOB_CHARS & set(text) and not p.exists():
        files = [Path(f) for f in sorted(glob.glob(text, recursive=True)) if Path(f).is_file()]
        what = "no file matches the pattern"
    elif p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and _is_data_file(f))
        what = (
            f"is a directory with no Parquet file ({', '.join(PARQUET_SUFFIXES)}); expected a "
            "file or a Parquet dataset"
        )
    elif p.exists():
        files, what = [p], ""
    else:
        raise InvalidInputError("file not found", source=text)
    if not files:
        raise InvalidInputError(what, source=text)
    return files


def _is_data_file(f: Path) -> bool:
    # Spark's and Hadoop's markers (_SUCCESS, .crc) are not data.
    return f.suffix.lower() in PARQUET_SUFFIXES and not f.name.startswith(("_", "."))


def iter_parquet(
    path: str | Path,
    *,
    columns: Sequence[str] | None = None,
    batch_rows: int | None = None,
) -> Iterator[pd.DataFrame]:
    """Yield a Parquet dataset as DataFrames, one row group (or ``batch_rows`` rows) at a time.

    Args:
        path: a Parquet file, a directory of them, or a glob.
        columns: read only these columns (default: all).
        batch_rows: cut each row group into batches of at most this many rows.
    """
    if batch_rows is not None and batch_rows < 1:
        raise InvalidInputError(f"must be >= 1, got {batch_rows!r}", source="batch_rows")
    for f in parquet_files(path):
        pf = _open(f, columns)
        for i in range(pf.num_row_groups):
            table = _table(pf, f, i, columns)
            step = batch_rows or max(table.num_rows, 1)
            for start in range(0, table.num_rows, step):
                yield _pandas(table.slice(start, step), f)
            del table


def row_groups(path: str | Path, columns: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """``(file, row group)`` of every row group of a dataset, in order: each file's footer
    read and its columns checked (a truncated file, a missing column: an
    :class:`InvalidInputError` naming the file), no data read."""
    return [
        (str(f), i) for f in parquet_files(path) for i in range(_open(f, columns).num_row_groups)
    ]


def read_row_group(
    file: str | Path, index: int, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row group of one file as a DataFrame; the same frame wherever it is read (in this
    process or on a Dask worker), and the same :class:`InvalidInputError` naming the file
    when it cannot be read."""
    return _pandas(_table(_open(file, columns), file, index, columns), file)


def _table(pf: Any, file: str | Path, index: int, columns: Sequence[str] | None) -> Any:
    try:
        return pf.read_row_group(
            index, columns=None if columns is None else list(columns), use_threads=False
        )
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise InvalidInputError(f"cannot read Parquet: {e}", source=str(file)) from None


def _pandas(table: Any, file: str | Path) -> pd.DataFrame:
    try:
        return table.to_pandas()
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read Parquet: {e}", source=str(file)) from None


def _open(file: str | Path, columns: Sequence[str] | None) -> Any:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(file)
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read Parquet: {e}", source=str(file)) from None
    missing = [c for c in columns or () if c not in pf.schema_arrow.names]
    if missing:
        raise InvalidInputError(f"missing column {missing[0]!r}", source=str(file))
    return pf


def schema_frame(path: str | Path) -> pd.DataFrame:
    """A frame with no rows and the columns (and types) of the dataset's first file, for
    checking column names before streaming.

    Example:
        >>> import pandas as pd, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> pd.DataFrame({"y": [1], "g": ["a"]}).to_parquet(d / "a.parquet")
        >>> f = schema_frame(d)
        >>> list(f.columns), len(f), str(f["y"].dtype)
        (['y', 'g'], 0, 'int64')
    """
    import pyarrow.parquet as pq

    first = parquet_files(path)[0]
    try:
        return pq.read_schema(first).empty_table().to_pandas()
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"cannot read Parquet: {e}", source=str(first)) from None
