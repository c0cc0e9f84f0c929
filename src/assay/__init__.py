"""assay: evaluate machine-learning models and LLMs, with numbers you can trust.

Domains live in subpackages (``assay.classification``, ``assay.fairness``, ...); every
metric comes out as a :class:`~assay.results.Metric` record.

``import assay`` is cheap: the record classes are imported on first use, so the ``assay``
command answers ``--help`` without loading numpy or pandas.

Example:
    >>> import assay
    >>> assay.Metric("Accuracy", 0.5).value
    0.5
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.errors import AssayError, InvalidInputError, UndefinedMetricError

if TYPE_CHECKING:
    from assay.results import Metric, MetricSet

__version__ = "0.2.0"

__all__ = [
    "AssayError",
    "InvalidInputError",
    "Metric",
    "MetricSet",
    "UndefinedMetricError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in ("Metric", "MetricSet"):
        from assay import results

        return getattr(results, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
