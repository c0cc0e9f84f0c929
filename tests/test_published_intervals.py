"""Intervals against figures published for well-known examples, through the public API.

* DeLong: the CT rating table of Hanley & McNeil (1982, Radiology 143:29-36, Table 1):
  58 truly normal and 51 truly abnormal cases on a 5-point scale. The paper gives the area
  0.893; Stata's ``roctab`` manual entry (whose default standard error is DeLong, DeLong &
  Clarke-Pearson 1988) reports for the same table area 0.8932, standard error 0.0307 and
  the 95% normal interval 0.83295 to 0.95339.
* Wilson: the score interval without continuity correction (method 3) in Newcombe (1998,
  Statistics in Medicine 17:857-872, Table I) for 81/263, 15/148, 0/20 and 1/29.
"""

from __future__ import annotations

import numpy as np
import pytest

from assay.classification import ClassificationEvaluator

NORMAL = np.repeat([1, 2, 3, 4, 5], [33, 6, 6, 11, 2])
ABNORMAL = np.repeat([1, 2, 3, 4, 5], [3, 2, 2, 11, 33])


def test_delong_reproduces_the_published_hanley_mcneil_figures() -> None:
    labels = np.array(["normal"] * len(NORMAL) + ["abnormal"] * len(ABNORMAL))
    rating = np.concatenate([NORMAL, ABNORMAL]) / 5.0
    scores = np.column_stack([rating, 1 - rating])  # columns in the order of `labels=`
    ev = ClassificationEvaluator(metrics=["ROCAUC"], ci=0.95, ci_method="delong")
    rec = ev.add_arrays(labels, scores, labels=["abnormal", "normal"]).compute()
    auc = rec.get("ROCAUC", label_value="abnormal")
    assert auc.value == pytest.approx(0.8932, abs=5e-5)
    assert round(auc.value, 3) == 0.893
    p = auc.parameters
    assert p["ci_method"] == "delong" and p["confidence_level"] == 0.95
    assert p["ci_low"] == pytest.approx(0.83295, abs=5e-6)
    assert p["ci_high"] == pytest.approx(0.95339, abs=5e-6)
    se = (p["ci_high"] - p["ci_low"]) / (2 * 1.959963984540054)
    assert se == pytest.approx(0.0307, abs=5e-5)


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_reproduces_newcombes_table(k: int, n: int, low: float, high: float) -> None:
    truth = np.array(["a"] * n)
    right = np.array(["a"] * k + ["b"] * (n - k))
    scores = np.column_stack([right == "a", right == "b"]).astype(float)
    ev = ClassificationEvaluator(metrics=["Accuracy"], ci=0.95, ci_method="wilson")
    acc = ev.add_arrays(truth, scores, labels=["a", "b"]).compute().get("Accuracy")
    assert acc.value == pytest.approx(k / n)
    assert acc.parameters["ci_method"] == "wilson"
    assert acc.parameters["ci_low"] == pytest.approx(low, abs=5e-5)
    assert acc.parameters["ci_high"] == pytest.approx(high, abs=5e-5)
