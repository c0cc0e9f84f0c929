"""Fairness intervals over datums, from the kept counts: equal to a Python loop that runs the
strict AIF360-style functions and fairlearn on each resample materialised as datums (the
same multinomial counts over the cells); seeded; state and merge. The mean over definitions
and sample weights: ``test_fairness_joint_intervals.py``."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearnkit import AGGREGATES, RATES

from assay.errors import UndefinedMetricError
from assay.fairness import FairnessEvaluator
from assay.fairness.compute import (
    average_odds_difference,
    disparate_impact,
    equal_opportunity_difference,
    statistical_parity_difference,
)
from assay.uncertainty.resampling import resample_counts

LEVEL, B, SEED = 0.9, 30, 6
OUTCOMES = [(1, 1), (0, 1), (1, 0), (0, 0)]  # (label, prediction) of TP, FP, FN, TN


def _data(n: int = 360, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.35 + 0.25 * y + 0.1 * sex, 1, 0)
    return {"y": y, "p": p, "sex": sex, "L1": rng.choice(["en", "es", "fr"], n)}


def _evaluate(d, **kw):
    ev = FairnessEvaluator(["sex"], group_columns=["L1"], positive_label=1, **kw)
    return ev.add_arrays(d["y"], d["p"], {"sex": d["sex"], "L1": d["L1"]})


def _q(values: list[float]) -> list[float]:
    v = np.array(values, dtype=float)
    return np.quantile(v[~np.isnan(v)], [(1 - LEVEL) / 2, (1 + LEVEL) / 2]).tolist()


def _strict(fn, *args) -> float:
    try:
        return fn(*args)
    except UndefinedMetricError:
        return np.nan


def test_definition_intervals_equal_strict_functions_on_materialised_resamples() -> None:
    d = _data()
    ms = _evaluate(d, ci=LEVEL, num_bootstrap=B, seed=SEED).compute()
    cells = np.array(  # (outcome, unprivileged / privileged), as the evaluator keeps them
        [[np.sum((d["y"] == a) & (d["p"] == b) & (d["sex"] == s)) for s in (0, 1)]
         for a, b in OUTCOMES]
    )  # fmt: skip
    loops: dict[str, list[float]] = {}
    for w in np.concatenate(list(resample_counts(cells.ravel(), B, SEED))):
        k = w.astype(int).reshape(4, 2)
        y = np.concatenate([np.full(k[o, s], OUTCOMES[o][0]) for o in range(4) for s in (0, 1)])
        p = np.concatenate([np.full(k[o, s], OUTCOMES[o][1]) for o in range(4) for s in (0, 1)])
        priv = np.concatenate([np.full(k[o, s], s == 1) for o in range(4) for s in (0, 1)])
        for name, value in (
            ("StatisticalParityDifference", _strict(statistical_parity_difference, p, priv)),
            ("DisparateImpact", _strict(disparate_impact, p, priv)),
            ("AverageOddsDifference", _strict(average_odds_difference, y, p, priv)),
            ("EqualOpportunityDifference", _strict(equal_opportunity_difference, y, p, priv)),
        ):
            loops.setdefault(name, []).append(value)
    for name, values in loops.items():
        p = ms.filter(name, group_column="sex")[0].parameters  # the definition, not the mean
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(values), abs=1e-12), name


def test_group_column_intervals_equal_fairlearn_on_materialised_resamples() -> None:
    d = _data(seed=1)
    ms = _evaluate(d, ci=LEVEL, num_bootstrap=B, seed=SEED).compute()
    names = ["en", "es", "fr"]
    cells = np.array(
        [[np.sum((d["L1"] == g) & (d["y"] == a) & (d["p"] == b)) for a, b in OUTCOMES]
         for g in names]
    )  # fmt: skip
    loops: dict[tuple[str, str | None], list[float]] = {}
    for w in np.concatenate(list(resample_counts(cells.ravel(), B, SEED))):
        k = w.astype(int).reshape(3, 4)
        rep = [(g, *OUTCOMES[o]) for gi, g in enumerate(names) for o in range(4)]
        counts = k.ravel()
        g = np.repeat([r[0] for r in rep], counts)
        y = np.repeat([r[1] for r in rep], counts)
        p = np.repeat([r[2] for r in rep], counts)
        for name, fn in AGGREGATES.items():
            loops.setdefault((name, None), []).append(fn(y, p, sensitive_features=g))
        for name, fn in RATES.items():
            for grp in names:
                loops.setdefault((name, grp), []).append(fn(y[g == grp], p[g == grp]))
    for (name, grp), values in loops.items():
        where = {"group_column": "L1"} | ({"group": grp} if grp else {})
        p = ms.get(name, **where).parameters
        assert [p["ci_low"], p["ci_high"]] == pytest.approx(_q(values), abs=1e-12), (name, grp)


def test_seeded_state_merge_and_weights() -> None:
    d = _data(seed=2)
    kw = {"ci": 0.95, "num_bootstrap": 40, "seed": 1}
    one = _evaluate(d, **kw).compute()
    assert one.to_json() == _evaluate(d, **kw).compute().to_json()
    assert one.to_json() != _evaluate(d, **{**kw, "seed": 2}).compute().to_json()
    assert [m.value for m in one] == [m.value for m in _evaluate(d).compute()]
    half = {k: v[:100] for k, v in d.items()}
    rest = {k: v[100:] for k, v in d.items()}
    merged = _evaluate(rest, **kw).merge(
        FairnessEvaluator.from_state(_evaluate(half, **kw).state())
    )
    assert merged.compute().to_json() == one.to_json()
    ev = FairnessEvaluator(["sex"], positive_label=1, ci=0.9, num_bootstrap=20)
    ev.add_arrays(d["y"], d["p"], {"sex": d["sex"]}, sample_weight=np.full(len(d["y"]), 2.0))
    spd = ev.compute().filter("StatisticalParityDifference")[0].parameters
    assert spd["ci_low"] < spd["ci_high"] and "ci_undefined" not in spd  # see joint_intervals
    one_def = FairnessEvaluator(["sex"], positive_label=1, ci=0.9, num_bootstrap=20)
    ms = one_def.add_arrays(d["y"], d["p"], {"sex": d["sex"]}).compute().filter("DisparateImpact")
    assert len(ms) == 2 and "average_over" in ms[1].parameters
    for key in ("ci_low", "ci_high", "confidence_level", "ci_method", "num_bootstrap", "seed"):
        assert ms[1].parameters[key] == ms[0].parameters[key] is not None


def test_cli_and_one_call(tmp_path) -> None:
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from assay.cli.main import app
    from assay.fairness import evaluate_fairness

    d = _data(seed=3)
    path = tmp_path / "d.csv"
    pd.DataFrame(d).to_csv(path, index=False)
    args = ["fairness", "--data", str(path), "--label", "y", "--prediction", "p", "--group", "L1"]
    r = CliRunner().invoke(app, [*args, "--ci", "0.9", "--num-bootstrap", "25"])
    assert r.exit_code == 0, r.output
    got = [x for x in json.loads(r.stdout) if x["type"] == "DemographicParityDifference"]
    want = evaluate_fairness(
        pd.DataFrame(d), label="y", prediction="p", group_columns=["L1"], ci=0.9, num_bootstrap=25
    ).get("DemographicParityDifference")
    assert got[0]["parameters"]["ci_low"] == want.parameters["ci_low"] is not None
    r = CliRunner().invoke(app, [*args, "--ci", "0"])
    assert r.exit_code == 2 and "--ci" in r.output
