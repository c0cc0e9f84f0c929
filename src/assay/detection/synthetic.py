"""Deprecated location of :func:`assay.testing.detection.make_coco` (kept for one release).

``from assay.detection.synthetic import make_coco`` still works and warns.
"""

from __future__ import annotations

import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    if name != "make_coco":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        "assay.detection.synthetic is deprecated; import make_coco from assay.testing.detection",
        DeprecationWarning,
        stacklevel=2,
    )
    from assay.testing.detection import make_coco

    return make_coco
