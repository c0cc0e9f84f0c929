"""rsmeval itself against ``assay scoring --config`` on generated experiments, every cell.

Each experiment is run by RSMTool's ``rsmeval`` (in the interpreter ``ASSAY_RSMTOOL_PYTHON``;
it also builds its HTML report, about 40 s) and by assay; every CSV assay writes must exist
in rsmeval's ``output`` folder under the same name and agree cell by cell (1e-9), with the
same row names, row order and column names.

Note: rsmeval 12 crashes (``cannot reindex on an axis with duplicate labels``) when one
experiment excludes responses both for their human and for their system score, so each
experiment below has only one of the two kinds.
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
from typer.testing import CliRunner

from assay.cli import app

RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON to a Python with rsmtool"),
]

# what rsmeval writes that assay does not (model summaries, its own copies of the input)
NOT_WRITTEN = (
    "_ols_summary.txt",
    ".ols",
    "_rsmeval.json",
    "_test_metadata.csv",
    "_test_human_scores.csv",
    "_test_other_columns.csv",
)


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=str)


def compare_table(mine: str, theirs: str, name: str, tol: float = 1e-9) -> int:
    """Assert two CSV texts hold the same table; return the number of cells compared."""
    a, b = _csv(mine), _csv(theirs)
    assert [str(c) for c in a.columns] == [str(c) for c in b.columns], (name, a.columns, b.columns)
    assert a.shape == b.shape, (name, a.shape, b.shape)
    n = 0
    for col in b.columns:
        x, y = a[col], b[col]
        xn, yn = pd.to_numeric(x, errors="coerce"), pd.to_numeric(y, errors="coerce")
        numeric = xn.notna() & yn.notna()
        assert (x.isna() == y.isna()).all(), (name, col, x[x.isna() != y.isna()], y)
        text = ~numeric & x.notna()
        assert (x[text] == y[text]).all(), (name, col, x[text], y[text])
        np.testing.assert_allclose(
            xn[numeric].to_numpy(float),
            yn[numeric].to_numpy(float),
            rtol=tol,
            atol=tol,
            err_msg=f"{name}.{col}",
        )
        n += len(b)
    return n


def compare_dir(files: dict[str, str], rsm_dir: Path, skip=()) -> dict[str, int]:
    """Every assay file against rsmeval's file of the same name; cells compared per file."""
    out = {}
    for fname, text in files.items():
        if any(s in fname for s in skip):
            continue
        theirs = rsm_dir / fname
        assert theirs.exists(), f"rsmeval wrote no {fname}"
        out[fname] = compare_table(text, theirs.read_text(), fname)
    return out


def _frame(seed: int, n: int, second: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1.1, n)
    df = pd.DataFrame(
        {
            "resp": [f"r{i:04d}" for i in range(n)],
            "human": np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 5).astype(object),
            "machine": t * 1.1 + rng.normal(0, 0.6, n) - 0.2,  # some beyond 1..5
            "L1": rng.choice(["en", "fr", "de", "zh"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "gender": rng.choice(["F", "M"], n),
        }
    )
    if second:
        h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 5).astype(object)
        h2[rng.random(n) > 0.4] = np.nan
        df["human2"] = h2
    return df


def _experiments(tmp: Path):
    """(name, config, prepared files) for three experiments."""
    a = _frame(1, 400, second=True)
    a.loc[[3, 8], "human"] = "TD"  # non-numeric human scores
    a.loc[[5, 9, 17], "human"] = 0  # zero human scores (excluded)
    a.loc[[20, 21], "human2"] = 0  # zero second score: missing
    a.loc[22, "human2"] = "x"
    a.loc[[30, 31], "L1"] = ""  # "No info"
    a.to_csv(tmp / "a.csv", index=False)
    cfg_a = {
        "experiment_id": "expA",
        "predictions_file": "a.csv",
        "system_score_column": "machine",
        "human_score_column": "human",
        "second_human_score_column": "human2",
        "id_column": "resp",
        "subgroups": ["L1", "gender"],
        "trim_min": 1,
        "trim_max": 5,
        "scale_with": "asis",
    }

    b = _frame(2, 300, second=False)
    b["machine"] = b["machine"].astype(object)
    b.loc[[4, 6], "machine"] = "NA"  # non-numeric system scores
    b.loc[7, "machine"] = np.nan
    b.loc[[10, 11], "human"] = 0  # kept: exclude_zero_scores false
    b.to_csv(tmp / "b.tsv", sep="\t", index=False)
    rng = np.random.default_rng(3)
    pd.DataFrame({"sc1": rng.integers(1, 6, 50), "prediction": rng.normal(2.8, 0.9, 50)}).to_csv(
        tmp / "scale.csv", index=False
    )
    cfg_b = {
        "experiment_id": "expB",
        "predictions_file": "b.tsv",
        "system_score_column": "machine",
        "human_score_column": "human",
        "id_column": "resp",
        "subgroups": ["L1"],
        "trim_min": 1,
        "trim_max": 5,
        "trim_tolerance": 0.49,
        "scale_with": "scale.csv",
        "exclude_zero_scores": False,
        "rater_error_variance": 0.4,
    }

    c = _frame(4, 250, second=True)
    c.loc[[2, 12], "human"] = 0  # kept
    c.loc[[13, 14], "human2"] = 0  # kept as a score
    c.loc[15, "human"] = "missing"
    c.to_excel(tmp / "c.xlsx", index=False)
    cfg_c = {
        "experiment_id": "expC",
        "predictions_file": "c.xlsx",
        "system_score_column": "machine",
        "human_score_column": "human",
        "second_human_score_column": "human2",
        "id_column": "resp",
        "subgroups": ["gender"],
        "trim_min": 1,
        "trim_max": 5,
        "exclude_zero_scores": False,
    }
    return [("a", cfg_a), ("b", cfg_b), ("c", cfg_c)]


def _rsmeval(config: Path, out: Path) -> Path:
    rsmeval = Path(RSM_PY).parent / "rsmeval"
    proc = subprocess.run(
        [str(rsmeval), str(config), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out / "output"


@pytest.mark.parametrize("which", ["a", "b", "c"])
def test_every_table_matches_rsmeval(tmp_path, which):
    name, cfg = next(e for e in _experiments(tmp_path) if e[0] == which)
    config = tmp_path / f"{name}.json"
    config.write_text(json.dumps(cfg))
    rsm_dir = _rsmeval(config, tmp_path / "rsm")
    out = tmp_path / "assay"
    r = CliRunner().invoke(app, ["scoring", "--config", str(config), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    files = {p.name: p.read_text() for p in out.iterdir()}
    counts = compare_dir(files, rsm_dir)
    assert sum(counts.values()) > 1000
    theirs = {p.name for p in rsm_dir.iterdir()}
    missing = sorted(f for f in theirs - set(files) if not f.endswith(NOT_WRITTEN))
    assert missing == []
    prefix = cfg["experiment_id"]
    expected = [
        "eval",
        "eval_short",
        "score_dist",
        "confMatrix",
        "pred_processed",
        "data_composition",
        "test_excluded_composition",
        "test_excluded_responses",
    ]
    for g in cfg["subgroups"]:
        expected += [
            f"eval_by_{g}",
            f"data_composition_by_{g}",
            f"estimates_osa_by_{g}",
            f"estimates_osd_by_{g}",
            f"estimates_csd_by_{g}",
            f"fairness_metrics_by_{g}",
        ]
    if "second_human_score_column" in cfg:
        expected += ["confMatrix_h1h2", "consistency", "true_score_eval", "degradation"]
    if "rater_error_variance" in cfg:
        expected.append("true_score_eval")
    for t in expected:
        assert counts[f"{prefix}_{t}.csv"] > 0, t
