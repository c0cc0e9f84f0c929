"""Readers: tables (JSONL, CSV, Parquet, pandas/polars) and the shared detection and
segmentation readers (:mod:`assay.io.jsonfiles`, :mod:`assay.io.coco`,
:mod:`assay.io.geometry`, :mod:`assay.io.labels`, :mod:`assay.io.masks`).

Names are loaded on first use (PEP 562), so a reader that needs no pandas does not pay
for importing it.
"""

from __future__ import annotations

from assay._lazy import lazy_exports

_EXPORTS = {
    "TABLE_SUFFIXES": "assay.io.tables",
    "as_dataframe": "assay.io.tables",
    "iter_parquet": "assay.io.parquet",
    "iter_table": "assay.io.tables",
    "numeric_column": "assay.io.tables",
    "read_jsonl": "assay.io.tables",
    "read_table": "assay.io.tables",
    "require_columns": "assay.io.tables",
}

__all__ = [
    "TABLE_SUFFIXES",
    "as_dataframe",
    "iter_parquet",
    "iter_table",
    "numeric_column",
    "read_jsonl",
    "read_table",
    "require_columns",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
