"""Human-readable output: tables in the terminal (and, later, HTML reports)."""

from assay.report.table import metrics_table

__all__ = ["metrics_table"]
