"""Differential test against RSMTool itself (rsmtool 12 + skll 5).

rsmtool pins ``numpy<2`` and ``scikit-learn<1.5`` (through skll 5.0.1), which would downgrade the
project's environment (numpy 2.x, scikit-learn 1.9), so it is not a dev dependency. The test runs
rsmtool in its own interpreter: set ``ASSAY_RSMTOOL_PYTHON`` to a Python that has ``pip install
rsmtool`` (e.g. ``python3 -m venv /tmp/rsm && /tmp/rsm/bin/pip install rsmtool``; about 3 minutes).
`make test` builds that environment (.venv-rsmtool) and sets the variable; without it the test is
skipped.
"""

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assay.scoring import cohen_kappa, prmse_true, scoring_tables

RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")
pytestmark = pytest.mark.skipif(
    not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON to a Python with rsmtool installed"
)


def _close(mine, theirs, **kw) -> int:
    """assert_allclose, returning how many numbers were compared."""
    mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
    np.testing.assert_allclose(mine, theirs, **kw)
    return int(theirs.size)


def _data(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    t = rng.normal(3, 1, n)
    sc1 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    sc2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    sc2[rng.random(n) > 0.2] = np.nan
    raw = np.clip(t + rng.normal(0, 0.5, n), 0.51, 6.49)
    group = rng.choice(["alpha", "beta", "gamma", "delta"], n, p=[0.4, 0.3, 0.2, 0.1])
    raw = raw + 0.2 * (group == "gamma")
    return pd.DataFrame(
        {"sc1": sc1, "sc2": sc2, "raw_trim": raw, "raw_trim_round": np.rint(raw), "group": group}
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_tables_match_rsmtool(tmp_path, seed):
    df = _data(seed)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    rng = np.random.default_rng(seed + 100)
    prmse_cases = []
    for k in range(4):
        t = rng.normal(3, 1, 50)
        r = np.rint(t[:, None] + rng.normal(0, 0.6, (50, 4)))
        r[rng.random((50, 4)) < 0.5] = np.nan
        r[np.isnan(r).all(axis=1), 0] = 3.0
        case = {
            "system": (t + rng.normal(0, 0.5, 50)).tolist(),
            "ratings": np.where(np.isnan(r), None, r).tolist(),
        }
        if k == 3:
            case["variance"] = 0.4
        prmse_cases.append(case)
    kappa_cases = [
        {"h": [1, 2, 4, 4, 6], "m": [1, 2, 4, 2, 5], "weights": w}
        for w in (None, "quadratic", "linear")
    ]
    kappa_cases.append({"h": [-2, 0, 1, 1], "m": [-2, 1, 1, 0], "weights": None})
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"prmse": prmse_cases, "kappa": kappa_cases}))
    proc = subprocess.run(
        [RSM_PY, str(Path(__file__).with_name("rsmtool_reference.py")), str(path), str(extra)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ref = json.loads(proc.stdout)
    rd = {
        k: pd.read_json(io.StringIO(v), orient="split")
        for k, v in ref.items()
        if isinstance(v, str)
    }

    compared = 0
    res = scoring_tables(df, human="sc1", system="raw_trim", human2="sc2", group_columns=["group"])
    ev = res["eval"].rename(index={"raw_trim": "raw_trim", "raw_trim_round": "raw_trim_round"})
    theirs = rd["eval"]
    # our m_round row rounds raw_trim half to even, exactly rsmtool's raw_trim_round
    ours = ev.rename(index={"raw_trim_round": "raw_trim_round"})
    cols = [c for c in theirs.columns]
    compared += _close(
        ours.loc[["raw_trim", "raw_trim_round"], cols].to_numpy(float),
        theirs.loc[["raw_trim", "raw_trim_round"], cols].to_numpy(float),
        rtol=1e-10,
        atol=1e-12,
    )
    # eval_short: same columns, same values
    compared += _close(
        res["eval_short"][rd["eval_short"].columns].to_numpy(float),
        rd["eval_short"].to_numpy(float),
        rtol=1e-10,
        atol=1e-12,
    )
    assert list(res["eval_short"].columns) == list(rd["eval_short"].columns)
    # consistency
    c_theirs = rd["consistency"]
    assert list(res["consistency"].columns) == list(c_theirs.columns)
    compared += _close(
        res["consistency"].to_numpy(float), c_theirs.to_numpy(float), rtol=1e-10, atol=1e-12
    )
    # eval_by_group (DSM etc.)
    by = res["eval_by_group"]
    by_t = rd["eval_by_group"]
    assert set(by.columns) == set(by_t.columns)
    compared += _close(
        by.loc[by_t.index, by_t.columns].to_numpy(float),
        by_t.to_numpy(float),
        rtol=1e-9,
        atol=1e-12,
    )
    cb, cb_t = res["consistency_by_group"], rd["consistency_by_group"]
    assert list(cb.columns) == list(cb_t.columns) and set(cb.index) == set(cb_t.index)
    compared += _close(
        cb.loc[cb_t.index].to_numpy(float), cb_t.to_numpy(float), rtol=1e-9, atol=1e-12
    )
    for name in (
        "degradation",
        "disattenuated_correlations",
        "disattenuated_correlations_by_group",
    ):
        mine, theirs = res[name], rd[name]
        assert list(mine.columns) == list(theirs.columns), name
        compared += _close(
            mine.loc[theirs.index].to_numpy(float),
            theirs.to_numpy(float),
            rtol=1e-9,
            atol=1e-12,
            err_msg=name,
        )
    # true_score_eval
    ts_t = rd["true_score_eval"]
    assert list(res["true_score_eval"].columns) == list(ts_t.columns)
    compared += _close(
        res["true_score_eval"].loc[ts_t.index].to_numpy(float),
        ts_t.to_numpy(float),
        rtol=1e-10,
        atol=1e-12,
    )
    # fairness
    f_t = rd["fairness"]
    f = res["fairness_metrics_by_group"]
    metric_cols = [
        "Overall score accuracy",
        "Overall score difference",
        "Conditional score difference",
    ]
    compared += _close(
        f.loc[["R2", "sig"], metric_cols].to_numpy(float),
        f_t.loc[["R2", "sig"], metric_cols].to_numpy(float),
        rtol=1e-7,
        atol=1e-12,
    )
    assert f["base_category"].iloc[0] == f_t["base_category"].iloc[0]
    # functional API: multi-rater PRMSE with unequal numbers of ratings, SKLL kappa
    assert compared > 250, compared
    n_functional = 0
    for case, expected in zip(prmse_cases, ref["prmse"]):
        ratings = np.array([[np.nan if v is None else v for v in row] for row in case["ratings"]])
        assert prmse_true(case["system"], ratings, case.get("variance")) == pytest.approx(
            expected, rel=1e-10
        )
        n_functional += 1
    for case, expected in zip(kappa_cases, ref["kappa"]):
        assert cohen_kappa(case["h"], case["m"], weights=case["weights"]) == pytest.approx(
            expected, abs=1e-12
        )
        n_functional += 1
    assert n_functional == len(prmse_cases) + len(kappa_cases) > 0
