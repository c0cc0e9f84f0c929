"""rsmeval itself against ``assay scoring --config`` on generated experiments, every cell.

Each experiment is run by RSMTool's ``rsmeval`` (in the interpreter ``ASSAY_RSMTOOL_PYTHON``;
it also builds its HTML report, about 40 s) and by assay; every file assay writes (CSV, TSV or
XLSX, as the experiment's ``file_format`` says) must exist in rsmeval's ``output`` folder under
the same name and agree cell by cell (1e-9), with the same row names, row order and column
names; and every file rsmeval writes must be written by assay, except those in
``NOT_WRITTEN`` (docs/scoring.md says why). Experiments d-f (``rsmeval_experiments.py``) use
flag columns, candidates, ``min_n_per_group`` and the tsv/xlsx formats.

Note: rsmeval 12 crashes (``cannot reindex on an axis with duplicate labels``) when one
experiment excludes responses both for their human and for their system score, or excludes
candidates as well as responses for their scores, so each experiment has only one kind.
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
from rsmeval_experiments import config, filter_experiments, frame
from typer.testing import CliRunner

from assay.cli.main import app

RSM_PY = os.environ.get("ASSAY_RSMTOOL_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RSM_PY, reason="set ASSAY_RSMTOOL_PYTHON to a Python with rsmtool"),
]

# what rsmeval writes that assay does not (docs/scoring.md says why): the fairness models
# pickled (.ols) and their statsmodels text summaries, and its copy of the configuration
NOT_WRITTEN = ("_ols_summary.txt", ".ols", "_rsmeval.json")


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=str)


def as_csv(data: str | bytes, fmt: str) -> str:
    """A written table (csv/tsv text or xlsx bytes) as CSV text, read the same way for both
    sides (xlsx: number headers and cells as openpyxl gives them, a formula cell as its text:
    rsmeval writes a text starting with ``=`` as a formula, assay as text)."""
    if fmt == "csv":
        return data if isinstance(data, str) else data.decode()
    if fmt == "tsv":
        df = pd.read_csv(io.StringIO(str(data)), sep="\t", dtype=str, keep_default_na=False)
    else:
        rows = [[c.value for c in row] for row in _sheet(data).iter_rows()]
        df = pd.DataFrame(rows[1:], columns=rows[0])
    return df.to_csv(index=False)


def _sheet(data: str | bytes):
    import openpyxl

    return openpyxl.load_workbook(io.BytesIO(data)).active  # type: ignore[arg-type]


def formula_cells(data: bytes) -> list[str]:
    """The values of the formula cells of an xlsx table."""
    return [str(c.value) for row in _sheet(data).iter_rows() for c in row if c.data_type == "f"]


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


def compare_dir(files: dict[str, bytes], rsm_dir: Path, fmt: str = "csv") -> dict[str, int]:
    """Every assay file against rsmeval's file of the same name; cells compared per file."""
    out = {}
    for fname, data in files.items():
        theirs = rsm_dir / fname
        assert theirs.exists(), f"rsmeval wrote no {fname}"
        mine = data if fmt == "xlsx" else data.decode()
        other = theirs.read_bytes() if fmt == "xlsx" else theirs.read_text()
        out[fname] = compare_table(as_csv(mine, fmt), as_csv(other, fmt), fname)
    return out


def _experiments(tmp: Path):
    """(name, configuration) for six experiments; their data written into ``tmp``."""
    a = frame(1, 400, second=True)
    a.loc[[3, 8], "human"] = "TD"  # non-numeric human scores
    a.loc[[5, 9, 17], "human"] = 0  # zero human scores (excluded)
    a.loc[[20, 21], "human2"] = 0  # zero second score: missing
    a.loc[22, "human2"] = "x"
    a.loc[[30, 31], "L1"] = ""  # "No info"
    a.to_csv(tmp / "a.csv", index=False)
    cfg_a = config("expA", "a.csv", second=True, subgroups=["L1", "gender"], scale_with="asis")

    b = frame(2, 300, second=False)
    b["machine"] = b["machine"].astype(object)
    b.loc[[4, 6], "machine"] = "NA"  # non-numeric system scores
    b.loc[7, "machine"] = np.nan
    b.loc[[10, 11], "human"] = 0  # kept: exclude_zero_scores false
    b.to_csv(tmp / "b.tsv", sep="\t", index=False)
    rng = np.random.default_rng(3)
    pd.DataFrame({"sc1": rng.integers(1, 6, 50), "prediction": rng.normal(2.8, 0.9, 50)}).to_csv(
        tmp / "scale.csv", index=False
    )
    cfg_b = config(
        "expB",
        "b.tsv",
        second=False,
        subgroups=["L1"],
        trim_tolerance=0.49,
        scale_with="scale.csv",
        exclude_zero_scores=False,
        rater_error_variance=0.4,
    )

    c = frame(4, 250, second=True)
    c.loc[[2, 12], "human"] = 0  # kept
    c.loc[[13, 14], "human2"] = 0  # kept as a score
    c.loc[15, "human"] = "missing"
    c.to_excel(tmp / "c.xlsx", index=False)
    cfg_c = config("expC", "c.xlsx", second=True, subgroups=["gender"], exclude_zero_scores=False)
    return [("a", cfg_a), ("b", cfg_b), ("c", cfg_c), *filter_experiments(tmp)]


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


def _expected(cfg: dict) -> list[str]:
    """The tables rsmeval must write (and assay too) for this configuration."""
    groups = cfg["subgroups"]
    groups = [g.strip() for g in groups.split(",")] if isinstance(groups, str) else groups
    expected = ["eval", "eval_short", "score_dist", "confMatrix", "pred_processed"]
    expected += ["data_composition", "test_excluded_composition", "test_metadata"]
    expected += ["test_other_columns"]
    for g in groups:
        expected += [f"eval_by_{g}", f"data_composition_by_{g}", f"fairness_metrics_by_{g}"]
        expected += [f"estimates_{m}_by_{g}" for m in ("osa", "osd", "csd")]
    if "second_human_score_column" in cfg:
        expected += ["confMatrix_h1h2", "consistency", "true_score_eval", "degradation"]
        expected += ["test_human_scores"]
    if "rater_error_variance" in cfg:
        expected.append("true_score_eval")
    if cfg["experiment_id"] != "expF":
        expected.append("test_excluded_responses")
    if cfg["experiment_id"] in ("expD", "expE"):
        expected.append("test_responses_with_excluded_flags")
    return expected


@pytest.mark.parametrize("which", ["a", "b", "c", "d", "e", "f"])
def test_every_table_matches_rsmeval(tmp_path, which):
    name, cfg = next(e for e in _experiments(tmp_path) if e[0] == which)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    rsm_dir = _rsmeval(path, tmp_path / "rsm")
    out = tmp_path / "assay"
    r = CliRunner().invoke(app, ["scoring", "--config", str(path), "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    fmt = cfg.get("file_format", "csv")
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    assert all(f.endswith(f".{fmt}") for f in files)
    counts = compare_dir(files, rsm_dir, fmt)
    assert sum(counts.values()) > 1000
    theirs = {p.name for p in rsm_dir.iterdir()}
    missing = sorted(f for f in theirs - set(files) if not f.endswith(NOT_WRITTEN))
    assert missing == []
    # beside output/: only the report (HTML, its notebook, the .environ.json handed to the
    # notebook) and its figures (SVG), no table
    rest = {p.name for sub in ("figure", "report") for p in (rsm_dir.parent / sub).iterdir()}
    assert {Path(n).suffix for n in rest - {".environ.json"}} <= {".svg", ".html", ".ipynb"}
    for t in _expected(cfg):
        assert counts[f"{cfg['experiment_id']}_{t}.{fmt}"] > 0, t
    if cfg["experiment_id"] == "expF":  # nothing excluded: rsmeval writes no such file
        assert not any("excluded_responses" in f or "excluded_flags" in f for f in files)
    if fmt == "xlsx":  # ids like "=r0001": text cells here, formula cells in rsmeval's files
        flagged = f"{cfg['experiment_id']}_test_responses_with_excluded_flags.xlsx"
        assert all(formula_cells(data) == [] for data in files.values())
        theirs_f = formula_cells((rsm_dir / flagged).read_bytes())
        assert len(theirs_f) == 10 and all(v.startswith("=r") for v in theirs_f)
        pred = _sheet(files[f"{cfg['experiment_id']}_pred_processed.xlsx"])
        marked = [c.value for c in pred["A"] if c.quotePrefix and c.data_type == "s"]
        assert len(marked) == 30 and {v[0] for v in marked} == {"@", "+", "-"}
    if "candidate_column" in cfg:
        data = files[f"{cfg['experiment_id']}_data_composition.{fmt}"]
        comp = _csv(as_csv(data if fmt == "xlsx" else data.decode(), fmt))
        assert list(comp.columns[:3]) == ["partition", "responses", "candidates"]


FLAG_VALUES = [1, 1.0, 2.5, -0.0, "1", "1.0", " 1 ", "1e3", "nan", "inf", "0x10", "1_000"]
FLAG_VALUES += [True, False, None, "ok", "", "True", "\u0661", 12345678901234567890, "2.50"]


def test_flag_values_convert_as_rsmtool_converts_them():
    from assay.scoring.rsmeval_preprocess import flag_value

    code = (
        "import json, sys\n"
        "from rsmtool.utils.conversion import convert_to_float\n"
        "vals = json.loads(sys.stdin.read())\n"
        "print(json.dumps([[type(v).__name__, repr(v)] for v in map(convert_to_float, vals)]))"
    )
    proc = subprocess.run(
        [RSM_PY, "-c", code],
        input=json.dumps(FLAG_VALUES),
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    theirs = json.loads(proc.stdout)
    mine = [[type(v).__name__, repr(v)] for v in map(flag_value, FLAG_VALUES)]
    assert mine == theirs
    assert len(mine) == len(FLAG_VALUES) > 15
