"""Tables written as ``.xlsx`` with text kept as text: no formula comes from the data.

openpyxl (and so ``DataFrame.to_excel``) turns every text value that starts with ``=`` into a
formula cell, which a spreadsheet evaluates when the file is opened: a response id, a group
label or a model's answer could then run ``=HYPERLINK(...)`` or ``=WEBSERVICE(...)``. Here
every text cell that starts like a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage
return: the usual CSV/formula-injection rule) is written as a text cell marked with a quote
prefix (Excel's ``'``, which keeps it text even when the cell is edited), its value
unchanged. Numbers, booleans and empty cells stay what they are.

Example:
    >>> import io, openpyxl, pandas as pd
    >>> data = write_xlsx(pd.DataFrame({"id": ["=1+1", "a"], "score": [-1.5, 2]}))
    >>> ws = openpyxl.load_workbook(io.BytesIO(data)).active
    >>> ws["A2"].value, ws["A2"].data_type, ws["B2"].value, ws["B2"].data_type
    ('=1+1', 's', -1.5, 'n')
"""

from __future__ import annotations

import io

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "write_xlsx"]

#: Text that a spreadsheet may read as a formula starts with one of these.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def write_xlsx(frame: pd.DataFrame, *, index: bool = False, sheet_name: str = "Sheet1") -> bytes:
    """The workbook bytes of ``frame`` (one sheet, header row first), text kept as text.

    ``index`` writes the row labels as the first column, as ``DataFrame.to_excel`` does.

    Example:
        >>> write_xlsx(pd.DataFrame({"a": [1]}))[:2]
        b'PK'
    """
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as writer:
        frame.to_excel(writer, index=index, sheet_name=sheet_name)
        for row in writer.sheets[sheet_name].iter_rows():
            for cell in row:
                value = cell.value
                if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
                    cell.data_type = "s"
                    cell.quotePrefix = True
    return buf.getvalue()
