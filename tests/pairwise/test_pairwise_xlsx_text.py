"""``assay pairwise judge --xlsx``: text from the data is written as text, never a formula.

Model names (and so the win tables' ``model`` column) come from the user's table; one
named ``=HYPERLINK(...)`` would be a live formula in a spreadsheet. Every text cell that
starts like a formula (``=``, ``+``, ``-``, ``@``) must be a text cell.
"""

from __future__ import annotations

import openpyxl
from typer.testing import CliRunner

from assay.cli.main import app
from assay.testing.llm import FakeChatServer
from assay.testing.pairwise import make_table, scripted_judge

MODELS = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)"]


def test_win_tables_keep_formula_like_text_as_text(tmp_path) -> None:
    table = make_table(["quality", "first"], {**{m: [3, 2] for m in MODELS}, "ref": [1, 1]})
    data = tmp_path / "t.csv"
    table.to_csv(data, index=False)
    with FakeChatServer(responder=scripted_judge(), hang_seconds=5) as srv:
        out = str(tmp_path / "runs")
        args = ["pairwise", "judge", "--data", str(data), "--models", ",".join(MODELS),
                "--reference-model", "ref", "--judge", srv.spec(), "--out-dir", out,
                "--quiet", "--num-bootstrap", "10", "--no-cache", "--xlsx"]  # fmt: skip
        r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    (folder,) = list((tmp_path / "runs").iterdir())
    books = sorted(folder.glob("*.xlsx"))
    assert [b.name for b in books] == ["win+bothgood.xlsx", "win+halfdraw.xlsx"]
    for book in books:
        ws = openpyxl.load_workbook(book).active
        cells = [c for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
        names = {c.value for c in cells}
        assert set(MODELS) <= names, names
        risky = [c for c in cells if c.value.startswith(("=", "+", "-", "@"))]
        assert len(risky) >= len(MODELS)
        assert all(c.data_type == "s" for c in risky), [(c.value, c.data_type) for c in risky]
