"""The compiled COCO kernels (:mod:`assay.io._coco_native`), when they were built.

``pip install`` compiles them where a C compiler is available (the wheels carry them
built); otherwise assay runs its pure-Python path, which gives the same results. Setting
the environment variable ``ASSAY_NO_NATIVE`` (to anything but ``""`` or ``0``) turns them
off: the tests run both paths that way.

Example:
    >>> import os
    >>> os.environ["ASSAY_NO_NATIVE"] = "1"
    >>> kernels() is None
    True
    >>> del os.environ["ASSAY_NO_NATIVE"]
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["kernels", "built"]

try:
    from assay.io import _coco_native as _built
except ImportError:  # no compiler at install time: the pure-Python path
    _built = None  # type: ignore[assignment]


def built() -> bool:
    """Whether the compiled kernels were built for this install."""
    return _built is not None


def kernels() -> ModuleType | None:
    """The compiled kernels, or None when not built or turned off (``ASSAY_NO_NATIVE``)."""
    if os.environ.get("ASSAY_NO_NATIVE", "") not in ("", "0"):
        return None
    return _built
