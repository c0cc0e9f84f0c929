"""Readers: tables (JSONL, CSV, Parquet, pandas/polars) and, per domain, typed loaders."""

from assay.io.tables import (
    TABLE_SUFFIXES,
    as_dataframe,
    numeric_column,
    read_jsonl,
    read_table,
    require_columns,
)

__all__ = [
    "TABLE_SUFFIXES",
    "as_dataframe",
    "numeric_column",
    "read_jsonl",
    "read_table",
    "require_columns",
]
