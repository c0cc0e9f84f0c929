"""Sample weights on privileged-group definitions (AIF360's instance weights): every rate
is a weighted share, so integer weights equal repeated rows, and the weighted numbers are
the weighted shares computed here by hand."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.fairness import FairnessEvaluator, PrivilegedGroup

TOL = 1e-12
DEFS = [PrivilegedGroup("sex", values=["F"]), PrivilegedGroup("age", 40.0, invert=True)]
METRICS = (
    "StatisticalParityDifference",
    "DisparateImpact",
    "AverageOddsDifference",
    "EqualOpportunityDifference",
)


def _values(ms, column):
    return {t: ms.get(t, group_column=column).value for t in METRICS}


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from("FM"),
                  st.integers(20, 60), st.integers(0, 3)),
        min_size=1, max_size=40,
    )
)  # fmt: skip
def test_integer_weights_equal_repeated_rows(rows):
    y, yhat, sex, age, w = (np.asarray(c) for c in zip(*rows))
    assume(w.sum() > 0)
    weighted = FairnessEvaluator(DEFS).add_arrays(
        y, yhat, {"sex": sex, "age": age}, sample_weight=w
    )
    keep = np.repeat(np.arange(len(rows)), w)
    assume((sex[keep] == "F").any())  # a privileged value must occur (else an error)
    repeated = FairnessEvaluator(DEFS).add_arrays(
        y[keep], yhat[keep], {"sex": sex[keep], "age": age[keep]}
    )
    got, want = weighted.compute(), repeated.compute()
    for g in DEFS:
        for t, v in _values(want, g.group_column).items():
            mine = got.get(t, group_column=g.group_column)
            assert mine.parameters["weighted"] is True
            assert (mine.value is None) == (v is None), (t, mine, v)
            assert v is None or abs(mine.value - v) <= TOL, (t, mine.value, v)
        for m in got.filter("GroupCounts", group_column=g.group_column):
            rep = want.get("GroupCounts", group_column=g.group_column, group=m.parameters["group"])
            assert all(m.value[f"weighted_{k}"] == rep.value[k] for k in ("tp", "fp", "fn", "tn"))


def test_weighted_shares_by_hand_and_merge_of_weighted_batches():
    rng = np.random.default_rng(11)
    n = 500
    y, yhat = rng.integers(0, 2, n), rng.integers(0, 2, n)
    sex = rng.choice(["F", "M"], n)
    w = rng.uniform(0.1, 3.0, n)
    ms = FairnessEvaluator(DEFS[:1]).add_arrays(y, yhat, {"sex": sex}, sample_weight=w).compute()

    def share(num, den):
        return float(np.sum(w[num & den]) / np.sum(w[den]))

    priv, unpriv = sex == "F", sex == "M"
    sel = {k: share(yhat == 1, g) for k, g in (("p", priv), ("u", unpriv))}
    tpr = {k: share(yhat == 1, g & (y == 1)) for k, g in (("p", priv), ("u", unpriv))}
    fpr = {k: share(yhat == 1, g & (y == 0)) for k, g in (("p", priv), ("u", unpriv))}
    want = {
        "StatisticalParityDifference": sel["u"] - sel["p"],
        "DisparateImpact": sel["u"] / sel["p"],
        "AverageOddsDifference": 0.5 * ((fpr["u"] - fpr["p"]) + (tpr["u"] - tpr["p"])),
        "EqualOpportunityDifference": tpr["u"] - tpr["p"],
    }
    for t, v in want.items():
        assert abs(ms.get(t, group_column="sex").value - v) <= TOL, t
    # split in two batches, one evaluator through state(): the same records
    a = FairnessEvaluator(DEFS[:1]).add_arrays(
        y[:200], yhat[:200], {"sex": sex[:200]}, sample_weight=w[:200]
    )
    b = FairnessEvaluator(DEFS[:1]).add_arrays(
        y[200:], yhat[200:], {"sex": sex[200:]}, sample_weight=w[200:]
    )
    merged = FairnessEvaluator.from_state(a.state()).merge(b).compute()
    for t in METRICS:
        assert (
            abs(merged.get(t, group_column="sex").value - ms.get(t, group_column="sex").value)
            <= TOL
        ), t


def test_unweighted_batch_after_weighted_one_weighs_one_per_row():
    y, yhat, sex = [1, 0, 1, 1], [1, 1, 0, 1], ["F", "M", "F", "M"]
    ev = FairnessEvaluator(DEFS[:1]).add_arrays(
        y[:2], yhat[:2], {"sex": sex[:2]}, sample_weight=[1, 1]
    )
    ev.add_arrays(y[2:], yhat[2:], {"sex": sex[2:]})
    plain = FairnessEvaluator(DEFS[:1]).add_arrays(y, yhat, {"sex": sex}).compute()
    for t in METRICS:
        assert (
            ev.compute().get(t, group_column="sex").value == plain.get(t, group_column="sex").value
        )
