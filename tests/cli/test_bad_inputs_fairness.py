"""Bad input to `assay fairness`: exit 2, one message naming the file (or option) and the
place, no traceback, and an existing --out left exactly as it was."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli.main import app

runner = CliRunner()

DATA = "y,yhat,sex,age\n1,1,1,20\n0,1,1,30\n1,0,0,50\n0,0,0,60\n"
BASE = ["--label", "y", "--prediction", "yhat", "--sensitive", "sex"]

# name -> (file name, content, extra args replacing BASE or None, expected fragments)
CASES = {
    "yes/no predictions against 1/0 labels": (
        "d.csv",
        "y,yhat,sex\n1,yes,1\n0,no,1\n1,no,0\n0,yes,0\n",
        None,
        ["d.csv", "field 'yhat'", "labels (y) hold 0, 1", "'no', 'yes'"],
    ),
    "positive label absent from yes/no labels": (
        "d.csv",
        "y,yhat,sex\nyes,yes,1\nno,no,1\nyes,no,0\nno,yes,0\n",
        [*BASE, "--positive-label", "Yes"],
        ["d.csv", "'Yes' occurs in neither", "'no', 'yes'"],
    ),
    "labels and predictions share no value": (
        "d.csv",
        "y,yhat,sex\nyes,Y,1\nno,N,1\nyes,N,0\nno,Y,0\n",
        [*BASE, "--positive-label", "yes"],
        ["d.csv", "share no value"],
    ),
    "numeric labels, text positive label": (
        "d.csv",
        DATA,
        [*BASE, "--positive-label", "yes"],
        ["--positive-label", "'yes'", "d.csv"],
    ),
    "label column mixes numbers and text": (
        "d.jsonl",
        '{"y": 1, "yhat": 1, "sex": 1}\n{"y": "0", "yhat": 0, "sex": 0}\n',
        None,
        ["d.jsonl", "row 2", "field 'y'", "numbers or strings"],
    ),
    "label is a list": (
        "d.jsonl",
        '{"y": [1], "yhat": 1, "sex": 1}\n{"y": 0, "yhat": 0, "sex": 0}\n',
        None,
        ["d.jsonl", "row 1", "field 'y'", "got list"],
    ),
    "group value is a list": (
        "d.jsonl",
        '{"y": 1, "yhat": 1, "sex": [1]}\n{"y": 0, "yhat": 0, "sex": 0}\n',
        None,
        ["d.jsonl", "row 1", "field 'sex'", "must be a number"],
    ),
    "group value is text": (
        "d.csv",
        "y,yhat,sex\n1,1,1\n0,1,female\n",
        None,
        ["d.csv", "row 2", "field 'sex'", "'female'"],
    ),
    "missing label": (
        "d.csv",
        "y,yhat,sex\n1,1,1\n,1,0\n",
        None,
        ["d.csv", "row 2", "field 'y'", "missing value"],
    ),
    "missing group column": (
        "d.csv",
        DATA,
        ["--label", "y", "--prediction", "yhat", "--sensitive", "race"],
        ["d.csv", "field 'race'", "missing column"],
    ),
    "missing label column": (
        "d.csv",
        DATA,
        ["--label", "truth", "--prediction", "yhat", "--sensitive", "sex"],
        ["d.csv", "field 'truth'", "missing column"],
    ),
    "bad group definition": (
        "d.csv",
        DATA,
        ["--label", "y", "--prediction", "yhat", "--sensitive", "age:forty"],
        ["--sensitive", "'forty'"],
    ),
    "group definition with four parts": (
        "d.csv",
        DATA,
        ["--label", "y", "--prediction", "yhat", "--sensitive", "age:1:invert:x"],
        ["--sensitive", "COLUMN[:THRESHOLD[:invert]]"],
    ),
    "infinite group threshold": (
        "d.csv",
        DATA,
        ["--label", "y", "--prediction", "yhat", "--sensitive", "age:inf"],
        ["--sensitive", "finite"],
    ),
    "latin-1 CSV": (
        "d.csv",
        "y,yhat,sex\ncaf\xe9,1,1\n".encode("latin-1"),
        None,
        ["d.csv", "line 2", "not UTF-8"],
    ),
    "UTF-16 JSONL": (
        "d.jsonl",
        '{"y": 1, "yhat": 1, "sex": 1}\n'.encode("utf-16"),
        None,
        ["d.jsonl", "line 1", "not text"],
    ),
    "binary bytes as Parquet": (
        "d.parquet",
        bytes(range(256)) * 8,
        None,
        ["d.parquet", "cannot read"],
    ),
    "empty file": ("d.csv", "", None, ["d.csv", "cannot read"]),
    "header only": ("d.csv", "y,yhat,sex\n", None, ["d.csv", "no rows"]),
    "missing file": (None, None, None, ["d.csv", "file not found"]),
    "--format unknown": ("d.csv", DATA, [*BASE, "--format", "xml"], ["--format"]),
}

# Categorical privileged values (--sensitive L1=...) and per-group metrics (--group).
LANG = "y,yhat,L1\n1,1,en\n0,1,en\n1,0,fr\n0,0,fr\n1,1,de\n"
YY = ["--label", "y", "--prediction", "yhat"]
for _case, _args, _fragments in (
    ("unknown privileged value", ["--sensitive", "L1=xx"], ["--sensitive", "'xx'", "'L1'",
                                                            "'de', 'en', 'fr'"]),
    ("one unknown among several", ["--sensitive", "L1=en,xx"], ["--sensitive", "'xx'"]),
    ("empty privileged value", ["--sensitive", "L1=en,"], ["--sensitive", "COLUMN=VALUE"]),
    ("group column missing", ["--group", "L2"], ["d.csv", "field 'L2'", "--group"]),
    ("sensitive column missing", ["--sensitive", "L2=en"], ["field 'L2'", "--sensitive"]),
    ("threshold on a text column", ["--sensitive", "L1"], ["row 1", "field 'L1'", "L1=VALUE"]),
    ("neither --sensitive nor --group", [], ["--sensitive", "--group"]),
    ("unknown method", ["--group", "L1", "--method", "max"], ["--method", "to_overall"]),
    ("zero division not a number", ["--group", "L1", "--zero-division", "x"], ["zero-division"]),
    ("unknown agg", ["--group", "L1", "--equalized-odds-agg", "max"], ["--equalized-odds-agg"]),
    ("zero division nan", ["--group", "L1", "--zero-division", "nan"], ["--zero-division"]),
    ("missing group value", ["--group", "L1"], ["row 2", "field 'L1'", "missing value"]),
):  # fmt: skip
    _data = LANG.replace("0,1,en", "0,1,") if _case == "missing group value" else LANG
    CASES[_case] = ("d.csv", _data, [*YY, *_args], _fragments)


# Crossed groups (--group A,B) and sample weights (--sample-weight COL).
WEIGHTED = "y,yhat,sex,race,w\n1,1,F,a,1\n0,1,F,b,2\n1,0,M,a,0.5\n0,0,M,b,1\n"
for _case, _data, _args, _fragments in (
    ("missing weight column", WEIGHTED, ["--group", "sex", "--sample-weight", "wt"],
     ["d.csv", "field 'wt'", "--sample-weight"]),
    ("negative weight", WEIGHTED.replace("M,a,0.5", "M,a,-0.5"),
     ["--group", "sex", "--sample-weight", "w"], ["d.csv", "row 3", "field 'w'", "negative"]),
    ("missing weight", WEIGHTED.replace("M,a,0.5", "M,a,"),
     ["--group", "sex", "--sample-weight", "w"], ["d.csv", "row 3", "field 'w'", "missing"]),
    ("text weight", WEIGHTED.replace("M,a,0.5", "M,a,heavy"),
     ["--group", "sex", "--sample-weight", "w"], ["d.csv", "row 3", "field 'w'", "'heavy'"]),
    ("all weights zero", WEIGHTED.replace(",1\n", ",0\n").replace(",2\n", ",0\n")
     .replace(",0.5\n", ",0\n"), ["--group", "sex", "--sample-weight", "w"],
     ["d.csv", "field 'w'", "every sample weight is 0"]),
    ("unknown crossed group column", WEIGHTED, ["--group", "sex,colour"],
     ["d.csv", "field 'colour'", "--group"]),
    ("empty crossed column name", WEIGHTED, ["--group", "sex,"], ["--group", "'sex,'", "empty"]),
    ("unknown control column", WEIGHTED, ["--group", "sex", "--control", "site"],
     ["d.csv", "field 'site'", "--control"]),
    ("control without a group column", WEIGHTED, ["--sensitive", "sex=F", "--control", "race"],
     ["--control", "group column"]),
    ("unknown slice column", WEIGHTED, ["--group", "sex", "--by", "site"],
     ["d.csv", "field 'site'", "--by"]),
    ("unknown cluster column", WEIGHTED, ["--group", "sex", "--ci", "0.9", "--cluster", "pid"],
     ["d.csv", "field 'pid'", "--cluster"]),
    ("cluster without --ci", WEIGHTED, ["--group", "sex", "--cluster", "sex"],
     ["--cluster", "give ci too"]),
    ("row without a cluster", "y,yhat,sex,pid\n1,1,F,a\n0,1,M,\n1,0,F,b\n0,0,M,b\n",
     ["--group", "sex", "--ci", "0.9", "--cluster", "pid"],
     ["d.csv", "row 2", "field 'pid'", "missing value"]),
):  # fmt: skip
    CASES[_case] = ("d.csv", _data, [*YY, *_args], _fragments)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir.csv").mkdir()
    return tmp_path


def _run(args):
    r = runner.invoke(app, ["fairness", *args])
    return r, r.stdout + r.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exit_2_with_a_clear_message(workdir, case):
    name, content, args, fragments = CASES[case]
    if name is not None:
        path = workdir / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    out = workdir / "out.json"
    out.write_text("OLD")
    r, text = _run(["--data", name or "d.csv", *(args or BASE), "--out", "out.json"])
    assert r.exit_code == 2, text
    assert "Traceback" not in text
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    for frag in fragments:
        assert frag in text, (frag, text)
    assert out.read_text() == "OLD"
    assert [p.name for p in workdir.iterdir() if p.name.startswith(".")] == []


def test_directory_as_data_and_as_out(workdir):
    (workdir / "d.csv").write_text(DATA)
    r, text = _run(["--data", "adir.csv", *BASE])
    assert r.exit_code == 2 and "adir.csv" in text and "Traceback" not in text, text
    r, text = _run(["--data", "d.csv", *BASE, "--out", "adir.csv"])
    assert r.exit_code == 2 and "--out" in text and "is a directory" in text, text


def test_the_good_input_works(workdir):
    (workdir / "d.csv").write_text(DATA)
    r, text = _run(["--data", "d.csv", *BASE, "--out", "o.json", "--format", "table"])
    assert r.exit_code == 0, text
    assert "sex > 0" in text  # the table says who is privileged
    records = json.loads((workdir / "o.json").read_text())
    assert {m["type"] for m in records} >= {"DisparateImpact", "GroupCounts"}
