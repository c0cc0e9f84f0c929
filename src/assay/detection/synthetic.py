"""Deprecated location of :func:`assay.testing.detection.make_coco` (kept for one release)."""

from __future__ import annotations

import warnings

from assay.testing.detection import make_coco

__all__ = ["make_coco"]

warnings.warn(
    "assay.detection.synthetic is deprecated; import make_coco from assay.testing.detection",
    DeprecationWarning,
    stacklevel=2,
)
