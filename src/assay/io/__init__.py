"""Readers: tables (JSONL, CSV, Parquet, pandas/polars) and, per domain, typed loaders.

The names are imported on first use, so ``import assay.io.files`` (the CLI's file
helpers) does not load pandas.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it
_LAZY = {
    "TABLE_SUFFIXES": "assay.io.tables",
    "as_dataframe": "assay.io.tables",
    "numeric_column": "assay.io.tables",
    "read_jsonl": "assay.io.tables",
    "read_table": "assay.io.tables",
    "require_columns": "assay.io.tables",
}

__all__ = [
    "TABLE_SUFFIXES",
    "as_dataframe",
    "numeric_column",
    "read_jsonl",
    "read_table",
    "require_columns",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.io' has no attribute {name!r}")
