"""Compare assay's rsmeval tables with the CSV files rsmeval wrote (cell by cell)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd


def _frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=str)


def compare_table(mine: str, theirs: str, name: str, tol: float = 1e-9) -> int:
    """Assert two CSV texts hold the same table; return the number of cells compared."""
    a, b = _frame(mine), _frame(theirs)
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
