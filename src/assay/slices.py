"""Moved to :mod:`assay.uncertainty.slices`; this name stays only for the fairness package
until it imports the engine (issue 29, the fairness fold), then goes."""

from assay.uncertainty.slices import annotate, check_by, record_key, slice_text, value_masks

__all__ = ["annotate", "check_by", "record_key", "slice_text", "value_masks"]
