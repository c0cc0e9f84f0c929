"""``assay.io.xlsx.write_xlsx``: text that looks like a formula is written as text."""

import io

import numpy as np
import openpyxl
import pandas as pd
import pytest

from assay.io.xlsx import FORMULA_PREFIXES, write_xlsx

HOSTILE = ["=1+1", '=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"]


def _sheet(data: bytes):
    return openpyxl.load_workbook(io.BytesIO(data)).active


def test_formula_like_text_is_text_and_numbers_stay_numbers():
    df = pd.DataFrame(
        {
            "=cmd": HOSTILE,
            "plain": ["a", "b", "c", "-", "=", "x", "y"],
            "score": [-1.5, 2.0, np.nan, 0.0, -3.0, 1e-9, 7.0],
            "n": [1, -2, 3, 4, 5, 6, 7],
        }
    )
    ws = _sheet(write_xlsx(df))
    header = [c.value for c in ws[1]]
    assert header == ["=cmd", "plain", "score", "n"]
    assert ws["A1"].data_type == "s" and ws["A1"].quotePrefix  # a header is data too
    for i, text in enumerate(HOSTILE, start=2):
        cell = ws.cell(row=i, column=1)
        assert cell.value == text  # unchanged, not prefixed
        assert cell.data_type == "s", (text, cell.data_type)
        assert cell.quotePrefix
    assert [ws.cell(row=i, column=3).value for i in range(2, 9)] == [
        -1.5,
        2.0,
        None,
        0.0,
        -3.0,
        1e-9,
        7.0,
    ]
    assert all(ws.cell(row=i, column=4).data_type == "n" for i in range(2, 9))
    assert ws.cell(row=2, column=2).value == "a" and not ws.cell(row=2, column=2).quotePrefix
    # read back as pandas reads it: the same table
    back = pd.read_excel(io.BytesIO(write_xlsx(df)))
    assert back["=cmd"].tolist() == HOSTILE


def test_pandas_alone_writes_a_formula_which_is_why_this_helper_exists():
    buf = io.BytesIO()
    pd.DataFrame({"a": ["=1+1"]}).to_excel(buf, index=False)
    assert _sheet(buf.getvalue())["A2"].data_type == "f"
    assert _sheet(write_xlsx(pd.DataFrame({"a": ["=1+1"]})))["A2"].data_type == "s"


@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_every_prefix_is_covered(prefix):
    ws = _sheet(write_xlsx(pd.DataFrame({"a": [f"{prefix}1+1"]}), index=True))
    assert ws["B2"].data_type == "s" and ws["B2"].quotePrefix and ws["A2"].value == 0
