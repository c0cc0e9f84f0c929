"""assay: evaluate machine-learning models and LLMs, with numbers you can trust.

Domains live in subpackages (``assay.classification``, ``assay.fairness``, ...); every
metric comes out as a :class:`~assay.results.Metric` record.
"""

from assay.errors import AssayError, InvalidInputError, UndefinedMetricError
from assay.results import Metric, MetricSet

__version__ = "0.1.0"

__all__ = [
    "AssayError",
    "InvalidInputError",
    "Metric",
    "MetricSet",
    "UndefinedMetricError",
    "__version__",
]
