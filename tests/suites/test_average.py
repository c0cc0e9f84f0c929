"""Average LLM fairness: means over datasets, None left out, the evaluations named."""

from __future__ import annotations

import pytest

from assay.llm.suites import average_fairness
from assay.results import Metric, MetricSet, undefined


def _ms(**values):
    out = []
    for name, v in values.items():
        out.append(undefined(name, "x") if v is None else Metric(name, v, {"group_column": "g"}))
    return MetricSet(out)


def test_mean_leaves_out_none_and_names_the_evaluations():
    pisa = _ms(StatisticalParityDifference=0.2, Accuracy=0.6, Precision=None)
    pisa = pisa + [
        Metric("CounterfactualChangeRate", 0.1, {"group_column": "male", "n": 10}),
        Metric("CounterfactualChangeRate", 0.9, {"group_column": "male", "group": "1", "n": 5}),
    ]
    compas = _ms(StatisticalParityDifference=-0.1, Accuracy=0.7, Precision=0.5)
    compas = compas + [Metric("CounterfactualChangeRate", 0.3, {"group_column": "race", "n": 8})]
    ms = average_fairness({"pisa": (3, pisa), "compas": (7, compas)})
    spd = ms.get("StatisticalParityDifference")
    assert spd.value == pytest.approx(0.05)  # (0.2 - 0.1) / 2
    assert spd.parameters == {"evaluations": [3, 7], "datasets": ["pisa", "compas"], "n": 2}
    prec = ms.get("Precision")
    assert prec.value == 0.5 and prec.parameters["evaluations"] == [7]  # None left out, not 0
    # the overall change rate only (not the per-group one): (0.1 + 0.3) / 2
    assert ms.get("CounterfactualChangeRate").value == pytest.approx(0.2)
    recall = ms.get("Recall")  # no evaluation has it
    assert recall.value is None and recall.parameters["n"] == 0
