"""``compact=True``: counts of distinct (truth, scores) datums instead of every datum, with the
records of the plain evaluator (byte-identical JSON) and a state bounded by the distinct scores.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from assay.classification import ClassificationEvaluator
from assay.errors import InvalidInputError

ALL = ["Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC",
       "PrecisionRecallCurve", "DetailedPrecisionRecallCurve", "ConfusionMatrix"]  # fmt: skip


def _options(hardmax: bool) -> dict:
    return {
        "pr_curve_max_examples": 0,
        "score_thresholds": [0.0, 0.3, 0.5, 0.9],
        "hardmax": hardmax,
        "metrics": ALL,
    }


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 4),
    n=st.integers(1, 300),
    decimals=st.integers(0, 2),
    parts=st.integers(1, 5),
    hardmax=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_compact_records_equal_the_plain_ones(k, n, decimals, parts, hardmax, seed) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    s = rng.random(n).round(decimals) if k == 2 else rng.dirichlet(np.ones(k), n).round(decimals)
    labels = [f"l{j}" for j in range(k)]
    yl = np.array(labels)[y]
    plain = ClassificationEvaluator(**_options(hardmax)).add_arrays(yl, s, labels=labels)
    compact = ClassificationEvaluator(compact=True, **_options(hardmax))
    halves = [ClassificationEvaluator(compact=True, **_options(hardmax)) for _ in range(2)]
    for i, idx in enumerate(np.array_split(np.arange(n), parts)):
        compact.add_arrays(yl[idx], s[idx], labels=labels)
        halves[i % 2].add_arrays(yl[idx], s[idx], labels=labels)
    want = plain.compute().to_json()
    assert compact.compute().to_json() == want
    rebuilt = ClassificationEvaluator.from_state(halves[0].state())
    if not halves[1].is_empty:
        rebuilt.merge(ClassificationEvaluator.from_state(halves[1].state()))
    assert rebuilt.compute().to_json() == want


def test_long_form_with_unscored_labels_and_two_keys() -> None:
    rng = np.random.default_rng(3)
    gts, pds = [], []
    for i in range(400):
        for key, values in {"animal": ["cat", "dog", "bird"], "color": ["red", "blue"]}.items():
            gts.append({"uid": i, "key": key, "value": str(rng.choice(values))})
            for v in values[: rng.integers(1, len(values) + 1)]:  # some labels unscored
                pds.append({"uid": i, "key": key, "value": v, "score": round(rng.random(), 1)})
    g, p = pd.DataFrame(gts), pd.DataFrame(pds)
    for hardmax in (True, False):
        want = ClassificationEvaluator(**_options(hardmax)).add(g, p).compute().to_json()
        ev = ClassificationEvaluator(compact=True, **_options(hardmax))
        for lo in range(0, 400, 150):
            ev.add(g[(g.uid >= lo) & (g.uid < lo + 150)], p[(p.uid >= lo) & (p.uid < lo + 150)])
        assert ev.compute().to_json() == want


def test_state_is_bounded_by_the_distinct_scores_and_auc_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    ev = ClassificationEvaluator(compact=True, **_options(True))
    ys, ss = [], []
    for _ in range(20):
        y = rng.integers(0, 2, 50_000)
        s = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.2), 0, 1), 2)
        ev.add_arrays(y, s, labels=[0, 1])
        ys.append(y)
        ss.append(s)
    state = ev.state()
    # 1e6 datums, 101 score values x 2 truths: at most 202 columns.
    assert state["blocks.0.weights"].sum() == 1_000_000
    assert len(state["blocks.0.gt"]) <= 202 and state["blocks.0.scores"].size <= 202
    auc = ev.compute().get("ROCAUC", label_value="1").value
    assert auc == pytest.approx(roc_auc_score(np.concatenate(ys), np.concatenate(ss)), abs=1e-12)


def test_compact_refuses_what_names_datums() -> None:
    with pytest.raises(InvalidInputError, match="pr_curve_max_examples"):
        ClassificationEvaluator(compact=True)
    with pytest.raises(InvalidInputError, match="Examples"):
        ClassificationEvaluator(compact=True, pr_curve_max_examples=0, metrics=["Examples"])
    ev = ClassificationEvaluator(compact=True, pr_curve_max_examples=0)
    ev.add_arrays([0, 1], [0.2, 0.8], labels=[0, 1])
    with pytest.raises(InvalidInputError, match="cannot filter"):
        ev.filter(datums=[0])
    with pytest.raises(InvalidInputError, match="configured differently"):
        ev.merge(
            ClassificationEvaluator(pr_curve_max_examples=0).add_arrays([0], [0.1], labels=[0, 1])
        )
