"""Fairness slices (``by``): each slice equals a fresh evaluator given only the slice's rows
(and fairlearn's per-control-level differences); a slice missing a group is undefined with
the reason; the gap's interval equals a Python loop over joint resamples materialised as
rows (strict functions and fairlearn on them); merge, state and the CLI keep them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    selection_rate,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness import (
    FairnessEvaluator,
    average_odds_difference,
    disparate_impact,
    evaluate_fairness,
    statistical_parity_difference,
)
from assay.uncertainty.resampling import resample_counts

TYPES = {
    "StatisticalParityDifference", "DisparateImpact", "AverageOddsDifference",
    "EqualOpportunityDifference", "DemographicParityDifference", "DemographicParityRatio",
    "EqualizedOddsDifference", "EqualizedOddsRatio",
}  # fmt: skip
WHERE = ("group_column", "privileged", "control_column", "control", "method", "agg")


def _df(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    yhat = np.where(rng.random(n) < 0.7, y, 1 - y) * (rng.random(n) < np.where(sex == "F", 0.8, 1))
    site = rng.choice(["x", "y", "z"], n).astype(object)
    site[:5] = None  # rows without a site: the slice null
    cols = {"y": y, "yhat": yhat.astype(int), "sex": sex, "site": site}
    more = {"age": rng.integers(20, 60, n), "race": rng.choice(["a", "b"], n)}
    last = {"lab": rng.choice(["p", "q"], n), "w": rng.uniform(0.5, 2, n)}
    return pd.DataFrame({**cols, **more, **last})


CONFIG = {"groups": ["sex=F", "age:40:invert"], "group_columns": ["sex", ("sex", "race")]}


def _ev(**kw) -> FairnessEvaluator:
    return FairnessEvaluator(**{**CONFIG, **kw})


def _where(m) -> dict:
    return {k: m.parameters[k] for k in WHERE if k in m.parameters}


@pytest.mark.parametrize("extra", [{}, {"control_columns": ["lab"], "method": "to_overall"}])
def test_slices_equal_the_rows_evaluated_alone(extra: dict) -> None:
    df = _df()
    ms = _ev(by=["site"], **extra).add(df, label="y", prediction="yhat").compute()
    whole = _ev(**extra).add(df, label="y", prediction="yhat").compute()
    assert [m for m in ms if "slice" not in m.parameters] == list(whole)
    for v in ("x", "y", "z"):
        rows = df[df["site"] == v]
        alone = _ev(**extra).add(rows, label="y", prediction="yhat").compute()
        want = [m for m in alone if m.type in TYPES and "average_over" not in m.parameters]
        got = ms.filter(slice_column="site", slice=v)
        assert len(got) == len(want) >= 8
        for m in want:
            sl = got.get(m.type, **_where(m))
            assert sl.value == m.value and sl.parameters["n"] == len(rows)
            ref = whole.get(m.type, **_where(m)).value
            gap = None if m.value is None or ref is None else m.value - ref
            assert sl.parameters["gap"] == pytest.approx(gap, abs=0), (m.type, sl.parameters)


def test_slices_equal_fairlearn_per_control_level() -> None:
    """A slice of ``site`` is what fairlearn computes within control level ``site``."""
    df = _df(seed=1).dropna()
    ms = (
        FairnessEvaluator(group_columns=["sex"], by=["site"])
        .add(df, label="y", prediction="yhat")
        .compute()
    )
    mf = MetricFrame(metrics=selection_rate, y_true=df["y"], y_pred=df["yhat"],
                     sensitive_features=df["sex"], control_features=df["site"])  # fmt: skip
    for v, want in mf.difference().items():
        got = ms.get("DemographicParityDifference", slice=v).value
        assert got == pytest.approx(want, abs=1e-12)


def test_a_slice_missing_a_group_is_undefined_with_the_reason() -> None:
    df = _df()
    df.loc[df["site"] == "z", "sex"] = "M"  # no privileged (F) row at site z
    ms = _ev(by=["site"]).add(df, label="y", prediction="yhat").compute().filter(slice="z")
    spd = ms.get("StatisticalParityDifference", privileged="sex = F")
    assert spd.value is None and spd.parameters["undefined"] and spd.parameters["gap"] is None
    assert ms.get("DemographicParityDifference", group_column="sex").value == 0.0  # one group


def _outcome(df: pd.DataFrame) -> np.ndarray:
    """0 TP, 1 FP, 2 FN, 3 TN (the cells' order)."""
    return 2 * (df["yhat"].to_numpy() != 1) + (df["y"].to_numpy() != 1)


def _undefined_nan(f, *args) -> float:
    try:
        return float(f(*args))
    except UndefinedMetricError:
        return np.nan


def _loop(df, cell, inside, b, seed, metrics) -> dict[str, np.ndarray]:
    """Gaps over joint resamples: the cells of the slice's rows, then of the other rows, as
    multinomial counts (``resample_counts``); each resample materialised as rows."""
    k = cell.max() + 1
    joint = np.where(inside, cell, k + cell)
    mult = np.bincount(joint, minlength=2 * k)
    rep = np.array([np.flatnonzero(joint == c)[0] if mult[c] else -1 for c in range(2 * k)])
    out: dict[str, list[float]] = {}
    for w in np.concatenate(list(resample_counts(mult, b, seed))):
        idx = np.repeat(rep, w.astype(int))
        part = idx[inside[idx]]
        for name, f in metrics.items():
            out.setdefault(name, []).append(f(df.iloc[part]) - f(df.iloc[idx]))
    return {name: np.array(v) for name, v in out.items()}


def _check(p: dict, gaps: np.ndarray, level: float) -> None:
    want = np.quantile(gaps[~np.isnan(gaps)], [(1 - level) / 2, (1 + level) / 2])
    assert [p["gap_ci_low"], p["gap_ci_high"]] == pytest.approx(want, abs=1e-12), p


def test_gap_interval_equals_a_loop_over_joint_resamples() -> None:
    df = _df(n=160, seed=2).dropna().reset_index(drop=True)
    level, b, seed = 0.9, 40, 3
    ev = FairnessEvaluator(["sex=F"], group_columns=["sex"], by=["site"], ci=level,
                           num_bootstrap=b, seed=seed)  # fmt: skip
    ms = ev.add(df, label="y", prediction="yhat").compute().filter(slice="x")
    inside = (df["site"] == "x").to_numpy()
    priv = (df["sex"] == "F").to_numpy()
    definition = {
        "StatisticalParityDifference": lambda d: _undefined_nan(
            statistical_parity_difference, d["yhat"], d["sex"] == "F"),
        "DisparateImpact": lambda d: _undefined_nan(disparate_impact, d["yhat"], d["sex"] == "F"),
        "AverageOddsDifference": lambda d: _undefined_nan(
            average_odds_difference, d["y"], d["yhat"], d["sex"] == "F"),
    }  # fmt: skip
    gaps = _loop(df, _outcome(df) * 2 + priv, inside, b, seed, definition)
    for name, g in gaps.items():
        _check(ms.get(name, privileged="sex = F").parameters, g, level)
    codes = (df["sex"] == "M").to_numpy().astype(int)  # groups in name order: F, M
    aggregates = {
        "DemographicParityDifference": lambda d: demographic_parity_difference(
            d["y"], d["yhat"], sensitive_features=d["sex"]),
        "DemographicParityRatio": lambda d: demographic_parity_ratio(
            d["y"], d["yhat"], sensitive_features=d["sex"]),
        "EqualizedOddsDifference": lambda d: equalized_odds_difference(
            d["y"], d["yhat"], sensitive_features=d["sex"]),
    }  # fmt: skip
    gaps = _loop(df, codes * 4 + _outcome(df), inside, b, seed, aggregates)
    for name, g in gaps.items():
        _check(ms.get(name, group_column="sex").parameters, g, level)


def test_merge_state_and_batches() -> None:
    df = _df(seed=4)
    kw = {"by": ["site", "lab"], "ci": 0.9, "num_bootstrap": 20}
    one = _ev(**kw).add(df, label="y", prediction="yhat").compute()
    a = _ev(**kw).add(df.iloc[150:], label="y", prediction="yhat")
    b = _ev(**kw).add(df.iloc[:150], label="y", prediction="yhat")
    before = b.state()
    merged = FairnessEvaluator.from_state(a.merge(b).state()).compute()
    assert merged.to_json() == one.to_json()
    assert b.state().keys() == before.keys()  # merge leaves the other evaluator alone
    _ = a.add(df.iloc[:10], label="y", prediction="yhat")
    assert FairnessEvaluator.from_state(b.state()).compute().to_json() == (
        _ev(**kw).add(df.iloc[:150], label="y", prediction="yhat").compute().to_json()
    )


def test_weighted_slices_have_gap_intervals() -> None:
    """(Equal to a loop over materialised resamples: ``test_fairness_joint_intervals.py``.)"""
    df = _df(seed=5)
    ms = evaluate_fairness(df, label="y", prediction="yhat", group_columns=["sex"],
                           by=["site"], sample_weight="w", ci=0.9, num_bootstrap=10)  # fmt: skip
    sl = ms.get("DemographicParityDifference", slice="x").parameters
    assert sl["gap_ci_low"] < sl["gap_ci_high"]
    assert sl["ci_low"] is not None and "ci_undefined" not in sl


def test_bad_by() -> None:
    df = _df()
    with pytest.raises(InvalidInputError, match="zone"):
        _ev(by=["zone"]).add(df, label="y", prediction="yhat")
    with pytest.raises(InvalidInputError, match="by"):
        FairnessEvaluator(["sex=F"], by="site")


def test_cli_by_survives_save_show_export(tmp_path) -> None:
    from typer.testing import CliRunner

    from assay.cli.main import app

    df = _df(seed=6)
    path, db = tmp_path / "d.csv", str(tmp_path / "runs.db")
    df.to_csv(path, index=False)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "yhat"]
    args += ["--sensitive", "sex=F", "--group", "sex", "--by", "site", "--ci", "0.9"]
    r = CliRunner().invoke(app, [*args, "--num-bootstrap", "20", "--save", "--db", db])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    kw = {"group_columns": ["sex"], "by": ["site"], "ci": 0.9, "num_bootstrap": 20}
    want = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex=F"], **kw)
    assert printed == json.loads(want.to_json())
    valued = [m for m in printed if m["parameters"].get("slice") is not None]
    assert sum("gap_ci_low" in m["parameters"] for m in valued) == 3 * 8
    null = [m for m in printed if "slice" in m["parameters"] and m["parameters"]["slice"] is None]
    assert null and all(m["parameters"]["slice_n"] == 5 for m in null)  # the rows without site
    assert printed.index(null[0]) > printed.index(valued[-1])  # listed last
    shown = CliRunner().invoke(app, ["runs", "show", "1", "--db", db])
    assert json.loads(shown.stdout)["metrics"] == printed
    exported = CliRunner().invoke(app, ["runs", "export", "1", "--db", db])
    assert json.loads(exported.stdout)[0]["metrics"] == printed
    table = CliRunner().invoke(app, [*args, "--num-bootstrap", "20", "--format", "table"])
    assert table.exit_code == 0, table.output
    assert "slices: site" in table.stdout  # slices have their own grid, not the whole set's
    assert table.stdout.count("demographic parity: difference") == 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from(["F", "M"]),
                  st.integers(20, 60), st.sampled_from(["a", "b", None])),
        min_size=1, max_size=40,
    ),
    st.integers(0, 40),
)  # fmt: skip
def test_property_slices_are_the_subsets_in_any_batches(rows: list, cut: int) -> None:
    df = pd.DataFrame(rows, columns=["y", "yhat", "sex", "age", "site"])
    kw = {"groups": ["age:40"], "group_columns": ["sex"], "control_columns": []}
    ev = FairnessEvaluator(**kw, by=["site"])
    for part in (df.iloc[:cut], df.iloc[cut:]):
        if len(part):
            ev.add(part, label="y", prediction="yhat")
    ms = ev.compute()
    for v in ("a", "b"):
        sub = df[df["site"] == v]
        got = ms.filter(slice=v)
        if not len(sub):
            assert not got
            continue
        alone = FairnessEvaluator(**kw).add(sub, label="y", prediction="yhat").compute()
        want = [m for m in alone if m.type in TYPES and "average_over" not in m.parameters]
        assert [(m.type, m.value) for m in got] == [(m.type, m.value) for m in want]
        assert {m.parameters["n"] for m in got} == {len(sub)}
