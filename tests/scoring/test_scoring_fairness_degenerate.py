"""Fairness analyses on degenerate fits: the fast cell path agrees with the row-level fits.

Exact fits (the issue's 4-row case, where the conditional-score-difference model fits the
errors exactly), a single group, constant human or system scores and zero errors. The fast
path (:func:`fairness_analyses`, also behind the evaluator) is compared with
:func:`fairness_analyses_ols` (statsmodels on every row) and, with ``ASSAY_RSMTOOL_PYTHON``
set, with rsmtool's ``get_fairness_analyses`` itself.

Rule: where the peer gives a number, assay gives the same number (R^2 to 1e-9; p-values to
1e-12 absolute, since an exact fit has p = 0 while the row-level fit reports rounding noise
such as 4e-16); where the peer gives NaN, assay's value is undefined (NaN in the table, None
with a reason in the records).
"""

import io
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assay.scoring import evaluate_scoring, fairness_analyses, fairness_analyses_ols

METRICS = ["Overall score accuracy", "Overall score difference", "Conditional score difference"]
RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")

CASES = {
    # issue 10, item 3: the CSD model e ~ group + C(H) fits exactly
    "exact_csd": dict(
        sc1=[2, 3, 2, 3],
        raw=[1.0, 1.5, 3.0, 3.5],
        group=["Klingon", "Klingon", "Esperanto", "Esperanto"],
    ),
    # every model fits exactly: one group always right, the other always one point high
    "exact_all": dict(sc1=[1, 2, 3, 4, 1, 2], raw=[1, 2, 4, 5, 1, 3.0], group=list("aabbab")),
    "one_group": dict(sc1=[2, 3, 2, 3, 4], raw=[1.0, 1.5, 3.0, 3.5, 3.9], group=["a"] * 5),
    "constant_system": dict(sc1=[2, 3, 2, 3, 4, 1], raw=[3.0] * 6, group=list("aabbab")),
    "constant_human": dict(sc1=[3] * 6, raw=[3, 3, 4, 4, 4, 5.0], group=list("aaabbb")),
    "zero_errors": dict(sc1=[1, 2, 3, 4, 1, 2], raw=[1, 2, 3, 4, 1, 2.0], group=list("aabbab")),
    "three_groups_exact": dict(
        sc1=[1, 2, 1, 2, 1, 2, 3], raw=[1, 2, 2, 3, 3, 4, 3.0], group=list("aabbcca")
    ),
}


def _ours(case: dict) -> pd.DataFrame:
    return fairness_analyses(case["sc1"], case["raw"], case["group"])


# With a constant system score the errors are c - H, which the human score alone fits
# exactly: the nested F test of CSD is 0/0. The row-level fits report a p-value made of
# rounding noise (0.64 by statsmodels here, 0.75 by rsmtool); assay reports it undefined.
NOISE_ONLY = {"constant_system": {("sig", METRICS[2])}}


def _compare(ours: pd.DataFrame, theirs: pd.DataFrame, name: str) -> int:
    """Assert the rule of the module docstring; return how many cells were compared."""
    compared = 0
    for col in METRICS:
        for row in ("R2", "sig"):
            a, b = float(ours.loc[row, col]), float(theirs.loc[row, col])
            where = f"{name} {row} {col}: assay {a!r}, peer {b!r}"
            if (row, col) in NOISE_ONLY.get(name, set()):
                assert math.isnan(a), where
            elif math.isnan(b):
                assert math.isnan(a), where
            elif row == "R2":
                assert a == pytest.approx(b, rel=1e-9, abs=1e-9), where
            else:
                assert a == pytest.approx(b, rel=1e-7, abs=1e-12), where
            compared += 1
    assert ours["base_category"].iloc[0] == theirs["base_category"].iloc[0], name
    return compared


@pytest.mark.parametrize("name", sorted(CASES))
def test_degenerate_fits_agree_with_row_level_ols(name):
    case = CASES[name]
    ours = _ours(case)
    theirs = fairness_analyses_ols(case["sc1"], case["raw"], case["group"])
    assert _compare(ours, theirs, name) == 6


def test_exact_fit_through_the_evaluator_has_no_division_by_zero():
    case = CASES["exact_csd"]
    df = pd.DataFrame({"sc1": case["sc1"], "raw": case["raw"], "L1": case["group"]})
    ms = evaluate_scoring(df, human="sc1", system="raw", group_columns=["L1"])
    csd = ms.get("ConditionalScoreDifference", group_column="L1")
    p = ms.get("ConditionalScoreDifferencePValue", group_column="L1")
    ref = fairness_analyses_ols(case["sc1"], case["raw"], case["group"])
    assert csd.value == pytest.approx(ref.loc["R2", METRICS[2]], rel=1e-12)
    assert csd.value > 1.0  # adjusted R^2 of an exact fit (1) minus a negative null adjusted R^2
    assert p.value == 0.0  # F = infinity
    assert ref.loc["sig", METRICS[2]] < 1e-12


def test_one_group_explains_nothing_and_has_no_test():
    ms = evaluate_scoring(
        pd.DataFrame({"h": [2, 3, 2, 3, 4], "m": [1.0, 1.5, 3.0, 3.5, 3.9], "g": ["a"] * 5}),
        human="h",
        system="m",
        group_columns=["g"],
    )
    for kind in ("OverallScoreAccuracy", "OverallScoreDifference", "ConditionalScoreDifference"):
        assert ms.get(kind, group_column="g").value == 0.0
        rec = ms.get(kind + "PValue", group_column="g")
        assert rec.value is None and "at least two groups" in rec.parameters["undefined"]


def test_constant_system_score_csd_test_is_undefined_with_a_reason():
    case = CASES["constant_system"]
    df = pd.DataFrame({"h": case["sc1"], "m": case["raw"], "g": case["group"]})
    ms = evaluate_scoring(df, human="h", system="m", group_columns=["g"])
    assert ms.get("ConditionalScoreDifference", group_column="g").value == pytest.approx(0.0)
    rec = ms.get("ConditionalScoreDifferencePValue", group_column="g")
    assert rec.value is None and "F = 0/0" in rec.parameters["undefined"]


def test_float_noise_errors_are_undefined_not_noise():
    # raw - sc1 is 0.1 up to representation error (0.10000000000000009 vs 0.09999999999999964):
    # the row-level fits explain that noise (rsmtool reports R2 0.22, 0.21, 0.057); assay
    # treats a variance below 1e-12 of sum(e^2) as none, as documented in docs/scoring.md.
    sc1 = np.array([1, 2, 3, 4, 1, 2, 3, 4.0])
    t = fairness_analyses(sc1, sc1 + 0.1, list("aabbaabb"))
    assert t[METRICS].isna().all().all()
    noisy = fairness_analyses_ols(sc1, sc1 + 0.1, list("aabbaabb"))
    assert noisy.loc["R2", METRICS[0]] == pytest.approx(0.2208, abs=1e-3)  # the peer's noise


@pytest.mark.skipif(not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON to a Python with rsmtool")
def test_degenerate_fits_agree_with_rsmtool(tmp_path):
    names = sorted(CASES)
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([CASES[n] for n in names]))
    script = Path(__file__).with_name("rsmtool_fairness_reference.py")
    proc = subprocess.run(
        [RSM_PY, str(script), str(path)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    compared = 0
    for name, ref in zip(names, json.loads(proc.stdout)):
        assert not isinstance(ref, dict), f"{name}: rsmtool failed: {ref}"
        theirs = pd.read_json(io.StringIO(ref), orient="split")
        compared += _compare(_ours(CASES[name]), theirs, name)
    assert compared == 6 * len(names)
