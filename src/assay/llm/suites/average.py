"""Average LLM fairness over datasets: the mean of each metric over their last evaluations.

For each dataset, the caller passes the metric records of its last finished
``llm_fairness`` evaluation. For each of ``StatisticalParityDifference``,
``DisparateImpact``, ``AverageOddsDifference``, ``EqualOpportunityDifference``,
``Accuracy``, ``Precision``, ``Recall`` and the overall ``CounterfactualChangeRate``, the
result is the mean over the evaluations where the metric has a value: a metric that is
``null`` for a dataset is left out of that metric's mean (not counted as 0), and the record
says which evaluations it averaged (``parameters.evaluations``, ``parameters.datasets``)
and how many (``parameters.n``). A metric no evaluation has is ``null`` with the reason.
With ``ci``, an interval from the datasets' stored items (``average_ci``).

Example:
    >>> from assay.results import Metric, MetricSet
    >>> a = MetricSet([Metric("Accuracy", 0.5), Metric("Recall", None, {"undefined": "x"})])
    >>> b = MetricSet([Metric("Accuracy", 0.7), Metric("Recall", 0.4)])
    >>> ms = average_fairness({"pisa": (1, a), "compas": (2, b)})
    >>> round(ms.get("Accuracy").value, 6), ms.get("Recall").value, ms.get("Recall").parameters["n"]
    (0.6, 0.4, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import assay.llm.suites.records as records
from assay.llm.suites.average_ci import attach_average_intervals
from assay.results import MetricSet
from assay.uncertainty.intervals import ci_options

__all__ = ["average_fairness", "AVERAGED"]

AVERAGED = (
    "StatisticalParityDifference",
    "DisparateImpact",
    "AverageOddsDifference",
    "EqualOpportunityDifference",
    "Accuracy",
    "Precision",
    "Recall",
    "CounterfactualChangeRate",
)


def average_fairness(
    evaluations: Mapping[str, tuple[int, MetricSet]],
    *,
    items: Mapping[str, Sequence[Any] | None] | None = None,
    ci: float | None = None,
    ci_method: str = "bootstrap",
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> MetricSet:
    """``{dataset: (evaluation id, its metrics)}`` -> one mean record per metric.

    With ``ci`` (and ``ci_method``, ``num_bootstrap``, ``seed``), each defined mean gets a
    stratified bootstrap interval over the datasets' items (``items``: dataset -> its stored
    item rows, ``Store.get(id, items=True).items``; :mod:`assay.llm.suites.average_ci`).
    Every method gives the bootstrap (a mean over datasets is no proportion nor AUC), and
    the records say so in ``ci_method``.
    """
    opts = ci_options(ci, ci_method, num_bootstrap, seed)
    out = []
    for kind in AVERAGED:
        ids, names, values = [], [], []
        for dataset, (eid, ms) in evaluations.items():
            m = records.overall(ms, kind)
            if m is not None and isinstance(m.value, (int, float)):
                ids.append(eid)
                names.append(dataset)
                values.append(float(m.value))
        mean = sum(values) / len(values) if values else None
        out.append(records.averaged(kind, mean, evaluations=ids, datasets=names))
    if opts is not None:
        attach_average_intervals(out, evaluations, items or {}, opts)
    return MetricSet(out)
