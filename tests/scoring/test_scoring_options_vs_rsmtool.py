"""RSMTool's SMD options against rsmtool 12's own ``Analyzer.compute_metrics``.

``smd_method`` (every method, names in any case), population means and sds per score column
(``population_sd_dict`` / ``population_mn_dict``) and ``use_diff_std_means`` (a DSM column):
``eval``, ``eval_short`` and ``consistency`` must equal rsmtool's (1e-10), with the same column
names, and ``degradation`` must stay rsmtool's default one whatever the options. rsmtool runs
in its own interpreter (``ASSAY_RSMTOOL_PYTHON``, see test_scoring_vs_rsmtool.py).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assay.scoring import scoring_tables

RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON to a Python with rsmtool"),
]

SD = {"sc1": 1.05, "raw_trim": 0.95, "raw_trim_round": 1.02, "sc2": 1.1}
MN = {"sc1": 3.1, "raw_trim": 2.95, "raw_trim_round": 3.0, "sc2": 3.05}
CASES = [
    {"smd_method": "williamson", "use_diff_std_means": False, "sd": SD},
    {"smd_method": "Johnson", "use_diff_std_means": False, "sd": {"sc1": 0.9}},
    {"smd_method": "WILLIAMSON", "use_diff_std_means": False, "sd": SD, "second": False},
    {"smd_method": "UNPOOLED", "use_diff_std_means": False, "sd": SD, "mn": MN},
    {"smd_method": "Pooled", "use_diff_std_means": False},
    {"smd_method": "unpooled", "use_diff_std_means": True, "sd": SD, "mn": MN},
    {"smd_method": "unpooled", "use_diff_std_means": True, "sd": SD, "mn": MN, "second": False},
    # only the human score's population: the others standardised with their own mean and sd
    {"smd_method": "unpooled", "use_diff_std_means": True, "sd": {"sc1": 1.2}, "mn": {"sc1": 3}},
    # no population at all: every z-score averages 0; smd_method is ignored with DSM
    {"smd_method": "williamson", "use_diff_std_means": True},
]


def _data(seed: int = 5, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    sc1 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    sc2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    sc2[rng.random(n) > 0.3] = np.nan
    raw = np.clip(t + rng.normal(0.1, 0.5, n), 0.51, 6.49)
    return pd.DataFrame({"sc1": sc1, "sc2": sc2, "raw_trim": raw, "raw_trim_round": np.rint(raw)})


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("options")
    df = _data()
    df.to_csv(tmp / "d.csv", index=False)
    (tmp / "cases.json").write_text(json.dumps(CASES))
    script = Path(__file__).with_name("rsmtool_options_reference.py")
    proc = subprocess.run(
        [RSM_PY, str(script), str(tmp / "d.csv"), str(tmp / "cases.json")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = [
        {k: pd.read_json(io.StringIO(v), orient="split") for k, v in tables.items()}
        for tables in json.loads(proc.stdout)
    ]
    return df, theirs


def _mine(df: pd.DataFrame, case: dict):
    second = case.get("second", True)
    return scoring_tables(
        df if second else df.drop(columns="sc2"),
        human="sc1",
        system="raw_trim",
        human2="sc2" if second else None,
        smd_method=case["smd_method"],
        use_diff_std_means=case["use_diff_std_means"],
        population_sds={k: v for k, v in case.get("sd", {}).items() if second or k != "sc2"},
        population_means={k: v for k, v in case.get("mn", {}).items() if second or k != "sc2"},
    )


@pytest.mark.parametrize("k", range(len(CASES)))
def test_smd_options_match_rsmtool(answers, k):
    df, theirs = answers
    case, ref = CASES[k], theirs[k]
    mine = _mine(df, case)
    smd = "DSM" if case["use_diff_std_means"] else "SMD"
    compared = 0
    for name in ref:
        table, other = mine[name], ref[name]
        if name == "eval":
            table = table.drop(columns="MSE")  # assay's extra column (docs/scoring.md)
        assert [str(c) for c in table.columns] == [str(c) for c in other.columns], name
        if name != "degradation":
            assert any(c.split(".")[0] == smd for c in table.columns), name
        np.testing.assert_allclose(
            table.loc[other.index if name != "consistency" else table.index].to_numpy(float),
            other.to_numpy(float),
            rtol=1e-10,
            atol=1e-12,
            err_msg=f"case {k}: {name}",
        )
        compared += other.size
    assert compared >= (70 if case.get("second", True) else 40)
    # the SMD/DSM cell of every table is a number here (nothing silently undefined)
    assert np.isfinite(mine["eval"][smd].to_numpy(float)).all()
