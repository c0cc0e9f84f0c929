"""Moved to :mod:`assay.uncertainty.intervals`; this name stays only for the fairness package
until it imports the engine (issue 29, the fairness fold), then goes."""

from assay.uncertainty.intervals import (
    INTERVAL_KEYS,
    CIOptions,
    bootstrap,
    ci_options,
    percentile,
    resample_counts,
)

__all__ = ["CIOptions", "INTERVAL_KEYS", "bootstrap", "ci_options", "percentile", "resample_counts"]
