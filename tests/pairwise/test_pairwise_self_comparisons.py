"""DevBench's config compares the reference model with every model, itself included.

Those comparisons are exact matches (the two answers are the same text, so the judge is not
asked, the cell says ``EM``) and each appears twice, in both positions, with the same
``cmp_index``: DevBench's published ``record_gpt-3.5-turbo-1106_2.tsv`` (1.1 MB, not shipped
here) ends with eight such rows, e.g.
``idcenter_uml_class-general;gpt-3.5-turbo-1106;gpt-3.5-turbo-1106`` at rows 73 and 74.

This test adds those rows, built the way DevBench writes them, to the real record table shipped
in tests/data/devbench/ (gpt-4-1106-preview judging) and scores the file end to end: the rows
are accepted, counted as exact matches in the log, and leave every win table equal to the
original's. A true repeat (a third self row, or any other key twice) is still refused.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli.main import app

DEVBENCH = Path(__file__).resolve().parents[1] / "data" / "devbench"
RECORD = DEVBENCH / "record_gpt-4-1106-preview_2.tsv"
REFM = "gpt-3.5-turbo-1106"


def _with_self_rows(path: Path, *, copies: int = 2) -> int:
    """Append DevBench's self-comparison rows (``copies`` per index) to the real table."""
    df = pd.read_csv(RECORD, sep="\t", dtype=str, keep_default_na=False)
    judge = df.columns[-1]
    self_rows = []
    for _, row in df[df["A"] == REFM].drop_duplicates("cmp_index").iterrows():
        index = row["cmp_index"].split(";")[0]
        for _ in range(copies):
            r = row.copy()
            r["cmp_index"] = f"{index};{REFM};{REFM}"
            r["answer2"] = r["answer1"]
            r["B"] = REFM
            r[judge] = "EM"
            self_rows.append(r)
    out = pd.concat([df, pd.DataFrame(self_rows)], ignore_index=True)
    out.to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    return len(self_rows)


def _score(records: Path, out_dir: Path):
    return CliRunner().invoke(
        app,
        [
            "pairwise",
            "score",
            "--records",
            str(records),
            "--reference-model",
            REFM,
            "--nopt",
            "2",
            "--out-dir",
            str(out_dir),
            "--xlsx",
        ],
    )


def test_self_comparisons_are_not_duplicates(tmp_path):
    path = tmp_path / "record_gpt-4-1106-preview_2.tsv"
    added = _with_self_rows(path)
    assert added == 8  # 4 indices, both positions
    (tmp_path / "out").mkdir()
    result = _score(path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    (folder,) = list((tmp_path / "out").iterdir())

    log = (folder / "log.txt").read_text()
    assert re.search(r"Total comparisons: 16\. Failed to response: 0", log)
    assert re.search(r"Non exact matches:\s+8\b", log)
    for name in ("win+halfdraw", "win+bothgood"):
        original = pd.read_excel(DEVBENCH / f"{name}.xlsx").set_index("model").sort_index()
        ours = pd.read_excel(folder / f"{name}.xlsx").set_index("model").sort_index()
        assert list(ours.index) == list(original.index) == ["gpt-4-0125-preview"]
        pd.testing.assert_frame_equal(ours, original, check_dtype=False)

    records = json.loads(result.stdout)
    ext = next(r for r in records if r["type"] == "ExtractionRate")
    assert (ext["parameters"]["extracted"], ext["parameters"]["compared"]) == (8, 8)


def test_a_third_self_row_still_repeats(tmp_path):
    path = tmp_path / "r.tsv"
    _with_self_rows(path, copies=3)
    (tmp_path / "out").mkdir()
    result = _score(path, tmp_path / "out")
    assert result.exit_code == 2
    assert "row 11" in result.output and "repeats (first at row 9)" in result.output
    assert f"idcenter_uml_class-general;{REFM};{REFM}" in result.output


@pytest.mark.parametrize("row", [0, 3])
def test_any_other_repeat_is_still_refused(tmp_path, row):
    df = pd.read_csv(RECORD, sep="\t", dtype=str, keep_default_na=False)
    path = tmp_path / "r.tsv"
    pd.concat([df, df.iloc[[row]]]).to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    (tmp_path / "out").mkdir()
    result = _score(path, tmp_path / "out")
    assert result.exit_code == 2
    assert "row 9" in result.output and f"first at row {row + 1}" in result.output
