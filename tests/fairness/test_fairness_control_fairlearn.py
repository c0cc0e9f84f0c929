"""Differential test: control columns against fairlearn's ``MetricFrame(control_features=)``.

Within each control level fairlearn groups by the sensitive features and compares the
groups; its ``by_group`` is indexed by (control, group), and ``difference()``, ``ratio()``,
``group_max()``, ``group_min()`` (and ``overall``) give one value per control level. assay's
records carry ``control_column`` and ``control``; group_max/min are the largest/smallest
per-group record of a level. ``zero_division=0`` to compare number for number.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
)
from fairlearnkit import RATES, TOL

from assay.fairness import FairnessEvaluator

COMPARED: list[int] = []  # per test run, how many numbers were compared


def _data(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 500))
    df = pd.DataFrame(
        {
            "site": rng.choice(["north", "south", "east"], n),
            "shift": rng.choice(["day", "night"], n),
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["a", "b", "c"], n),
            "w": rng.uniform(0.1, 3.0, n),
        }
    )
    df["y"] = (rng.random(n) < 0.45).astype(int)
    df["yhat"] = np.where(rng.random(n) < 0.7, df["y"], 1 - df["y"])
    df.loc[(df["site"] == "east") & (df["sex"] == "M"), "y"] = 0  # TPR 0/0 there
    df.loc[0, ["site", "sex"]] = ["west", "F"]  # a control level of one row
    return df


def _key(x):
    return list(x) if isinstance(x, tuple) else x


def _check(got, expected, where):
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        assert got.value is None and got.parameters["undefined"], where
    else:
        assert abs(got.value - expected) <= TOL, (where, got, expected)


SETTINGS = [
    (seed, controls, groups, weighted)
    for seed in range(2)
    for controls in (["site"], ["site", "shift"])
    for groups in (["sex"], ["sex", "race"])
    for weighted in (False, True)
]


@pytest.mark.parametrize(("seed", "controls", "groups", "weighted"), SETTINGS)
def test_control_columns_match_fairlearn(seed, controls, groups, weighted):
    df = _data(seed)
    sw = df["w"] if weighted else None
    sf = df[groups] if len(groups) > 1 else df[groups[0]]
    cf = df[controls] if len(controls) > 1 else df[controls[0]]
    frame = MetricFrame(
        metrics=RATES, y_true=df["y"], y_pred=df["yhat"], sensitive_features=sf,
        control_features=cf, sample_params={m: {"sample_weight": sw} for m in RATES},
    )  # fmt: skip
    column = groups[0] if len(groups) == 1 else groups
    control_column = controls[0] if len(controls) == 1 else controls
    nc = len(controls)
    compared = 0
    for method in ("between_groups", "to_overall"):
        ev = FairnessEvaluator(
            group_columns=[tuple(groups)], control_columns=controls, zero_division=0, method=method
        )
        ms = ev.add(df, label="y", prediction="yhat", sample_weight="w" if weighted else None)
        ms = ms.compute().filter(group_column=column, control_column=control_column)
        for index, row in frame.by_group.iterrows():
            control, group = (
                _key(index[:nc] if nc > 1 else index[0]),
                _key(index[nc:] if len(groups) > 1 else index[nc]),
            )
            found = ms.filter("SelectionRate", control=control, group=group)
            if row.isna().all():  # a combination absent from the data: no group
                assert not found
                continue
            for rate in RATES:
                _check(ms.get(rate, control=control, group=group), row[rate], (rate, index))
                compared += 1
        diff, ratio = frame.difference(method=method), frame.ratio(method=method)
        gmax, gmin = frame.group_max(), frame.group_min()
        for level in diff.index:
            control = _key(level)
            if frame.overall.loc[level].isna().all():  # a level absent from the data
                assert not ms.filter(control=control)
                continue
            for name, rate, table in (
                ("DemographicParityDifference", "SelectionRate", diff),
                ("DemographicParityRatio", "SelectionRate", ratio),
            ):
                got = ms.get(name, control=control, method=method)
                _check(got, table.loc[level, rate], (name, level))
                compared += 1
            eod = max(diff.loc[level, "TruePositiveRate"], diff.loc[level, "FalsePositiveRate"])
            _check(ms.get("EqualizedOddsDifference", control=control), eod, ("EOD", level))
            parts = [ratio.loc[level, "TruePositiveRate"], ratio.loc[level, "FalsePositiveRate"]]
            eor = math.nan if any(map(math.isnan, parts)) else min(parts)
            _check(ms.get("EqualizedOddsRatio", control=control), eor, ("EOR", level))
            compared += 2
            for rate in RATES:
                values = [m.value for m in ms.filter(rate, control=control)]
                assert abs(max(values) - gmax.loc[level, rate]) <= TOL
                assert abs(min(values) - gmin.loc[level, rate]) <= TOL
                compared += 2
    assert compared > 100
    COMPARED.append(compared)


def test_control_records_name_both():
    df = _data(3)
    ms = FairnessEvaluator(group_columns=["sex"], control_columns=["site"]).add(
        df, label="y", prediction="yhat"
    )
    rec = ms.compute().get("TruePositiveRate", group_column="sex", control="east", group="M")
    assert rec.value is None and "positive labels" in rec.parameters["undefined"]
    assert rec.parameters["control_column"] == "site"
    one = ms.compute().get("DemographicParityDifference", group_column="sex", control="west")
    assert one.value == 0.0  # a single group: difference 0
