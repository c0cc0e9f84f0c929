"""Non-UTF-8 input files: an InvalidInputError naming the file and the line, for every reader."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.errors import InvalidInputError
from assay.io.tables import read_jsonl, read_table

GOOD = {
    ".csv": "uid,value\n1,cat\n2,dog\n3,café\n",
    ".jsonl": '{"uid": 1, "value": "cat"}\n{"uid": 2, "value": "dog"}\n'
    '{"uid": 3, "value": "café"}\n',
    ".json": '[{"uid": 1, "value": "cat"},\n {"uid": 2, "value": "dog"},\n'
    ' {"uid": 3, "value": "café"}]\n',
}
ENCODINGS = [("latin-1", "line 4", "not UTF-8"), ("utf-16", "line 1", "NUL")]


@pytest.mark.parametrize("suffix", sorted(GOOD))
@pytest.mark.parametrize("encoding,line,reason", ENCODINGS)
def test_other_encodings_name_file_and_line(tmp_path, suffix, encoding, line, reason):
    p = tmp_path / f"data{suffix}"
    p.write_bytes(GOOD[suffix].encode(encoding))
    with pytest.raises(InvalidInputError) as exc:
        read_table(p)
    msg = str(exc.value)
    if line == "line 4" and suffix != ".csv":  # no header line: 'café' is on line 3
        line = "line 3"
    assert str(p) in msg and line in msg and reason in msg, msg
    if suffix == ".jsonl":
        with pytest.raises(InvalidInputError, match=line):
            read_jsonl(p)


@pytest.mark.parametrize("suffix", sorted(GOOD))
def test_binary_and_directories(tmp_path, suffix):
    p = tmp_path / f"data{suffix}"
    p.write_bytes(b"abc\n" + bytes(range(256)))
    with pytest.raises(InvalidInputError, match="line 2: not text"):
        read_table(p)
    d = tmp_path / f"dir{suffix}"
    d.mkdir()
    with pytest.raises(InvalidInputError, match="is a directory"):
        read_table(d)


@pytest.mark.parametrize("suffix", sorted(GOOD))
def test_utf8_still_reads(tmp_path, suffix):
    p = tmp_path / f"data{suffix}"
    p.write_text(GOOD[suffix], encoding="utf-8")
    assert list(read_table(p)["value"]) == ["cat", "dog", "café"]


def test_a_command_reports_it_with_exit_2(tmp_path):
    gts = tmp_path / "gts.csv"
    gts.write_bytes(GOOD[".csv"].encode("latin-1"))
    res = CliRunner().invoke(
        app, ["classification", "--groundtruths", str(gts), "--predictions", str(gts)]
    )
    assert res.exit_code == 2 and "gts.csv: line 4: not UTF-8" in res.output, res.output
    assert "Traceback" not in res.output
