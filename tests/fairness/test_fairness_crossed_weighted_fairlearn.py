"""Differential test: crossed (intersectional) groups and sample weights against fairlearn.

fairlearn groups by every combination present when ``sensitive_features`` is a frame of
several columns (a MultiIndex of tuples), and weighs every rate by ``sample_weight``
(MetricFrame's ``sample_params``, and the aggregate functions' ``sample_weight=``). assay
runs with ``zero_division=0`` to be compared number for number (fairlearn's rates are 0.0
where a group has no positive or no negative labels).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
)
from fairlearnkit import AGGREGATES, RATES, TOL
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score

from assay.fairness import FairnessEvaluator
from assay.fairness.by_group import demographic_parity_difference as assay_dpd

COMPARED: list[int] = []  # per test run, how many numbers were compared
COLUMNS = ("sex", "race", "age")


def _data(seed: int, ncols: int, weighted: bool):
    """A frame with ``ncols`` group columns, a crossed group of one row and a crossed group
    with no positive labels (its TPR is undefined)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 400))
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["a", "b", "c"], n),
            "age": rng.choice(["young", "old"], n),
        }
    )
    df["y"] = (rng.random(n) < 0.45).astype(int)
    df["yhat"] = np.where(rng.random(n) < 0.7, df["y"], 1 - df["y"])
    df.loc[0, ["sex", "race", "age"]] = ["X", "z", "mid"]  # a combination of one row
    no_pos = (df["sex"] == "M") & (df["race"] == "c")
    df.loc[no_pos, "y"] = 0
    df["w"] = rng.uniform(0.1, 3.0, n) if weighted else 1.0
    return df, list(COLUMNS[:ncols])


def _params(cols, sw):
    return {name: {"sample_weight": sw} for name in RATES}


SETTINGS = [(s, c, w) for s in range(3) for c in (1, 2, 3) for w in (False, True)]


@pytest.mark.parametrize(("seed", "ncols", "weighted"), SETTINGS)
def test_crossed_weighted_match_fairlearn(seed, ncols, weighted):
    df, cols = _data(100 * seed + ncols, ncols, weighted)
    sw = df["w"].to_numpy() if weighted else None
    sf = df[cols] if ncols > 1 else df[cols[0]]
    key = tuple(cols) if ncols > 1 else cols[0]
    frame = MetricFrame(
        metrics=RATES, y_true=df["y"], y_pred=df["yhat"], sensitive_features=sf,
        sample_params=_params(cols, sw),
    )  # fmt: skip
    compared = 0
    for method in ("between_groups", "to_overall"):
        ev = FairnessEvaluator(group_columns=[key], zero_division=0, method=method)
        ms = ev.add(df, label="y", prediction="yhat", sample_weight="w" if weighted else None)
        ms = ms.compute()
        column = list(cols) if ncols > 1 else cols[0]
        for group, row in frame.by_group.iterrows():
            name = list(group) if ncols > 1 else group
            if row.isna().all():  # fairlearn lists absent combinations with NaN: no group
                assert not ms.filter("SelectionRate", group_column=column, group=name)
                continue
            for rate in RATES:
                got = ms.get(rate, group_column=column, group=name)
                assert abs(got.value - row[rate]) <= TOL, (rate, group, got, row[rate])
                assert got.parameters.get("weighted", False) == weighted
                compared += 1
        present = int((~frame.by_group.isna().all(axis=1)).sum())
        assert len(ms.filter("GroupCounts", group_column=column)) == present
        for name, fn in AGGREGATES.items():
            expected = fn(
                df["y"], df["yhat"], sensitive_features=sf, method=method, sample_weight=sw
            )
            got = ms.get(name, group_column=column, method=method)
            if math.isnan(expected):
                assert got.value is None and got.parameters["undefined"]
            else:
                assert abs(got.value - expected) <= TOL, (name, method, got, expected)
            compared += 1
        (overall,) = [m for m in ms.filter("Accuracy") if "group_column" not in m.parameters]
        assert abs(overall.value - accuracy_score(df["y"], df["yhat"], sample_weight=sw)) <= TOL
        assert overall.parameters.get("weighted", False) == weighted  # says what it is
        compared += 1
    assert compared >= 2 * (4 * 3 + 4 + 1)
    COMPARED.append(compared)


def test_crossed_undefined_tpr_without_zero_division():
    df, cols = _data(5, 2, True)
    ms = (
        FairnessEvaluator(group_columns=[tuple(cols)])
        .add(df, label="y", prediction="yhat", sample_weight="w")
        .compute()
    )
    tpr = ms.get("TruePositiveRate", group_column=cols, group=["M", "c"])
    assert tpr.value is None and "positive labels" in tpr.parameters["undefined"]
    eod = ms.get("EqualizedOddsDifference", group_column=cols)
    assert eod.value is None and "'M, c'" in eod.parameters["undefined"]
    counts = ms.get("GroupCounts", group_column=cols, group=["X", "z"])
    assert sum(counts.value[c] for c in ("tp", "fp", "fn", "tn")) == 1
    assert counts.value["weighted_tp"] + counts.value["weighted_fn"] >= 0


def test_functional_form_takes_a_frame_and_weights():
    df, cols = _data(9, 3, True)
    expected = demographic_parity_difference(
        df["y"], df["yhat"], sensitive_features=df[cols], sample_weight=df["w"]
    )
    got = assay_dpd(df["y"], df["yhat"], df[cols], sample_weight=df["w"])
    assert abs(got - expected) <= TOL


def _rates(ms, column):
    return {
        (m.type, str(m.parameters.get("group", m.parameters.get("method")))): m.value
        for m in ms.filter(group_column=column)
        if m.type != "GroupCounts"
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from("ab"),
                  st.sampled_from("xyz"), st.integers(0, 4)),
        min_size=1, max_size=40,
    )
)  # fmt: skip
def test_integer_weights_equal_repeated_rows(rows):
    assume(sum(r[4] for r in rows) > 0)
    y, yhat, a, b, w = (list(c) for c in zip(*rows))
    weighted = FairnessEvaluator(group_columns=[("a", "b")], zero_division=0).add_arrays(
        y, yhat, {"a": a, "b": b}, sample_weight=w
    )
    keep = np.repeat(np.arange(len(rows)), w)
    rep = [np.asarray(c)[keep] for c in (y, yhat, a, b)]
    repeated = FairnessEvaluator(group_columns=[("a", "b")], zero_division=0).add_arrays(
        rep[0], rep[1], {"a": rep[2], "b": rep[3]}
    )
    got, expected = _rates(weighted.compute(), ["a", "b"]), _rates(repeated.compute(), ["a", "b"])
    # a combination whose weights are all 0 is a group only with weights: its rates are None,
    # and so are the aggregates over it (fairlearn fails on such a group)
    extra = [k for k in got if k not in expected]
    assert all(got[k] is None for k in extra if k[0] in ("SelectionRate", "Accuracy"))
    compared = 0
    for k, v in expected.items():
        if extra and k[0] not in RATES:  # TPR/FPR of such a group are zero_division's 0
            assert got[k] is None or not k[0].startswith("Demographic")
            continue
        assert (got[k] is None and v is None) or abs(got[k] - v) <= TOL, (k, got[k], v)
        compared += 1
    assert compared > 0


def test_weighted_state_round_trips_and_merges():
    df, cols = _data(3, 2, True)
    half = len(df) // 2
    make = lambda: FairnessEvaluator(group_columns=["sex", tuple(cols)])  # noqa: E731
    a = make().add(df.iloc[:half], label="y", prediction="yhat", sample_weight="w")
    b = make().add(df.iloc[half:], label="y", prediction="yhat", sample_weight="w")
    whole = make().add(df, label="y", prediction="yhat", sample_weight="w").compute()
    merged = FairnessEvaluator.from_state(a.state()).merge(FairnessEvaluator.from_state(b.state()))
    got = merged.compute()
    compared = 0
    for m, n in zip(got, whole):
        assert (m.type, m.parameters.get("group")) == (n.type, n.parameters.get("group"))
        if isinstance(m.value, float):
            assert abs(m.value - n.value) <= TOL
            compared += 1
    assert compared > 20
