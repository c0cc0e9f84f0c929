"""The judge metrics by name: the built-ins of the table
:data:`assay.llm.judge.declared.METRICS` (their definitions, :mod:`assay.llm.judge.definitions`)
and any metric a caller adds with :func:`register` (a new judge metric is one file calling
it)."""

from __future__ import annotations

from typing import cast

from assay.errors import InvalidInputError
from assay.llm.judge.declared import METRICS, REGISTERED
from assay.llm.judge.types import JudgeMetric

__all__ = ["register", "registered", "get_metric"]

# a built-in's builder is its definition (a JudgeMetric), imported from the table
_REGISTRY: dict[str, JudgeMetric] = {
    f: cast(JudgeMetric, METRICS.builder(f)) for f in METRICS.families
}


def register(metric: JudgeMetric) -> JudgeMetric:
    """Add a metric to the registry (a later metric of the same name replaces it)."""
    _REGISTRY[metric.name] = metric
    if metric.name not in REGISTERED:
        REGISTERED.append(metric.name)
    return metric


def registered() -> list[str]:
    """Names of the registered judge metrics, the built-ins first."""
    return list(_REGISTRY)


def get_metric(name: str) -> JudgeMetric:
    """A registered metric by name; an :class:`InvalidInputError` listing them otherwise."""
    if name not in _REGISTRY:
        raise InvalidInputError(
            f"unknown judge metric {name!r}; use one of {', '.join(_REGISTRY)}", field="metrics"
        )
    return _REGISTRY[name]
